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
    """:func:`metaheur.solve` with the fields of :class:`SolveParams` and the local searches'
    sections (``perm=...``, into ``searches``) given as keywords beside solve()'s own arguments
    (the tests' shorthand)."""
    from dataclasses import fields

    from metaheur import SolveParams, solve
    from metaheur.islands.params import search_sections

    names = {f.name for f in fields(SolveParams)}
    sections = set(search_sections(None if isinstance(problem, str) else problem))
    searches = {k: options.pop(k) for k in list(options) if k in sections}
    params = SolveParams(**{k: options.pop(k) for k in list(options) if k in names}, searches=searches)
    return solve(problem, params=params, **options)


def taillard_text(times: np.ndarray, seed: int = 1, ub: int = 0, lb: int = 0) -> str:
    """One block of Taillard's flow shop format (his files concatenate such blocks)."""
    m, n = times.shape
    rows = "\n".join(" ".join(f"{int(v):2d}" for v in row) for row in times)
    return ("number of jobs, number of machines, initial seed, upper bound and lower bound :\n"
            f"  {n}  {m}  {seed}  {ub}  {lb}\nprocessing times :\n{rows}\n")


# OR-Library's flowshop1.txt layout: two instances, car1 (3 jobs x 2 machines) and hel2 (2 x 3)
ORLIB = """This file has two flow shop instances, each as n m and one line per job of machine, time pairs.
 +++++++++++++++++++++++++++++

 instance car1
 +++++++++++++++++++++++++++++
 Carlier 3 x 2 instance (Table 1)
 3 2
 0 375 1  12
 0 632 1 452
 0  12 1 876
 +++++++++++++++++++++++++++++

 instance hel2
 +++++++++++++++++++++++++++++
 Heller 2 x 3 instance
 2 3
 0 1 1 2 2 3
 0 4 1 5 2 6
 +++++++++++++++++++++++++++++
 EOF
"""
