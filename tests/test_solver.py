"""``metaheur.solve``: strategies, exact reported costs, result files, errors, optimum of tiny
instances, best-known targets and Dask."""

from __future__ import annotations

import dataclasses
import importlib.util
import itertools
import json
import re
import time

import numpy as np
import pytest
from testutil import solve_with, sparse_qap

from metaheur import solver as solver_module
from metaheur.devices import Device, cpu_device
from metaheur.errors import MetaheurError
from metaheur.islands.migration import MigrationParams
from metaheur.islands.params import GAParams
from metaheur.problems import QAP, TSP, random_qap, uniform_tsp
from metaheur.problems.qap import solving as qap_solving
from metaheur.problems.qap.solving import tabu_bytes
from metaheur.result import STATS_FIELDS, Result
from metaheur.solver import plan_devices, solve

QAP_GA = GAParams(population=6, offspring=3, crossover="ux", ls_budget=80)
TSP_GA = GAParams(population=6, offspring=3, crossover="ox", ls_budget=4)
HAS_DASK = importlib.util.find_spec("distributed") is not None


@pytest.fixture(autouse=True)
def cpu_only(monkeypatch):
    """Plan on the CPU alone, whatever this machine has (the GPU tests live elsewhere)."""
    monkeypatch.setattr(solver_module, "available_devices", lambda: [cpu_device()])


def exact(problem, permutation) -> int:
    return problem.cost(permutation) if isinstance(problem, QAP) else problem.tour_length(permutation)


def qap_optimum(qap: QAP) -> int:
    perms = np.array(list(itertools.permutations(range(qap.n))))
    b = qap.distance[perms[:, :, None], perms[:, None, :]]
    return int(np.einsum("ij,kij->k", qap.flow, b).min())


def tsp_optimum(tsp: TSP) -> int:
    d = tsp.distance_matrix().astype(np.int64)
    rest = np.array(list(itertools.permutations(range(1, tsp.n))))
    tours = np.hstack([np.zeros((len(rest), 1), dtype=np.int64), rest])
    return int(d[tours, np.roll(tours, -1, axis=1)].sum(axis=1).min())


def quick(problem, **kwargs) -> Result:
    ga = TSP_GA if isinstance(problem, TSP) else QAP_GA
    options = {"strategy": "cpu-serial", "generations": 2, "sync": True, "epoch_generations": 1, "seed": 1,
               "ga": ga} | kwargs
    return solve_with(problem, **options)


# ------------------------------------------------------------------------ strategies, exact cost


@pytest.mark.parametrize("strategy", ["cpu-serial", "cpu-islands"])
@pytest.mark.parametrize("problem", [random_qap(20, seed=2), uniform_tsp(40, seed=3)], ids=["qap", "tsp"])
def test_each_cpu_strategy_reports_the_exact_cost(strategy, problem):
    r = quick(problem, strategy=strategy, islands=None if strategy == "cpu-serial" else 2)
    assert isinstance(r, Result)
    assert r.cost == exact(problem, r.permutation)
    assert sorted(r.permutation) == list(range(problem.n))
    assert (r.instance, r.problem, r.n) == (problem.name, problem.kind.upper(), problem.n)
    assert r.strategy == strategy and r.devices == ["cpu"] and r.seed == 1
    assert len(r.islands) == (1 if strategy == "cpu-serial" else 2)
    assert r.stop_reason == "generations"
    # counters per island, each meaning one thing: GA generations apart from tabu-search steps
    walks = [isl for isl in r.islands if isl.algorithm == "tabu search"]
    assert r.generations == 2 and r.search_steps == (2 if walks else 0)
    assert all(isl.generations == 0 and isl.search_steps == 2 for isl in walks)
    assert r.search_iterations == sum(i.ls_iterations for i in r.islands) > 0
    assert r.best_known is None and r.gap_percent is None
    assert r.cost == min(i.best_cost for i in r.islands)
    assert r.time_s > 0 and r.compile_s >= 0
    assert r.history and {row.island for row in r.history} == set(range(len(r.islands)))
    assert r.source == problem.source


