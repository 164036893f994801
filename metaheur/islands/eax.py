"""The generation of an EAX island: the GA of Nagata and Kobayashi ("A powerful genetic algorithm
using edge assembly crossover for the traveling salesman problem", INFORMS J. Computing 25(2),
2013), on the island's population.

Each generation visits the members in a random order; member ``order[i]`` is parent A and
``order[i + 1]`` parent B; the best of ``tries`` EAX children (one AB-cycle each, all of a pair in
one kernel block, all pairs in one launch) replaces A when it is shorter. Children are chosen by
Nagata's entropy-preserving rule (the largest length gain per unit of edge entropy lost) for the
first 70% of the run, then greedily (the shortest), so that the population converges before the
end; without a time or generation horizon, greedy selection starts once the island stagnates.
A stagnant island rebuilds its population (keeping its best) only before that last 30%.
The population starts from random tours brought to local optima, as many as 30% of the time
budget builds (between 4 and 300) when its size is automatic.
"""

from __future__ import annotations

import time

import numpy as np

from metaheur.islands.operators import canonical_tours

GREEDY_AT = 0.7  # share of the run after which children are chosen greedily
INIT_SHARE = 0.3  # share of the time budget that builds an automatic population
MIN_POPULATION, MAX_POPULATION, DEFAULT_POPULATION = 4, 300, 100
STALE_GREEDY = 20  # without a horizon: generations without progress before greedy selection


def population_size(per_member: float, time_limit: float | None, built: int) -> int:
    """Members of an automatic population, given the seconds one took and the run's time limit."""
    if time_limit is None:
        return max(built, DEFAULT_POPULATION)
    return int(min(MAX_POPULATION, max(built, MIN_POPULATION, INIT_SHARE * time_limit / max(per_member, 1e-6))))


def selection(progress: float | None, stale: int) -> str:
    if progress is None:
        return "greedy" if stale >= STALE_GREEDY else "entropy"
    return "greedy" if progress >= GREEDY_AT else "entropy"


def may_restart(progress: float | None) -> bool:
    """Whether a stagnant island may rebuild its population: only while the run has the time to
    bring a new one to convergence, i.e. before its greedy last 30%."""
    return progress is None or progress < GREEDY_AT


def eax_generation(ops, state, keys: np.ndarray, order: np.ndarray, progress: float | None) -> None:
    """One generation on ``state`` (in place): every member is parent A once."""
    select = selection(progress, state.stale)
    children, lengths, built = ops.eax_children(state.population, state.costs, order, keys, select)
    state.ls_iterations += built  # an EAX island's search steps are the children it builds
    better = lengths < state.costs[order]
    if not better.any():
        return
    idx = order[better]
    ops.eax_accept(np.flatnonzero(better), state.population[idx], children[better])
    state.population[idx] = canonical_tours(children[better])
    state.costs[idx] = lengths[better]


def timed(build, count: int):
    """``build(count)`` and the seconds it took per member."""
    t0 = time.perf_counter()
    out = build(count)
    return out, (time.perf_counter() - t0) / max(count, 1)
