"""Migration between islands: topologies (who sends to whom), the best-worst and elite policies,
the interval, and parameter validation. States are hand-made, so the tests are exact and fast."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from testutil import sparse_qap

from metaheur.errors import MetaheurError
from metaheur.islands.island import IslandState
from metaheur.islands.migration import Migration, MigrationParams, Migrator
from metaheur.problems import random_qap, uniform_tsp

N = 8


def perm(k: int) -> np.ndarray:
    """A distinct permutation of range(N) for each k < 8! (Lehmer code)."""
    items, out = list(range(N)), []
    for base in range(N, 0, -1):
        k, r = divmod(k, base)
        out.append(items.pop(r))
    return np.array(out, dtype=np.int64)


def island(index: int, costs: list[int], first: int) -> IslandState:
    """An island whose members are perm(first), perm(first + 1), ... with ``costs``."""
    pop = np.array([perm(first + i) for i in range(len(costs))])
    c = np.array(costs, dtype=np.int64)
    k = int(np.argmin(c))
    return IslandState(index, population=pop, costs=c, best=pop[k].copy(), best_cost=int(c[k]), stale=5)


def islands(count: int, size: int = 4) -> list[IslandState]:
    """Island i's costs are 100 i + (10, 20, ...): island 0 is the best everywhere."""
    return [island(i, [100 * i + 10 * (j + 1) for j in range(size)], 100 * i) for i in range(count)]


def members(state: IslandState) -> set[tuple]:
    return {tuple(m) for m in state.population}


def assert_no_duplicates(state: IslandState) -> None:
    assert len(members(state)) == len(state.population)


def pairs(migrations: list[Migration]) -> list[tuple[int, int]]:
    return [(m.source, m.target) for m in migrations]


# ----------------------------------------------------------------------------------- params


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"topology": "star"}, "topology must be one of ring, complete, random"),
    ({"topology": ""}, "topology must be one of"),
    ({"policy": "random"}, "migration policy must be one of best-worst, elite"),
    ({"interval": -1}, "migration interval must be 0"),
    ({"interval": -2}, "migration interval must be 0"),
    ({"archive": 0}, "elite archive size must be at least 1"),
])
def test_invalid_parameters_raise(kwargs, message):
    with pytest.raises(MetaheurError, match=message):
        MigrationParams(**kwargs)


def test_defaults():
    p = MigrationParams()
    assert (p.topology, p.policy, p.interval, p.archive) == ("ring", "best-worst", 1, 8)


# -------------------------------------------------------------------------------- topologies


def test_ring_sends_to_the_next_island():
    states = islands(4)
    states.reverse()  # island 3 (worst) first in the list: index = list position is what counts
    for i, s in enumerate(states):
        s.index = i
    done = Migrator(MigrationParams(topology="ring"), seed=0).migrate(states, 0)
    # the list is ordered worst .. best, so only the best island (3) improves its successor (0)
    assert pairs(done) == [(3, 0)]


def test_ring_all_better_migrants_arrive():
    states = islands(3)
    # make every island's best better than its successor's worst
    for s in states:
        s.costs[-1] = 10_000
    done = Migrator(MigrationParams(topology="ring"), seed=0).migrate(states, 0)
    assert pairs(done) == [(0, 1), (1, 2), (2, 0)]
    assert [m.cost for m in done] == [10, 110, 210]
    for s in states:
        assert_no_duplicates(s)


def test_complete_sends_from_every_island_to_every_other():
    states = [island(i, [10 * i + 1, 1000, 1000, 1000, 1000], 10 * i) for i in range(4)]
    done = Migrator(MigrationParams(topology="complete"), seed=0).migrate(states, 0)
    assert sorted(pairs(done)) == [(i, j) for i in range(4) for j in range(4) if i != j]
    for i, s in enumerate(states):
        got = {tuple(perm(10 * j)) for j in range(4) if j != i}
        assert got <= members(s)
        assert_no_duplicates(s)


def test_random_topology_sends_once_to_another_island_deterministically():
    def run(seed):
        out = []
        migrator = Migrator(MigrationParams(topology="random"), seed=seed)
        for epoch in range(30):
            states = [island(i, [i + 1] + [10_000] * 5, 10 * i) for i in range(5)]
            out.append(pairs(migrator.migrate(states, epoch)))
        return out

    a, b, c = run(1), run(1), run(2)
    assert a == b
    assert a != c
    targets = Counter()
    for epoch in a:
        assert sorted(src for src, _ in epoch) == list(range(5))  # every island sends exactly once
        for src, dst in epoch:
            assert src != dst and 0 <= dst < 5
            targets[(src, dst)] += 1
    assert len(targets) == 20  # over 30 epochs every ordered pair turns up


