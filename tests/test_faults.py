"""Faults a long run must survive: a worker process killed mid-epoch (loky and Dask), a GPU out of
memory (the batch is split; when even one child does not fit, the island moves to the CPU), a
run that fails part-way (it ends with its best so far)."""

from __future__ import annotations

import functools
import json
import os
import threading

import fault_helpers
import numpy as np
import pytest

from metaheur.devices import cpu_device, gpu_devices, parse_device
from metaheur.islands.model import IslandModel
from metaheur.islands.operators import is_out_of_memory, split_on_oom
from metaheur.islands.params import GAParams, IslandParams
from metaheur.problems import random_qap
from metaheur.stopping import stop_rules

QAP = random_qap(14, seed=2)
PARAMS = IslandParams(ga=GAParams(population=6, offspring=3, ls_budget=200))


def _model(islands: int, epoch, **kw) -> IslandModel:
    return IslandModel(QAP, [cpu_device()] * islands, [PARAMS] * islands, seed=4, sync=True, epoch_generations=1,
                       epoch=epoch, **kw)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_a_killed_loky_worker_costs_one_retry_and_the_run_completes(tmp_path):
    marker = tmp_path / "killed"
    model = _model(2, functools.partial(fault_helpers.killed_once, marker=str(marker)))
    with pytest.warns(RuntimeWarning, match="rerunning the epoch"):
        record = model.run(stop_rules(generations=3))
    killed = tmp_path / "killed.0"
    assert killed.exists() and int(killed.read_text()) != os.getpid()
    assert record.retries >= 1
    assert record.stop_reason == "generations"
    # the retried epoch started from the islands' last states: the run equals an undisturbed one
    clean = _model(2, fault_helpers.run_epoch).run(stop_rules(generations=3))
    assert [s.best_cost for s in record.states] == [s.best_cost for s in clean.states]
    best, cost, _ = record.best_solution()
    assert QAP.cost(best) == cost


@pytest.mark.slow
@pytest.mark.parametrize("kills", [1, 2], ids=["one worker", "every worker"])
def test_a_killed_dask_worker_is_replaced_and_the_run_completes(tmp_path, kills):
    """When every worker dies, the specs scattered to them die too: the retry scatters them again."""
    distributed = pytest.importorskip("distributed")
    marker = tmp_path / "killed"
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                  host="127.0.0.1") as cluster, distributed.Client(cluster):
        model = _model(2, functools.partial(fault_helpers.killed_once, marker=str(marker), kills=kills),
                       backend="dask")
        if kills == 2:  # Dask cannot rerun tasks whose inputs died: the model reruns the epoch itself
            with pytest.warns(RuntimeWarning, match="rerunning the epoch of 2 CPU island"):
                record = model.run(stop_rules(generations=3))
        else:
            record = model.run(stop_rules(generations=3))
    assert all((tmp_path / f"killed.{k}").exists() for k in range(kills))
    assert record.stop_reason == "generations"
    clean = _model(2, fault_helpers.run_epoch).run(stop_rules(generations=3))
    assert [s.best_cost for s in record.states] == [s.best_cost for s in clean.states]


def test_an_out_of_memory_batch_is_split_until_it_fits():
    calls = []

    def improve(children, keys, time_limit):
        calls.append(len(keys))
        if len(keys) > 3:
            raise fault_helpers.OutOfMemoryError("out of memory")
        return children + 1, keys * 10, np.ones(len(keys), dtype=np.int64)

    children = np.arange(20).reshape(10, 2)
    sols, costs, iters = split_on_oom(improve, children, np.arange(10), None)
    assert np.array_equal(sols, children + 1)
    assert np.array_equal(costs, np.arange(10) * 10)
    assert iters.sum() == 10
    assert max(c for c in calls if c <= 3) <= 3 and calls[0] == 10


def test_a_single_child_that_does_not_fit_reraises():
    def improve(children, keys, time_limit):
        raise fault_helpers.OutOfMemoryError("out of memory")

    with pytest.raises(fault_helpers.OutOfMemoryError):
        split_on_oom(improve, np.zeros((4, 3)), np.arange(4), None)
    assert is_out_of_memory(MemoryError()) and not is_out_of_memory(ValueError("out of memory?"))


