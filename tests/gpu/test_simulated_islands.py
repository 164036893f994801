"""GPU islands on simulated CUDA devices: every branch the island model, the operators, the
balancer and the solver take on a GPU (the gpu and hybrid strategies, several GPUs, the memory
cap's out-of-memory split and move to the CPU build, checkpoints, Ctrl-C) runs here as on a GPU."""

from __future__ import annotations

import csv
import os
import signal
from dataclasses import replace

import numpy as np
import pytest
from testutil import solve_with

from metaheur import solver
from metaheur.callbacks import Callbacks
from metaheur.devices import cpu_device, parse_device
from metaheur.engine import module, simcuda, sm90
from metaheur.errors import MetaheurError
from metaheur.islands import operators
from metaheur.islands.balance import LoadBalancer, gpu_wave
from metaheur.islands.island import EpochStats, run_epoch
from metaheur.islands.model import IslandModel
from metaheur.islands.params import GAParams, IslandParams
from metaheur.problems import TSP, clustered_tsp, random_qap, uniform_tsp
from metaheur.problems.qap.device_data import qap_data
from metaheur.problems.qap.operators import QAPOperators
from metaheur.problems.tsp import canonical_tours
from metaheur.problems.tsp import eax_island as eax
from metaheur.problems.tsp.descent import TSPDescentBatch
from metaheur.problems.tsp.device_data import tsp_data
from metaheur.problems.tsp.operators import TSPOperators
from metaheur.problems.tsp.params import EAXParams
from metaheur.solve_params import SolveParams
from metaheur.solver import resume, solve
from metaheur.stopping import stop_rules

pytestmark = pytest.mark.gpusim

QAP12 = random_qap(12, seed=2)
TSP40 = clustered_tsp(40, seed=3)
QAP_GA = GAParams(population=6, offspring=4, crossover="ux", ls_budget=60)
TSP_OX = GAParams(population=6, offspring=4, crossover="ox", ls_budget=2)
HISTORY = ("epoch", "island", "generations", "ls_iterations", "best_cost", "global_best", "migrants_in")


def sync_solve(problem, **options):
    base = {"sync": True, "epoch_generations": 1, "seed": 3, "ga": QAP_GA if problem.kind == "qap" else TSP_OX}
    return solve_with(problem, **(base | options))


def history(result) -> list[list]:
    return [[getattr(row, k) for k in HISTORY] for row in result.history]


def qap_params(count: int) -> list[IslandParams]:
    return [IslandParams(ga=GAParams(population=6, offspring=4, crossover="ux", ls_budget=60 + i))
            for i in range(count)]


def assert_exact(problem, record) -> None:
    exact = problem.cost if problem.kind == "qap" else problem.tour_length
    for s in record.states:
        assert exact(s.best) == s.best_cost
        assert all(exact(m) == int(c) for m, c in zip(s.population, s.costs, strict=True))


# ------------------------------------------------------------------------------ strategies
def test_hybrid_qap_runs_islands_on_both_simulated_gpus_and_the_cpu(simulated):
    result = sync_solve(QAP12, strategy="hybrid", generations=2)
    assert set(result.devices) == {"cpu", "cuda:0", "cuda:1"}
    assert result.cost == QAP12.cost(np.array(result.permutation))
    gpu = [i for i in result.islands if i.device.startswith("cuda")]
    assert len(gpu) == 2 and all(i.generations == 2 and i.ls_iterations > 0 for i in gpu)
    assert all(i.offspring % gpu_wave(QAP12, "cuda:0") == 0 for i in gpu)  # whole waves
    assert {d.device for d in result.device_loads} == {"cpu", "cuda:0", "cuda:1"}
    assert result.versions["simulated_gpus"] == 2


def test_gpu_strategy_solves_a_tsp_reproducibly(simulated):
    runs = [sync_solve(TSP40, strategy="gpu", generations=2) for _ in range(2)]
    assert runs[0].devices == ["cuda:0", "cuda:1"]
    assert runs[0].cost == TSP40.tour_length(np.array(runs[0].permutation))
    assert runs[0].permutation == runs[1].permutation
    assert history(runs[0]) == history(runs[1])