@pytest.mark.parametrize("topology", ["ring", "complete", "random"])
def test_a_single_island_migrates_nothing(topology):
    states = islands(1)
    before = states[0].population.copy()
    assert Migrator(MigrationParams(topology=topology), 0).migrate(states, 0) == []
    assert np.array_equal(states[0].population, before)


def test_islands_without_a_population_are_skipped():
    states = islands(3)
    states[1] = IslandState(1)
    done = Migrator(MigrationParams(topology="complete"), 0).migrate(states, 0)
    assert all(m.source != 1 and m.target != 1 for m in done)
    assert states[1].population is None


# ------------------------------------------------------------------------------- best-worst


def test_best_worst_replaces_the_worst_only_when_better():
    sender = island(0, [50, 60], 0)
    receiver = island(1, [40, 70, 55], 10)
    done = Migrator(MigrationParams(), 0).migrate([sender, receiver], 0)
    # 0 -> 1: 50 < 70 replaces member 1 (the worst); 1 -> 0: 40 < 60 replaces sender's member 1
    assert pairs(done) == [(0, 1), (1, 0)]
    assert receiver.costs.tolist() == [40, 50, 55]
    assert np.array_equal(receiver.population[1], perm(0))
    assert sender.costs.tolist() == [50, 40]
    assert np.array_equal(sender.population[1], perm(10))
    assert sender.best_cost == 40 and np.array_equal(sender.best, perm(10)) and sender.stale == 0
    assert receiver.best_cost == 40 and receiver.stale == 5  # not improved: stale count kept


@pytest.mark.parametrize("worst", [50, 49])
def test_best_worst_never_replaces_with_equal_or_worse(worst):
    sender = island(0, [50, 80], 0)
    receiver = island(1, [30, worst], 10)
    before = receiver.population.copy()
    done = Migrator(MigrationParams(), 0).migrate([sender, receiver], 0)
    assert (0, 1) not in pairs(done)
    assert np.array_equal(receiver.population, before)
    assert receiver.costs.tolist() == [30, worst]


def test_best_worst_never_duplicates_a_member():
    sender = island(0, [5, 90], 0)
    receiver = island(1, [20, 99], 10)
    receiver.population[0] = sender.population[0]  # the receiver already holds the migrant
    receiver.costs[0] = 5
    done = Migrator(MigrationParams(), 0).migrate([sender, receiver], 0)
    assert (0, 1) not in pairs(done)
    assert receiver.costs.tolist() == [5, 99]
    assert_no_duplicates(receiver)


def test_migrants_are_copies():
    a, b = island(0, [1, 50], 0), island(1, [20, 99], 10)
    Migrator(MigrationParams(), 0).migrate([a, b], 0)
    b.population[1][:] = perm(500)
    assert np.array_equal(a.best, perm(0))
    assert np.array_equal(a.population[0], perm(0))


def test_bests_are_taken_before_anything_moves():
    """In one epoch a migrant travels one hop: island 0's best does not reach island 2 through 1."""
    states = [island(0, [1, 900], 0), island(1, [500, 901], 10), island(2, [700, 902], 20)]
    done = Migrator(MigrationParams(topology="ring"), 0).migrate(states, 0)
    assert pairs(done) == [(0, 1), (1, 2), (2, 0)]
    assert [m.cost for m in done] == [1, 500, 700]
    assert tuple(perm(0)) not in members(states[2])


# ------------------------------------------------------------------------------------ elite


def test_elite_archive_keeps_the_best_distinct_solutions():
    migrator = Migrator(MigrationParams(policy="elite", archive=3), 0)
    states = islands(4)
    migrator.migrate(states, 0)
    assert [c for c, _ in migrator.archive] == [10, 110, 210]  # island 3's best (310) did not make it
    assert [tuple(a) for _, a in migrator.archive] == [tuple(perm(0)), tuple(perm(100)), tuple(perm(200))]
    # the same bests again do not enter twice
    migrator.migrate(states, 1)
    costs = [c for c, _ in migrator.archive]
    assert len(costs) == len({tuple(a) for _, a in migrator.archive}) == 3
    assert costs == sorted(costs)


