"""Plain descriptions of instances and evaluations, shared by ``metaheur info`` and ``evaluate``.
What a problem shows of itself comes from the problem (:meth:`Problem.properties` and
:meth:`Problem.describe_lines`); values and gaps are in the problem's sense."""

from __future__ import annotations

from metaheur.problem.best_known import beaten_optimum, gap_percent
from metaheur.problem.interface import Problem


def instance_summary(inst: Problem) -> dict:
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


def evaluation(inst: Problem, perm, stated_cost: int | None = None, note: str | None = None) -> dict:
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


def format_summary(info: dict, problem: type[Problem] | Problem | None = None) -> str:
    """Human-readable lines for :func:`instance_summary` (the property lines by ``problem``'s
    :meth:`~Problem.describe_lines`, by default the registered problem of the summary's kind)."""
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