@pytest.mark.gpusim
def test_a_gpu_island_out_of_memory_moves_to_the_cpu(monkeypatch):
    monkeypatch.setenv("METAHEUR_SIMULATED_GPUS", "1")  # island 0 on a simulated GPU (docs/gpu.md)
    gpu_devices.cache_clear()
    try:
        model = IslandModel(QAP, [parse_device("cuda:0"), cpu_device()], [PARAMS, PARAMS], seed=1, sync=True,
                            epoch_generations=1, in_process=True, epoch=fault_helpers.gpu_out_of_memory)
        with pytest.warns(RuntimeWarning, match="cuda:0 is out of memory for island 0; it moves to the CPU"):
            record = model.run(stop_rules(generations=2))
    finally:
        monkeypatch.undo()
        gpu_devices.cache_clear()
    assert [s.device for s in record.specs] == ["cpu", "cpu"]
    assert all(s.generation == 2 for s in record.states)


def test_a_run_that_fails_part_way_ends_with_its_best():
    model = _model(1, fault_helpers.fails_after_first_epoch, in_process=True)
    with pytest.warns(RuntimeWarning, match="stops early: device lost"):
        record = model.run(stop_rules(generations=5))
    assert record.stop_reason == "failed: device lost"
    best, cost, _ = record.best_solution()
    assert QAP.cost(best) == cost


def test_a_run_that_fails_before_any_result_raises():
    from metaheur.errors import MetaheurError

    def always_fails(spec, state, **budget):
        raise MetaheurError("no device")

    with pytest.raises(MetaheurError, match="no device"):
        _model(1, always_fails, in_process=True).run(stop_rules(generations=2))


def _manager_thread_dies(*args):
    """An executor whose own thread cannot start (a memory limit): its tasks never come back."""
    def manager():
        raise RuntimeError("can't start new thread")

    threading.Thread(target=manager, name="ExecutorManagerThread").start()
    threading.Event().wait()


# how worker processes fail to start: when the executor opens, or on its first tasks
NO_WORKERS = {
    "no shared memory": ("enter", PermissionError(13, "Permission denied", "/dev/shm")),
    "process limit": ("enter", BlockingIOError(11, "Resource temporarily unavailable")),
    "workers die at start": ("call", RuntimeError("A worker process managed by the executor was unexpectedly "
                                                  "terminated.\n\nThe exit codes of the workers are {EXIT(1)}")),
    "out of memory": ("call", MemoryError()),
    "executor thread dies": ("call", _manager_thread_dies),
}


@pytest.mark.parametrize("kind", sorted(NO_WORKERS))
def test_worker_processes_that_cannot_start_are_one_line_and_the_islands_run_here(monkeypatch, tmp_path, kind):
    """Where worker processes cannot start (no shared memory for loky's semaphores, a process
    or memory limit), the run says so in one line and runs its CPU islands in its own process."""
    from click.testing import CliRunner

    from metaheur import cli
    from metaheur.islands import model as model_module

    when, fault = NO_WORKERS[kind]

    class NoWorkers:
        def __init__(self, *args, **kwargs):
            pass

        def __enter__(self):
            if when == "enter":
                raise fault
            return self

        def __exit__(self, *exc):
            return False

        def __call__(self, tasks):
            if callable(fault):
                fault()
            raise fault

    monkeypatch.setattr(model_module, "Parallel", NoWorkers)
    monkeypatch.chdir(tmp_path)
    with pytest.warns(RuntimeWarning) as caught:  # the command's warnings, as pytest records them
        result = CliRunner().invoke(cli.cli, ["solve", "gen:qap:12", "-g", "2", "--strategy", "cpu-islands",
                                              "--islands", "2", "-q", "--json", "r.json"])
    assert result.exit_code == 0, result.output
    assert result.stderr == ""
    lines = [str(w.message) for w in caught]
    assert len(lines) == 1 and "\n" not in lines[0], lines
    assert "worker processes could not start" in lines[0] and "run in this process" in lines[0]
    assert json.loads((tmp_path / "r.json").read_text())["generations"] == 2
