"""The benchmark libraries' files under $METAHEUR_INSTANCES, for the library tests
(tests/problems/test_library.py, qap/test_qap_library.py, tsp/test_tsp_library.py; importable as
``library_files``: pytest puts tests/problems on the path)."""

from __future__ import annotations

import csv
import functools
import os
from pathlib import Path

import pytest

LIBRARIES = {"qaplib": ".dat", "tsplib": ".tsp"}
SOLUTION_SUFFIX = {"qaplib": ".sln", "tsplib": ".opt.tour"}


def _root() -> Path | None:
    value = os.environ.get("METAHEUR_INSTANCES")
    return Path(value) if value and Path(value).is_dir() else None


def _names(library: str, suffix: str) -> list:
    """Instance names having a file with ``suffix`` (collected at import; one placeholder when unset)."""
    root = _root()
    if root is None or not (root / library).is_dir():
        return [pytest.param(None, id="no-instances")]
    names = sorted(p.name[: -len(suffix)] for p in (root / library).glob(f"*{suffix}"))
    return names or [pytest.param(None, id="no-files")]


@functools.cache
def _bks(root: Path, library: str) -> dict[str, dict]:
    with open(root / library / "bks.csv", newline="") as handle:
        return {row["name"]: row for row in csv.DictReader(handle)}
