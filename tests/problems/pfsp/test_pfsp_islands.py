"""The flow shop's islands: its local-search island is the iterated-greedy chain of its default,
whatever local search the GA islands beside it give their children; a seeded solve mixing GA
islands and chains repeats and reports the makespan of its job order."""

from __future__ import annotations

from dataclasses import replace

import pytest
from testutil import solve_with

from metaheur import GAParams, PermSearchParams
from metaheur import solver as solver_module
from metaheur.devices import cpu_device
from metaheur.islands.params import IslandParams
from metaheur.problem.permutation import PermutationProblem
from metaheur.problems.pfsp import completion_times, random_pfsp

INSERTION_LS = PermSearchParams(method="ils", move="insert", kick_move="insert")


@pytest.fixture(autouse=True)
def cpu_only(monkeypatch):
    monkeypatch.setattr(solver_module, "available_devices", lambda: [cpu_device()])


def test_the_chain_beside_ga_islands_is_the_default_iterated_greedy_chain():
    shop = random_pfsp(30, 5, seed=3)
    ga = GAParams(population=20, offspring=10, crossover="ox", ls_budget=15)
    chain = shop.local_search_island(IslandParams(ga=ga, perm=replace(INSERTION_LS, destruct=5)))
    assert (chain.ga.crossover, chain.ga.population, chain.ga.offspring) == ("none", 1, 1)
    assert chain.ga.ls_budget == 50 * 30 and chain.ga.restart_after == 0
    assert chain.perm.method == "ig" and chain.perm.destruct == 5  # the GA's other search settings kept
    assert shop.default_params() == shop.local_search_island(PermutationProblem.default_params(shop))
    assert shop.default_local_search_islands(2) == 0


def makespan(shop, order) -> int:
    """The makespan of ``order`` by the recurrence itself, one operation at a time."""
    return int(completion_times(shop.times, order)[-1, -1])


def test_a_seeded_mixed_solve_repeats_and_reports_its_makespan():
    shop = random_pfsp(24, 6, seed=11)
    options = {"strategy": "cpu-islands", "islands": 2, "ls_islands": 1, "generations": 3, "sync": True,
               "epoch_generations": 1, "seed": 7, "perm": INSERTION_LS,
               "ga": GAParams(population=8, offspring=4, crossover="ox", ls_budget=6)}
    first, again = solve_with(shop, **options), solve_with(shop, **options)
    assert [row.algorithm for row in first.islands] == ["GA (ox)", "iterated greedy chains"]
    assert first.islands[0].generations == 3 and first.islands[1].search_steps == 3
    assert first.islands[1].ls_iterations >= 3 * 50 * 24  # 50 n iterations a generation
    assert first.cost == makespan(shop, first.permutation)
    assert sorted(first.permutation) == list(range(24))
    assert first.permutation == again.permutation and first.cost == again.cost
    assert [(r.island, r.best_cost, r.ls_iterations) for r in first.history] == \
           [(r.island, r.best_cost, r.ls_iterations) for r in again.history]


def test_the_chains_start_from_the_neh_sequence_and_the_trace_with_it():
    """A chain island's first member is its start, NEH's sequence, not yet searched: the run's
    trace begins at NEH's makespan, and the chains' first generation is their first search."""
    from metaheur.islands.perm_operators import neh

    shop = random_pfsp(30, 6, seed=5)
    result = solve_with(shop, strategy="cpu-islands", islands=2, generations=2, sync=True, epoch_generations=1,
                        seed=3)
    start = makespan(shop, neh(shop, ties=shop.default_params().perm.ties))
    first = [min((t for t in result.trace if t.island == i), key=lambda t: t.time_s) for i in (0, 1)]
    assert [t.cost for t in first] == [start, start]
    assert result.cost < start and [row.search_steps for row in result.islands] == [2, 2]
    assert [(r.epoch, r.search_steps) for r in result.history if r.island == 0] == [(0, 1), (1, 1)]


def test_a_gpu_island_of_the_default_chains_runs_a_wave_of_them(monkeypatch):
    """On a GPU the default iterated-greedy island runs one chain a multiprocessor (one kernel
    launch, a block each); explicit GA parameters are kept as given, and a CPU island runs one."""
    from metaheur.devices import gpu_devices
    from metaheur.engine import simcuda

    monkeypatch.undo()  # the simulated GPU as well as the CPU
    monkeypatch.setenv("METAHEUR_SIMULATED_GPUS", "1")
    monkeypatch.setenv("METAHEUR_SIMULATED_GPU_SMS", "3")
    monkeypatch.delenv("METAHEUR_NO_GPU", raising=False)
    gpu_devices.cache_clear()
    simcuda.reset()
    try:
        shop = random_pfsp(12, 3, seed=2)
        hybrid = solve_with(shop, strategy="hybrid", islands=2, generations=1, sync=True, epoch_generations=1, seed=1)
        assert [(r.device, r.population, r.offspring) for r in hybrid.islands] == [("cuda:0", 3, 3), ("cpu", 1, 1)]
        given = solve_with(shop, strategy="gpu", generations=1, seed=1, ga=shop.default_params().ga)
        assert [(r.population, r.offspring) for r in given.islands] == [(1, 1)]
    finally:
        monkeypatch.undo()
        gpu_devices.cache_clear()
        simcuda.reset()
