"""Long phases inside epochs (issue 32): a population build is no generation for the epoch length,
the islands report progress in the middle of an epoch, and the run's stop request (Ctrl-C) or
its time limit end an epoch within a kernel launch and a generation, at any size."""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import replace

import numpy as np
import pytest

from metaheur import live
from metaheur.callbacks import Callbacks
from metaheur.problems import uniform_tsp
from metaheur.search.batch import LaunchPacer
from metaheur.solve_params import SolveParams
from metaheur.solver import solve

EPOCH_SECONDS = 0.3


class Watch(Callbacks):
    """What ``on_progress`` saw of the islands' reports before the first epoch ended."""

    def __init__(self):
        self.during_build: list[tuple[float, int | None, int]] = []  # (elapsed, best, search iterations)
        self.epochs = 0

    def on_start(self, model) -> None:
        model.progress_seconds = 0.25  # look more often than the islands report (every second)

    def on_progress(self, model, elapsed: float) -> None:
        if model.live is not None and self.epochs == 0:
            self.during_build.append((elapsed, model.live.best, model.live.counters["search_iterations"]))

    def on_epoch(self, model, epoch: int, stats) -> None:
        self.epochs += 1


@pytest.fixture(scope="module")
def long_build():
    """A 6-s run on two worker islands whose automatic EAX populations take seconds to build (30 %
    of the time limit), with epochs of 0.3 s and no restarts (a restart rebuilds a population too)."""
    tsp = uniform_tsp(2000, seed=4)
    watch = Watch()
    params = SolveParams(strategy="cpu-islands", islands=2, epoch_seconds=EPOCH_SECONDS,
                         ga=replace(tsp.default_params().ga, restart_after=0))
    result = solve(tsp, time_limit=6, seed=1, params=params, callbacks=watch)
    return result, watch


def test_the_epochs_after_a_long_build_keep_their_length(long_build):
    result, _ = long_build
    ends = sorted({row.epoch: row.time_s for row in result.history}.items())
    build = ends[0][1]
    assert build > 4 * EPOCH_SECONDS  # the build is long next to an epoch
    assert all(row.generations == 0 for row in result.history if row.epoch == 0)  # epoch 0 only builds
    gens = [row for row in result.history if row.epoch > 0 and row.generations]
    per_generation = max(row.busy_s / row.generations for row in gens)
    assert per_generation < build / 4  # the rule tells a build from a generation
    walls = [b - a for (_, a), (_, b) in itertools.pairwise(ends)]
    assert len(walls) >= 4
    assert max(walls[:-1]) < 2 * EPOCH_SECONDS + per_generation, walls  # the last one: cut by the time limit


def test_worker_islands_report_progress_during_the_build(long_build):
    _, watch = long_build
    seen = watch.during_build  # before the first epoch (the build) ended
    assert len(seen) >= 4
    assert any(best is not None for _, best, _ in seen)  # a best before the epoch ends
    iterations = [it for _, _, it in seen]
    assert iterations == sorted(iterations) and iterations[-1] > iterations[0]  # the counters move


def test_a_stop_request_reaches_an_island_and_its_launches(tmp_path):
    board = live.Board()
    try:
        state = type("S", (), {"best_cost": 7, "generation": 3, "ls_iterations": 10, "best": np.arange(4)})()
        with live.island_epoch(board.folder, 2, state):
            pacer = LaunchPacer(None, 60.0, first=5)
            assert not live.stop_requested() and pacer.next_step() == 5
            time.sleep(live.REPORT_SECONDS)
            live.beat(lambda: (5, 4, np.array([3, 1, 2, 0])))  # a batch under way: its best, iterations, solution
            assert board.reports()[2] == live.Report(best_cost=5, generation=3, ls_iterations=14)
            cost, solution = board.best_solution(2)
            assert cost == 5 and solution.tolist() == [3, 1, 2, 0]
            assert board.best_solution(1) is None  # island 1 reported nothing
            board.request_stop()
            time.sleep(live.STOP_POLL_SECONDS)
            assert live.stop_requested() and pacer.next_step() == 0 and pacer.out_of_time()
        assert not live.stop_requested()  # outside the epoch
    finally:
        board.close()
    with live.island_epoch(board.folder, 0, state):  # the run's folder is gone: nothing to see
        assert not live.stop_requested()
        live.beat()


