"""Deadlines inside launches and islands that do not come back (docs/long-runs.md): a time limit
or a stop signal ends the run on time whatever a launch does, and the run keeps the best solution
every island reported."""

from __future__ import annotations

import os
import signal
import threading
import time
from dataclasses import replace

import numpy as np
import pytest
from perm.perm_problems import QAP_VALUE, UserQAP, random_qap_arrays

from metaheur import check_problem, live
from metaheur.callbacks import Callbacks
from metaheur.devices import cpu_device
from metaheur.islands.island import EpochStats
from metaheur.islands.model import GRACE_SECONDS, IslandModel
from metaheur.islands.params import GAParams, IslandParams
from metaheur.problems import random_qap
from metaheur.solve_params import SolveParams
from metaheur.solver import solve
from metaheur.stopping import MaxGenerations, StopRules, TimeLimit

#: a cost-only QAP whose every evaluation is repeated ``rounds`` times: a descent over its moves
#: takes minutes, one launch of it as long as the whole descent
SLOW_COST = QAP_VALUE.replace("__device__ ll cost(", "__device__ ll slow_qap_value(") + r"""
__device__ ll cost(const Data &d, const int *p) {
  ll c = 0, carry = 0;  // each round depends on the last (not hoisted); the value itself comes out
  for (int r = 0; r < d.rounds; ++r) { carry = c & 1; c = slow_qap_value(d, p) + carry; }
  return c - carry;
}
"""


class SlowQAP(UserQAP):
    kind = "slowqap"
    device_code = SLOW_COST

    def data(self) -> dict:
        return super().data() | {"rounds": 4000}


class FewRoundsQAP(SlowQAP):
    kind = "fewroundsqap"

    def data(self) -> dict:
        return super().data() | {"rounds": 4}


def test_the_slow_cost_is_the_problems_value():
    """Its cost agrees with its value, odd values included (the value is what the run checks the
    cost it tracked against)."""
    check_problem(FewRoundsQAP(*random_qap_arrays(12, 2), name="few12"), devices=["cpu"], trials=16)


def test_a_time_limit_ends_a_launch_that_holds_a_whole_descent():
    """Every move of this problem costs a full evaluation 4000 times over: its first descent alone
    takes minutes in one launch, which reads the deadline between the descent's steps."""
    problem = SlowQAP(*random_qap_arrays(40, 1), name="slow40")
    t0 = time.perf_counter()
    result = solve(problem, time_limit=2.0, params=SolveParams(strategy="cpu-serial"))
    wall = time.perf_counter() - t0
    assert result.stop_reason == "time_limit"
    assert result.time_s < 2.0 + 2.0, result.time_s
    assert wall - result.compile_s - result.setup_s < 2.0 + 3.0, wall
    assert result.cost == problem.value(np.array(result.permutation))


def _swap_descent(problem, perm: np.ndarray) -> np.ndarray:
    """A better permutation than ``perm`` by first-improvement swaps (plain numpy)."""
    best, value = perm.copy(), problem.value(perm)
    improved = True
    while improved:
        improved = False
        for i in range(problem.n):
            for j in range(i + 1, problem.n):
                cand = best.copy()
                cand[i], cand[j] = cand[j], cand[i]
                if problem.value(cand) < value:
                    best, value, improved = cand, problem.value(cand), True
    return best


def hanging_epoch(spec, state, *, in_worker: bool = False, **budget):
    """An island that builds random members in its first epoch; in its second it reports a better
    solution, then never comes back (a kernel that does not return)."""
    problem = spec.problem
    if state.population is None:
        rng = np.random.default_rng(spec.index)
        pop = np.array([rng.permutation(problem.n) for _ in range(4)])
        costs = np.array([problem.value(p) for p in pop], dtype=np.int64)
        k = int(np.argmin(costs))
        state = replace(state, population=pop, costs=costs, best=pop[k].copy(), best_cost=int(costs[k]),
                        generation=1)
        return state, EpochStats(state.index, spec.device, 1, 0, 0.01, state.best_cost, True, 0)
    better = _swap_descent(problem, state.best)
    with live.island_epoch(spec.live_folder, spec.index, state):
        time.sleep(live.REPORT_SECONDS)
        live.beat(lambda: (problem.value(better), 0, better))
        while True:
            time.sleep(0.5)


class _Pids(Callbacks):
    """The processes the islands' epochs ran in."""

    def __init__(self):
        self.pids: set[int] = set()

    def on_epoch(self, model, epoch, stats) -> None:
        self.pids.update(e.pid for e in stats)


