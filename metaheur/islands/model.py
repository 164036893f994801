"""The island model: plans islands on devices, runs their epochs, migrates, balances, stops.

CPU islands run in joblib worker processes (loky on this machine, or any joblib backend such as
Dask's on a cluster), one island per core, each with single-threaded kernels; GPU islands run in
threads of the main process, each on its own CUDA stream, overlapping the CPU epoch. After every
epoch the migrator exchanges solutions, the balancer re-sizes GPU islands, the callbacks are
told, and the stop rules are checked. A worker that dies mid-epoch costs one retry of that epoch
from the islands' previous states (which are plain data kept here), so no result is lost; one
that crashes (native code at fault, most often a problem's device code, which would crash again:
:mod:`metaheur.crashes`) ends the run with one line, keeping its best.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import sys
import threading
import time
import warnings
from collections import Counter
from dataclasses import dataclass, field, replace

import numpy as np
from joblib import Parallel, delayed, parallel_config

from metaheur import isolation, live, scratch, signals
from metaheur.callbacks import Callbacks
from metaheur.crashes import WorkerCrash, crash_error, quiet_crashes
from metaheur.devices import Device, parse_device
from metaheur.errors import MetaheurError, exception_line
from metaheur.islands.balance import LoadBalancer
from metaheur.islands.island import (
    EpochStats,
    IslandSpec,
    IslandState,
    leave_stop_signals_to_owner,
    ls_only,
    refusing_migrants,
    run_counters,
    run_epoch,
    warm_up,
    warm_up_all,
)
from metaheur.islands.migration import Migration, MigrationParams, Migrator
from metaheur.islands.operators import is_out_of_memory
from metaheur.islands.params import IslandParams
from metaheur.problem.interface import Problem
from metaheur.result import EpochRow
from metaheur.stopping import MaxGenerations, Progress, ProvenOptimum, StopRules, TimeLimit

MAX_RETRIES = 3
PROGRESS_SECONDS = 1.0  # wall time between Callbacks.on_progress calls while an epoch runs
WAIT_POLL_SECONDS = 0.05  # how often the run's thread looks at its deadline while islands work
GRACE_SECONDS = 1.0  # after a stop signal, or past the time limit: how long islands get to come back
GRACE_SHARE = 0.025  # the time limit's grace, as a share of the limit (at least GRACE_SECONDS)
ABORT_AFTER_SECONDS = 0.5  # a second signal stops the wait, but not sooner than this after the first


@contextlib.contextmanager
def device_context(device: Device, stream):
    """Make ``device`` current in this thread with ``stream``, the island's own (created once by
    :meth:`IslandModel.island_stream`: CuPy's pool keeps freed blocks per stream, so a stream per
    epoch would strand each epoch's buffers), so that GPU islands driven by threads of the main
    process overlap."""
    with device.context(), stream:
        yield


def _keep_worker_caches() -> None:
    """Stop loky from ending this worker process as leaking memory. loky ends a worker whose
    memory grew by 300 MB after its first task; an island's operators are cached in its worker on
    purpose (:func:`~metaheur.islands.operators.operators_for`, a bounded cache), and those of a
    large instance (EAX buffers, candidate lists) pass that, so workers were replaced every few
    epochs, each new one importing metaheur and rebuilding the operators again. The switch is a
    private loky setting: where it does not exist, nothing changes."""
    try:
        from joblib.externals.loky import process_executor
    except ImportError:
        return
    if hasattr(process_executor, "_MAX_MEMORY_LEAK_SIZE"):
        process_executor._MAX_MEMORY_LEAK_SIZE = sys.maxsize


def _worker_warm_up(spec: IslandSpec) -> int:
    leave_stop_signals_to_owner(spec)
    signals.watch_parent(spec.owner_pid)
    quiet_crashes()
    return warm_up(spec)


def _worker_epoch(epoch, spec: IslandSpec, state: IslandState, budget: dict):
    _keep_worker_caches()
    quiet_crashes()
    signals.watch_parent(spec.owner_pid)
    return epoch(spec, state, **budget, in_worker=True)


def _unpickled_epoch(epoch, spec: IslandSpec, state: bytes, budget: dict):
    return epoch(spec, pickle.loads(state), **budget, in_worker=True)


class ExecutorLost(MetaheurError):
    """The worker processes' executor can run nothing more (a thread of its own died)."""