def test_auto_without_a_gpu_is_cpu_islands():
    r = quick(random_qap(12, seed=1), strategy="auto", islands=2)
    assert r.strategy == "cpu-islands" and len(r.islands) == 2


def test_instances_by_generated_name():
    r = quick("gen:qap:12:4", ga=QAP_GA)
    assert r.instance == "gen-qap-12-s4" and r.cost == random_qap(12, seed=4).cost(r.permutation)


def test_sync_solve_is_reproducible():
    qap = random_qap(18, seed=6)
    a = quick(qap, strategy="cpu-islands", islands=2, generations=4, epoch_generations=2, seed=3)
    b = quick(qap, strategy="cpu-islands", islands=2, generations=4, epoch_generations=2, seed=3)
    assert a.permutation == b.permutation and a.cost == b.cost
    keys = ("epoch", "island", "generations", "ls_iterations", "best_cost", "global_best", "migrants_in")
    rows = [[[getattr(row, k) for k in keys] for row in r.history] for r in (a, b)]
    assert rows[0] == rows[1]
    assert a.migrations == b.migrations
    assert a.islands == b.islands


# ------------------------------------------------------------------------------ result files


def test_json_round_trip(tmp_path):
    r = quick(random_qap(14, seed=2), strategy="cpu-islands", islands=2)
    text = r.to_json()
    back = Result.from_json(text)
    assert back == r
    path = tmp_path / "r.json"
    assert r.to_json(path) == text
    assert Result.from_json(path) == r
    data = json.loads(path.read_text())
    for key in ("instance", "problem", "n", "cost", "best_known", "gap_percent", "permutation", "seed", "strategy",
                "devices", "time_s", "search_iterations", "stop_reason", "history", "islands", "versions"):
        assert key in data
    assert data["cost"] == random_qap(14, seed=2).cost(data["permutation"])
    assert not list(tmp_path.glob(".*.tmp"))  # written through a temporary file and a rename


def test_from_json_ignores_unknown_keys_and_rejects_non_results(tmp_path):
    r = quick(random_qap(8, seed=2))
    data = r.to_dict() | {"added_later": 1}
    assert Result.from_json(json.dumps(data)) == r
    with pytest.raises(MetaheurError, match="not a metaheur result"):
        Result.from_json('{"a": 1}')
    bad = tmp_path / "bad.json"
    bad.write_text("{\n  \"instance\": \n")
    with pytest.raises(MetaheurError, match="invalid JSON"):
        Result.from_json(bad)
    with pytest.raises(MetaheurError, match="no such file"):
        Result.from_json(tmp_path / "missing.json")


def test_stats_csv_round_trip(tmp_path):
    r = quick(uniform_tsp(30, seed=1), strategy="cpu-islands", islands=2, generations=3)
    path = tmp_path / "stats.csv"
    text = r.stats_csv(path)
    assert path.read_text() == text
    assert text.splitlines()[0] == ",".join(STATS_FIELDS)
    rows = Result.read_stats_csv(path)
    assert len(rows) == len(r.history) == 3 * 2
    for got, want in zip(rows, r.history, strict=True):
        for k in STATS_FIELDS:
            if isinstance(getattr(want, k), float):
                assert getattr(got, k) == pytest.approx(getattr(want, k))
            else:
                assert getattr(got, k) == getattr(want, k), k


# ---------------------------------------------------------------------------------- errors


@pytest.mark.parametrize("strategy", ["gpu", "hybrid"])
def test_gpu_strategies_without_a_gpu(strategy):
    with pytest.raises(MetaheurError) as info:
        quick(random_qap(8, seed=1), strategy=strategy)
    message = str(info.value)
    assert "\n" not in message
    assert f"strategy {strategy} needs a GPU" in message and "cpu-islands" in message


