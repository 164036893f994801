"""The memetic island: a steady-state GA whose every child is improved by a local search (the
robust tabu search for the QAP, as in the hybrid GAs of Misevicius 2004 and Drezner 2008; an
iterated local search for the TSP).

A generation picks parents by binary tournament, crosses them (one batched kernel launch),
mutates and improves every child (one more), then replaces with diversity control. ``steady``: a
child that duplicates a member is dropped; otherwise it replaces, among the members worse than it,
the one closest to it when that one is nearer than n/10, else the worst (a distance-aware
steady-state replacement). ``bnp``: the best non-penalised survivors of members and children
together (Lugo, Segura and Miranda, "A diversity-aware memetic algorithm for the linear ordering
problem", Memetic Computing 14, 2022): the best first, then again and again the best of those at
least D from every survivor (the farthest when none is), D shrinking linearly from the mean
distance of the population as it was built to 0 at the end of the run.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from metaheur.islands.base import Island, seconds_to

if TYPE_CHECKING:
    from metaheur.islands.island import IslandSpec


class MemeticIsland(Island):
    """GA + local search of children (QAP crossovers ux/cx/pmx, TSP ox)."""

    sized_by_gpu_wave = True

    @classmethod
    def label(cls, spec: IslandSpec) -> str:
        return f"GA ({spec.params.ga.crossover})"

    def generation(self, state, deadline: float | None, progress: float | None) -> None:
        ops, count = self.ops, self.spec.params.ga.offspring
        pop_size = state.population.shape[0]
        keys = self.keys(state, count)
        rng = self.rng(state, 2)
        a = rng.integers(0, pop_size, size=(count, 2))
        b = rng.integers(0, pop_size, size=(count, 2))
        pairs = np.stack([tournament(state.costs, a), tournament(state.costs, b)], axis=1)
        children = ops.crossover(state.population, pairs, keys)
        ops.mutate(children, keys)
        sols, costs, iters = ops.improve(children, keys, time_limit=seconds_to(deadline))
        state.ls_iterations += int(np.sum(iters))
        if self.spec.params.ga.replacement == "bnp":
            threshold = (state.spread or 0.0) * (1.0 - (progress or 0.0))
            keep_non_penalised(ops, state, np.asarray(sols), np.asarray(costs), threshold)
        else:
            replace_members(ops, state, sols, costs)

    def begin(self, state) -> None:
        """The bnp replacement's starting distance, once a population: its members' mean distance."""
        if self.spec.params.ga.replacement == "bnp" and state.spread is None:
            state.spread = mean_distance(self.ops, state.population)


def tournament(costs: np.ndarray, pairs: np.ndarray) -> np.ndarray:
    """The winner (lower cost, the first on a tie) of each binary tournament ``pairs[k]``."""
    return np.where(costs[pairs[:, 0]] <= costs[pairs[:, 1]], pairs[:, 0], pairs[:, 1])


def replace_members(ops, state, children: np.ndarray, costs: np.ndarray) -> None:
    """Distance-aware steady-state replacement of ``state``'s members by ``children`` (best first).
    The distances of every child to every member and to every other child are computed once
    (:func:`distance_tables`): a slot a child took is then at that child's distance."""
    pop, pc = state.population, state.costs
    near = max(1, ops.n // 10)
    to_members, to_children = distance_tables(ops, children, pop)
    occupant = np.full(len(pop), -1)  # the child now in each slot (-1: the member of the start)
    for c in np.argsort(costs, kind="stable"):
        child, cost = children[c], int(costs[c])
        dist = np.where(occupant < 0, to_members[c], to_children[c, np.maximum(occupant, 0)])
        if (dist == 0).any():
            continue
        worse = np.flatnonzero(pc > cost)
        if worse.size == 0:
            continue
        closest = worse[np.argmin(dist[worse])]
        victim = closest if dist[closest] < near else worse[np.argmax(pc[worse])]
        pop[victim], pc[victim] = child, cost
        occupant[victim] = c


def keep_non_penalised(ops, state, children: np.ndarray, costs: np.ndarray, threshold: float) -> None:
    """The best-non-penalised survivors (BNP) of ``state``'s members and ``children``: the best,
    then, until the population is full, the best (ties: the farther) of the candidates at least
    ``threshold`` from every survivor, or the farthest (ties: the better) when none is."""
    pool = np.concatenate([state.population, children.astype(state.population.dtype)])
    pool_costs = np.concatenate([state.costs, costs.astype(state.costs.dtype)])
    dist = distance_table(ops, pool)
    size = state.population.shape[0]
    first = int(np.argmin(pool_costs))
    chosen, nearest = [first], dist[first].astype(np.float64)
    left = np.ones(len(pool), dtype=bool)
    left[first] = False
    while len(chosen) < size:
        idx = np.flatnonzero(left)
        far = idx[nearest[idx] >= threshold]
        if far.size:
            pick = far[np.lexsort((-nearest[far], pool_costs[far]))[0]]
        else:
            pick = idx[np.lexsort((pool_costs[idx], -nearest[idx]))[0]]
        chosen.append(int(pick))
        left[pick] = False
        nearest = np.minimum(nearest, dist[pick])
    state.population[:], state.costs[:] = pool[chosen], pool_costs[chosen]


def mean_distance(ops, population: np.ndarray) -> float:
    """The mean distance of the members to each other (0 for one member)."""
    size = len(population)
    if size < 2:
        return 0.0
    return float(distance_table(ops, population)[np.triu_indices(size, 1)].mean())


def distance_table(ops, rows: np.ndarray) -> np.ndarray:
    """The operators' distances of every row to every row (R x R): their ``distance_table`` when
    they have one (a permutation problem's, the solutions' positions computed once), else
    ``distances`` row by row."""
    table = getattr(ops, "distance_table", None)
    if table is not None:
        return table(rows, rows)
    return np.array([ops.distances(r, rows) for r in rows]).reshape(len(rows), len(rows))


def distance_tables(ops, children: np.ndarray, population: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The operators' distances of every child to every member (C x P) and to every child (C x C):
    their ``distance_tables`` when they have one (the TSP's edge keys), else ``distances`` row by row."""
    tables = getattr(ops, "distance_tables", None)
    if tables is not None:
        return tables(children, population)
    return (np.array([ops.distances(c, population) for c in children]).reshape(len(children), len(population)),
            np.array([ops.distances(c, children) for c in children]).reshape(len(children), len(children)))
