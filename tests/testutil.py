"""Helpers shared by test modules (importable as ``testutil``: pytest puts tests/ on the path).

Benchmark-instance tests read the QAPLIB/TSPLIB files from the directory named by
``METAHEUR_INSTANCES`` (subfolders ``qaplib/`` and ``tsplib/``, each with a ``bks.csv``) and skip
with a message when it is not set. The files are never copied into the repository.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from metaheur.problems import QAP, random_qap

INSTANCES_ENV = "METAHEUR_INSTANCES"
SKIP_MESSAGE = "METAHEUR_INSTANCES not set: benchmark-instance tests skipped"


def instances_dir() -> Path:
    """The benchmark-instance directory from ``METAHEUR_INSTANCES``; skips the test when unset/missing."""
    value = os.environ.get(INSTANCES_ENV)
    if not value:
        pytest.skip(SKIP_MESSAGE)
    path = Path(value).expanduser()
    if not path.is_dir():
        pytest.skip(f"{SKIP_MESSAGE} ({INSTANCES_ENV}={value} is not a directory)")
    return path


def sparse_qap(n: int, seed: int = 1, density: float = 0.2) -> QAP:
    """A structured QAP (high flow dominance, as tai*b's real-life-like flows): a uniform random
    instance whose flows are kept between ``density`` of the pairs only."""
    base = random_qap(n, seed=seed)
    keep = np.random.default_rng(seed).random((n, n)) < density
    keep = np.triu(keep, 1) | np.triu(keep, 1).T
    return QAP(f"sparse-qap-{n}-s{seed}", np.where(keep, base.flow, 0), base.distance)


def explicit_tokens(m: np.ndarray, fmt: str) -> list[int]:
    """The EDGE_WEIGHT_SECTION numbers of matrix ``m`` in TSPLIB order ``fmt`` (a triangle format
    writes one triangle: ``m`` must then be symmetric)."""
    n = m.shape[0]
    out: list[int] = []
    if fmt == "FULL_MATRIX":
        return [int(m[i, j]) for i in range(n) for j in range(n)]
    for outer in range(n):
        for inner in range(n):
            if fmt.endswith("_ROW"):
                i, j = outer, inner
            else:  # *_COL: the outer index runs over columns
                i, j = inner, outer
            upper = fmt.startswith("UPPER")
            diag = "_DIAG_" in fmt
            keep = (i < j if upper else i > j) or (diag and i == j)
            if keep:
                out.append(int(m[i, j]))
    return out


def solve_with(problem, **options):
    """:func:`metaheur.solve` with the fields of :class:`SolveParams` given as keywords beside
    solve()'s own arguments (the tests' shorthand)."""
    from dataclasses import fields

    from metaheur import SolveParams, solve

    names = {f.name for f in fields(SolveParams)}
    params = SolveParams(**{k: options.pop(k) for k in list(options) if k in names})
    return solve(problem, params=params, **options)
