"""How long a user problem's device functions take, in CPU seconds: the probe behind the
defaults that follow the cost (:mod:`metaheur.search.perm_defaults`; issue 61,
docs/decisions/perm-defaults.md).

On the CPU build, one OpenMP thread (what a CPU island runs on), through the kernels of
kernels/engine/perm_eval.cu: ``cost``, the pair delta of each move asked for (the problem's, else
``cost`` after the move, as the searches evaluate it) and its row (where the problem defines the
row function), and ``partial_insert_row`` of an element into the n - 1 others. Each is launched on
a batch of random permutations, the batch growing until it takes :data:`SAMPLE_SECONDS` or the
probe's time is spent, the launch's own overhead left out (:func:`_per_call`; a slow function may
get one launch and overrun the time). From these, the seconds of one full scan of a move's
neighbourhood as the searches scan it (:meth:`CostTimings.scan`: rows, every move, or the moves
of the problem's candidate lists).

The run waits for the probe at most a given time (:func:`probe_within`): it runs in a worker
process of its own (ended when it is late; a crash there is one line, :mod:`metaheur.crashes`),
or, where the run starts no worker processes (``cpu-serial``) and for metaheur's own problems
(no process start before the clock for code that is the project's), on a thread of the run's process
(left to end with its launch or with the process; a crash there ends the process). A function
that never returns thus cannot hold the run before its clock, and stop signals reach the
waiting main thread. A probe not back in time takes every function to cost at least the wait
(:meth:`CostTimings.at_least`): the search is sized for a cost that slow.
"""

from __future__ import annotations

import concurrent.futures
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from metaheur import isolation, signals
from metaheur.crashes import crash_error, quiet_crashes
from metaheur.devices import cpu_device, to_host
from metaheur.engine.user_source import CANDIDATE_COUNT, MOVES, upload
from metaheur.problem.permutation_check import segment_code

#: A measurement stops growing its batch once a launch takes this long ...
SAMPLE_SECONDS = 0.001
#: ... and times that batch up to this many times, keeping the least.
REPEATS = 3
#: Entries (batch x n) of the probe's largest buffers.
MAX_ENTRIES = 2**18
#: Random permutations timed (repeated to fill a batch), whose values and caches are computed once.
POOL = 16
#: How often the thread waiting for the probe looks at it (and lets stop signals through).
WAIT_POLL_SECONDS = 0.05


def neighbourhood(move: str, n: int, longest: int = 3, reversible: bool = True) -> tuple[int, int]:
    """(rows, moves) of a full scan of ``move``, as the searches scan it: n rows of n - 1
    insertions, of swaps or reversals i < j (n (n - 1) / 2 moves); for segments (Or-opt), a row
    per block (start, length 1..``longest`` within the permutation and shorter than it, forwards
    and, where ``reversible`` and longer than one element, reversed), each to its n - length
    other places."""
    if move == "insert":
        return n, n * (n - 1)
    if move != "segment":
        return n, n * (n - 1) // 2
    rows = moves = 0
    for length in range(1, min(longest, n - 1) + 1):
        blocks = (n - length + 1) * (2 if reversible and length > 1 else 1)
        rows, moves = rows + blocks, moves + blocks * (n - length)
    return rows, moves


@dataclass(frozen=True)
class CostTimings:
    """Seconds of one call of each device function (CPU build, one thread): ``cost``; per move,
    ``pair`` (one move's delta) and ``row`` (one row, only where the problem has the row
    function); ``partial`` (one ``partial_insert_row`` into n - 1 elements, or None); ``probe``:
    the seconds the probe took; per move, ``size`` its (rows, moves) (:func:`neighbourhood`);
    ``candidates``: k of the problem's candidate lists (0 without); ``measured``: False for the
    lower bounds of a probe that did not end in time (:meth:`at_least`)."""

    n: int
    cost: float
    pair: dict[str, float]
    row: dict[str, float]
    partial: float | None
    probe: float
    size: dict[str, tuple[int, int]]
    candidates: int = 0
    measured: bool = True

    def scan(self, move: str, granular: bool = True) -> float:
        """Seconds of a full scan of ``move``'s neighbourhood, as the searches scan it: granular
        (candidate lists, and ``granular``), 2 k moves a row by pair deltas; else a row function
        a row; else every move's pair delta."""
        rows, moves = self.size[move]
        if granular and self.candidates:
            return rows * 2 * self.candidates * self.pair[move]
        if move in self.row:
            return rows * self.row[move]
        return moves * self.pair[move]

    @classmethod
    def at_least(cls, problem, moves: tuple[str, ...], seconds: float) -> CostTimings:
        """Timings of a probe that did not end within ``seconds``: every function of ``moves``
        (and ``partial_insert_row`` where defined) taken to cost ``seconds`` a call, rows left
        out (a row costs at least a pair delta)."""
        longest, reversible = int(problem.segment_length), bool(problem.segment_reverse)
        partial = seconds if problem.user_code().has("partial_insert_row") else None
        return cls(problem.n, seconds, dict.fromkeys(moves, seconds), {}, partial, seconds,
                   {m: neighbourhood(m, problem.n, longest, reversible) for m in moves}, measured=False)

    def as_dict(self) -> dict:
        """JSON-ready seconds (the result's record of the choice)."""
        out = {"cost_s": self.cost, "probe_s": round(self.probe, 4)}
        out |= {f"{m}_scan_s": self.scan(m) for m in self.pair}
        return out | ({"partial_insert_s": self.partial} if self.partial is not None else {})