def _model(in_process: bool) -> tuple[IslandModel, object]:
    """One island in this process, or two in worker processes (joblib runs a single task here)."""
    problem = random_qap(12, seed=3)
    params = IslandParams(GAParams(population=4, offspring=2), problem.default_params().searches)
    islands = 1 if in_process else 2
    model = IslandModel(problem, [cpu_device()] * islands, [params] * islands, seed=1, in_process=in_process,
                        epoch=hanging_epoch, epoch_seconds=0.2, callbacks=_Pids())
    return model, problem


@pytest.mark.parametrize("in_process", [True, False], ids=["main-process", "worker"])
def test_an_island_stuck_in_a_launch_is_given_up_at_the_deadline_with_what_it_reported(in_process):
    model, problem = _model(in_process)
    t0 = time.perf_counter()
    with pytest.warns(RuntimeWarning, match="gave up waiting"):
        record = model.run(StopRules((TimeLimit(2.0),)))
    assert time.perf_counter() - t0 < 2.0 + GRACE_SECONDS + 2.5
    assert record.stop_reason == "time_limit"
    best, cost, _ = record.best_solution()
    first_best = record.epochs[0].best_cost
    assert cost < first_best and cost == problem.value(best)  # the reported solution, exactly
    if not in_process:  # the worker that held the island was ended
        workers = model.callbacks.pids - {os.getpid()}
        assert len(workers) == 2
        time.sleep(0.5)
        assert not any(_alive(pid) for pid in workers)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.parametrize("signals_sent", [1, 2])
def test_a_stop_signal_ends_a_run_whose_island_never_comes_back(signals_sent):
    """The first SIGINT or SIGTERM asks the islands to stop and gives them a grace; a second one
    stops the wait at once. Either way the run returns with the best reported."""
    model, problem = _model(in_process=True)

    def send() -> None:
        time.sleep(2.0)
        os.kill(os.getpid(), signal.SIGTERM)
        if signals_sent == 2:
            time.sleep(0.1)
            os.kill(os.getpid(), signal.SIGINT)

    threading.Thread(target=send, daemon=True).start()
    t0 = time.perf_counter()
    with pytest.warns(RuntimeWarning, match="gave up waiting"):
        record = model.run(StopRules((MaxGenerations(10**6),)))
    wall = time.perf_counter() - t0
    assert record.stop_reason == "interrupted"
    assert wall < 2.0 + (GRACE_SECONDS if signals_sent == 1 else 0.0) + 1.5, wall
    best, cost, _ = record.best_solution()
    assert cost < record.epochs[0].best_cost and cost == problem.value(best)


@pytest.mark.parametrize("kernel", ["classic", "warp"])
def test_an_neh_cut_short_by_the_deadline_is_a_whole_permutation_and_not_kept(kernel):
    """NEH inserts one element per launch (classic) or the whole sequence in one launch (warp,
    whose CPU launch reads the deadline between insertions); past the island's deadline the
    elements left follow in key order at once, and the operators do not keep that start for later
    members."""
    from metaheur.islands.perm_operators import PermOperators, neh
    from metaheur.problems.pfsp import random_pfsp
    from metaheur.search.perm_search import PermSearchParams

    shop = random_pfsp(30, 5, seed=1)
    order = np.argsort(-np.asarray(shop.construction_key(), dtype=np.float64), kind="stable")
    params = shop.default_params()
    params = params.with_search(replace(params.search(PermSearchParams), kernel=kernel))
    board = live.Board()
    try:
        state = type("S", (), {"best_cost": None, "generation": 0, "ls_iterations": 0, "best": None})()
        with live.island_epoch(board.folder, 0, state, deadline=time.perf_counter() - 1.0):
            cut = neh(shop, kernel=kernel)
            ops = PermOperators(shop, cpu_device(), params)
            starts = ops.random_solutions(3, np.random.default_rng(0))
        assert cut.tolist() == order.tolist()  # nothing inserted: the key order itself
        assert starts[0].tolist() == order.tolist() and ops._neh is None
    finally:
        board.close()
    whole = neh(shop, kernel=kernel)
    assert sorted(whole.tolist()) == list(range(30)) and whole.tolist() != order.tolist()


def test_populations_that_cannot_fit_the_memory_are_refused_with_the_estimate():
    from metaheur.errors import MetaheurError

    problem = random_qap(12, seed=1)
    ga = GAParams(population=10**11, offspring=10)
    with pytest.raises(MetaheurError, match=r"need about [\d.]+ GiB of memory; this machine has"):
        solve(problem, generations=1, params=SolveParams(strategy="cpu-serial", ga=ga))