def test_gpu_strategy_runs_eax_islands(simulated):
    result = sync_solve(TSP40, strategy="gpu", generations=1, ga=GAParams(population=8, crossover="eax"),
                        eax=EAXParams(tries=4))
    assert result.cost == TSP40.tour_length(np.array(result.permutation))
    assert all(i.algorithm == "GA (eax)" and i.generations == 1 for i in result.islands)


def test_a_resumed_gpu_run_ends_like_an_uninterrupted_one(simulated, tmp_path):
    whole = sync_solve(QAP12, strategy="gpu", generations=4)
    path = tmp_path / "gpu.npz"
    first = sync_solve(QAP12, strategy="gpu", generations=2, checkpoint=str(path))
    assert first.stop_reason == "generations" and path.is_file()
    rest = resume(str(path), problem=QAP12, generations=4)
    assert rest.permutation == whole.permutation and rest.cost == whole.cost
    assert history(rest) == history(whole)


def test_gpu_islands_start_from_the_warm_starts(simulated):
    good = sync_solve(QAP12, strategy="cpu-serial", generations=3)
    weak = GAParams(population=4, offspring=2, crossover="ux", ls_budget=1)
    result = sync_solve(QAP12, strategy="gpu", generations=1, ga=weak, initial=good.permutation)
    first = [row for row in result.history if row.epoch == 0]
    assert {row.device for row in first} == {"cuda:0", "cuda:1"}
    assert all(row.best_cost <= good.cost for row in first)
    assert result.parameters["initial"] == 1 and result.cost <= good.cost


def test_ctrl_c_during_a_gpu_epoch_stops_the_run_with_the_best(simulated):
    """A synchronous epoch that Ctrl-C cuts short is not part of the run (a checkpoint ends at the
    last whole epoch), but the best it found is the run's result."""
    def interrupted_epoch(spec, state, **budget):
        out = run_epoch(spec, state, **budget)
        if spec.index == 1 and state.generation == 1:  # in the GPU island's thread, mid-run
            os.kill(os.getpid(), signal.SIGINT)
        return out

    before = signal.getsignal(signal.SIGINT)
    model = IslandModel(QAP12, list(simulated.devices), qap_params(2), seed=1, sync=True, epoch_generations=1,
                        epoch=interrupted_epoch)
    record = model.run(stop_rules(generations=50))
    assert record.stop_reason == "interrupted" and record.next_epoch == 1
    assert record.dropped and record.best_solution()[1] == min(s.best_cost for s in record.states + record.dropped)
    assert signal.getsignal(signal.SIGINT) is before
    assert_exact(QAP12, record)


# ------------------------------------------------------------------------------ host-path defects
def test_gpu_islands_are_built_before_the_clock_starts(simulated):
    """Kernels, instance data on the device and the island's stream exist when on_start is told."""
    seen = {}

    class Spy(Callbacks):
        def on_start(self, model):
            seen["operators"] = {key[1] for key in operators._CACHE}
            seen["streams"] = set(model.streams)

    model = IslandModel(QAP12, list(simulated.devices), qap_params(2), seed=1, sync=True, epoch_generations=1,
                        callbacks=Spy())
    model.run(stop_rules(generations=1))
    assert seen == {"operators": {"cuda:0", "cuda:1"}, "streams": {0, 1}}


def test_each_gpu_island_keeps_one_stream_over_its_epochs(simulated):
    model = IslandModel(QAP12, list(simulated.devices), qap_params(2), seed=1, sync=True, epoch_generations=1)
    record = model.run(stop_rules(generations=4))
    assert record.next_epoch == 4
    assert (simcuda.streams_created(0), simcuda.streams_created(1)) == (1, 1)


