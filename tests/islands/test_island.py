"""One memetic island: ``run_epoch`` is a pure function of (spec, state, budget) with generation
budgets, its costs are exact, and its replacement, multistart, resize and restart rules hold."""

from __future__ import annotations

import copy
import dataclasses
import pickle
import threading

import numpy as np
import pytest
from testutil import sparse_qap

from metaheur.errors import MetaheurError
from metaheur.islands.ils import ILSIsland
from metaheur.islands.island import (
    EpochStats,
    IslandSpec,
    IslandState,
    island_class,
    island_for,
    refusing_migrants,
    run_epoch,
)
from metaheur.islands.memetic import MemeticIsland, replace_members
from metaheur.islands.operators import operators_for
from metaheur.islands.params import GAParams, IslandParams, ls_island
from metaheur.problems import ATSP, QAP, asymmetric_tsp, random_qap, uniform_tsp
from metaheur.problems.atsp.solving import TIED_ATSP_NEIGHBOURS
from metaheur.problems.qap import UNIFORM_DOMINANCE
from metaheur.problems.qap.tabu import QAPTabuBatch, fresh_searches
from metaheur.problems.qap.tabu_island import TabuIsland
from metaheur.problems.tsp.eax_island import EAXIsland
from metaheur.problems.tsp.ils import ILSParams

QAP20 = random_qap(20, seed=3)
QAP8 = random_qap(8, seed=5)
TSP40 = uniform_tsp(40, seed=2)


def asym_qap(n: int, seed: int) -> QAP:
    """Asymmetric, non-zero diagonal, negative entries."""
    rng = np.random.default_rng(seed)
    return QAP(f"asym{n}", rng.integers(-30, 60, (n, n)), rng.integers(-30, 60, (n, n)))


def make_spec(problem, *, seed: int = 12345, index: int = 0, target=None, **ga) -> IslandSpec:
    base = {"population": 8, "offspring": 4, "ls_budget": 60 if problem.kind == "qap" else 4,
            "crossover": "ux" if problem.kind == "qap" else "ox"}
    params = IslandParams(ga=GAParams(**(base | ga)).check_for(problem))
    return IslandSpec(index, problem, problem.fingerprint(), "cpu", params, seed, target)


def exact(problem, solution) -> int:
    return problem.cost(solution) if isinstance(problem, QAP) else problem.tour_length(solution)


def snapshot(state: IslandState) -> IslandState:
    return copy.deepcopy(state)


def assert_states_equal(a: IslandState, b: IslandState) -> None:
    for f in dataclasses.fields(IslandState):
        x, y = getattr(a, f.name), getattr(b, f.name)
        if isinstance(x, np.ndarray) or isinstance(y, np.ndarray):
            assert x is not None and y is not None, f.name
            assert x.dtype == y.dtype and np.array_equal(x, y), f.name
        elif isinstance(x, dict) or isinstance(y, dict):  # saved tabu searches
            assert x is not None and y is not None and x.keys() == y.keys(), f.name
            for k in x:
                assert x[k].dtype == y[k].dtype and np.array_equal(x[k], y[k]), f"{f.name}[{k}]"
        else:
            assert x == y, f.name


def assert_exact(problem, state: IslandState) -> None:
    assert state.population.shape == (len(state.costs), problem.n)
    for member, cost in zip(state.population, state.costs, strict=True):
        assert sorted(member.tolist()) == list(range(problem.n))
        assert exact(problem, member) == int(cost)
    assert exact(problem, state.best) == state.best_cost
    assert state.best_cost <= int(state.costs.min())


def distinct(problem, spec, population) -> list[bool]:
    """For each member: is it different from every other member (TSP: as a cycle)?"""
    ops = operators_for(problem, spec.device, spec.params, spec.fingerprint)
    out = []
    for i, member in enumerate(population):
        d = ops.distances(member, population)
        out.append(bool(np.all(np.delete(d, i) > 0)))
    return out