class _Clock:
    """The probe's time budget, shared by its measurements."""

    def __init__(self, seconds: float):
        self.start, self.seconds = time.perf_counter(), seconds

    def left(self) -> float:
        return self.seconds - (time.perf_counter() - self.start)


def _per_call(launch: Callable[[int], None], max_batch: int, clock: _Clock, overhead: float,
              guess: float = 0.0) -> float:
    """Seconds per item of ``launch(k)`` (a launch over k items), after one launch of one item
    that binds the kernel: batches from about :data:`SAMPLE_SECONDS` / ``guess`` items (the
    expected seconds of one; 0: from 1), four times larger each time, until a launch takes
    :data:`SAMPLE_SECONDS` beyond a launch's own ``overhead`` (Python and the launch: some 10 to
    30 us of CPU), the batch reaches ``max_batch`` or the clock is out; then that batch again, up
    to :data:`REPEATS` times while the clock lasts, the least time kept, less the overhead (at
    least a tenth of it left: the overhead is itself measured), over the batch."""
    launch(1)
    k = max(1, min(max_batch, int(SAMPLE_SECONDS / guess) if guess > 0 else 1))
    while True:
        seconds = _timed(launch, k)
        if seconds - overhead >= SAMPLE_SECONDS or k >= max_batch or clock.left() <= 4 * seconds:  # CPU, wall
            break
        k = min(max_batch, 4 * k)
    for _ in range(REPEATS - 1):
        if clock.left() <= seconds:
            break
        seconds = min(seconds, _timed(launch, k))
    return max(seconds - overhead, seconds / 10) / k


def _timed(launch: Callable[[int], None], k: int) -> float:
    """The calling thread's CPU seconds of ``launch(k)`` (a CPU launch on one OpenMP thread runs on
    it): the function's cost, not the time other processes of a shared machine take from it."""
    t0 = time.thread_time()
    launch(k)
    return time.thread_time() - t0