def test_elite_each_island_gets_the_best_archive_member_it_lacks():
    migrator = Migrator(MigrationParams(policy="elite", archive=4), 0)
    states = islands(3)
    done = migrator.migrate(states, 0)
    # archive: 10 (island 0), 110 (island 1), 210 (island 2)
    # island 0 holds 10: it lacks 110, which is not better than its worst (40): nothing
    # island 1 lacks 10: 10 < 140 replaces its worst; island 2 likewise
    assert pairs(done) == [(-1, 1), (-1, 2)]
    assert [m.cost for m in done] == [10, 10]
    assert states[1].best_cost == 10 and states[2].best_cost == 10
    assert states[1].costs.tolist() == [110, 120, 130, 10]
    for s in states:
        assert_no_duplicates(s)
    # next epoch: every island holds 10; island 1 and 2 lack other members, all worse than their worst
    again = migrator.migrate(states, 1)
    for m in again:
        assert m.source == -1
    for s in states:
        assert_no_duplicates(s)


def test_elite_archive_survives_islands_that_lose_their_best():
    migrator = Migrator(MigrationParams(policy="elite", archive=2), 0)
    states = islands(2)
    migrator.migrate(states, 0)
    fresh = [island(0, [500, 600], 300), island(1, [700, 800], 400)]
    done = migrator.migrate(fresh, 1)
    # the archive still holds 10 and 110: both islands get 10 back in place of their worst
    assert [c for c, _ in migrator.archive] == [10, 110]
    assert pairs(done) == [(-1, 0), (-1, 1)]
    assert fresh[0].best_cost == 10 and fresh[1].best_cost == 10


# --------------------------------------------------------------------------------- interval


@pytest.mark.parametrize("interval", [1, 2, 3, 5])
def test_interval(interval):
    migrator = Migrator(MigrationParams(interval=interval), 0)
    moved = []
    for epoch in range(12):
        states = islands(2)
        states[1].costs[-1] = 10_000
        if migrator.migrate(states, epoch):
            moved.append(epoch)
    assert moved == [e for e in range(12) if (e + 1) % interval == 0]


@pytest.mark.parametrize("policy", ["best-worst", "elite"])
def test_interval_zero_never_migrates(policy):
    migrator = Migrator(MigrationParams(interval=0, policy=policy, topology="complete"), 0)
    for epoch in range(12):
        states = islands(3)
        states[1].costs[-1] = 10_000
        before = [s.population.copy() for s in states]
        assert migrator.migrate(states, epoch) == []
        assert all(np.array_equal(b, s.population) for b, s in zip(before, states, strict=True))


def test_default_migration_by_instance_class():
    """None between islands on a uniformly random QAP instance; ring, best-worst, every epoch on
    a structured one and on the TSP."""
    assert random_qap(30, seed=1).default_migration() == MigrationParams(interval=0)
    assert sparse_qap(30, seed=1, density=0.2).default_migration() == MigrationParams()
    assert uniform_tsp(30, seed=1).default_migration() == MigrationParams()


# ----------------------------------------------------------------------------- TSP duplicates


def test_migration_does_not_duplicate_a_tsp_tour_given_in_another_rotation():
    # TSP islands hold canonical tours (TSPOperators returns them so), so the same cycle given in
    # another rotation or direction compares equal and is not received twice
    from metaheur.problems.tsp import canonical_tours

    tour = np.array([0, 3, 1, 6, 2, 7, 4, 5])
    rotated = np.roll(tour, 3)[::-1]
    sender_pop, receiver_pop = canonical_tours(np.array([tour])), canonical_tours(np.array([rotated, perm(7)]))
    sender = IslandState(0, population=sender_pop, costs=np.array([10]), best=sender_pop[0].copy(), best_cost=10)
    receiver = IslandState(1, population=receiver_pop, costs=np.array([10, 99]), best=receiver_pop[0].copy(),
                           best_cost=10)
    # the island model's own rule: distance 0 (same edges) is a duplicate (TSPOperators.distances)
    Migrator(MigrationParams(), 0).migrate([sender, receiver], 0)
    edges = [{frozenset(e) for e in zip(t, np.roll(t, -1), strict=True)} for t in receiver.population]
    assert edges[0] != edges[1], "the receiver now holds the same tour twice"


@pytest.mark.parametrize("policy", ["best-worst", "elite"])
def test_refusing_islands_send_but_do_not_receive(policy):
    states = islands(3)
    for s in states:
        s.costs[-1] = 10_000
    refusing = frozenset({1})
    before = members(states[1])
    done = Migrator(MigrationParams(topology="complete", policy=policy), seed=0).migrate(states, 0, refusing)
    assert members(states[1]) == before
    assert all(m.target != 1 for m in done)
    if policy == "best-worst":
        assert (1, 2) in pairs(done)  # island 1's best still leaves
    assert done