CASES = [
    pytest.param(QAP20, {"crossover": "ux"}, id="qap-ux"),
    pytest.param(QAP20, {"crossover": "cx", "mutation": 2}, id="qap-cx-mutation"),
    pytest.param(asym_qap(15, 1), {"crossover": "pmx"}, id="qap-asym-pmx"),
    pytest.param(QAP20, {"crossover": "none", "population": 4, "offspring": 3}, id="qap-none"),
    pytest.param(TSP40, {"crossover": "ox"}, id="tsp-ox"),
    pytest.param(TSP40, {"crossover": "ox", "mutation": 2}, id="tsp-ox-mutation"),
    pytest.param(TSP40, {"crossover": "none", "population": 3, "offspring": 3}, id="tsp-none"),
]

# ------------------------------------------------------------------------------------- purity


@pytest.mark.parametrize(("problem", "ga"), CASES)
def test_run_epoch_is_a_pure_function(problem, ga):
    spec = make_spec(problem, **ga)
    empty = IslandState(0)
    first, stats1 = run_epoch(spec, empty, generations=2)
    assert_states_equal(empty, IslandState(0))  # the input is left alone
    again, stats2 = run_epoch(spec, IslandState(0), generations=2)
    assert_states_equal(first, again)
    assert (stats1.generations, stats1.ls_iterations, stats1.best_cost, stats1.improved, stats1.restarts) == \
        (stats2.generations, stats2.ls_iterations, stats2.best_cost, stats2.improved, stats2.restarts)

    # from a non-empty state, with another epoch run in between (operator caches must not leak)
    before = snapshot(first)
    a, _ = run_epoch(spec, first, generations=3)
    assert_states_equal(first, before)
    run_epoch(make_spec(problem, seed=999, **ga), again, generations=2)
    b, _ = run_epoch(spec, first, generations=3)
    assert_states_equal(a, b)
    assert_states_equal(first, before)
    assert a.generation == first.generation + 3
    assert a.ls_iterations > first.ls_iterations
    if a.searches is None:
        assert a.streams > first.streams
    else:  # continued tabu searches keep their random streams
        assert a.streams == first.streams and (a.searches["stats"][:, 2] > first.searches["stats"][:, 2]).all()


@pytest.mark.parametrize(("problem", "ga"), [
    pytest.param(QAP20, {}, id="qap-ga"), pytest.param(TSP40, {"crossover": "eax", "population": 8}, id="tsp-eax")])
def test_islands_taking_turns_in_a_thread_share_operators_but_not_results(problem, ga):
    """Islands whose epochs take turns in one thread (a worker process) share its operators, built
    once; a thread running at the same time gets its own; an island's epochs give the same states
    whether another island's epochs ran in between or not."""
    a, b = make_spec(problem, **ga), make_spec(problem, seed=5, index=1, **ga)
    ops = operators_for(problem, "cpu", a.params, a.fingerprint)
    assert operators_for(problem, "cpu", b.params, b.fingerprint) is ops
    other = []
    thread = threading.Thread(target=lambda: other.append(operators_for(problem, "cpu", a.params, a.fingerprint)))
    thread.start()
    thread.join()
    assert other[0] is not ops
    alone = run_epoch(a, run_epoch(a, IslandState(0), generations=2)[0], generations=2)[0]
    first = run_epoch(a, IslandState(0), generations=2)[0]
    run_epoch(b, IslandState(1), generations=3)
    assert_states_equal(run_epoch(a, first, generations=2)[0], alone)


def test_two_epochs_equal_one_double_epoch():
    spec = make_spec(QAP20, restart_after=0)
    s, _ = run_epoch(spec, IslandState(0), generations=2)
    s, _ = run_epoch(spec, s, generations=3)
    t, _ = run_epoch(spec, IslandState(0), generations=5)
    assert_states_equal(s, t)


def test_island_seeds_matter():
    a, _ = run_epoch(make_spec(QAP20, seed=1), IslandState(0), generations=1)
    b, _ = run_epoch(make_spec(QAP20, seed=2), IslandState(0), generations=1)
    assert not np.array_equal(a.population, b.population)