@pytest.mark.parametrize("problem", [QAP12, TSP40], ids=["qap", "tsp"])
def test_precompile_builds_every_variant_a_gpu_island_loads(simulated, problem):
    gpu = parse_device("cuda:0")
    solver._precompile(problem, [gpu])
    built = set(module._MODULES)
    ga = QAP_GA if problem.kind == "qap" else TSP_OX
    for params in (IslandParams(ga=ga), IslandParams(ga=GAParams(population=4, crossover="eax"))):
        if problem.kind == "qap" and params.ga.crossover == "eax":
            continue
        IslandModel(problem, [gpu], [params], seed=1, sync=True, epoch_generations=1).run(stop_rules(generations=1))
    assert set(module._MODULES) == built


def _table_blocks_per_sm(source: str, kernels: tuple[str, ...], variant: str) -> int:
    """The fewest resident blocks per SM of ``kernels`` at their largest launch, as the resource
    table (metaheur/engine/kernel_resources.csv) lists them."""
    with open(sm90.RESOURCE_TABLE, newline="") as f:
        rows = [r for r in csv.DictReader(f) if r["file"] == source and r["variant"] == variant]
    return min(int(r["blocks_per_sm"]) for r in rows if r["kernel"] in kernels)


def test_a_gpu_wave_is_the_occupancy_the_device_reports_for_the_kernel_that_sizes_it(simulated):
    """Review 2, finding D: blocks per SM come from the driver's occupancy query for the island's
    kernel at its block (the simulated driver answers from the resource table), not a fixed table."""
    gpu = simulated.devices[0]
    qap = random_qap(130, seed=1)  # the wide tabu block, the table's largest launch
    variant = " ".join(f"{k}={v}" for k, v in sorted(qap_data(qap, gpu).tabu_defines.items())) or "-"
    assert gpu_wave(qap, gpu) == gpu.cores * _table_blocks_per_sm("qap/qap_tabu.cu", ("qap_tabu_run",), variant)
    tsp = clustered_tsp(250, seed=1)  # candidate lists
    variant = f"MH_TSP_WEIGHT={tsp_data(tsp, gpu).weight_code}"
    descent = ("tsp_2opt_cand", "tsp_oropt_cand", "tsp_apply_best")
    assert gpu_wave(tsp, gpu) == gpu.cores * _table_blocks_per_sm("tsp/tsp_moves.cu", descent, variant)
    assert gpu_wave(QAP12, cpu_device()) == 1


def test_the_balancer_sizes_gpu_islands_in_whole_waves_never_below_one(simulated):
    gpu = simulated.devices[0]
    model = IslandModel(QAP12, [gpu, cpu_device()], qap_params(2), seed=1)
    wave = gpu_wave(QAP12, gpu)

    def stats(index, seconds):
        return EpochStats(index, model.specs[index].device, 2, 100, seconds, 1000, False, 0)

    balancer = LoadBalancer(model.specs, main_islands={0})
    fast = balancer.rebalance(model.specs, [stats(0, 0.2), stats(1, 1.0)])  # a generation in a fifth of the time
    assert fast[0].params.ga.offspring == 5 * wave and fast[0].params.ga.population == 5 * wave
    slow = balancer.rebalance(fast, [stats(0, 50.0), stats(1, 0.1)])  # far slower: one wave, not fewer
    assert slow[0].params.ga.offspring == wave
    capped = LoadBalancer(model.specs, main_islands={0}, max_offspring=2 * wave + 1)
    assert capped.rebalance(model.specs, [stats(0, 0.01), stats(1, 1.0)])[0].params.ga.offspring == 2 * wave


def _gpu_fast_epoch(spec, state, **budget):
    """An island epoch whose GPU island reports a hundredth of its time: a GPU far faster than
    the CPU islands, so that the balancer resizes every GPU island it may resize."""
    out, stats = run_epoch(spec, state, **budget)
    if spec.device == "cpu":
        return out, stats
    return out, replace(stats, seconds=stats.seconds / 100, build_seconds=stats.build_seconds / 100)