def test_gpu_strategy_with_only_the_cpu_listed():
    with pytest.raises(MetaheurError, match="none of the devices given is a GPU"):
        quick(random_qap(8, seed=1), strategy="gpu", devices=["cpu"])


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"strategy": "cpu-turbo"}, "unknown strategy 'cpu-turbo': use one of auto, cpu-serial, cpu-islands, gpu, hybrid"),
    ({"devices": ["cpu", "cpu"]}, "a device is listed twice"),
    ({"devices": ["CPU", "cpu"]}, "a device is listed twice"),
    ({"devices": ["tpu"]}, "bad device 'tpu'"),
    ({"strategy": "cpu-islands", "islands": 0}, "islands must be at least 1"),
    ({"strategy": "cpu-serial", "islands": 2}, "cpu-serial runs exactly one island"),
    ({"seed": -1}, "seed must be from 0 to 2^63 - 1"),
    ({"target": "best"}, "target must be a number or 'bks'"),
    ({"target": "bks"}, "no best-known value"),
    ({"generations": 0}, "generations must be at least 1"),
    ({"generations": None, "time_limit": -1}, "time limit must be positive"),
    ({"no_improvement": 0}, "no-improvement limit must be at least 1"),
    ({"epoch_generations": 0}, "epoch_generations must be at least 1"),
    ({"epoch_seconds": 0.0}, "epoch_seconds must be positive"),
    ({"ga": GAParams(crossover="eax")}, "crossover 'eax' is not for the QAP"),
])
def test_bad_arguments(kwargs, message):
    with pytest.raises(MetaheurError) as info:
        quick(random_qap(8, seed=1), **kwargs)
    assert message in str(info.value)
    assert "\n" not in str(info.value)


def test_more_islands_than_the_machine_can_run():
    too_many = 8 * solver_module.cpu_count() + 1
    with pytest.raises(MetaheurError, match="more than this machine can run"):
        quick(random_qap(8, seed=1), strategy="cpu-islands", islands=too_many)


def test_qap_searches_that_cannot_fit_the_cpu_memory_are_refused_up_front(monkeypatch):
    one = tabu_bytes(60)
    small = dataclasses.replace(cpu_device(), memory_bytes=10 * one)
    monkeypatch.setattr(qap_solving, "cpu_device", lambda: small)
    random_qap(60, seed=1).check_memory([small] * 8)  # 8 searches fit in 80 % of 10
    with pytest.raises(MetaheurError, match=r"n = 60 needs .* GiB; 9 CPU islands exceed .* \(try --islands 8\)"):
        random_qap(60, seed=1).check_memory([small] * 9)


def test_a_qap_search_that_cannot_fit_a_gpu_is_refused_up_front():
    gpu = Device("cuda:0", "cuda", 0, "a small GPU", 1, tabu_bytes(60))
    with pytest.raises(MetaheurError, match=r"more than cuda:0's .* GiB \(use --strategy cpu-islands\)"):
        random_qap(60, seed=1).check_memory([gpu])
    random_qap(50, seed=1).check_memory([gpu])


def test_tsp_crossover_for_a_qap_and_back():
    with pytest.raises(MetaheurError, match="crossover 'ux' is not for the TSP"):
        quick(uniform_tsp(10, seed=1), ga=GAParams(crossover="ux"))


def test_nothing_to_solve():
    with pytest.raises(MetaheurError, match="give an instance"):
        solve(None, generations=1)


def test_unknown_instance_name():
    with pytest.raises(MetaheurError, match="no such file"):
        solve("surely-not-an-instance-xyz", generations=1)


def test_plan_devices():
    cpu = cpu_device()
    assert plan_devices("cpu-serial", [cpu], None) == ("cpu-serial", [cpu])
    assert plan_devices("cpu-islands", [cpu], 3) == ("cpu-islands", [cpu] * 3)
    strategy, devices = plan_devices("auto", [cpu], None)
    assert strategy == "cpu-islands" and all(d == cpu for d in devices) and len(devices) >= 1


def test_two_instances_differing_only_in_weight_type_in_one_session():
    coords = uniform_tsp(30, seed=1).coords / 1000.0 + 0.3
    for weight_type in ("EUC_2D", "CEIL_2D"):
        tsp = TSP("same-points", weight_type, coords=coords)
        r = quick(tsp)
        assert r.cost == tsp.tour_length(r.permutation)


# -------------------------------------------------------------------------- tiny optimum