def test_a_batch_of_generic_searches_reports_its_best_and_iterations_while_it_runs(monkeypatch):
    """The generic engine's searches (the flow shop's iterated-greedy chains build their first
    members with them for 50 n iterations) report the batch's best and iterations between launches,
    so the status line shows a best before the island's first epoch ends."""
    import numpy as np

    from metaheur.problems.pfsp import random_pfsp
    from metaheur.search.perm_search import PermSearchBatch, PermSearchParams

    monkeypatch.setattr(live, "REPORT_SECONDS", 0.0)  # report at every launch
    shop = random_pfsp(40, 8, seed=2)
    rng = np.random.default_rng(0)
    starts = np.array([rng.permutation(shop.n) for _ in range(2)])
    board = live.Board()
    try:
        state = type("S", (), {"best_cost": None, "generation": 0, "ls_iterations": 0, "best": None})()
        with live.island_epoch(board.folder, 0, state):
            result = PermSearchBatch(shop, "cpu", 2, PermSearchParams(method="ig")).run(
                starts, np.array([1, 2], dtype=np.uint64), budget=10**9, time_limit=0.3)
        assert result.launches >= 2
        assert board.reports()[0] == live.Report(best_cost=int(result.best_costs.min()), generation=0,
                                                 ls_iterations=int(result.iterations.sum()))
    finally:
        board.close()


@pytest.mark.slow
def test_the_time_limit_ends_a_build_on_time():
    result = solve(uniform_tsp(20000, seed=2), time_limit=2, seed=1,
                   params=SolveParams(strategy="cpu-islands", islands=2))
    assert result.stop_reason == "time_limit"
    assert result.time_s < 2 + 2


@pytest.mark.slow
@pytest.mark.parametrize("when", ["starting the islands", "building"])
def test_ctrl_c_during_the_build_of_a_large_instance_ends_the_run_at_once(tmp_path, when):
    """SIGINT, as a terminal's Ctrl-C sends it (to the process group, worker processes included),
    while the worker processes start or while 20,000-city populations are being built: exit 130,
    with the JSON written and a valid tour in it; during the build, within about two seconds."""
    proc = subprocess.Popen([sys.executable, "-m", "metaheur.cli", "solve", "gen:tsp:20000", "-t", "120",
                             "--json", "out.json"], cwd=tmp_path, env=dict(os.environ, METAHEUR_NO_GPU="1"),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    lines: list[str] = []
    ready = threading.Event()

    def read():
        for line in proc.stderr:
            lines.append(line)
            if when in line if when != "building" else ("best" in line and "gen 0" in line):
                ready.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        if when == "building":
            assert ready.wait(90), "".join(lines)
            time.sleep(1.0)
        else:  # the status line says so after a second of starting; workers that start sooner are
            ready.wait(3)  # then already building, where the same outcome is due
        sent = time.perf_counter()
        os.killpg(proc.pid, signal.SIGINT)
        proc.wait(timeout=60)
        took = time.perf_counter() - sent
    finally:
        if proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    reader.join(5)
    err = "".join(lines)
    assert proc.returncode == 130, err
    assert "cli.py" not in err  # no traceback of the run (a worker ended while starting may print its own)
    if when == "building":
        assert "Traceback" not in err
        assert took < 2 + 1.5, took  # two seconds and a generation (none yet), on a busy machine
    data = json.loads((tmp_path / "out.json").read_text())
    assert data["stop_reason"] == "interrupted" and data["generations"] == 0
    tour = data["permutation"]
    assert sorted(tour) == list(range(20000))
    assert data["cost"] == uniform_tsp(20000, seed=1).tour_length(tour)


@pytest.mark.parametrize("kind", ["qap", "tsp"])
def test_the_tabu_and_ils_batches_report_their_best_solution(monkeypatch, kind):
    """A batch of QAP tabu searches or TSP ILS searches under way reports its best solution with
    its cost, so that an island given up mid-epoch keeps it (metaheur.live.Board.best_solution)."""
    from metaheur.problems import random_qap
    from metaheur.problems.qap.tabu import QAPTabuBatch
    from metaheur.problems.tsp.ils import TSPILSBatch

    monkeypatch.setattr(live, "REPORT_SECONDS", 0.0)  # report at every launch
    if kind == "qap":
        problem = random_qap(20, seed=3)
        batch = QAPTabuBatch(problem, "cpu", count=3, seed=1)
        value = problem.cost
    else:
        problem = uniform_tsp(120, seed=2)
        batch = TSPILSBatch(problem, "cpu", count=3, seed=1)
        value = problem.tour_length
    board = live.Board()
    try:
        state = type("S", (), {"best_cost": None, "generation": 0, "ls_iterations": 0, "best": None})()
        with live.island_epoch(board.folder, 0, state):
            result = batch.run(time_limit=0.3)
        cost, solution = board.best_solution(0)
        assert cost == value(solution) and cost >= int(result.best_costs.min())
        assert sorted(solution.tolist()) == list(range(problem.n))
    finally:
        board.close()
