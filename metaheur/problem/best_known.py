"""Best-known objective values, one table per problem kind: each problem registers its own
(:func:`register_table`; the built-in problems' tables are in problems/<name>/best_known.py), so
that names of different problems never collide. ``optimal`` says whether the value is proven
optimal; gaps are in the problem's sense (:func:`gap_percent`).
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from importlib import resources


@dataclass(frozen=True)
class BestKnown:
    name: str
    library: str
    n: int
    value: int
    optimal: bool


#: kind -> (lower-case name -> entry)
TABLES: dict[str, dict[str, BestKnown]] = {}


def read_table(package: str, name: str = "best_known.csv") -> list[BestKnown]:
    """The entries of a problem package's table file (CSV: name, library, n, value, optimal as
    ``true``/``false``), a data file of the package."""
    with resources.files(package).joinpath(name).open(newline="") as handle:
        return [BestKnown(row["name"], row["library"], int(row["n"]), int(row["value"]), row["optimal"] == "true")
                for row in csv.DictReader(handle)]


def register_table(kind: str, entries) -> None:
    """Add the best-known values of problem ``kind`` (:class:`BestKnown` entries)."""
    table = TABLES.setdefault(kind, {})
    for entry in entries:
        table[entry.name.lower()] = entry


def best_known(name: str, n: int | None = None, kind: str | None = None) -> BestKnown | None:
    """The table entry for an instance name (case-insensitive), or ``None``.

    With ``kind`` given, only that problem's table is searched; with ``n`` given, an entry of
    another size is not returned (a renamed or generated file).
    """
    tables = [TABLES.get(kind, {})] if kind is not None else list(TABLES.values())
    entry = next((t[name.lower()] for t in tables if name.lower() in t), None)
    if entry is None or (n is not None and entry.n != n):
        return None
    return entry


def beaten_optimum(entry: BestKnown | None, value: int, sense: str = "min") -> bool:
    """Whether ``value`` is better than ``entry``'s proven optimum: then the entry is of another
    instance of that name and size (a renamed or changed file) and does not apply."""
    if entry is None or not entry.optimal:
        return False
    return value < entry.value if sense == "min" else value > entry.value


def gap_percent(value: int, reference: int | None, sense: str = "min") -> float | None:
    """The gap to the best known in the problem's sense: above it for a minimisation,
    ``100 * (value - reference) / |reference|``; below it for a maximisation, ``100 * (reference -
    value) / |reference|`` (never negative for a value short of the reference); ``None`` when there
    is no reference (or it is 0 and the value is not)."""
    if reference is None:
        return None
    if reference == 0:
        return 0.0 if value == 0 else None
    diff = value - reference if sense == "min" else reference - value
    return 100.0 * diff / abs(reference)
