"""Warm starts: solutions a user hands to :func:`metaheur.solve` (``initial=``) or to
``metaheur solve --initial FILE``, validated and put in the form the islands keep.

Every island's first population is seeded with them, best first (a walk island, whose
population is one search, starts from the best one), and a seeded member is never worse than
its seed, so a run never ends worse than the best warm start."""

from __future__ import annotations

import os

import numpy as np

from metaheur.errors import MetaheurError
from metaheur.islands.operators import canonical_tours
from metaheur.problems import QAP, TSP, load_solution


def _many(initial) -> bool:
    if isinstance(initial, np.ndarray):
        return initial.ndim == 2
    return (isinstance(initial, (list, tuple)) and len(initial) > 0
            and all(isinstance(x, (str, os.PathLike, list, tuple, np.ndarray)) for x in initial))


def initial_solutions(problem: QAP | TSP, initial) -> np.ndarray | None:
    """``initial`` (a permutation, a list of them, a path to a ``.sln``, ``.tour`` or result
    ``.json`` file, or a list of paths) as a k x n int64 array sorted by exact cost (TSP tours in canonical form), or
    ``None``; a wrong size, a non-permutation or an unreadable file is a :class:`MetaheurError`."""
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
            solutions.append(problem.check_permutation(item, where) if isinstance(problem, QAP)
                             else problem.check_tour(item, where))
    out = np.stack([np.asarray(s, dtype=np.int64) for s in solutions])
    if isinstance(problem, TSP):
        out = canonical_tours(out)
    cost = problem.cost if isinstance(problem, QAP) else problem.tour_length
    return out[np.argsort([cost(s) for s in out], kind="stable")]