def test_stats_describe_the_epoch():
    spec = make_spec(QAP20, index=3)
    s0, st0 = run_epoch(spec, IslandState(3), generations=2)
    assert isinstance(st0, EpochStats)
    assert (st0.index, st0.device, st0.generations) == (3, "cpu", 2)
    assert st0.improved is True and st0.best_cost == s0.best_cost
    assert st0.ls_iterations == s0.ls_iterations > 0
    assert st0.seconds >= 0
    s1, st1 = run_epoch(spec, s0, generations=1)
    assert st1.ls_iterations == s1.ls_iterations - s0.ls_iterations == 4 * 60  # offspring x ls_budget
    assert st1.improved == (s1.best_cost < s0.best_cost)
    assert s1.generation == 3


def test_building_a_tsp_population_by_descent_counts_its_moves():
    """An EAX island's first members are random tours brought to local optima by a descent (no
    kicks): its improving moves are the island's local-search iterations."""
    spec = make_spec(TSP40, crossover="eax", ls_budget=0)
    state, stats = run_epoch(spec, IslandState(0), generations=0)
    assert stats.generations == 0 and state.population.shape[0] == 8
    ops = operators_for(TSP40, "cpu", spec.params, spec.fingerprint)
    starts = np.array([np.random.default_rng(k).permutation(40) for k in range(3)])
    _, _, iterations = ops.improve(starts, np.arange(3, dtype=np.uint64))
    assert (iterations > 0).all()  # a random tour of 40 cities is far from a local optimum
    assert stats.ls_iterations == state.ls_iterations > 0


# -------------------------------------------------------------------------------- exact costs


@pytest.mark.parametrize(("problem", "ga"), CASES)
def test_every_member_cost_is_exact(problem, ga):
    spec = make_spec(problem, **ga)
    state = IslandState(0)
    for _ in range(3):
        state, _ = run_epoch(spec, state, generations=1)
        assert_exact(problem, state)


def test_time_mode_runs_at_least_one_generation_and_costs_stay_exact():
    spec = make_spec(QAP20)
    state, stats = run_epoch(spec, IslandState(0), seconds=0.05)
    assert stats.generations >= 1 and state.generation == stats.generations
    assert_exact(QAP20, state)
    state, stats = run_epoch(spec, state, seconds=1e-9)
    assert stats.generations == 1


def test_time_left_cuts_an_epoch_short_and_keeps_costs_exact():
    spec = make_spec(QAP20, ls_budget=100_000)
    state, stats = run_epoch(spec, IslandState(0), generations=50, time_left=0.3)
    assert stats.generations < 50
    assert_exact(QAP20, state)


def test_target_stops_the_epoch():
    spec = make_spec(QAP20)
    start, _ = run_epoch(spec, IslandState(0), generations=1)
    reached = dataclasses.replace(spec, target=start.best_cost)
    state, stats = run_epoch(reached, start, generations=40)
    assert stats.generations == 0 and state.generation == start.generation
    unreachable = dataclasses.replace(spec, target=-1)
    _, stats = run_epoch(unreachable, start, generations=2)
    assert stats.generations == 2


# ------------------------------------------------------------------------------- multistart


@pytest.mark.parametrize("problem", [QAP20, asym_qap(14, 3), TSP40], ids=["qap", "qap-asym", "tsp"])
def test_multistart_costs_never_increase(problem):
    spec = make_spec(problem, crossover="none", population=4, offspring=3, restart_after=0)
    state, _ = run_epoch(spec, IslandState(0), generations=0)
    assert state.population.shape[0] == 4
    for _ in range(6):
        before = state.costs.copy()
        state, _ = run_epoch(spec, state, generations=1)
        assert np.all(state.costs <= before), (before, state.costs)
        assert_exact(problem, state)


# --------------------------------------------------------------------------------- resizing


@pytest.mark.parametrize(("problem", "crossover"), [(QAP20, "ux"), (TSP40, "ox")], ids=["qap", "tsp"])
def test_population_grows_to_the_spec(problem, crossover):
    small = make_spec(problem, population=4, crossover=crossover)
    state, _ = run_epoch(small, IslandState(0), generations=1)
    big = make_spec(problem, population=9, crossover=crossover)
    grown, _ = run_epoch(big, state, generations=0)
    assert grown.population.shape == (9, problem.n) and grown.costs.shape == (9,)
    assert np.array_equal(grown.population[:4], state.population)  # the old members stay
    assert grown.best_cost <= state.best_cost
    assert grown.ls_iterations > state.ls_iterations  # the new members were improved
    assert_exact(problem, grown)
    assert state.population.shape[0] == 4  # input untouched
    more, _ = run_epoch(big, grown, generations=1)
    assert more.population.shape[0] == 9
    assert_exact(problem, more)