@pytest.mark.parametrize(("n", "seed"), [(6, 1), (7, 2), (8, 3)])
def test_tiny_qap_reaches_the_brute_force_optimum(n, seed):
    qap = random_qap(n, seed=seed, symmetric=seed != 2, zero_diagonal=seed != 3)
    optimum = qap_optimum(qap)
    r = solve_with(qap, strategy="cpu-serial", time_limit=5, target=optimum, seed=seed)
    assert r.cost == optimum == qap.cost(r.permutation)
    assert r.stop_reason == "target"


@pytest.mark.parametrize(("n", "seed"), [(7, 1), (8, 2), (8, 5)])
def test_tiny_tsp_reaches_the_brute_force_optimum(n, seed):
    tsp = uniform_tsp(n, seed=seed)
    optimum = tsp_optimum(tsp)
    r = solve_with(tsp, strategy="cpu-serial", time_limit=5, target=optimum, seed=seed)
    assert r.cost == optimum == tsp.tour_length(r.permutation)
    assert r.stop_reason == "target"


def test_tiny_qap_without_a_target_finds_the_optimum_too():
    qap = random_qap(7, seed=9)
    r = quick(qap, generations=3)
    assert r.cost == qap_optimum(qap)


# ------------------------------------------------------------------------- best-known target


@pytest.mark.parametrize("name", ["nug12", "tai12a"])
def test_target_bks_stops_at_the_best_known_value(instances_dir, monkeypatch, name):
    monkeypatch.setenv("METAHEUR_INSTANCES", str(instances_dir))
    r = solve_with(name, strategy="cpu-islands", islands=2, time_limit=30, target="bks", seed=1)
    assert r.stop_reason == "target"
    assert r.best_known is not None and r.cost == r.best_known
    assert r.gap_percent == 0.0
    assert r.time_s < 30
    qap = solver_module.load_instance(name)
    assert qap.cost(r.permutation) == r.cost


def test_target_below_a_proven_optimum_is_refused(instances_dir):
    with pytest.raises(MetaheurError, match="below the proven optimum 578"):
        solve(instances_dir / "qaplib" / "nug12.dat", generations=1, target=577)


# ------------------------------------------------------------------------------------ Dask


@pytest.mark.slow
@pytest.mark.skipif(not HAS_DASK, reason="dask.distributed is not installed")
def test_dask_local_cluster_gives_the_loky_result():
    qap = random_qap(18, seed=4)
    options = {"strategy": "cpu-islands", "islands": 2, "generations": 4, "epoch_generations": 2, "seed": 5}
    loky = quick(qap, **options)
    dask = quick(qap, **options, dask_local=2)
    assert dask.cost == qap.cost(dask.permutation)
    assert dask.permutation == loky.permutation
    assert dask.islands == loky.islands
    assert [h.best_cost for h in dask.history] == [h.best_cost for h in loky.history]
    assert dask.parameters["dask"] == "local:2"


@pytest.mark.slow
@pytest.mark.skipif(not HAS_DASK, reason="dask.distributed is not installed")
def test_a_local_cluster_runs_its_workers_without_the_profiler_or_dasks_malloc_trim():
    import os

    import dask
    from distributed import Client

    from metaheur.solver import local_cluster

    dasks_trim = dask.config.get("distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_", None)
    ours = os.environ.get("MALLOC_TRIM_THRESHOLD_")
    with local_cluster(1) as cluster, Client(cluster) as client:
        enabled = client.run(lambda: dask.config.get("distributed.worker.profile.enabled"))
        trim = client.run(lambda: os.environ.get("MALLOC_TRIM_THRESHOLD_"))
    assert list(enabled.values()) == [False]
    assert list(trim.values()) == [ours]  # glibc's own, unless the user set it
    assert dask.config.get("distributed.worker.profile.enabled")  # this process's settings are left alone
    assert dask.config.get("distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_", None) == dasks_trim


@pytest.mark.slow
@pytest.mark.skipif(not HAS_DASK, reason="dask.distributed is not installed")
def test_unreachable_scheduler_is_a_clean_error():
    t0 = time.perf_counter()
    with pytest.raises(MetaheurError, match=re.escape("cannot reach the Dask scheduler at tcp://127.0.0.1:1")):
        quick(random_qap(8, seed=1), strategy="cpu-islands", islands=2, scheduler="tcp://127.0.0.1:1")
    assert time.perf_counter() - t0 < 30  # the client's own connection timeout is 10 s