def _no_workers(exc: Exception) -> MetaheurError:
    """The one-line error of worker processes that could not start."""
    return MetaheurError(f"the worker processes could not start ({exception_line(exc, first_line=True)}); "
                         "--strategy cpu-serial runs without them")


def _thread(target, name: str) -> threading.Thread:
    """A started daemon thread of the run; one that cannot start (a memory limit: ``ulimit -v``
    leaves no room for its stack) is a one-line error."""
    thread = threading.Thread(target=target, name=name, daemon=True)
    try:
        thread.start()
    except RuntimeError as exc:
        raise MetaheurError(f"cannot start a thread of the run ({exc}): too little memory "
                            "(a limit such as ulimit -v?)") from None
    return thread


def _resource_failure(exc: BaseException | None) -> bool:
    """Whether ``exc`` (of a thread that ended with it) is the system's refusal of a resource
    (a thread, memory), as under a memory limit."""
    return isinstance(exc, MemoryError) or (isinstance(exc, RuntimeError) and "can't start new thread" in str(exc))


@dataclass
class RunRecord:
    """The run so far: island states, statistics rows, loads; what a checkpoint holds and what
    the model hands back at the end."""

    states: list[IslandState]
    specs: list[IslandSpec]
    epochs: list[EpochRow] = field(default_factory=list)
    migrations: list[tuple[int, Migration]] = field(default_factory=list)
    stop_reason: str = ""
    seconds: float = 0.0  # search time, over every session of a resumed run
    loads: list[dict] = field(default_factory=list)
    retries: int = 0
    resized: int = 0
    next_epoch: int = 0
    best: int | None = None
    stale: int = 0  # epochs without a new best
    trace: list[tuple[float, int, int]] = field(default_factory=list)  # (time_s, island, cost) of island bests
    setup_seconds: float = 0.0  # starting the worker processes, before the clock
    #: islands' states of a synchronous epoch that Ctrl-C cut short: not part of the run (nor of a
    #: checkpoint), but their best is the run's best solution when it is better
    dropped: list[IslandState] = field(default_factory=list)

    def best_solution(self) -> tuple[np.ndarray, int, int] | None:
        """(solution, cost as tracked, island) of the best island, a dropped epoch's included; None
        when no island has a solution (the run was stopped while the first members were built)."""
        done = [s for s in self.states + self.dropped if s.best_cost is not None]
        if not done:
            return None
        s = min(done, key=lambda x: (x.best_cost, x.index))
        return s.best, s.best_cost, s.index


def epoch_span(epoch_seconds: float, stats: list[EpochStats]) -> float:
    """Length of the next time-mode epoch: ``epoch_seconds``, or nine tenths of the slowest
    island's time per generation when that is longer, so that islands whose generations are short
    (a tabu island: 50n iterations) keep working while a slow one (a GA generation of 10 children,
    each searched for 50n iterations) finishes its generation, instead of idling at the epoch's end.
    A generation's time leaves out the building of members (``EpochStats.build_seconds``: a first
    population, a restart), which is no generation: an epoch of a build alone does not count, so
    the epochs after a long build keep their length. Nine tenths: the slow island stops after one
    generation rather than two (an epoch ends after the generation that passes its length)."""
    per_generation = max(((e.seconds - e.build_seconds) / e.generations for e in stats if e.generations),
                         default=0.0)
    return max(epoch_seconds, 0.9 * per_generation)


@dataclass(frozen=True)
class LiveProgress:
    """The run's best (engine cost) and counters (:func:`~metaheur.islands.island.run_counters`)
    as the islands last reported them, also in the middle of an epoch (:mod:`metaheur.live`)."""

    best: int | None
    counters: dict[str, int]