@pytest.mark.parametrize(("problem", "crossover"), [(QAP20, "ux"), (TSP40, "ox")], ids=["qap", "tsp"])
def test_population_shrinks_to_the_spec_keeping_the_best(problem, crossover):
    big = make_spec(problem, population=10, crossover=crossover)
    state, _ = run_epoch(big, IslandState(0), generations=1)
    small = make_spec(problem, population=3, crossover=crossover)
    shrunk, _ = run_epoch(small, state, generations=0)
    assert shrunk.population.shape == (3, problem.n)
    assert sorted(shrunk.costs.tolist()) == sorted(state.costs.tolist())[:3]
    assert shrunk.best_cost == state.best_cost
    assert any(np.array_equal(m, state.best) for m in shrunk.population)
    assert_exact(problem, shrunk)
    assert state.population.shape[0] == 10


# --------------------------------------------------------------------------------- restarts


@pytest.mark.parametrize(("problem", "ga"), [
    (QAP8, {"crossover": "ux", "population": 5, "offspring": 2, "ls_budget": 40}),
    (uniform_tsp(12, seed=4), {"crossover": "ox", "population": 4, "offspring": 2, "ls_budget": 3}),
], ids=["qap", "tsp"])
def test_restart_after_stagnation_keeps_the_best(problem, ga):
    spec = make_spec(problem, restart_after=2, **ga)
    state, _ = run_epoch(spec, IslandState(0), generations=1)
    best_so_far = state.best_cost
    for _ in range(12):
        before = snapshot(state)
        state, stats = run_epoch(spec, state, generations=1)
        assert state.best_cost <= best_so_far
        best_so_far = state.best_cost
        assert any(np.array_equal(m, state.best) for m in state.population), "the best left the population"
        assert int(state.costs.min()) == state.best_cost
        if state.restarts > before.restarts:
            assert state.stale == 0
            assert stats.restarts == state.restarts
        assert_exact(problem, state)
    assert state.restarts >= 1, "a tiny instance should stagnate and restart"


def until_restart(spec: IslandSpec, state: IslandState) -> tuple[IslandState, IslandState]:
    """One generation at a time until the island restarts: (the state before, the state after)."""
    for _ in range(20):
        before = snapshot(state)
        state, _ = run_epoch(spec, state, generations=1)
        if state.restarts > before.restarts:
            return before, state
    pytest.fail("no restart in 20 stale-prone generations")


def test_restart_refills_all_but_the_best():
    spec = make_spec(QAP8, restart_after=1, population=6, offspring=1, ls_budget=30)
    before, state = until_restart(spec, run_epoch(spec, IslandState(0), generations=1)[0])
    assert np.array_equal(state.best, before.best) or state.best_cost < before.best_cost
    assert any(np.array_equal(m, state.best) for m in state.population)
    changed = sum(not np.array_equal(a, b) for a, b in zip(state.population, before.population, strict=True))
    assert changed >= 1
    assert state.streams > before.streams + 1  # new members drew new random streams (one each)
    assert_exact(QAP8, state)


def test_a_full_restart_replaces_every_member_and_keeps_the_best_apart():
    spec = make_spec(QAP20, restart_after=1, population=6, offspring=1, ls_budget=30, restart="full")
    state, _ = run_epoch(spec, IslandState(0), generations=0)
    assert state.cycle_best is None  # no full restart yet
    before, state = until_restart(spec, state)
    assert state.streams == before.streams + 1 + 6  # the generation's child, then six new members
    assert not any(np.array_equal(m, p) for m in state.population for p in before.population)
    assert state.best_cost <= before.best_cost and QAP20.cost(state.best) == state.best_cost
    assert state.cycle_best == int(state.costs.min()) and state.stale == 0
    assert_exact(QAP20, state)