def test_dask_local_needs_a_worker():
    if not HAS_DASK:
        pytest.skip("dask.distributed is not installed")
    with pytest.raises(MetaheurError, match="at least 1 worker"):
        quick(random_qap(8, seed=1), strategy="cpu-islands", islands=2, dask_local=0)


@pytest.mark.parametrize("qap", [sparse_qap(12, seed=1), random_qap(12, seed=1)], ids=["structured", "uniform"])
def test_half_the_cpu_islands_are_ls_islands_by_default_on_every_qap(qap):
    r = quick(qap, strategy="cpu-islands", islands=3, generations=2)
    assert [i.algorithm for i in r.islands] == ["GA (ux)", "GA (ux)", "tabu search"]
    r = quick(qap, strategy="cpu-islands", islands=4, generations=2)
    assert [i.algorithm for i in r.islands] == ["GA (ux)", "tabu search", "GA (ux)", "tabu search"]
    r = quick(qap, strategy="cpu-islands", islands=2, ls_islands=0, generations=2)
    assert [i.algorithm for i in r.islands] == ["GA (ux)", "GA (ux)"]
    r = quick(qap, strategy="cpu-serial", generations=2)
    assert [i.algorithm for i in r.islands] == ["GA (ux)"]


def test_no_ls_islands_on_the_tsp():
    r = quick(uniform_tsp(30, seed=1), strategy="cpu-islands", islands=2, generations=1)
    assert [i.algorithm for i in r.islands] == ["GA (ox)", "GA (ox)"]


def test_every_tabu_island_sends_to_a_ga_island_while_at_most_half_are():
    """A tabu island takes no migrant, so its ring successor must be a GA island or its best is lost."""
    for islands in range(1, 13):
        for tabu in range(islands // 2 + 1):
            positions = solver_module._ls_positions(islands, tabu)
            assert len(set(positions)) == tabu and all(0 <= k < islands for k in positions)
            assert not any((k + 1) % islands in positions for k in positions), (islands, tabu)
    assert solver_module._ls_positions(3, 3) == [0, 1, 2]


def test_no_migration_by_default_on_a_uniform_random_qap():
    """Islands on a uniformly random QAP instance stay apart unless migration is asked for; on a
    structured one migrants flow by default (short local searches keep the islands' bests apart)."""
    short = dataclasses.replace(QAP_GA, ls_budget=2)
    kwargs = {"strategy": "cpu-islands", "islands": 2, "ls_islands": 0, "generations": 4, "ga": short}
    assert quick(random_qap(30, seed=1), **kwargs).migrations == []
    assert quick(random_qap(30, seed=1), migration=MigrationParams(), **kwargs).migrations != []
    assert quick(sparse_qap(30, seed=1), **kwargs).migrations != []


@pytest.mark.parametrize(("problem", "tabu", "message"), [
    (random_qap(10, seed=1), 3, r"tabu islands must be between 0 and the 2 CPU island\(s\), got 3"),
    (random_qap(10, seed=1), -1, "tabu islands must be between 0"),
    (uniform_tsp(20, seed=1), 1, "tabu islands .* are not offered by the TSP problem"),
])
def test_ls_islands_out_of_range(problem, tabu, message):
    with pytest.raises(MetaheurError, match=message):
        solve_with(problem, strategy="cpu-islands", islands=2, ls_islands=tabu, generations=1)


def test_no_ls_islands_by_default_without_local_search():
    ga_only = dataclasses.replace(QAP_GA, ls_budget=0)
    r = quick(random_qap(12, seed=1), strategy="cpu-islands", islands=2, ga=ga_only, generations=2)
    assert [i.algorithm for i in r.islands] == ["GA (ux)", "GA (ux)"] and r.search_iterations == 0
    r = quick(random_qap(12, seed=1), strategy="cpu-islands", islands=2, ga=ga_only, ls_islands=1, generations=2)
    # 50n iterations improve its first member, then 50n per generation
    assert r.islands[1].algorithm == "tabu search" and r.islands[1].ls_iterations == 3 * 50 * 12