class IslandModel:
    """Islands of a memetic algorithm on CPU worker processes and GPUs.

    ``devices``: one entry per island (``"cpu"`` or ``"cuda:k"``); CPU islands go to ``n_jobs``
    worker processes unless ``in_process`` (the ``cpu-serial`` strategy, and tests).
    ``sync``: epochs of ``epoch_generations`` generations (reproducible for a seed) instead of
    ``epoch_seconds`` of work. ``epoch``: the island algorithm, a picklable function with the
    signature of :func:`~metaheur.islands.island.run_epoch` (a user's own hybrid can replace the
    memetic island here). ``initial``: warm starts (k x n, best first) that seed every island's
    first population (:mod:`metaheur.warm_start`).
    """

    def __init__(self, problem: Problem, devices: list[Device], params: list[IslandParams], *, seed: int,
                 migration: MigrationParams | None = None, sync: bool = False, epoch_seconds: float = 1.0,
                 epoch_generations: int = 5, in_process: bool = False, backend: str | None = None,
                 n_jobs: int | None = None, callbacks: Callbacks | None = None, balance: bool = True,
                 epoch=run_epoch, initial: np.ndarray | None = None):
        if len(devices) != len(params) or not devices:
            raise MetaheurError("give one device and one parameter set per island")
        if epoch_seconds <= 0 or epoch_generations < 1:
            raise MetaheurError("epochs need a positive length")
        self.problem = problem
        self.seed = seed
        key = problem.fingerprint()
        seeds = np.random.SeedSequence(seed).spawn(len(devices))
        self.specs = [IslandSpec(i, problem, key, d.name, p, int(ss.generate_state(1, np.uint64)[0]),
                                 initial=initial)
                      for i, (d, p, ss) in enumerate(zip(devices, params, seeds, strict=True))]
        self.main = {i for i, d in enumerate(devices) if d.is_gpu or in_process}
        self.migrator = Migrator(migration or MigrationParams(), seed)
        self.sync = sync
        self.epoch_seconds = epoch_seconds
        self.epoch_span = epoch_seconds  # the next time-mode epoch's length (epoch_span)
        self.epoch_generations = epoch_generations
        self.backend = backend
        self.n_jobs = n_jobs or max(1, len(devices) - len(self.main))
        self.callbacks = callbacks or Callbacks()
        self.balancer = LoadBalancer(self.specs, self.main)
        self.balance = balance
        self.interrupted = False  # a stop signal came: the islands end the epoch under way
        self.interrupted_at: float | None = None
        self.aborted = False  # a second stop signal came: the run stops waiting for its islands
        self.abandoned: str | None = None  # why the run gave up waiting for islands, once it did
        self.crash: WorkerCrash | None = None  # a worker process crashed: the run ends after this epoch
        self.time_limit: float | None = None  # the run's time limit (seconds), for giving islands up
        self.start_time: float | None = None
        self.epoch = epoch
        self.parallel: Parallel | None = None  # the worker islands' executor while a run is on
        self.streams: dict[int, object] = {}  # island -> its CUDA stream (GPU islands)
        self.record: RunRecord | None = None  # the run so far, from on_start on
        self.board: live.Board | None = None  # the run's stop request and islands' reports while it runs
        self.live: LiveProgress | None = None  # the islands' latest reports, refreshed before on_progress
        self.progress_seconds = PROGRESS_SECONDS
        self._open = contextlib.ExitStack()
        self._helper_failures: list[BaseException] = []  # resource failures of the executor's own threads

    # -------------------------------------------------------------------------------- epochs
    def island_stream(self, spec: IslandSpec):
        """The CUDA stream of GPU island ``spec``, created on its device once (at its warm-up)."""
        stream = self.streams.get(spec.index)
        if stream is None:
            device = parse_device(spec.device)
            with device.context():
                stream = self.streams[spec.index] = device.cupy.cuda.Stream(non_blocking=True)
        return stream

    def _run_main(self, spec: IslandSpec, state: IslandState, budget: dict):
        if spec.device == "cpu":
            return self.epoch(spec, state, **budget)
        try:
            with device_context(parse_device(spec.device), self.island_stream(spec)):
                return self.epoch(spec, state, **budget)
        except Exception as exc:
            if not is_out_of_memory(exc):
                raise
        # not even one child fits the GPU: the island carries on with the CPU build
        warnings.warn(f"metaheur: {spec.device} is out of memory for island {spec.index}; it moves to the CPU",
                      RuntimeWarning, stacklevel=2)
        moved = replace(spec, device="cpu")
        self.specs[spec.index] = moved
        return self.epoch(moved, state, **budget)

    def _epoch(self, states: list[IslandState], budget: dict) -> list[tuple[IslandState, EpochStats]]:
        """One epoch of every island: the main-process islands each on a thread of their own, the
        worker islands through the executor (a failed worker costs a retry), all waited for
        (:meth:`_wait`); an island that does not come back in time is given up
        (:meth:`_given_up`)."""
        workers = [i for i in range(len(states)) if i not in self.main]
        results: dict[int, tuple[IslandState, EpochStats]] = {}  # filled as the islands come back
        calls = {i: (lambda i=i: results.__setitem__(i, self._run_main(self.specs[i], states[i], budget)))
                 for i in self.main}
        if workers:
            calls[-1] = lambda: self._run_workers(workers, states, budget, results)
        try:
            self._wait(calls)
        except WorkerCrash as exc:
            self.crash = exc  # the islands not back keep what they reported; the run ends with its best
        out = [results[i] if i in results else self._given_up(states[i]) for i in range(len(states))]
        if self.crash is not None and all(state.best_cost is None for state, _ in out):
            raise self.crash
        return out

    def _run_workers(self, workers: list[int], states: list[IslandState], budget: dict, results: dict) -> None:
        """The worker islands' epochs through the executor, each result put in ``results`` as it
        comes; a worker that dies costs a rerun of the epochs not back yet from the islands' last
        states, :data:`MAX_RETRIES` times at most."""
        for attempt in range(MAX_RETRIES + 1):
            pending = [i for i in workers if i not in results]
            try:
                if attempt and self.backend == "dask":  # the specs scattered to the workers may have died with them
                    self.parallel = self._open_parallel()
                for state, stats in self.parallel(self._task(self.specs[i], states[i], budget) for i in pending):
                    results[state.index] = (state, stats)
                return
            except MetaheurError:
                raise
            except Exception as exc:  # a worker died (killed, out of memory, ...): rerun its epoch
                if self.abandoned is not None:
                    raise
                crash = crash_error(exc, "an island's epoch")
                if crash is not None:  # native code at fault would crash again: no rerun
                    raise crash from None
                if attempt == MAX_RETRIES:
                    raise MetaheurError(f"worker processes failed {MAX_RETRIES + 1} times in a row: {exc}") from exc
                self.retries += 1
                left = sum(i not in results for i in workers)
                warnings.warn(f"metaheur: a worker failed ({type(exc).__name__}); rerunning the epoch of "
                              f"{left} CPU island(s) from their last state", RuntimeWarning, stacklevel=2)

    def _wait(self, calls: dict) -> None:
        """Run every call of ``calls`` on a thread of its own and wait for them all. Should the
        run's time limit pass by more than its grace, or a stop signal's grace pass
        (:meth:`_overdue`), the calls still under way are given up: the worker processes are
        ended and a main-process island's thread is left to end its launch by itself. The first
        error of a call is raised."""
        errors: list[BaseException] = []
        left = threading.Semaphore(0)

        def run(call) -> None:
            signals.block_in_this_thread()  # the workers it starts leave the signals to the run
            try:
                call()
            except BaseException as exc:  # handed to the waiting thread
                errors.append(exc)
            finally:
                left.release()

        for key, call in calls.items():
            _thread(lambda call=call: run(call), f"metaheur-island-{key}")
        back = 0
        while back < len(calls):
            if left.acquire(timeout=WAIT_POLL_SECONDS):
                back += 1
                continue
            if self._helper_failures:  # the executor's own thread died: its tasks never come back
                failure = exception_line(self._helper_failures[0], first_line=True)
                raise ExecutorLost(f"the worker processes' executor failed ({failure})")
            reason = self._overdue()
            if reason is not None:
                self.abandoned = reason
                self._end_workers()
                warnings.warn(f"metaheur: {reason}: gave up waiting for {len(calls) - back} island task(s) under "
                              "way; each keeps the best it reported", RuntimeWarning, stacklevel=2)
                return
        if errors:
            raise errors[0]

    def _overdue(self) -> str | None:
        """Why the run stops waiting for its islands now, or None: the time limit passed by more
        than its grace (:data:`GRACE_SHARE` of it, at least :data:`GRACE_SECONDS`), the first stop
        signal's grace passed, or a second stop signal came (not sooner than
        :data:`ABORT_AFTER_SECONDS` after the first, which the islands' epochs end within: two
        signals in quick succession, a scheduler's and a terminal's, keep what the islands found;
        the time limit counts once the islands are built and the clock runs)."""
        now = time.perf_counter()
        if self.aborted and now - self.interrupted_at >= ABORT_AFTER_SECONDS:
            return "stopped by a second signal"
        if self.interrupted_at is not None and now - self.interrupted_at >= GRACE_SECONDS:
            return "interrupted"
        limit = self.time_limit
        if limit is not None and self.record is not None and \
                now - self.start_time >= limit + max(GRACE_SECONDS, GRACE_SHARE * limit):
            return "time limit"
        return None

    def _end_workers(self) -> None:
        """End the worker processes of the executor (their islands were given up)."""
        backend = getattr(self.parallel, "_backend", None)
        if backend is not None:
            with contextlib.suppress(Exception):
                backend.abort_everything(ensure_ready=False)
                self.parallel._aborted = True  # joblib's own abort at the run's end finds nothing left to end

    def _given_up(self, state: IslandState) -> tuple[IslandState, EpochStats]:
        """A given-up island's epoch: its state before the epoch, with the best solution it
        reported during the epoch (:meth:`metaheur.live.Board.best_solution`) when better."""
        spec = self.specs[state.index]
        reported = self.board.best_solution(state.index) if self.board is not None else None
        state = replace(state)
        improved = False
        if reported is not None and (state.best_cost is None or reported[0] < state.best_cost):
            cost, solution = reported
            if solution.shape == (self.problem.n,):
                state.best, state.best_cost, improved = solution.astype(np.int64), cost, True
        return state, EpochStats(state.index, spec.device, 0, 0, 0.0, state.best_cost, improved, state.restarts)

    def _task(self, spec: IslandSpec, state: IslandState, budget: dict):
        """One worker island's epoch as a joblib task. On Dask the state travels pickled inside
        the task: joblib would otherwise scatter it to some worker first, and the scheduler then
        tends to run every island where their states landed, one after the other."""
        if self.backend == "dask":
            return delayed(_unpickled_epoch)(self.epoch, spec, pickle.dumps(state), budget)
        return delayed(_worker_epoch)(self.epoch, spec, state, budget)

    def _budget(self, stop: StopRules) -> dict:
        limit, gens = stop.find(TimeLimit), stop.find(MaxGenerations)
        elapsed = time.perf_counter() - self.start_time
        left = None if limit is None else max(0.0, limit.seconds - elapsed)
        horizon = {"elapsed": elapsed, "limit": None if limit is None else limit.seconds,
                   "generation_limit": None if gens is None else gens.generations}
        if self.sync:
            return {"generations": self.epoch_generations, "time_left": left} | horizon
        seconds = self.epoch_span if left is None else min(self.epoch_span, left)
        return {"seconds": seconds, "time_left": left} | horizon

    def _open_parallel(self) -> Parallel | None:
        """The joblib executor of the worker islands, open until the run ends: loky here, or any
        registered backend (with ``dask``, joblib's Dask backend on the active
        ``distributed.Client``, which scatters the worker islands' specs to every worker once)."""
        if len(self.main) == len(self.specs):
            return None
        backend, options = self.backend or "loky", {}
        if backend == "dask":
            options["scatter"] = [s for s in self.specs if s.index not in self.main]
        elif backend == "loky":  # joblib's memory-mapped arrays go in the run's folder, removed with it
            # (metaheur.scratch); the islands set their kernels' threads themselves: numpy's BLAS gets
            # one (less memory per worker)
            options |= {"temp_folder": self.board.folder, "inner_max_num_threads": 1}
        # loky hands each island's epoch back as it ends (a run that gives up on a late island keeps the others')
        order = "generator_unordered" if backend == "loky" else "list"
        # registers external backends such as dask; the resource trackers start here, with the stop
        # signals held back so that they inherit them blocked (metaheur.signals.block_in_this_thread)
        with parallel_config(backend=backend, **options), signals.held():
            isolation.quiet_resource_trackers()
            return self._open.enter_context(Parallel(n_jobs=self.n_jobs, return_as=order))

    def _warm_up(self, parallel, workers: list[IslandSpec]) -> None:
        """Start the worker processes and build the islands' kernels before the clock: on loky one
        task per island; on Dask every island on every worker, since an epoch may run on any."""
        if self.backend == "dask":
            from distributed import get_client

            get_client().run(warm_up_all, workers)
        else:
            list(parallel(delayed(_worker_warm_up)(s) for s in workers))

    def _warm_up_main(self) -> None:
        """Build the main-process islands' operators (kernels, instance data on the device, the
        CUDA stream) before the clock, so that no load or upload lands in the first timed epoch."""
        for i in sorted(self.main):
            spec = self.specs[i]
            if spec.device == "cpu":
                warm_up(spec)
                continue
            try:
                with device_context(parse_device(spec.device), self.island_stream(spec)):
                    warm_up(spec)
            except Exception as exc:
                if not is_out_of_memory(exc):
                    raise  # out of memory: the island's first epoch moves it to the CPU

    # -------------------------------------------------------------------------------- run
    def run(self, stop: StopRules, resume: RunRecord | None = None, checkpoint=None) -> RunRecord:
        """Run epochs until a stop rule fires; the first Ctrl-C ends the epoch under way within a
        kernel launch and a generation, every island keeping what it found (``sync``: the epoch is
        dropped, unless it is the first), and stops the run.

        ``resume``: a record from a checkpoint to continue (its states, counters and time).
        ``checkpoint``: called as ``checkpoint(record, migrator, final)`` after every epoch (and
        once at the end with ``final=True``); it decides itself when to write.
        """
        if resume is not None:
            self.specs = [replace(s, params=r.params) for s, r in zip(self.specs, resume.specs, strict=True)]
        scratch.sweep()  # what runs killed outright left behind
        self.board = live.Board()
        self.specs = [replace(spec, target=stop.target, owner_pid=os.getpid(), live_folder=self.board.folder)
                      for spec in self.specs]
        self.retries = 0
        record = resume or RunRecord([IslandState(i) for i in range(len(self.specs))], self.specs)
        stop = self._without_beaten_optimum(stop, record)  # a resumed run may be beyond it already
        limit = stop.find(TimeLimit)
        self.time_limit = None if limit is None else limit.seconds
        reason = None
        try:
            with signals.handling(self._on_signal), isolation.isolated_helpers(), self._watching_helper_threads(), \
                    contextlib.ExitStack() as self._open:
                self._start(record)
                if self.abandoned is not None:  # stopped while the islands were being built
                    reason = "interrupted"
                while reason is None:
                    t0 = time.perf_counter()
                    try:
                        with self._heartbeat():
                            out = self._epoch(record.states, self._budget(stop))
                    except MetaheurError as exc:
                        if record.best is None:
                            raise
                        # keep what was found: the run ends here with its best solution
                        warnings.warn(f"metaheur: the run stops early: {exc}", RuntimeWarning, stacklevel=2)
                        reason = f"failed: {exc}"
                        break
                    if self.sync and self.interrupted and record.best is not None:
                        # a synchronous epoch that Ctrl-C cut short is dropped: the run and its
                        # checkpoint end at the last whole epoch, which a resumed run continues
                        # exactly as an uninterrupted one would; what it found is still returned
                        record.dropped = [state for state, _ in out]
                        reason = "interrupted"
                        break
                    self._after_epoch(record, out, t0)
                    stop = self._without_beaten_optimum(stop, record)
                    generations = min(s.generation for s in record.states)
                    best = None if record.best is None else self.problem.engine_sign * record.best
                    reason = stop.fired(Progress(elapsed=record.seconds, best_cost=best,
                                                 generations=generations, epochs=record.next_epoch,
                                                 epochs_without_improvement=record.stale,
                                                 interrupted=self.interrupted))
                    if self.abandoned is not None and reason is None:
                        reason = "interrupted" if self.interrupted else "time_limit"
                    if self.crash is not None:
                        warnings.warn(f"metaheur: the run stops early: {self.crash}", RuntimeWarning, stacklevel=2)
                        reason = f"failed: {self.crash}"
                    if checkpoint is not None:
                        checkpoint(record, self.migrator, False)
        finally:
            self.board.close()
        record.stop_reason = reason
        record.loads = [load.as_dict() for load in self.balancer.loads.values()]
        record.resized = self.balancer.resized
        with signals.deferred():  # a signal now does not cost the run its last checkpoint
            if checkpoint is not None:
                checkpoint(record, self.migrator, True)
            self.callbacks.on_end(self, reason)
        return record

    def _start(self, record: RunRecord) -> None:
        """Open the worker islands' executor and build every island's kernels before the clock
        (the time this takes is ``record.setup_seconds``), then start the clock. A terminal's
        Ctrl-C reaches the worker processes too: one that arrives while they start ends them, so
        new ones are started and build the islands in the first epoch, which the stop request
        keeps short. Worker processes that cannot start (a memory limit, a broken environment)
        are a one-line warning and the CPU islands run in this process instead (on Dask, a
        one-line error)."""
        try:
            self.parallel = self._open_parallel()
        except MetaheurError:
            raise
        except Exception as exc:
            self._in_process_instead(exc)
        t_setup = time.perf_counter()
        self.start_time = t_setup - record.seconds  # for on_progress while the workers start
        workers = [s for s in self.specs if s.index not in self.main]
        with self._heartbeat():
            if self.parallel is not None:
                try:
                    self._wait({0: lambda: self._warm_up(self.parallel, workers)})
                except ExecutorLost as exc:
                    self._in_process_instead(exc)
                except MetaheurError:
                    raise
                except Exception as exc:
                    crash = crash_error(exc, "the islands' warm-up")
                    if crash is not None:
                        raise crash from None
                    if not self.interrupted:
                        self._in_process_instead(exc)
                    else:
                        self.parallel = self._open_parallel()
            self._wait({0: self._warm_up_main})
        record.setup_seconds = time.perf_counter() - t_setup
        self.start_time = time.perf_counter() - record.seconds
        self.record = record
        self.callbacks.on_start(self)

    def _in_process_instead(self, exc: Exception) -> None:
        """The worker processes could not start (``exc``): the worker islands move to this
        process, with a one-line warning; on Dask a one-line error (the cluster is the user's)."""
        if self.backend == "dask":
            raise _no_workers(exc) from exc
        self._end_workers()
        self.parallel = None
        self._helper_failures.clear()
        self.main.update(range(len(self.specs)))  # the balancer's set too: no worker islands left
        failure = exception_line(exc, first_line=True)
        warnings.warn(f"metaheur: the worker processes could not start ({failure}); the CPU islands run "
                      "in this process instead", RuntimeWarning, stacklevel=3)

    @contextlib.contextmanager
    def _watching_helper_threads(self):
        """Run the block with a thread of the executor's own (loky's manager thread) that dies of
        a resource refused (:func:`_resource_failure`) recorded for :meth:`_wait`, not printed:
        its tasks would never come back."""
        previous = threading.excepthook

        def hook(args) -> None:
            if _resource_failure(args.exc_value) and not args.thread.name.startswith("metaheur-"):
                self._helper_failures.append(args.exc_value)
            else:
                previous(args)

        threading.excepthook = hook
        try:
            yield
        finally:
            threading.excepthook = previous

    def _without_beaten_optimum(self, stop: StopRules, record: RunRecord) -> StopRules:
        """``stop``, or, once the run's best beats the proven optimum of the best-known table (whose
        entry is then of another instance of that name and size), ``stop`` without that rule and
        the islands without that target, with a warning."""
        fewer = stop.without_beaten_optimum(record.best)
        if fewer is None:
            return stop
        name, optimum = self.problem.name, stop.find(ProvenOptimum).value
        warnings.warn(f"metaheur: {name}: a solution better than {optimum}, the proven optimum of the best-known "
                      f"table's {name}, was found: that entry is of another instance of this name; the run goes on "
                      "without it", RuntimeWarning, stacklevel=2)
        self.specs = [replace(spec, target=fewer.target) for spec in self.specs]
        return fewer

    def _after_epoch(self, record: RunRecord, out: list[tuple[IslandState, EpochStats]], t0: float) -> None:
        """What follows an epoch that began at ``t0``: migration, the run's best, the statistics
        rows and the trace, the load balancer, the record's counters, the callbacks."""
        epoch = record.next_epoch
        wall = time.perf_counter() - t0
        states = [s for s, _ in out]
        stats = [e for _, e in out]
        migrations = self.migrator.migrate(states, epoch, refusing_migrants(self.specs, states))
        self._update_best(record, states)
        elapsed = time.perf_counter() - self.start_time
        incoming = Counter(m.target for m in migrations)
        for st, e in zip(states, stats, strict=True):
            ga = not ls_only(self.specs[st.index])
            record.epochs.append(EpochRow(epoch, st.index, e.device, elapsed, e.generations if ga else 0,
                                          e.ls_iterations, e.seconds, st.best_cost, record.best,
                                          incoming[st.index], 0 if ga else e.generations))
        record.migrations.extend((epoch, m) for m in migrations)
        self.balancer.record(stats, wall)
        self.epoch_span = epoch_span(self.epoch_seconds, stats)
        if self.balance:
            self.specs = self.balancer.rebalance(self.specs, stats)
        if self.specs[0].initial is not None:  # the warm starts are in the first populations now
            self.specs = [replace(spec, initial=None) for spec in self.specs]
        offset = t0 - self.start_time
        for e in stats:
            record.trace.extend((round(offset + dt, 4), e.index, c) for dt, c in e.improvements)
        record.states, record.specs, record.next_epoch = states, self.specs, epoch + 1
        record.seconds, record.retries = elapsed, record.retries + self.retries
        self.retries = 0
        self.callbacks.on_epoch(self, epoch, stats)
        if migrations:
            self.callbacks.on_migration(self, epoch, migrations)

    def _update_best(self, record: RunRecord, states: list[IslandState]) -> None:
        """The run's best after an epoch, and the epochs without a new one; tells the callbacks."""
        epoch_best = min((s.best_cost for s in states if s.best_cost is not None), default=None)
        if epoch_best is not None and (record.best is None or epoch_best < record.best):
            record.best, record.stale = epoch_best, 0
            island = min((s for s in states if s.best_cost == epoch_best), key=lambda s: s.index).index
            self.callbacks.on_best(self, record.best, island)
        else:
            record.stale += 1
    @contextlib.contextmanager
    def _heartbeat(self):
        """Call ``on_progress`` every ``progress_seconds`` from a thread of this process while
        the block runs (the islands may be in worker processes, busy for minutes)."""
        done = threading.Event()

        def beat():
            while not done.wait(self.progress_seconds):
                self.live = self._live_progress()
                self.callbacks.on_progress(self, time.perf_counter() - self.start_time)

        thread = _thread(beat, "metaheur-progress")
        try:
            yield
        finally:
            done.set()
            thread.join()

    def _live_progress(self) -> LiveProgress | None:
        """The record's best and counters, updated by the islands' reports of the epoch under way."""
        record = self.record
        if record is None:
            return None
        reports = self.board.reports() if self.board is not None else {}
        states = []
        for st in record.states:
            r = reports.get(st.index)
            if r is not None:
                best = min((c for c in (st.best_cost, r.best_cost) if c is not None), default=None)
                st = replace(st, best_cost=best, generation=max(st.generation, r.generation),
                             ls_iterations=max(st.ls_iterations, r.ls_iterations))
            states.append(st)
        best = min((s.best_cost for s in states if s.best_cost is not None), default=None)
        return LiveProgress(best, run_counters(self.specs, states))

    def _on_signal(self, signum: int, frame) -> None:
        """A stop signal (:mod:`metaheur.signals`): the first asks the islands to end the epoch
        under way, keeping what they found, and stops the run; the second stops waiting for them."""
        signals.note(signum)
        if self.interrupted:
            self.aborted = True
            return
        self.interrupted, self.interrupted_at = True, time.perf_counter()
        self.board.request_stop()
