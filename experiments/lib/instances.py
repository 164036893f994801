"""Instance selection of the experiment scripts: names from options, loading once, what is present
under METAHEUR_INSTANCES, and time budgets by size."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from pathlib import Path

from metaheur.errors import MetaheurError
from metaheur.problems import load_instance

from .report import log


def need_instances(script: str) -> Path:
    """The folder named by METAHEUR_INSTANCES; exits with a message when it is not set."""
    value = os.environ.get("METAHEUR_INSTANCES")
    if not value or not Path(value).expanduser().is_dir():
        sys.exit(f"{script}: set METAHEUR_INSTANCES to the folder of the benchmark libraries (qaplib/, tsplib/)")
    return Path(value).expanduser()


def split_names(text: str) -> list[str]:
    return [x.strip() for x in text.split(",") if x.strip()]


def names_arg(given: str | None, full: list[str], quick_default: list[str], quick: bool) -> list[str]:
    """Instance names from a comma-separated option (an empty string: none), else the defaults of
    the mode."""
    if given is not None:
        return split_names(given)
    return list(quick_default if quick else full)


_PROBLEMS: dict[str, object] = {}


def problem(name: str):
    """The instance named ``name`` (library name, path or ``gen:`` name), loaded once; ``None``
    when it is not present."""
    if name not in _PROBLEMS:
        try:
            _PROBLEMS[name] = load_instance(name)
        except MetaheurError:
            _PROBLEMS[name] = None
    return _PROBLEMS[name]


def present(names: Iterable[str]) -> tuple[list[str], list[str]]:
    """(names found, names missing) — generated ``gen:`` instances are always found."""
    found, missing = [], []
    for name in names:
        (found if problem(name) is not None else missing).append(name)
    if missing:
        log(f"skipped (not present under METAHEUR_INSTANCES): {', '.join(missing)}")
    return found, missing


#: The size that gets the base time budget, per problem kind (others: that of the TSP).
SIZE_UNIT = {"qap": 50, "tsp": 1000, "pfsp": 50, "lop": 100}


def budget_seconds(kind: str, n: int, base: float) -> float:
    """Time budget scaled by size: ``base * n / SIZE_UNIT[kind]`` (QAP n / 50, TSP n / 1000, PFSP
    n / 50 jobs, LOP n / 100), clipped to ``[base / 2, 10 * base]``."""
    scale = n / SIZE_UNIT.get(kind, SIZE_UNIT["tsp"])
    return round(float(min(10 * base, max(base / 2, base * scale))), 2)