def test_after_a_full_restart_stagnation_counts_from_the_new_population():
    spec = make_spec(QAP20, restart_after=1000, population=6, offspring=4, restart="full")
    state, _ = run_epoch(spec, IslandState(0), generations=2)
    state.best_cost, state.stale = int(state.costs.min()) - 1_000_000, 7  # an island best the population cannot reach
    improving = dataclasses.replace(state, cycle_best=int(state.costs.max()) + 1)
    after, _ = run_epoch(spec, improving, generations=1)
    assert after.stale == 0 and after.cycle_best == int(after.costs.min())
    stuck = dataclasses.replace(state, cycle_best=-1_000_000)
    after, _ = run_epoch(spec, stuck, generations=1)
    assert after.stale == 8 and after.cycle_best == -1_000_000
    after, _ = run_epoch(spec, state, generations=1)  # keep-best stagnation (no cycle best): the island's best
    assert after.stale == 8


def test_the_restart_rule_is_checked():
    with pytest.raises(MetaheurError, match="unknown restart 'half': use one of best, full"):
        GAParams(restart="half")


def test_default_ga_and_tabu_follow_the_instance_class():
    uniform, sparse, tsp = random_qap(30, seed=4), sparse_qap(30, seed=4), uniform_tsp(30, seed=4)
    assert uniform.dominance < UNIFORM_DOMINANCE < sparse.dominance
    assert uniform.uniformly_random and not sparse.uniformly_random
    uniform, sparse, tsp = (p.default_params() for p in (uniform, sparse, tsp))
    assert (uniform.ga.restart, sparse.ga.restart) == ("full", "best")
    assert (uniform.tabu.scale, sparse.tabu.scale, tsp.tabu.scale) == (4, 8, 8)
    assert tsp.ga.crossover == "eax" and uniform.ga.crossover == "ux"


def test_default_candidate_lists_grow_with_the_ties_of_an_atsp():
    """An ATSP whose arcs tie at zero reduced cost beyond what lists of 10 hold gets longer lists;
    one without such ties, and the TSP, keep the default."""
    n = 30
    rng = np.random.default_rng(3)
    tied = np.where(rng.random((n, n)) < 0.6, 0, rng.integers(1, 4, size=(n, n)))  # most arcs cost 0
    np.fill_diagonal(tied, 0)
    twin = ATSP("tied", tied).transformed().tsp
    assert np.median(twin.tied_arcs()) >= 9
    assert twin.default_params().ils.neighbours == TIED_ATSP_NEIGHBOURS > ILSParams().neighbours
    assert ATSP("tied", tied).default_params().ils.neighbours == TIED_ATSP_NEIGHBOURS
    plain = asymmetric_tsp(n, seed=3).transformed().tsp
    assert np.median(plain.tied_arcs()) < 9 and plain.default_params().ils == ILSParams()
    assert uniform_tsp(n, seed=3).default_params().ils == ILSParams()


def test_tied_arcs_count_the_zero_reduced_costs():
    """All arcs equal: every reduced cost is zero, so every city ties on all its n - 1 arcs."""
    twin = ATSP("flat", np.full((6, 6), 5)).transformed().tsp
    assert twin.tied_arcs().tolist() == [5] * 12


def test_best_is_the_population_best_after_an_epoch_ending_on_a_restart():
    spec = make_spec(QAP20, seed=0, restart_after=1, population=6, offspring=1, ls_budget=20, crossover="ux")
    state, _ = run_epoch(spec, IslandState(0), generations=0)
    for _ in range(10):
        restarts = state.restarts
        state, _ = run_epoch(spec, state, generations=1)
        if state.restarts > restarts:
            assert state.best_cost == int(state.costs.min())
            assert QAP20.cost(state.best) == state.best_cost


def test_best_is_the_population_best_after_the_population_grows():
    state, _ = run_epoch(make_spec(QAP20, seed=0, population=2), IslandState(0), generations=0)
    grown, _ = run_epoch(make_spec(QAP20, seed=0, population=12), state, generations=0)
    assert grown.best_cost == int(grown.costs.min())


