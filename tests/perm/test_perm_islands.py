"""A user problem on the islands: every crossover's memetic GA and the local-search island give
valid solutions with exact values; solve() in the problem's own sense (a maximisation too),
seeded runs repeat, checkpoints resume, the numpy-only route warns once, Dask runs it."""

from __future__ import annotations

import importlib.util
import warnings
from dataclasses import replace

import numpy as np
import pytest
from perm_problems import CachedQAP, MaxQAP, Tardiness, random_qap_arrays, random_tardiness
from testutil import solve_with

from metaheur import GAParams, PermSearchParams, resume
from metaheur import solver as solver_module
from metaheur.devices import cpu_device
from metaheur.islands.island import IslandSpec, IslandState, run_epoch
from metaheur.islands.numpy_operators import NumpyOperators
from metaheur.islands.params import with_crossover
from metaheur.islands.perm_operators import neh

HAS_DASK = importlib.util.find_spec("distributed") is not None


@pytest.fixture(autouse=True)
def cpu_only(monkeypatch):
    monkeypatch.setattr(solver_module, "available_devices", lambda: [cpu_device()])


class NumpyTardiness(Tardiness):
    """The tardiness problem without device code (the numpy-only route)."""

    kind = "npwt"
    device_code = None


def _epoch(pb, crossover=None, generations=2, perm=None):
    params = pb.default_params()
    if crossover:
        params = replace(params, ga=with_crossover(params.ga, crossover))
    if perm:
        params = replace(params, perm=perm)
    params = replace(params, ga=replace(params.ga, population=6, offspring=3, ls_budget=5))
    spec = IslandSpec(0, pb, pb.fingerprint(), "cpu", params, 123)
    state, _ = run_epoch(spec, IslandState(0), generations=generations)
    assert state.generation == generations
    assert all(sorted(p) == list(range(pb.n)) for p in state.population)
    assert np.array_equal(state.costs, pb.engine_sign * pb.evaluate(state.population))
    assert state.best_cost == pb.engine_sign * pb.value(state.best)
    return spec, state


@pytest.mark.parametrize("crossover", ["ox", "pmx", "cx", "ux"])
def test_every_crossover_runs_the_memetic_island(crossover):
    spec, _ = _epoch(random_tardiness(17, 1), crossover)
    assert spec.algorithm.__name__ == "MemeticIsland"


@pytest.mark.parametrize(("method", "label"), [("tabu", "tabu search chains"), ("ils", "ILS chains"),
                                             ("ig", "iterated greedy chains"), ("auto", "iterated greedy chains")])
def test_the_local_search_island_continues_searches_and_its_label_names_them(method, label):
    spec, _ = _epoch(random_tardiness(15, 2), "none", perm=PermSearchParams(method=method))
    assert spec.algorithm.__name__ == "ILSIsland" and spec.algorithm.label(spec) == label


class MixedTardiness(Tardiness):
    """The tardiness problem declaring islands of two kinds: half the CPU islands, rounded down, are
    chains of its local search beside GA islands."""

    kind = "mixwt"

    def default_local_search_islands(self, cpu_islands: int) -> int:
        return cpu_islands // 2


def test_a_user_problem_declares_a_mix_of_ga_islands_and_chains():
    base = random_tardiness(16, 3)
    options = {"strategy": "cpu-islands", "islands": 4, "generations": 2, "sync": True, "epoch_generations": 1,
               "seed": 2, "ga": GAParams(population=6, offspring=3, crossover="ox", ls_budget=5)}
    declared = MixedTardiness(base.p, base.w, base.due)
    mixed = solve_with(declared, **options)
    chain, ga = "iterated greedy chains", "GA (ox)"
    assert [row.algorithm for row in mixed.islands] == [ga, chain, ga, chain]
    for row in mixed.islands:  # both kinds searched: GA generations on one, chain steps on the other
        assert (row.generations, row.search_steps) == ((2, 0) if row.algorithm == ga else (0, 2))
        assert row.ls_iterations > 0
    assert mixed.islands[1].population == 1 and mixed.islands[0].population == 6
    assert mixed.value == base.value(mixed.permutation)
    assert [row.algorithm for row in solve_with(base, **options).islands] == [ga] * 4  # no mix declared
    asked = solve_with(base, ls_islands=1, **options)  # a mix asked for on a problem that declares none
    assert [row.algorithm for row in asked.islands] == [ga, ga, ga, chain]
    chains = solve_with(declared, **options | {"ga": with_crossover(options["ga"], "none")})
    assert [row.algorithm for row in chains.islands] == [chain] * 4  # local-search islands already: no GA added


def test_a_mixed_plan_gives_the_chains_one_childs_search_a_generation():
    base = random_tardiness(16, 3)
    pb = MixedTardiness(base.p, base.w, base.due)
    ga = GAParams(population=6, offspring=3, crossover="ox", ls_budget=5)
    devices = [cpu_device()] * 3
    plan = solver_module._with_ls_islands(pb, [replace(pb.default_params(), ga=ga)] * 3, devices, None)
    assert [p.ga.crossover for p in plan] == ["ox", "ox", "none"]
    assert (plan[2].ga.population, plan[2].ga.offspring, plan[2].ga.ls_budget) == (1, 1, 5)
    assert plan[2].perm == plan[0].perm  # the same local search as the GA's children


