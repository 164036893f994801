"""Warm starts: solutions a user hands to :func:`metaheur.solve` (``initial=``) or to
``metaheur solve --initial FILE``, validated and put in the form the islands keep.

Every island's first population is seeded with them, best first (a tabu island, whose
population is one search, starts from the best one), and a seeded member is never worse than
its seed, so a run never ends worse than the best warm start."""

from __future__ import annotations

import os

import numpy as np

from metaheur.errors import MetaheurError
from metaheur.problem import load_solution
from metaheur.problem.domain import ProblemDomain


def _many(initial) -> bool:
    if isinstance(initial, np.ndarray):
        return initial.ndim == 2
    return (isinstance(initial, (list, tuple)) and len(initial) > 0
            and all(isinstance(x, (str, os.PathLike, list, tuple, np.ndarray)) for x in initial))


def initial_solutions(problem: ProblemDomain, initial) -> np.ndarray | None:
    """``initial`` (a permutation, a list of them, a path to a ``.sln``, ``.tour`` or result
    ``.json`` file, or a list of paths) as a k x n int64 array, best first in the problem's sense,
    in canonical form (:meth:`~ProblemDomain.canonical`: TSP tours rotated and turned), or ``None``; a
    wrong size, a non-permutation or an unreadable file is a :class:`MetaheurError`."""
    if initial is None:
        return None
    if isinstance(initial, (list, tuple)) and not initial:
        raise MetaheurError("initial: give at least one solution")
    items = list(initial) if _many(initial) else [initial]
    solutions = []
    for k, item in enumerate(items):
        if isinstance(item, (str, os.PathLike)):
            solutions.append(load_solution(problem, item).permutation)
        else:
            where = "initial solution" if len(items) == 1 else f"initial solution {k + 1}"
            solutions.append(problem.check_solution(item, where))
    out = problem.canonical(np.stack([np.asarray(s, dtype=np.int64) for s in solutions]))
    sign = problem.engine_sign
    return out[np.argsort([sign * problem.value(s) for s in out], kind="stable")]
