"""Plain descriptions of instances and evaluations, shared by ``metaheur info`` and ``evaluate``.
What a problem shows of itself comes from its domain (:meth:`ProblemDomain.properties` and
:meth:`ProblemDomain.describe_lines`); values and gaps are in the problem's sense."""

from __future__ import annotations

import dataclasses
import inspect
import re

from metaheur.problem.best_known import beaten_optimum, gap_percent
from metaheur.problem.domain import ProblemDomain
from metaheur.problem.interface import Problem


def instance_summary(inst: ProblemDomain) -> dict:
    """What ``metaheur info INSTANCE`` shows, as a JSON-ready dict."""
    entry = inst.best_known()
    out = {
        "instance": inst.name,
        "problem": inst.kind.upper(),
        "n": inst.n,
        "source": inst.source,
        "best_known": entry.value if entry else None,
        "best_known_optimal": entry.optimal if entry else None,
    }
    if inst.sense != "min":
        out["sense"] = inst.sense
    out.update(inst.properties())
    return out


def evaluation(inst: ProblemDomain, perm, stated_cost: int | None = None, note: str | None = None) -> dict:
    """Exact value of ``perm`` with the best-known value and the gap, as a JSON-ready dict."""
    value = inst.value(perm)
    entry = inst.best_known()
    if beaten_optimum(entry, value, inst.sense):
        beaten = (f"better than the proven optimum {entry.value} of the best-known table's {entry.name}: the table's "
                  "entry is of another instance of this name")
        note, entry = beaten if note is None else f"{note}; {beaten}", None
    bks = entry.value if entry else None
    out = {
        "instance": inst.name,
        "problem": inst.kind.upper(),
        "n": inst.n,
        "cost": value,
        "best_known": bks,
        "best_known_optimal": entry.optimal if entry else None,
        "gap_percent": gap_percent(value, bks, inst.sense),
        "stated_cost": stated_cost,
        "note": note,
    }
    if inst.sense != "min":
        out["sense"] = inst.sense
    return out


def format_summary(info: dict, problem: type[ProblemDomain] | ProblemDomain | None = None) -> str:
    """Human-readable lines for :func:`instance_summary` (the property lines by ``problem``'s
    :meth:`~ProblemDomain.describe_lines`, by default the registered problem of the summary's kind)."""
    from metaheur.problem.registry import problem_class

    cls = problem if problem is not None else problem_class(info["problem"].lower())
    lines = [
        f"instance    {info['instance']}",
        f"problem     {info['problem']}",
        f"n           {info['n']}",
    ]
    if info.get("sense", "min") != "min":
        lines.append("sense       maximise")
    common = {"instance", "problem", "n", "source", "best_known", "best_known_optimal", "sense"}
    lines += cls.describe_lines({k: v for k, v in info.items() if k not in common})
    lines.append(f"best known  {_bks_text(info)}")
    if info["source"]:
        lines.append(f"source      {info['source']}")
    return "\n".join(lines)


def format_evaluation(ev: dict) -> str:
    """Human-readable lines for :func:`evaluation`: the cost of a minimisation, the value and the
    gap below the best known of a maximisation."""
    maximise = ev.get("sense", "min") == "max"
    word = "value" if maximise else "cost"
    lines = [f"instance    {ev['instance']} ({ev['problem']}, n = {ev['n']})", f"{word:<11} {ev['cost']}"]
    lines.append(f"best known  {_bks_text(ev)}")
    if ev["gap_percent"] is not None:
        lines.append(f"gap         {ev['gap_percent']:.4f} %" + (" below the best known" if maximise else ""))
    if ev["stated_cost"] is not None and ev["stated_cost"] != ev["cost"]:
        lines.append(f"warning     the file states {word} {ev['stated_cost']}, the exact {word} is {ev['cost']}")
    if ev["note"]:
        lines.append(f"note        {ev['note']}")
    return "\n".join(lines)


def _bks_text(d: dict) -> str:
    if d["best_known"] is None:
        return "unknown"
    return f"{d['best_known']} ({'optimal' if d['best_known_optimal'] else 'best known, not proven optimal'})"


def problem_summary(cls: type[Problem]) -> dict:
    """What ``metaheur info PROBLEM`` shows of a registered problem, as a JSON-ready dict: its
    files, its crossovers with the island algorithm each runs, and its own parameter sections
    (:attr:`Problem.search_params <metaheur.problem.SolvingPlan.search_params>`; the generic
    engine's ``[perm]`` for a problem without its own) with every key's default: what a
    ``--config`` file may set for it (docs/cli.md)."""
    from metaheur.islands.params import ENGINE_SEARCHES, crossover_island
    from metaheur.problem.registry import describe_problem

    fmt = cls.formats
    return describe_problem(cls) | {
        "solution_suffix": fmt.solution_suffix if fmt and fmt.write_solution else None,
        "crossovers": {c: crossover_island(c, cls).__name__ for c in cls.crossovers},
        "sections": {s.section: {"class": s.__name__, "doc": _first_sentence(s), "keys": dataclasses.asdict(s())}
                     for s in cls.search_params or ENGINE_SEARCHES},
    }


def format_problem(info: dict) -> str:
    """Human-readable lines for :func:`problem_summary`."""
    lines = [f"problem     {info['kind']}: {info['title']}" + (" (maximised)" if info["sense"] == "max" else "")]
    files = ", ".join(info["extensions"]) or "none"
    lines.append(f"files       {files}" + (f"; library folder {info['folder']}/" if info["folder"] else ""))
    if info["generators"]:
        lines.append(f"generated   {', '.join(info['generators'])} (optional :SEED)")
    if info["solution_suffix"]:
        lines.append(f"solutions   {info['solution_suffix']} files")
    lines.append("crossovers  " + ", ".join(f"{c} ({algorithm})" for c, algorithm in info["crossovers"].items()))
    for name, section in info["sections"].items():
        lines.append(f"[{name}]" + " " * max(1, 11 - len(name)) + f"{section['class']}: {section['doc']}")
        lines += [f"  {key} = {value}" for key, value in section["keys"].items()]
    return "\n".join(lines)


def _first_sentence(cls: type) -> str:
    """The first sentence of ``cls``'s docstring as plain text (reST roles and literals unmarked)."""
    doc = " ".join((inspect.getdoc(cls) or "").split())
    doc = re.sub(r":\w+:`~?(?:[^`<]*<)?([^`>]*)>?`", lambda m: m.group(1).rsplit(".", 1)[-1], doc).replace("``", "")
    return doc.split(". ")[0].rstrip(".") if doc else ""