def test_a_maximisation_islands_minimise_the_engine_cost():
    _epoch(MaxQAP(*random_qap_arrays(9, 3)))


def test_neh_inserts_by_decreasing_key_at_the_first_best_position():
    pb = random_tardiness(9, 4)
    order = np.argsort(-(pb.w / pb.p), kind="stable")
    seq = [int(order[0])]
    for e in order[1:]:
        vals = [pb.partial_value([*seq[:k], int(e), *seq[k:]]) for k in range(len(seq) + 1)]
        seq.insert(int(np.argmin(vals)), int(e))
    assert neh(pb).tolist() == seq


def test_solve_reports_the_value_in_the_problems_sense_and_repeats_with_its_seed():
    pb = MaxQAP(*random_qap_arrays(10, 5))
    options = {"strategy": "cpu-serial", "generations": 3, "sync": True, "seed": 4,
               "ga": GAParams(population=6, offspring=3, ls_budget=20)}
    first, again = solve_with(pb, **options), solve_with(pb, **options)
    assert first.sense == "max" and first.value == pb.value(first.permutation) > 0
    assert first.permutation == again.permutation and first.value == again.value


def test_a_checkpointed_run_resumes(tmp_path):
    pb = CachedQAP(*random_qap_arrays(10, 6))
    path = tmp_path / "run.npz"
    first = solve_with(pb, strategy="cpu-serial", generations=2, sync=True, seed=1, checkpoint=path,
                       ga=GAParams(population=6, offspring=3, ls_budget=10))
    more = resume(path, problem=pb, generations=4)
    assert more.value <= first.value and more.value == pb.value(more.permutation)


def test_the_numpy_route_warns_once_and_solves():
    base = random_tardiness(12, 7)
    pb = NumpyTardiness(base.p, base.w, base.due)
    with pytest.warns(RuntimeWarning, match=r"no device_code: the numpy-only route .* docs/problems.md") as caught:
        result = solve_with(pb, strategy="cpu-serial", generations=2, sync=True, seed=1,
                            ga=GAParams(population=6, offspring=3, ls_budget=5))
    assert len([w for w in caught if "numpy-only" in str(w.message)]) == 1
    assert result.value == pb.value(result.permutation)
    chains = solve_with(pb, strategy="cpu-serial", generations=1, sync=True, seed=1,
                        ga=GAParams(population=2, offspring=1, ls_budget=2, crossover="none"))
    assert [row.algorithm for row in chains.islands] == ["sampled descent chains"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ops = pb.operators(cpu_device(), pb.default_params())
    assert isinstance(ops, NumpyOperators)
    sols, costs, steps = ops.improve(np.array([np.arange(12)]), np.array([3], np.uint64))
    assert costs[0] == pb.value(sols[0]) <= pb.value(np.arange(12)) and steps[0] >= 1


@pytest.mark.slow
@pytest.mark.skipif(not HAS_DASK, reason="dask.distributed is not installed")
def test_dask_runs_a_user_problem_as_loky_does():
    pb = random_tardiness(14, 8)
    options = {"strategy": "cpu-islands", "islands": 2, "generations": 2, "epoch_generations": 1, "seed": 5,
               "ga": GAParams(population=6, offspring=3, ls_budget=5)}
    loky = solve_with(pb, **options)
    dask = solve_with(pb, **options, dask_local=2)
    assert dask.value == pb.value(dask.permutation)
    assert dask.permutation == loky.permutation


def test_iterated_greedy_chains_go_on_from_where_they_stood(monkeypatch):
    """An iterated-greedy chain's next generation starts from the solution its search stood at, not
    from its best, while its member is the best that chain left; a migrant restarts it."""
    from metaheur.islands.perm_operators import PermOperators

    pb = random_tardiness(15, 3)
    params = pb.default_params()
    params = replace(params, ga=replace(with_crossover(params.ga, "none"), ls_budget=8),
                     perm=PermSearchParams(method="ig", temperature=50.0))
    spec = IslandSpec(0, pb, pb.fingerprint(), "cpu", params, 123)
    starts = []
    improve_chains = PermOperators.improve_chains
    monkeypatch.setattr(PermOperators, "improve_chains",
                        lambda ops, s, *a, **k: starts.append(np.array(s)) or improve_chains(ops, s, *a, **k))
    state, _ = run_epoch(spec, IslandState(0), generations=2)
    kept = {k: v.copy() for k, v in state.searches.items()}
    assert np.array_equal(kept["best"], state.population)
    assert sorted(kept["current"][0]) == list(range(pb.n))
    assert not np.array_equal(kept["current"], kept["best"])  # the warm acceptance left its best
    state, _ = run_epoch(spec, state, generations=1)
    assert np.array_equal(starts[-1], kept["current"])
    migrant = np.arange(pb.n)[::-1]
    state.population[0], state.costs[0] = migrant, pb.engine_sign * pb.value(migrant)
    run_epoch(spec, state, generations=1)
    assert np.array_equal(starts[-1][0], migrant)