def test_the_balancer_leaves_a_gpu_eax_island_within_the_eax_population_cap(simulated):
    """Review 2, finding B: only islands sized by the GPU wave are resized; an EAX island (one
    child per member) would otherwise become a population of many waves."""
    ga = GAParams(population=8, crossover="eax")
    params = IslandParams(ga=ga, eax=EAXParams(tries=2))
    model = IslandModel(TSP40, [simulated.devices[0], cpu_device()], [params] * 2, seed=1, sync=True,
                        epoch_generations=1, backend="threading", epoch=_gpu_fast_epoch)
    record = model.run(stop_rules(generations=2))
    gpu = record.specs[0].params.ga
    assert gpu.population == 8 <= eax.MAX_POPULATION and gpu.offspring == ga.offspring
    assert record.states[0].population.shape[0] == 8 and model.balancer.resized == 0


def test_each_gpu_island_builds_its_operators_once_over_warm_up_epochs_and_resizes(simulated, monkeypatch):
    """Review 2, finding C: the operators a GPU island's warm-up builds serve all its epochs,
    which run on a new thread each, and the balancer's resizes (generation size only) keep them."""
    builds = []
    build = QAPOperators.__init__

    def counted(self, qap, device, *args, **kwargs):
        builds.append(device.name)
        build(self, qap, device, *args, **kwargs)

    monkeypatch.setattr(QAPOperators, "__init__", counted)
    model = IslandModel(QAP12, [*simulated.devices, cpu_device()], qap_params(3), seed=1, sync=True,
                        epoch_generations=1, backend="threading", epoch=_gpu_fast_epoch)
    record = model.run(stop_rules(generations=4))
    assert record.next_epoch == 4 and model.balancer.resized >= 2  # both GPU islands were resized
    assert sorted(d for d in builds if d != "cpu") == ["cuda:0", "cuda:1"]