def probe_costs(problem, seconds: float, moves: tuple[str, ...] | None = None, seed: int = 0) -> CostTimings:
    """Time ``problem``'s device functions (module docstring) within about ``seconds`` (a slow
    function's first launch may overrun it), the moves of ``moves`` (None: all the problem's).
    ``seed`` draws the random permutations and moves (the timings, not the draws, differ between
    runs)."""
    dev, n = cpu_device(), problem.n
    code = problem.user_code()
    mod = code.module("engine/perm_eval.cu", dev)  # built before the clock (compile time)
    clock = _Clock(seconds)
    fields, arrays = problem.kernel_data()
    data = upload(fields, arrays, dev)
    cs, ws, cache_dtype = problem.cache_entries(), problem.work_entries(), problem.cache_dtype
    longest, reversible = int(problem.segment_length), bool(problem.segment_reverse)
    rng = np.random.default_rng(seed)
    kmax = max(1, MAX_ENTRIES // max(n, cs, ws))
    pool = rng.permuted(np.broadcast_to(np.arange(n, dtype=np.int32), (min(kmax, POOL), n)), axis=1)
    out = dev.zeros(kmax * (n + 1), np.int64)

    def run(name: str, k: int, args: tuple) -> None:
        mod.kernel(name)(k, 1, args + data, threads=1)

    def tiled(a: np.ndarray) -> np.ndarray:  # the rows of a (the pool, a few moves) again and again, kmax of them
        return np.ascontiguousarray(np.tile(a, (-(-kmax // len(a)),) + (1,) * (a.ndim - 1))[:kmax])

    d_pool = dev.asarray(pool)
    caches = dev.zeros((len(pool), max(1, cs)), cache_dtype)
    work = dev.zeros((kmax, ws), np.int64)
    run("perm_cost", len(pool), (d_pool, len(pool), n, out))
    run("perm_prepare", len(pool), (d_pool, len(pool), n, caches, cs, work, ws))
    perms = tiled(pool)
    d_perms, base, caches = dev.asarray(perms), dev.asarray(tiled(to_host(out)[:len(pool)])), dev.asarray(
        tiled(to_host(caches)))
    empty = (d_perms, 0, n, out)  # a launch whose one block has no item: the overhead alone
    overhead = min(_timed(lambda k: run("perm_cost", 1, empty), 0) for _ in range(REPEATS))
    cost = _per_call(lambda k: run("perm_cost", k, (d_perms, k, n, out)), kmax, clock, overhead)
    scratch = dev.zeros((kmax, n), np.int32)
    pair, row = {}, {}
    moves = tuple(problem.moves if moves is None else moves)
    for move in moves:
        kind = MOVES.index(move)
        i, j = (tiled(a) for a in random_moves(move, n, min(kmax, 4 * POOL), rng, longest, reversible))
        given = dev.asarray(np.stack([np.full(kmax, kind), i, j], axis=1).astype(np.int32))
        pair[move] = _per_call(lambda k, mv=given: run("perm_pair", k, (d_perms, mv, k, n, caches, cs, base, scratch,
                                                                        out)), kmax, clock, overhead, cost)
        if code.has(f"{move}_row"):
            rows = dev.asarray(np.stack([np.full(kmax, kind), i], axis=1).astype(np.int32))
            row[move] = _per_call(lambda k, r=rows: run("perm_row", k, (d_perms, r, k, n, caches, cs, base, work, ws,
                                                                        scratch, out)), kmax, clock, overhead,
                                  n * pair[move])
    partial = None
    if code.has("partial_insert_row"):
        lens, elems = dev.asarray(np.full(kmax, n - 1, np.int32)), dev.asarray(perms[:, n - 1].copy())
        partial = _per_call(lambda k: run("perm_partial", k, (d_perms, lens, elems, k, n, work, ws, out)), kmax, clock,
                            overhead, n * cost)
    size = {m: neighbourhood(m, n, longest, reversible) for m in moves}
    cand = int(arrays.get(CANDIDATE_COUNT, 0))
    return CostTimings(n, cost, pair, row, partial, time.perf_counter() - clock.start, size, cand)


def probe_within(problem, seconds: float, wait: float, moves: tuple[str, ...] | None = None, seed: int = 0,
                 in_process: bool = False) -> CostTimings | None:
    """:func:`probe_costs` in a worker process (``in_process``: on a thread of this one), waited
    for at most ``wait`` seconds after the kernels are built (module docstring); None when it did
    not end in time. An error of the probe is raised here; a crash of its worker is one line."""
    problem.user_code().module("engine/perm_eval.cu", cpu_device())  # built here: compile time, not the wait
    if in_process:
        future: concurrent.futures.Future = concurrent.futures.Future()

        def run() -> None:
            try:
                future.set_result(probe_costs(problem, seconds, moves, seed))
            except BaseException as exc:  # handed to the waiting thread
                future.set_exception(exc)

        threading.Thread(target=run, name="metaheur-cost-probe", daemon=True).start()
        return future.result() if _wait(future, wait) else None
    from joblib.externals.loky import get_reusable_executor

    # started as the islands' workers are: leaving a terminal's Ctrl-C to this process (which ends
    # it), importing nothing from the working folder, beside quiet resource trackers
    with signals.held(), isolation.isolated_helpers():
        isolation.quiet_resource_trackers()
        executor = get_reusable_executor(max_workers=1)
        futures = [executor.submit(_worker_ready, os.getpid(), problem)]  # started and loaded before the wait
    try:
        _wait(futures[0], None)
        futures[0].result()
        futures.append(executor.submit(probe_costs, problem, seconds, moves, seed))
        return futures[1].result() if _wait(futures[1], wait) else None
    except Exception as exc:
        crash = crash_error(exc, "the cost probe")
        if crash is not None:
            raise crash from None
        raise
    finally:  # late, interrupted or done: the worker is ended (a run's islands start their own)
        executor.shutdown(wait=False, kill_workers=not futures[-1].done())


def _worker_ready(owner: int, problem) -> None:
    """The probe's worker process: watches the run's process, leaves a crash to the run's one
    line, and has the probe's kernels loaded."""
    signals.watch_parent(owner)
    quiet_crashes()
    problem.user_code().module("engine/perm_eval.cu", cpu_device())


def _wait(future: concurrent.futures.Future, seconds: float | None) -> bool:
    """Wait for ``future`` at most ``seconds`` (None: for ever), in short waits that let stop
    signals through; whether it is done."""
    end = None if seconds is None else time.perf_counter() + seconds
    while not future.done() and (end is None or time.perf_counter() < end):
        left = WAIT_POLL_SECONDS if end is None else max(0.0, end - time.perf_counter())
        concurrent.futures.wait([future], timeout=min(WAIT_POLL_SECONDS, left))
    return future.done()


def random_moves(move: str, n: int, count: int, rng: np.random.Generator, longest: int,
                 reversible: bool) -> tuple[np.ndarray, np.ndarray]:
    """``count`` random moves (i, j) of ``move`` as perm_eval.cu's kernels take them: swaps and
    reversals i < j, insertions i != j, segments (row code, destination) (kernels/engine/perm_moves.cuh)."""
    if move == "segment":
        start = rng.integers(0, n, size=count)
        length = 1 + rng.integers(0, np.minimum(min(longest, n - 1), n - start))
        rev = (rng.integers(0, 2, size=count) if reversible else np.zeros(count, np.int64)) * (length > 1)
        dest = rng.integers(0, n - length)
        codes = [segment_code(int(a), int(b), int(c), longest) for a, b, c in zip(start, length, rev, strict=True)]
        return np.array(codes), dest + (dest >= start)
    i = rng.integers(0, n, size=count)
    j = (i + rng.integers(1, n, size=count)) % n
    return (i, j) if move == "insert" else (np.minimum(i, j), np.maximum(i, j))
