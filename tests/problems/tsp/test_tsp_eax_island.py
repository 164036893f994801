"""EAX islands (problems/tsp/eax_island.py): Nagata's generation on the island state."""

from __future__ import annotations

from dataclasses import replace
from types import SimpleNamespace

import numpy as np
import pytest

from metaheur.devices import parse_device
from metaheur.errors import MetaheurError
from metaheur.islands.island import IslandSpec, IslandState, island_for, run_epoch
from metaheur.islands.params import GAParams, IslandParams, with_crossover
from metaheur.problems import asymmetric_tsp, clustered_tsp, uniform_tsp
from metaheur.problems.tsp import eax_island as eax
from metaheur.problems.tsp.operators import CURVE_START_N, curve_starts
from metaheur.problems.tsp.params import EAXParams

TSP = clustered_tsp(150, seed=3)


def spec(population: int = 12, tries: int = 5, seed: int = 7) -> IslandSpec:
    ga = GAParams(population=population, offspring=1, crossover="eax", restart_after=0)
    return IslandSpec(0, TSP, "eax-test", "cpu", IslandParams(ga=ga, eax=EAXParams(tries=tries)), seed)


def changed(base: IslandSpec, eax: dict | None = None, **ga) -> IslandSpec:
    """``base`` with other GA parameters and [eax] keys."""
    params = base.params
    return replace(base, params=IslandParams(replace(params.ga, **ga), params.searches).with_search(
        replace(params.search(EAXParams), **(eax or {}))))


def test_default_tsp_island_is_eax_with_an_automatic_population():
    ga = uniform_tsp(1000, seed=1).default_params().ga
    assert (ga.crossover, ga.population) == ("eax", 0)
    assert with_crossover(ga, "ox").population > 0 and with_crossover(ga, "none").population == 1


def test_population_size_follows_the_time_budget():
    assert eax.population_size(0.01, 10.0, 4) == 300  # capped
    assert eax.population_size(0.5, 10.0, 4) == 6  # 30% of 10 s at 0.5 s a member
    assert eax.population_size(5.0, 10.0, 4) == 4  # at least what was built
    assert eax.population_size(0.5, None, 4) == eax.DEFAULT_POPULATION


def test_curve_starts_from_the_size_threshold_on_the_cpu():
    cpu = parse_device("cpu")
    assert curve_starts(uniform_tsp(CURVE_START_N, seed=1), cpu, "auto")
    assert not curve_starts(uniform_tsp(CURVE_START_N - 1, seed=1), cpu, "auto")
    assert curve_starts(TSP, cpu, "curve") and not curve_starts(uniform_tsp(CURVE_START_N, seed=1), cpu, "random")
    twin = asymmetric_tsp(30, seed=1).search_form().problem  # an ATSP's twin has no coordinates
    assert not curve_starts(twin, cpu, "auto")


def test_curve_starts_on_the_cpu_build_a_smaller_share_of_the_budget():
    own = EAXParams()
    assert eax.init_share(own, True, False) == eax.CURVE_INIT_SHARE < eax.INIT_SHARE
    assert eax.init_share(own, True, True) == eax.init_share(own, False, False) == eax.INIT_SHARE
    assert eax.init_share(replace(own, init_share=0.5), True, False) == 0.5
    assert eax.population_size(0.5, 10.0, 4, eax.CURVE_INIT_SHARE) == 4  # 10% of 10 s: at least what was built
    assert eax.population_size(0.1, 100.0, 4, eax.CURVE_INIT_SHARE) == 100


def test_curve_starts_need_coordinates_and_known_values():
    params = IslandParams(GAParams(population=0, offspring=1, crossover="eax"), eax=EAXParams(starts="curve"))
    with pytest.raises(MetaheurError, match="coordinates"):
        params.check_for(asymmetric_tsp(30, seed=1))
    assert params.check_for(TSP) is params
    with pytest.raises(MetaheurError, match="starts"):
        EAXParams(starts="greedy")
    with pytest.raises(MetaheurError, match="init_share"):
        EAXParams(init_share=0.0)


def test_a_curve_start_population_is_valid_diverse_and_reproducible():
    curve = changed(spec(), eax={"starts": "curve"})
    a, _ = run_epoch(curve, IslandState(0), generations=0)
    b, _ = run_epoch(curve, IslandState(0), generations=0)
    random, _ = run_epoch(changed(curve, eax={"starts": "random"}), IslandState(0), generations=0)
    assert all(sorted(t) == list(range(TSP.n)) and TSP.tour_length(t) == c
               for t, c in zip(a.population, a.costs, strict=True))
    assert np.array_equal(a.population, b.population) and not np.array_equal(a.population, random.population)
    assert len({tuple(t) for t in a.population}) > a.population.shape[0] // 2  # the turned curves differ


def test_seeded_sync_runs_with_curve_starts_are_reproducible():
    from metaheur import SolveParams, solve

    ga = replace(uniform_tsp(400, seed=2).default_params().ga, population=8)
    params = SolveParams(strategy="cpu-islands", islands=2, sync=True, epoch_generations=2, ga=ga,
                         searches={"eax": EAXParams(starts="curve")}, stop_at_optimum=False)
    runs = [solve(uniform_tsp(400, seed=2), seed=5, params=params, generations=4) for _ in range(2)]
    assert runs[0].cost == runs[1].cost == uniform_tsp(400, seed=2).tour_length(runs[0].permutation)
    assert np.array_equal(runs[0].permutation, runs[1].permutation)