def test_no_restart_when_disabled():
    spec = make_spec(QAP8, restart_after=0, population=4, offspring=2, ls_budget=40)
    state, _ = run_epoch(spec, IslandState(0), generations=15)
    assert state.restarts == 0
    assert state.stale >= 10  # n = 8 converges at once: the island is stale, yet never restarts


# ------------------------------------------------------------------------------- replacement


@pytest.mark.parametrize(("problem", "ga"), [
    (QAP20, {"crossover": "ux"}),
    (QAP8, {"crossover": "cx", "population": 10, "offspring": 6, "ls_budget": 5}),
    (uniform_tsp(15, seed=9), {"crossover": "ox", "population": 8, "offspring": 6, "ls_budget": 1}),
], ids=["qap20-ux", "qap8-cx", "tsp15-ox"])
def test_replacement_never_introduces_duplicates(problem, ga):
    spec = make_spec(problem, restart_after=0, **ga)
    state, _ = run_epoch(spec, IslandState(0), generations=0)
    n_distinct = sum(distinct(problem, spec, state.population))
    for _ in range(8):
        before = snapshot(state)
        state, _ = run_epoch(spec, state, generations=1)
        changed = [i for i in range(len(state.costs)) if not np.array_equal(state.population[i], before.population[i])]
        unique = distinct(problem, spec, state.population)
        for i in changed:
            assert unique[i], f"replaced member {i} duplicates another member"
            assert state.costs[i] < before.costs[i], "a child replaces only a worse member"
        assert sum(unique) >= n_distinct
        n_distinct = sum(unique)
        assert int(state.costs.min()) <= int(before.costs.min())


class _HammingOps:
    n = 10

    @staticmethod
    def distances(solution, population):
        return (population != solution[None, :]).sum(axis=1)


def _perm(*head):
    rest = [x for x in range(10) if x not in head]
    return np.array(list(head) + rest, dtype=np.int64)


def test_replace_rules_on_hand_made_children():
    """Steady-state replacement: duplicates and children worse than everyone are dropped; a child
    replaces the closest worse member when that one is within n/10, else the worst member."""
    pop = np.array([_perm(0), _perm(1), _perm(2, 3), _perm(4, 5, 6, 7)])
    costs = np.array([10, 50, 40, 30], dtype=np.int64)
    state = IslandState(0, population=pop.copy(), costs=costs.copy())
    near_member_3 = pop[3].copy()
    near_member_3[[8, 9]] = near_member_3[[9, 8]]  # distance 2 from member 3: not within n/10 = 1
    far = _perm(9, 8, 7, 6, 5)
    children = np.array([pop[0], near_member_3, near_member_3, far, _perm(3, 2, 1)])
    child_costs = np.array([1, 20, 20, 35, 99], dtype=np.int64)
    replace_members(_HammingOps(), state, children, child_costs)
    # pop[0] duplicate dropped; near_member_3 (20) replaces the worst (member 1, cost 50);
    # its twin is a duplicate now; far (35) replaces the worst remaining above 35 (member 2, 40);
    # the last child is worse than everyone
    assert state.costs.tolist() == [10, 20, 35, 30]
    assert np.array_equal(state.population[1], near_member_3)
    assert np.array_equal(state.population[2], far)
    assert np.array_equal(state.population[0], pop[0]) and np.array_equal(state.population[3], pop[3])


def test_replace_prefers_a_close_worse_member():
    class Ops(_HammingOps):
        n = 30

    pop = np.array([np.arange(30), np.arange(30)[::-1].copy(), np.roll(np.arange(30), 7)])
    costs = np.array([100, 500, 300], dtype=np.int64)
    child = np.arange(30)
    child[[0, 1]] = child[[1, 0]]  # distance 2 from member 0 (< n/10 = 3) but member 0 is better
    state = IslandState(0, population=pop.copy(), costs=costs.copy())
    replace_members(Ops(), state, child[None], np.array([200]))
    assert state.costs.tolist() == [100, 200, 300]  # not member 0 (better), the worst instead
    close = np.roll(np.arange(30), 7)
    close[[3, 4]] = close[[4, 3]]  # distance 2 from member 2 (cost 300 > 250): replaces it, not the worst
    state = IslandState(0, population=pop.copy(), costs=costs.copy())
    replace_members(Ops(), state, close[None], np.array([250]))
    assert state.costs.tolist() == [100, 500, 250]
    assert np.array_equal(state.population[2], close)


