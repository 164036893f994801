"""Plain descriptions of instances and evaluations, shared by ``metaheur info`` and ``evaluate``."""

from __future__ import annotations

from metaheur.problems import QAP, TSP, best_known
from metaheur.problems.best_known import gap_percent


def instance_summary(inst: QAP | TSP) -> dict:
    """What ``metaheur info INSTANCE`` shows, as a JSON-ready dict."""
    entry = best_known(inst.name, inst.n)
    out = {
        "instance": inst.name,
        "problem": inst.kind.upper(),
        "n": inst.n,
        "source": inst.source,
        "best_known": entry.value if entry else None,
        "best_known_optimal": entry.optimal if entry else None,
    }
    if isinstance(inst, QAP):
        out.update(inst.properties())
    else:
        out["edge_weight_type"] = inst.weight_type
        out["edge_weight_format"] = inst.weight_format
        out["has_coordinates"] = inst.display is not None
        out["full_matrix_mib"] = round(inst.matrix_bytes() / 2**20, 1)
    return out


def evaluation(inst: QAP | TSP, perm, stated_cost: int | None = None, note: str | None = None) -> dict:
    """Exact cost of ``perm`` with the best-known value and the gap, as a JSON-ready dict."""
    cost = inst.cost(perm) if isinstance(inst, QAP) else inst.tour_length(perm)
    entry = best_known(inst.name, inst.n)
    bks = entry.value if entry else None
    return {
        "instance": inst.name,
        "problem": inst.kind.upper(),
        "n": inst.n,
        "cost": cost,
        "best_known": bks,
        "best_known_optimal": entry.optimal if entry else None,
        "gap_percent": gap_percent(cost, bks),
        "stated_cost": stated_cost,
        "note": note,
    }


def format_summary(info: dict) -> str:
    """Human-readable lines for :func:`instance_summary`."""
    lines = [
        f"instance    {info['instance']}",
        f"problem     {info['problem']}",
        f"n           {info['n']}",
    ]
    if info["problem"] == "QAP":
        for label in ("flow", "distance"):
            sym = "symmetric" if info[f"{label}_symmetric"] else "asymmetric"
            diag = "zero diagonal" if info[f"{label}_zero_diagonal"] else "non-zero diagonal"
            lines.append(f"{label:<11} {sym}, {diag}, entries {info[f'{label}_min']}..{info[f'{label}_max']}, "
                         f"dominance {info[f'{label}_dominance']}")
    else:
        weights = info["edge_weight_type"]
        if info["edge_weight_format"]:
            weights += f" ({info['edge_weight_format']})"
        lines.append(f"weights     {weights}")
        lines.append(f"coordinates {'yes' if info['has_coordinates'] else 'no'}")
        lines.append(f"full matrix {info['full_matrix_mib']} MiB as int32")
    lines.append(f"best known  {_bks_text(info)}")
    if info["source"]:
        lines.append(f"source      {info['source']}")
    return "\n".join(lines)


def format_evaluation(ev: dict) -> str:
    """Human-readable lines for :func:`evaluation`."""
    lines = [f"instance    {ev['instance']} ({ev['problem']}, n = {ev['n']})", f"cost        {ev['cost']}"]
    lines.append(f"best known  {_bks_text(ev)}")
    if ev["gap_percent"] is not None:
        lines.append(f"gap         {ev['gap_percent']:.4f} %")
    if ev["stated_cost"] is not None and ev["stated_cost"] != ev["cost"]:
        lines.append(f"warning     the file states cost {ev['stated_cost']}, the exact cost is {ev['cost']}")
    if ev["note"]:
        lines.append(f"note        {ev['note']}")
    return "\n".join(lines)


def _bks_text(d: dict) -> str:
    if d["best_known"] is None:
        return "unknown"
    return f"{d['best_known']} ({'optimal' if d['best_known_optimal'] else 'best known, not proven optimal'})"
