"""Edge distances of TSP tours (metaheur.problems.tsp.tour_edges) against the per-pair set
intersection they replace, and the memetic replacement with the distance tables against the
replacement that computes each child's distances when it comes."""

from __future__ import annotations

import numpy as np
import pytest

from metaheur.devices import cpu_device
from metaheur.islands.island import IslandState
from metaheur.islands.memetic import replace_members
from metaheur.islands.params import GAParams, IslandParams
from metaheur.problems import uniform_tsp
from metaheur.problems.tsp import canonical_tours
from metaheur.problems.tsp.operators import TSPOperators
from metaheur.problems.tsp.tour_edges import PAIR_CHUNK, edge_keys, missing_edges


def isin_distances(solution: np.ndarray, population: np.ndarray) -> np.ndarray:
    """The definition: edges of ``solution`` missing from each member, by set intersection."""
    n = len(solution)

    def keys(t):
        return np.sort(np.minimum(t, np.roll(t, -1)) * n + np.maximum(t, np.roll(t, -1)))

    return np.array([n - np.isin(keys(solution), keys(t), assume_unique=True).sum() for t in population])


def related_tours(n: int, count: int, rng: np.random.Generator, changes: int) -> np.ndarray:
    """Tours of one random tour changed by ``changes`` random segment reversals each (many shared edges)."""
    base = rng.permutation(n)
    out = []
    for _ in range(count):
        t = base.copy()
        for _ in range(changes):
            i, j = sorted(rng.integers(0, n, 2))
            t[i:j] = t[i:j][::-1]
        out.append(t)
    return np.array(out)


@pytest.mark.parametrize(("n", "changes"), [(3, 1), (5, 2), (12, 3), (60, 0), (60, 4), (200, 40)])
def test_missing_edges_equal_the_set_intersection(n, changes):
    rng = np.random.default_rng(n + changes)
    a = related_tours(n, 7, rng, changes)
    b = np.concatenate([related_tours(n, 5, rng, changes), np.array([rng.permutation(n) for _ in range(3)]),
                        canonical_tours(a[:2]), a[:1, ::-1], np.roll(a[1:2], 3, axis=1)])
    got = missing_edges(edge_keys(a), edge_keys(b))
    assert np.array_equal(got, np.array([isin_distances(t, b) for t in a]))
    assert (got[0, -4] == 0) and (got[0, -2] == 0) and (got[1, -1] == 0)  # the same tour in any form


def test_missing_edges_in_chunks_of_pairs(monkeypatch):
    rng = np.random.default_rng(4)
    a, b = related_tours(40, 9, rng, 6), related_tours(40, 8, rng, 6)
    whole = missing_edges(edge_keys(a), edge_keys(b))
    monkeypatch.setattr("metaheur.problems.tsp.tour_edges.PAIR_CHUNK", 3)
    assert PAIR_CHUNK > 3
    assert np.array_equal(missing_edges(edge_keys(a), edge_keys(b)), whole)


def replace_one_by_one(ops, state, children, costs) -> None:
    """The replacement rule with each child's distances computed when it comes (the definition)."""
    pop, pc = state.population, state.costs
    near = max(1, ops.n // 10)
    for c in np.argsort(costs, kind="stable"):
        dist = isin_distances(children[c], pop)
        if (dist == 0).any():
            continue
        worse = np.flatnonzero(pc > int(costs[c]))
        if worse.size == 0:
            continue
        closest = worse[np.argmin(dist[worse])]
        victim = closest if dist[closest] < near else worse[np.argmax(pc[worse])]
        pop[victim], pc[victim] = children[c], int(costs[c])


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_replacement_with_distance_tables_equals_one_child_at_a_time(seed):
    tsp = uniform_tsp(50, seed=seed)
    ops = TSPOperators(tsp, cpu_device(), IslandParams(ga=GAParams(population=12, offspring=10, crossover="ox")))
    rng = np.random.default_rng(seed)
    pop = related_tours(50, 12, rng, 3)
    children = np.concatenate([related_tours(50, 6, rng, 2), pop[:2], pop[3:4, ::-1], related_tours(50, 3, rng, 1)])
    children[-1] = children[-2]  # two equal children: the second is a duplicate once the first is in
    pop_costs = np.array([tsp.tour_length(t) for t in pop])
    costs = np.array([tsp.tour_length(t) for t in children])
    states = [IslandState(0, population=pop.copy(), costs=pop_costs.copy()) for _ in range(2)]
    replace_members(ops, states[0], children, costs)
    replace_one_by_one(ops, states[1], children, costs)
    assert np.array_equal(states[0].population, states[1].population)
    assert np.array_equal(states[0].costs, states[1].costs)
    assert not np.array_equal(states[0].costs, pop_costs)  # some child came in
    assert np.array_equal(ops.distances(children[0], pop), isin_distances(children[0], pop))