def test_tsp_distance_ignores_rotation_and_direction():
    spec = make_spec(TSP40)
    ops = operators_for(TSP40, "cpu", spec.params, spec.fingerprint)
    tour = np.random.default_rng(1).permutation(40)
    same = np.stack([tour, np.roll(tour, 5), tour[::-1], np.roll(tour[::-1], 11)])
    assert ops.distances(tour, same).tolist() == [0, 0, 0, 0]
    other = tour.copy()
    other[[3, 20]] = other[[20, 3]]
    assert ops.distances(tour, other[None])[0] > 0


def test_tsp_eax_crossover_is_not_ox():
    eax, _ = run_epoch(make_spec(TSP40, crossover="eax"), IslandState(0), generations=3)
    ox, _ = run_epoch(make_spec(TSP40, crossover="ox"), IslandState(0), generations=3)
    assert not (np.array_equal(eax.population, ox.population) and eax.streams == ox.streams
                and eax.ls_iterations == ox.ls_iterations)


# ------------------------------------------------------------------------------- transport


@pytest.mark.parametrize("problem", [QAP20, TSP40])
def test_pickled_state_is_narrow_and_round_trips(problem):
    """A state crosses to a worker every epoch: its solutions travel as int16, and come back
    equal, with their type."""
    import pickle

    state, _ = run_epoch(make_spec(problem), IslandState(0), generations=2)
    wire = pickle.dumps(state)
    plain = pickle.dumps(dict(state.__dict__))
    assert len(plain) - len(wire) >= 0.6 * (state.population.nbytes + state.best.nbytes)  # 3/4, less a header
    back = pickle.loads(wire)
    assert_states_equal(back, state)
    assert back.population.dtype == state.population.dtype == np.int64
    wide = dataclasses.replace(state, population=state.population + 40_000, best=state.best.astype(np.int32))
    assert_states_equal(pickle.loads(pickle.dumps(wide)), wide)  # int32 on the wire, int32 kept


# ------------------------------------------------------------------------------- tabu islands


def tabu_spec(restart_after: int = 0, index: int = 0) -> IslandSpec:
    return make_spec(QAP20, index=index, crossover="none", population=1, offspring=1, ls_budget=70,
                     restart_after=restart_after)


def test_a_tabu_island_is_one_uninterrupted_tabu_search():
    """Epochs of a QAP local-search-only island continue one robust tabu search: pickled between
    epochs, it ends where one search from the island's first member ends after as many iterations."""
    spec = tabu_spec()
    first, _ = run_epoch(spec, IslandState(0), generations=0)
    assert first.searches is None and first.population.shape == (1, QAP20.n)
    pieces = first
    for gens in (1, 3, 2):
        pieces, _ = run_epoch(spec, pickle.loads(pickle.dumps(pieces)), generations=gens)
    whole, _ = run_epoch(spec, first, generations=6)
    assert_states_equal(pieces, whole)
    assert pieces.searches["stats"][0, 2] == 6 * 70 and pieces.ls_iterations - first.ls_iterations == 6 * 70
    search = QAPTabuBatch(QAP20, "cpu", count=1, seed=0)
    search.resume(fresh_searches(QAP20, first.population, pieces.searches["keys"]))
    r = search.run(6 * 70)
    assert np.array_equal(r.best, pieces.population) and int(r.best_costs[0]) == int(pieces.costs[0])
    assert np.array_equal(search.snapshot()["tabu"], pieces.searches["tabu"])
    assert_exact(QAP20, pieces)


def test_a_migrant_starts_a_new_tabu_search():
    spec = tabu_spec()
    state, _ = run_epoch(spec, IslandState(0), generations=2)
    migrant = np.random.default_rng(4).permutation(QAP20.n)
    state.population[0], state.costs[0] = migrant, QAP20.cost(migrant)  # what the migration does
    after, _ = run_epoch(spec, state, generations=1)
    assert after.searches["stats"][0, 2] == 70  # a new search, counted from the migrant
    assert after.streams == state.streams + 1  # with a stream of its own
    assert int(after.costs[0]) <= QAP20.cost(migrant)
    assert_exact(QAP20, after)