def test_a_batch_too_large_for_the_gpu_memory_is_split_and_gives_the_same_children(simulated):
    gpu = simulated(1, memory="2M")[0]
    params = IslandParams(ga=QAP_GA)
    rng = np.random.default_rng(4)
    children = np.array([rng.permutation(12) for _ in range(16)])
    keys = np.arange(100, 116, dtype=np.uint64)
    ops = QAPOperators(QAP12, gpu, params)
    ops.improve(gpu.asarray(children[:4], np.int32), keys[:4])  # the batch of 4 and the instance data
    pool = simcuda.get_default_memory_pool()
    with gpu.context():
        pool.set_limit(size=pool.used_bytes() + 3 * pool.used_bytes() // 4)  # room for about 8 more searches
    split = ops.improve(gpu.asarray(children, np.int32), keys)
    assert ops._tabu.capacity < 16  # it ran in halves
    whole = QAPOperators(QAP12, cpu_device(), params).improve(children.astype(np.int32), keys)
    for a, b in zip(split, whole, strict=True):
        assert np.array_equal(a, b)


def test_a_gpu_island_that_cannot_fit_one_child_moves_to_the_cpu_build(simulated):
    gpu = simulated(1, memory="4K")[0]
    model = IslandModel(QAP12, [gpu], qap_params(1), seed=2, sync=True, epoch_generations=1)
    with pytest.warns(RuntimeWarning, match="cuda:0 is out of memory for island 0; it moves to the CPU"):
        record = model.run(stop_rules(generations=2))
    assert record.specs[0].device == "cpu" and record.states[0].generation == 2
    assert_exact(QAP12, record)


def test_a_tabu_batch_is_reused_for_fewer_searches_and_reallocated_only_to_grow(simulated):
    gpu = simulated.devices[0]
    ops = QAPOperators(QAP12, gpu, IslandParams(ga=QAP_GA))
    rng = np.random.default_rng(1)
    sols = lambda k: gpu.asarray(np.array([rng.permutation(12) for _ in range(k)]), np.int32)  # noqa: E731
    ops.improve(sols(8), np.arange(8, dtype=np.uint64))
    first = ops._tabu
    ops.improve(sols(3), np.arange(3, dtype=np.uint64))
    assert ops._tabu is first
    ops.improve(sols(9), np.arange(9, dtype=np.uint64))
    assert ops._tabu is not first and ops._tabu.capacity == 9


# ------------------------------------------------------------------------------ TSP GPU islands
def test_a_gpu_island_improves_many_tours_at_once_with_the_parallel_descent(simulated, monkeypatch):
    gpu = simulated.devices[1]
    ops = TSPOperators(TSP40, gpu, IslandParams(ga=TSP_OX))
    runs = []
    real = ops._descent.descend
    monkeypatch.setattr(ops._descent, "descend",
                        lambda tours, cost, **kw: runs.append(len(tours)) or real(tours, cost, **kw))
    rng = np.random.default_rng(2)
    starts = np.array([rng.permutation(40) for _ in range(8)])
    first = TSPDescentBatch(TSP40, "cpu").run(starts)  # the first descent, as the island's counts it
    tours, costs, iterations = ops.improve(gpu.asarray(starts, np.int32), np.arange(8, dtype=np.uint64))
    assert runs == [8] * (1 + TSP_OX.ls_budget)  # every descent takes the 8 tours at once
    assert iterations.tolist() == (first.iterations + TSP_OX.ls_budget).tolist()  # its moves, then the kicks
    assert all(sorted(t) == list(range(40)) and TSP40.tour_length(t) == c for t, c in zip(tours, costs, strict=True))
    assert (costs < [TSP40.tour_length(t) for t in starts]).all()
    still = TSPDescentBatch(TSP40, "cpu").run(tours)  # each tour is a 2-opt / Or-opt local optimum
    assert (still.iterations == 0).all()


def test_tsp_gpu_islands_send_and_take_migrants(simulated):
    tsp = clustered_tsp(150, seed=5)
    params = [IslandParams(ga=GAParams(population=6, offspring=4, crossover="ox", ls_budget=i)) for i in range(2)]
    model = IslandModel(tsp, list(simulated.devices), params, seed=4, sync=True, epoch_generations=1)
    record = model.run(stop_rules(generations=3))
    assert {m.source for _, m in record.migrations} == {0, 1} == {m.target for _, m in record.migrations}
    assert sum(r.migrants_in for r in record.epochs) > 0
    assert_exact(tsp, record)


def test_a_qap_whose_one_search_exceeds_the_gpu_memory_is_refused_up_front(simulated):
    simulated(1, memory="64K")
    with pytest.raises(MetaheurError, match=r"one tabu search of n = 60 needs .* more than cuda:0's"):
        solve(random_qap(60, seed=1), params=SolveParams(strategy="gpu"), time_limit=1)


def test_geo_instances_use_the_matrix_on_a_gpu_and_solve_exactly(simulated):
    rng = np.random.default_rng(3)
    coords = np.round(rng.uniform(-60, 60, size=(30, 2)), 2)
    tsp = TSP("geo30", "GEO", coords=coords)
    assert tsp_data(tsp, "cuda:0").weight_code == 0 and tsp_data(tsp, "cpu").weight_code == 4
    result = sync_solve(tsp, strategy="gpu", generations=1)
    assert result.cost == tsp.tour_length(np.array(result.permutation))


def test_gpu_eax_starts_are_diverse_curve_tours_and_cpu_starts_random(simulated):
    """On a GPU an EAX island's start tours are Hilbert-curve tours of turned and shifted planes
    (distinct, canonical, far shorter than random ones); on the CPU they stay uniformly random."""
    tsp = uniform_tsp(300, seed=6)
    params = IslandParams(ga=GAParams(population=6, offspring=6, crossover="eax"))
    gpu_tours = TSPOperators(tsp, simulated.devices[0], params).random_tours(6, np.random.default_rng(1))
    cpu_tours = TSPOperators(tsp, cpu_device(), params).random_tours(6, np.random.default_rng(1))
    rng = np.random.default_rng(1)
    assert np.array_equal(cpu_tours, canonical_tours(np.array([rng.permutation(300) for _ in range(6)])))
    for tours in (gpu_tours, cpu_tours):
        assert all(sorted(t) == list(range(300)) for t in tours)
        assert np.array_equal(tours, canonical_tours(tours))
    assert len({t.tobytes() for t in gpu_tours}) == 6
    curve = [tsp.tour_length(t) for t in gpu_tours]
    rand = [tsp.tour_length(t) for t in cpu_tours]
    assert max(curve) < min(rand) / 4
