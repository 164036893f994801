"""The island model: reproducible synchronous runs (in this process and on loky workers), stop
rules, retries of a killed worker, load balancing and callbacks.

Most runs use ``in_process=True`` islands (threads of this process: fast). Islands that run in
the same process at the same time get parameter sets that differ a little (``ls_budget``), so
that each has its own cached operators: see ``test_in_process_islands_with_equal_parameters_*``.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import signal
import sys
import threading
import time
import warnings

import fault_helpers
import numpy as np
import pytest

from metaheur.callbacks import Callbacks
from metaheur.devices import cpu_device
from metaheur.errors import MetaheurError
from metaheur.islands import model
from metaheur.islands.balance import DeviceLoad, LoadBalancer
from metaheur.islands.island import EpochStats, IslandState, run_epoch
from metaheur.islands.migration import MigrationParams
from metaheur.islands.model import IslandModel, RunRecord, epoch_span
from metaheur.islands.params import GAParams, IslandParams
from metaheur.problems import QAP, TSP, random_qap, uniform_tsp
from metaheur.problems.tsp.distances import COORD_TYPES
from metaheur.stopping import stop_rules

QAP16 = random_qap(16, seed=3)
QAP8 = random_qap(8, seed=5)
TSP30 = uniform_tsp(30, seed=4)
CPU = cpu_device()


def island_params(count: int, problem=QAP16, **ga) -> list[IslandParams]:
    qap = problem.kind == "qap"
    base = {"population": 6, "offspring": 3, "crossover": "ux" if qap else "ox"} | ga
    budget = base.pop("ls_budget", 60 if qap else 3)
    return [IslandParams(ga=GAParams(ls_budget=budget + i, **base)) for i in range(count)]


def make_model(count: int = 3, *, problem=QAP16, seed: int = 1, in_process: bool = True, sync: bool = True,
               epoch_generations: int = 2, params=None, **kwargs) -> IslandModel:
    params = params or island_params(count, problem)
    return IslandModel(problem, [CPU] * count, params, seed=seed, sync=sync, epoch_generations=epoch_generations,
                       in_process=in_process, balance=kwargs.pop("balance", False), **kwargs)


def exact(problem, solution) -> int:
    return problem.cost(solution) if isinstance(problem, QAP) else problem.tour_length(solution)


def assert_exact(problem, record: RunRecord) -> None:
    for s in record.states:
        assert exact(problem, s.best) == s.best_cost
        for member, cost in zip(s.population, s.costs, strict=True):
            assert exact(problem, member) == int(cost)
    best, cost, _ = record.best_solution()
    assert exact(problem, best) == cost


def assert_same_run(a: RunRecord, b: RunRecord) -> None:
    assert len(a.states) == len(b.states)
    for x, y in zip(a.states, b.states, strict=True):
        for f in dataclasses.fields(IslandState):
            u, v = getattr(x, f.name), getattr(y, f.name)
            if isinstance(u, np.ndarray):
                assert np.array_equal(u, v), f.name
            else:
                assert u == v, f.name
    assert [(e, m.source, m.target, m.cost) for e, m in a.migrations] == \
        [(e, m.source, m.target, m.cost) for e, m in b.migrations]
    key = lambda r: (r.epoch, r.island, r.generations, r.ls_iterations, r.best_cost, r.global_best,  # noqa: E731
                     r.migrants_in)
    assert [key(r) for r in a.epochs] == [key(r) for r in b.epochs]
    assert a.stop_reason == b.stop_reason


# ------------------------------------------------------------------------------ construction


def test_invalid_models_are_refused():
    with pytest.raises(MetaheurError, match="one device and one parameter set per island"):
        IslandModel(QAP16, [CPU, CPU], island_params(1), seed=0)
    with pytest.raises(MetaheurError, match="one device and one parameter set per island"):
        IslandModel(QAP16, [], [], seed=0)
    with pytest.raises(MetaheurError, match="positive length"):
        IslandModel(QAP16, [CPU], island_params(1), seed=0, epoch_seconds=0)
    with pytest.raises(MetaheurError, match="positive length"):
        IslandModel(QAP16, [CPU], island_params(1), seed=0, epoch_generations=0)


def test_island_seeds_are_distinct_and_follow_the_run_seed():
    a, b, c = make_model(4, seed=1), make_model(4, seed=1), make_model(4, seed=2)
    assert [s.seed for s in a.specs] == [s.seed for s in b.specs]
    assert len({s.seed for s in a.specs}) == 4
    assert not {s.seed for s in a.specs} & {s.seed for s in c.specs}


def test_the_fingerprint_follows_the_data():
    assert QAP16.fingerprint() == random_qap(16, seed=3).fingerprint()
    assert QAP16.fingerprint() != random_qap(16, seed=4).fingerprint()
    flow = QAP16.flow.copy()
    flow[0, 1] += 1
    assert QAP16.fingerprint() != QAP(QAP16.name, flow, QAP16.distance).fingerprint()
    assert TSP30.fingerprint() != uniform_tsp(30, seed=5).fingerprint()


def test_the_fingerprint_covers_the_tsp_distance_function():
    coords = TSP30.coords / 1000.0 + 0.3
    kinds = ("EUC_2D", "CEIL_2D", "ATT", "MAN_2D")
    assert set(kinds) <= set(COORD_TYPES)
    assert len({TSP("same", kind, coords=coords).fingerprint() for kind in kinds}) == len(kinds)


# ---------------------------------------------------------------------------- reproducibility


@pytest.mark.parametrize(("problem", "topology", "policy"), [
    (QAP16, "ring", "best-worst"),
    (QAP16, "random", "elite"),
    (TSP30, "complete", "best-worst"),
], ids=["qap-ring", "qap-random-elite", "tsp-complete"])
def test_sync_runs_are_bit_identical_in_process(problem, topology, policy):
    mig = MigrationParams(topology=topology, policy=policy)

    def run():
        return make_model(3, problem=problem, seed=7, migration=mig).run(stop_rules(generations=6))

    a, b = run(), run()
    assert a.stop_reason == "generations"
    assert_same_run(a, b)
    assert_exact(problem, a)
    assert all(s.generation == 6 for s in a.states)


def test_different_seeds_give_different_runs():
    a = make_model(2, seed=1).run(stop_rules(generations=2))
    b = make_model(2, seed=2).run(stop_rules(generations=2))
    assert not all(np.array_equal(x.population, y.population) for x, y in zip(a.states, b.states, strict=True))


@pytest.mark.slow
def test_sync_run_on_loky_workers_equals_the_in_process_run():
    stop = stop_rules(generations=6)
    here = make_model(3, seed=11).run(stop)
    loky = make_model(3, seed=11, in_process=False)
    assert loky.main == set()
    there = loky.run(stop)
    assert_same_run(here, there)
    assert_exact(QAP16, there)
    assert here.migrations, "the comparison should cover migrations too"


def test_in_process_islands_with_equal_parameters_are_exact_and_reproducible():
    same = [IslandParams(ga=GAParams(population=6, offspring=3, ls_budget=200))] * 3

    def run():
        return make_model(3, seed=5, params=same).run(stop_rules(generations=6))

    runs = [run() for _ in range(3)]
    for r in runs:
        assert_exact(QAP16, r)
    assert_same_run(runs[0], runs[1])
    assert_same_run(runs[0], runs[2])


# ---------------------------------------------------------------------------------- stop rules


def test_generations_stop_rule():
    record = make_model(2, epoch_generations=3).run(stop_rules(generations=7))
    assert record.stop_reason == "generations"
    assert [s.generation for s in record.states] == [7, 7]  # epochs of 3, 3 and the 1 left
    assert record.next_epoch == 3
    assert sorted({r.epoch for r in record.epochs}) == [0, 1, 2]
    assert_exact(QAP16, record)


def test_target_stop_rule():
    reference = make_model(2, seed=3).run(stop_rules(generations=2))
    target = reference.best_solution()[1]
    record = make_model(2, seed=3).run(stop_rules(generations=50, target=target))
    assert record.stop_reason == "target"
    assert record.best_solution()[1] <= target
    assert min(s.generation for s in record.states) <= 2
    assert_exact(QAP16, record)


def test_target_is_passed_to_the_islands():
    model = make_model(2)
    model.run(stop_rules(generations=1, target=123))
    assert all(spec.target == 123 for spec in model.specs)


def test_no_improvement_stop_rule():
    # n = 8: every island finds the optimum in its first epoch, then nothing improves
    params = island_params(2, QAP8, ls_budget=200, restart_after=0)
    record = make_model(2, problem=QAP8, params=params, epoch_generations=1).run(
        stop_rules(generations=100, no_improvement=3))
    assert record.stop_reason == "no_improvement"
    assert record.next_epoch == 4
    assert record.stale == 3


def test_time_limit_stop_rule():
    params = island_params(2, ls_budget=2000)
    model = make_model(2, params=params, sync=False, epoch_seconds=0.1)
    t0 = time.perf_counter()
    record = model.run(stop_rules(time_limit=0.5))
    wall = time.perf_counter() - t0
    assert record.stop_reason == "time_limit"
    assert record.seconds >= 0.5
    assert wall < 10.0  # generous on a shared machine
    assert_exact(QAP16, record)


def test_time_limit_in_sync_mode_cuts_long_epochs():
    params = island_params(2, ls_budget=500_000)
    record = make_model(2, params=params, epoch_generations=50).run(stop_rules(time_limit=0.4, generations=1000))
    assert record.stop_reason == "time_limit"
    assert all(s.generation < 50 for s in record.states)
    assert_exact(QAP16, record)


def test_sigint_stops_at_the_epoch_boundary_and_restores_the_handler():
    class Interrupt(Callbacks):
        def on_epoch(self, model, epoch, stats):
            if epoch == 1:
                os.kill(os.getpid(), signal.SIGINT)

    before = signal.getsignal(signal.SIGINT)
    record = make_model(2, callbacks=Interrupt()).run(stop_rules(generations=100))
    assert record.stop_reason == "interrupted"
    assert record.next_epoch == 2
    assert signal.getsignal(signal.SIGINT) is before
    assert_exact(QAP16, record)


@pytest.mark.parametrize("sync", [True, False], ids=["sync", "time"])
def test_sigint_cuts_a_long_epoch_short(sync):
    """The first Ctrl-C, a fifth of an epoch's length into the second epoch, ends it at once; in
    sync mode that epoch is dropped, so the record (and a checkpoint of it) holds whole epochs only."""
    class Interrupt(Callbacks):
        def on_epoch(self, model, epoch, stats):
            if epoch == 0:
                self.length = max(s.seconds for s in stats)
                threading.Timer(self.length / 5, os.kill, (os.getpid(), signal.SIGINT)).start()

    before = signal.getsignal(signal.SIGINT)
    interrupt = Interrupt()
    model = make_model(2, params=island_params(2, ls_budget=20_000), sync=sync, epoch_generations=10,
                       epoch_seconds=2.0, callbacks=interrupt)
    record = model.run(stop_rules(time_limit=60))
    assert record.stop_reason == "interrupted"
    assert signal.getsignal(signal.SIGINT) is before
    assert_exact(QAP16, record)
    if sync:
        assert record.next_epoch == 1 and all(s.generation == 10 for s in record.states)
    else:
        assert record.next_epoch == 2
        assert max(row.busy_s for row in record.epochs if row.epoch == 1) < 0.6 * interrupt.length


def test_sigint_is_honoured_with_a_single_worker_island():
    class Interrupt(Callbacks):
        def on_epoch(self, model, epoch, stats):
            if epoch == 1:
                os.kill(os.getpid(), signal.SIGINT)

    before = signal.getsignal(signal.SIGINT)
    try:
        record = make_model(1, in_process=False, callbacks=Interrupt()).run(stop_rules(generations=8))
    finally:
        signal.signal(signal.SIGINT, before)
    assert record.stop_reason == "interrupted"


# -------------------------------------------------------------------------------- failures


def _failing(from_generation: int):
    """run_epoch that raises in every worker once its island has reached ``from_generation``."""

    def run(spec, state, **budget):
        if budget.get("in_worker") and state.generation >= from_generation:
            raise RuntimeError("simulated worker failure")
        return run_epoch(spec, state, **budget)

    return run


@pytest.mark.slow
def test_a_killed_worker_is_retried_and_the_run_completes(tmp_path):
    stop = stop_rules(generations=4)
    clean = make_model(2, seed=9).run(stop)
    killer = functools.partial(fault_helpers.killed_once, marker=str(tmp_path / "killed"))
    with pytest.warns(RuntimeWarning, match="a worker failed"):
        record = make_model(2, seed=9, in_process=False, epoch=killer).run(stop)
    assert (tmp_path / "killed.0").exists(), "no worker was killed: the test proves nothing"
    assert record.retries == 1
    assert record.stop_reason == "generations"
    assert_same_run(clean, record)  # the epoch was rerun from the islands' previous states
    assert_exact(QAP16, record)


@pytest.mark.slow
def test_workers_failing_before_any_result_raise():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        with pytest.raises(MetaheurError, match="worker processes failed 4 times in a row"):
            make_model(2, in_process=False, epoch=_failing(0)).run(stop_rules(generations=4))


@pytest.mark.slow
def test_workers_failing_later_end_the_run_with_its_best():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        # the second epoch fails
        record = make_model(2, in_process=False, epoch=_failing(2)).run(stop_rules(generations=10))
    assert record.stop_reason.startswith("failed: worker processes failed")
    assert record.next_epoch == 1
    assert_exact(QAP16, record)


# ------------------------------------------------------------------------------ load balancer


def stats(index: int, seconds: float, generations: int = 2, device: str = "cpu") -> EpochStats:
    return EpochStats(index, device, generations, 100 * generations, seconds, 1000, False, 0)


def test_balancer_sizes_a_main_island_against_the_worker_islands():
    model = make_model(3)
    balancer = LoadBalancer(model.specs, main_islands={0})
    # island 0 takes 0.01 s per generation, the workers 0.04 s and 0.06 s: 5x the work fits
    new = balancer.rebalance(model.specs, [stats(0, 0.02), stats(1, 0.08), stats(2, 0.12)])
    assert new[0].params.ga.offspring == 15  # 3 * (0.05 / 0.01)
    assert new[0].params.ga.population == 15  # the population holds at least one generation of children
    assert new[1] is model.specs[1] and new[2] is model.specs[2]
    assert balancer.resized == 1
    # a slow main island shrinks (its population is kept)
    slow = balancer.rebalance(new, [stats(0, 0.5), stats(1, 0.05), stats(2, 0.05)])
    assert slow[0].params.ga.offspring == 2 and slow[0].params.ga.population == 15
    assert balancer.resized == 2


def test_balancer_leaves_building_out_of_a_generation():
    """A worker island that built its population in the epoch is timed by its generations alone."""
    model = make_model(2)
    balancer = LoadBalancer(model.specs, main_islands={0}, tolerance=0.2)
    built = dataclasses.replace(stats(1, 5.1), build_seconds=5.0)  # 0.05 s per generation once built
    assert balancer.rebalance(model.specs, [stats(0, 0.1), built]) == model.specs
    assert balancer.resized == 0


def test_balancer_leaves_islands_within_tolerance_alone():
    model = make_model(2)
    balancer = LoadBalancer(model.specs, main_islands={0}, tolerance=0.2)
    assert balancer.rebalance(model.specs, [stats(0, 0.11), stats(1, 0.1)]) == model.specs
    assert balancer.resized == 0


def test_balancer_bounds_and_degenerate_cases():
    model = make_model(2)
    capped = LoadBalancer(model.specs, main_islands={0}, max_offspring=10)
    assert capped.rebalance(model.specs, [stats(0, 0.001), stats(1, 10.0)])[0].params.ga.offspring == 10
    floor = LoadBalancer(model.specs, main_islands={0})
    assert floor.rebalance(model.specs, [stats(0, 10.0), stats(1, 0.001)])[0].params.ga.offspring == 1
    everyone = LoadBalancer(model.specs, main_islands={0, 1})
    assert everyone.rebalance(model.specs, [stats(0, 1.0), stats(1, 0.01)]) == model.specs
    nobody = LoadBalancer(model.specs, main_islands=set())
    assert nobody.rebalance(model.specs, [stats(0, 1.0), stats(1, 0.01)]) == model.specs
    idle = LoadBalancer(model.specs, main_islands={0})
    assert idle.rebalance(model.specs, [stats(0, 1.0), stats(1, 0.0, generations=0)]) == model.specs


def test_balancer_records_device_loads():
    model = make_model(2)
    balancer = LoadBalancer(model.specs, main_islands={0})
    balancer.record([stats(0, 0.5), stats(1, 1.0)], wall=1.0)
    balancer.record([stats(0, 0.25), stats(1, 1.5)], wall=1.5)
    load = balancer.loads["cpu"]
    assert load.islands == 2
    assert load.busy_seconds == pytest.approx(0.5 + 1.0 + 0.25 + 1.5)
    assert load.idle_seconds == pytest.approx(0.5 + 1.25)
    assert load.ls_iterations == 800
    d = load.as_dict()
    assert d["device"] == "cpu" and d["utilisation"] == round(3.25 / 5.0, 3)
    assert DeviceLoad("x", 1).utilisation == 0.0


def test_model_resizes_a_main_island_and_runs_it_at_the_new_size():
    """A simulated GPU island (0) that is 8x faster per child than the CPU islands: the balancer,
    fed hand-made epoch times, gives it 8x the children and the next epoch runs them."""
    model = make_model(3, balance=True)
    model.balancer = LoadBalancer(model.specs, main_islands={0})
    rebalance = model.balancer.rebalance
    seen = []

    def simulated(specs, epoch_stats):
        per_child = {0: 0.001}
        fake = [dataclasses.replace(s, seconds=s.generations * specs[s.index].params.ga.offspring *
                                    per_child.get(s.index, 0.008), build_seconds=0.0) for s in epoch_stats]
        seen.append([specs[i].params.ga.offspring for i in range(3)])
        return rebalance(specs, fake)

    model.balancer.rebalance = simulated
    record = model.run(stop_rules(generations=6))
    assert seen == [[3, 3, 3], [24, 3, 3], [24, 3, 3]]
    assert record.resized == 1
    assert model.specs[0].params.ga.offspring == 24 and model.specs[0].params.ga.population == 24
    assert record.states[0].population.shape[0] == 24
    assert [s.population.shape[0] for s in record.states[1:]] == [6, 6]
    assert record.loads and record.loads[0]["device"] == "cpu"
    assert_exact(QAP16, record)


# -------------------------------------------------------------------------------- callbacks


class Recorder(Callbacks):
    def __init__(self):
        self.calls = []

    def on_start(self, model):
        self.calls.append(("start", model.start_time is not None))

    def on_epoch(self, model, epoch, stats):
        self.calls.append(("epoch", epoch, len(stats)))

    def on_best(self, model, cost, island):
        self.calls.append(("best", cost, island))

    def on_migration(self, model, epoch, migrations):
        self.calls.append(("migration", epoch, [(m.source, m.target, m.cost) for m in migrations]))

    def on_end(self, model, reason):
        self.calls.append(("end", reason))


def test_callbacks_are_called():
    rec = Recorder()
    record = make_model(3, callbacks=rec, epoch_generations=1).run(stop_rules(generations=4))
    calls = rec.calls
    assert calls[0] == ("start", True)
    assert calls[-1] == ("end", "generations")
    assert [c[1] for c in calls if c[0] == "epoch"] == [0, 1, 2, 3]
    assert all(c[2] == 3 for c in calls if c[0] == "epoch")
    bests = [c for c in calls if c[0] == "best"]
    assert bests, "the first epoch always sets a best"
    assert [c[1] for c in bests] == sorted({c[1] for c in bests}, reverse=True)  # strictly improving
    assert bests[-1][1] == record.best_solution()[1]
    assert all(0 <= island < 3 for _, _, island in bests)
    migrations = [(c[1], c[2]) for c in calls if c[0] == "migration"]
    expected: dict[int, list] = {}
    for epoch, m in record.migrations:
        expected.setdefault(epoch, []).append((m.source, m.target, m.cost))
    assert migrations == sorted(expected.items())
    assert migrations, "ring migration between 3 islands should move someone in 4 epochs"
    # within an epoch: on_best, then on_epoch, then on_migration
    first = migrations[0][0]
    order = [c[0] for c in calls]
    at = order.index("migration")
    assert calls[at - 1] == ("epoch", first, 3)


def test_no_migration_callback_without_migrations():
    rec = Recorder()
    make_model(1, callbacks=rec).run(stop_rules(generations=2))
    assert not [c for c in rec.calls if c[0] == "migration"]
    assert rec.calls[-1] == ("end", "generations")


def test_dask_tasks_carry_the_state_inline():
    """On Dask an island's state goes pickled inside its epoch task (bytes are never scattered
    by joblib, so the scheduler is free to spread the islands), and the task runs the same epoch."""
    model = IslandModel(QAP16, [CPU] * 2, island_params(2), seed=3, sync=True, backend="dask")
    spec = dataclasses.replace(model.specs[0], owner_pid=os.getpid())
    state, _ = run_epoch(spec, IslandState(0), generations=1)
    budget = {"generations": 2, "time_left": None}
    func, args, kwargs = model._task(spec, state, budget)
    assert isinstance(args[2], bytes) and not kwargs
    via_task, _ = func(*args)
    direct, _ = run_epoch(spec, state, **budget)
    assert np.array_equal(via_task.population, direct.population) and via_task.best_cost == direct.best_cost
    loky = IslandModel(QAP16, [CPU] * 2, island_params(2), seed=3, sync=True)
    loky_func, loky_args, loky_kwargs = loky._task(spec, state, budget)
    assert loky_args[1:] == (spec, state, budget) and not loky_kwargs  # the state travels as it is
    via_loky, _ = loky_func(*loky_args)
    assert np.array_equal(via_loky.population, direct.population) and via_loky.best_cost == direct.best_cost


def test_epochs_last_as_long_as_the_slowest_generation():
    """Time mode: an epoch is at least epoch_seconds and nine tenths of the slowest island's time
    per generation, so islands with short generations keep working meanwhile; building members is
    no generation."""
    fast = EpochStats(0, "cpu", generations=20, ls_iterations=0, seconds=1.1, best_cost=1, improved=False, restarts=0)
    slow = EpochStats(1, "cpu", generations=1, ls_iterations=0, seconds=3.0, best_cost=1, improved=False, restarts=0)
    built = EpochStats(1, "cpu", generations=0, ls_iterations=0, seconds=9.0, best_cost=1, improved=False, restarts=0)
    assert epoch_span(1.0, [fast, slow]) == pytest.approx(2.7)
    assert epoch_span(1.0, [fast]) == 1.0
    assert epoch_span(5.0, [fast, slow]) == 5.0
    assert epoch_span(1.0, [fast, built]) == 1.0  # an epoch that only built its population
    built_then_two = EpochStats(1, "cpu", generations=2, ls_iterations=0, seconds=9.0, best_cost=1, improved=False,
                                restarts=0, build_seconds=3.0)
    assert epoch_span(1.0, [fast, built_then_two]) == pytest.approx(2.7)  # 3 s per generation, the build left out


def test_worker_processes_keep_their_operators(monkeypatch):
    """loky would end a worker whose memory grew by 300 MB as leaking, and with it the operators
    the worker caches on purpose; the epochs' wrapper switches that check off in the worker. Fails
    when loky no longer has the setting (the switch would then silently do nothing)."""
    from joblib.externals.loky import process_executor

    monkeypatch.setattr(process_executor, "_MAX_MEMORY_LEAK_SIZE", int(3e8))
    model._keep_worker_caches()
    assert sys.maxsize == process_executor._MAX_MEMORY_LEAK_SIZE