def test_ls_islands_take_migrants_only_when_stale():
    tabu, ga = tabu_spec(restart_after=3), make_spec(QAP20, index=1)
    assert refusing_migrants([tabu, ga], [IslandState(0, stale=2), IslandState(1, stale=50)]) == {0}
    assert refusing_migrants([tabu, ga], [IslandState(0, stale=3), IslandState(1, stale=0)]) == frozenset()
    assert refusing_migrants([tabu_spec(restart_after=0)], [IslandState(0, stale=10**6)]) == {0}
    tsp_ls_only = make_spec(TSP40, crossover="none", population=1, offspring=1)
    assert refusing_migrants([tsp_ls_only], [IslandState(0)]) == frozenset()


def test_tabu_island_parameters():
    ga = GAParams(population=20, offspring=10, crossover="ux", ls_budget=0, restart_after=30)
    tabu = ls_island(ga)
    assert (tabu.crossover, tabu.population, tabu.offspring) == ("none", 1, 1)
    assert tabu.restart_after == 0 and tabu.ls_budget is None  # never restarts, always searches
    spec = tabu_spec(restart_after=tabu.restart_after)
    assert refusing_migrants([spec], [IslandState(0, stale=10**6)]) == {0}  # however long it stalls
    assert ls_island(dataclasses.replace(ga, ls_budget=300)).ls_budget == 300


def test_default_ls_islands_are_half_the_cpu_islands():
    assert [QAP8.default_local_search_islands(k) for k in (1, 2, 3, 5)] == [0, 1, 1, 2]
    assert [TSP40.default_local_search_islands(k) for k in (1, 2, 5)] == [0, 0, 0]


def test_equal_members_of_a_tabu_island_keep_their_own_searches():
    spec = make_spec(QAP20, crossover="none", population=2, offspring=1, ls_budget=70, restart_after=0)
    state, _ = run_epoch(spec, IslandState(0), generations=2)
    state.population[1], state.costs[1] = state.population[0], state.costs[0]  # as if both reached one optimum
    state.searches["best"][1] = state.searches["best"][0]
    after, _ = run_epoch(spec, state, generations=1)
    assert after.streams == state.streams  # no new search was started
    assert not np.array_equal(after.searches["perm"][0], after.searches["perm"][1]) or \
        not np.array_equal(after.searches["tabu"][0], after.searches["tabu"][1])
    assert (after.searches["stats"][:, 2] == 3 * 70).all()


# ------------------------------------------------------------------------------- algorithm classes
@pytest.mark.parametrize(("problem", "crossover", "cls", "label"), [
    (QAP8, "ux", MemeticIsland, "GA (ux)"),
    (QAP8, "none", TabuIsland, "tabu search"),
    (uniform_tsp(12, seed=4), "ox", MemeticIsland, "GA (ox)"),
    (uniform_tsp(12, seed=4), "none", ILSIsland, "ILS chains"),
    (uniform_tsp(12, seed=4), "eax", EAXIsland, "GA (eax)"),
])
def test_the_parameters_choose_the_island_class(problem, crossover, cls, label):
    spec = make_spec(problem, crossover=crossover)
    assert spec.algorithm is cls and island_class(problem, spec.params.ga) is cls
    assert cls.label(spec) == label
    assert isinstance(island_for(spec), cls)
    # only a tabu island may refuse migrants
    assert cls.accepts_migrants(spec.params, IslandState(0, stale=0)) == (cls is not TabuIsland)


def test_an_ils_island_continues_each_members_search_in_turn():
    tsp = uniform_tsp(15, seed=2)
    spec = make_spec(tsp, crossover="none", population=3, offspring=1, ls_budget=2)
    first, _ = run_epoch(spec, IslandState(0), generations=0)
    after, stats = run_epoch(spec, first, generations=3)
    assert stats.ls_iterations == 3 * 2  # one child a generation, 2 kicks each
    assert (after.costs <= first.costs).all()  # a continued search replaces its member only when not worse
    assert_exact(tsp, after)