def test_selection_turns_greedy_late_in_the_run():
    assert eax.selection(0.1, 0) == "entropy" and eax.selection(0.75, 0) == "greedy"
    assert eax.selection(None, 0) == "entropy" and eax.selection(None, eax.STALE_GREEDY) == "greedy"


def test_a_stagnant_island_restarts_only_before_the_last_30_percent_of_the_run():
    assert eax.may_restart(None) and eax.may_restart(0.69) and not eax.may_restart(eax.GREEDY_AT)
    restless = spec(population=6, tries=1)
    restless = changed(restless, restart_after=1)
    early, _ = run_epoch(restless, IslandState(0), generations=4, generation_limit=100)
    assert early.restarts >= 1  # one generation without a new best is enough early in the run
    late = replace(early, generation=80, stale=5, restarts=0)
    late, _ = run_epoch(restless, late, generations=4, generation_limit=100)
    assert late.restarts == 0


def test_a_converged_island_continues_as_ils_of_its_best_once_and_late_too():
    ils = spec(population=6, tries=1)
    ils = changed(ils, eax={"ils_kicks": 40}, restart_after=1, restart="ils")
    late, _ = run_epoch(ils, IslandState(0), generations=1, generation_limit=100)
    late = replace(late, generation=90, stale=5)  # in the greedy last 30 %: a rebuild would be refused
    late, stats = run_epoch(ils, late, generations=6, generation_limit=100)
    assert late.restarts == 1 and island_for(ils).continues_as_ils(late)
    before = late.costs.copy()
    kept = [t.copy() for t in late.population]
    after, stats = run_epoch(ils, late, generations=3, generation_limit=100)
    assert after.restarts == 1 and stats.ls_iterations >= 3 * 40  # kicks of the ILS of its best
    b = int(np.argmin(before))
    assert after.costs[b] <= before[b] and TSP.tour_length(after.population[b]) == after.costs[b]
    others = [i for i in range(len(kept)) if i != b]
    assert all(np.array_equal(after.population[i], kept[i]) for i in others)  # only the best is searched


def test_a_gpu_island_rebuilds_instead():
    ils = changed(spec(), restart="ils")
    gpu = ils.algorithm(ils, SimpleNamespace(device=SimpleNamespace(is_gpu=True)))
    cpu = ils.algorithm(ils, SimpleNamespace(device=SimpleNamespace(is_gpu=False)))
    assert cpu.goes_on_as_ils and cpu.may_restart(0.95)
    assert not gpu.goes_on_as_ils and not gpu.may_restart(0.95) and gpu.may_restart(0.5)


def test_the_default_continues_as_ils_from_its_size_threshold_with_coordinates():
    from metaheur.problems.tsp import solving as tsp_solving

    assert uniform_tsp(200, seed=1).default_params().ga.restart == "best"
    n = tsp_solving.ILS_CONTINUATION_N  # the rule reads the size and whether there are coordinates
    assert tsp_solving.default_params(SimpleNamespace(n=n, coords=np.zeros((n, 2)))).ga.restart == "ils"
    assert tsp_solving.default_params(SimpleNamespace(n=n, coords=None)).ga.restart == "best"
    assert tsp_solving.default_params(SimpleNamespace(n=n - 1, coords=np.zeros((n - 1, 2)))).ga.restart == "best"


def test_eax_generations_only_shorten_members_and_costs_are_exact():
    st, _ = run_epoch(spec(), IslandState(0), generations=1)
    before = st.costs.copy()
    st2, stats = run_epoch(spec(), st, generations=4)
    assert np.all(st2.costs <= before)
    assert all(TSP.tour_length(t) == c for t, c in zip(st2.population, st2.costs, strict=True))
    assert st2.best_cost == st2.costs.min() <= before.min()
    assert stats.ls_iterations > 0  # children built are counted as search steps


def test_eax_epochs_are_reproducible():
    a, _ = run_epoch(spec(), IslandState(0), generations=3)
    b, _ = run_epoch(spec(), IslandState(0), generations=3)
    assert np.array_equal(a.population, b.population) and np.array_equal(a.costs, b.costs)
    c, _ = run_epoch(spec(seed=8), IslandState(0), generations=3)
    assert not np.array_equal(a.population, c.population)


def test_an_automatic_population_is_sized_from_the_time_left():
    st, _ = run_epoch(spec(population=0), IslandState(0), generations=1, time_left=3.0)
    assert eax.MIN_POPULATION <= st.population.shape[0] <= eax.MAX_POPULATION
    again, _ = run_epoch(spec(population=0), st, generations=1, time_left=3.0)
    assert again.population.shape[0] == st.population.shape[0]  # kept once chosen


@pytest.mark.slow
def test_solve_with_eax_beats_the_multistart_at_equal_time():
    from metaheur import SolveParams, solve

    tsp = uniform_tsp(400, seed=5)
    ga = solve(tsp, time_limit=4, seed=1)
    ls = solve(tsp, seed=1, params=SolveParams(ga=with_crossover(tsp.default_params().ga, "none")), time_limit=4)
    assert ga.cost == tsp.tour_length(ga.permutation) and ls.cost == tsp.tour_length(ls.permutation)
    assert ga.cost <= ls.cost
