"""How long a user problem's device functions take, in CPU seconds: the probe behind the defaults that follow the
cost (:mod:`metaheur.search.perm_defaults`; issue 61, docs/decisions/perm-defaults.md).

On the CPU build, one OpenMP thread (what a CPU island runs on), through the kernels of
kernels/engine/perm_eval.cu: ``cost``, every move's pair delta (the problem's, else ``cost``
after the move, as the searches evaluate it) and row (the problem's row function, where it
defines one), and ``partial_insert_row`` of an element into the n - 1 others. Each is launched
on a batch of random permutations, the batch growing until it takes :data:`SAMPLE_SECONDS` or the
probe's time is spent (:func:`_per_call`; a slow function may get one launch and overrun it). From
these, the seconds of one full scan of a move's neighbourhood: n rows, or every pair of the move.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from metaheur.devices import cpu_device, to_host
from metaheur.engine.user_source import MOVES, upload

#: A measurement stops growing its batch once a launch takes this long ...
SAMPLE_SECONDS = 0.001
#: ... and times that batch up to this many times, keeping the least.
REPEATS = 3
#: Entries (batch x n) of the probe's largest buffers.
MAX_ENTRIES = 2**18
#: Random permutations timed (repeated to fill a batch), whose values and caches are computed once.
POOL = 16


def move_pairs(move: str, n: int) -> int:
    """Moves of a full scan, as the searches scan them: n (n - 1) insertions (row i, every j !=
    i), n (n - 1) / 2 swaps or reversals (i < j)."""
    return n * (n - 1) if move == "insert" else n * (n - 1) // 2


@dataclass(frozen=True)
class CostTimings:
    """Seconds of one call of each device function (CPU build, one thread): ``cost``; per move,
    ``pair`` (one move's delta) and ``row`` (one row, only where the problem has the row
    function); ``partial`` (one ``partial_insert_row`` into n - 1 elements, or None); ``probe``:
    the seconds the probe took."""

    n: int
    cost: float
    pair: dict[str, float]
    row: dict[str, float]
    partial: float | None
    probe: float

    def scan(self, move: str) -> float:
        """Seconds of a full scan of ``move``'s neighbourhood: n rows of the row function, else
        every pair's delta (:func:`move_pairs`)."""
        if move in self.row:
            return self.n * self.row[move]
        return move_pairs(move, self.n) * self.pair[move]

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


def _per_call(launch: Callable[[int], None], max_batch: int, clock: _Clock) -> float:
    """Seconds per item of ``launch(k)`` (a launch over k items), after one launch of one item
    that binds the kernel: batches of 1, 4, 16, ... until a launch takes :data:`SAMPLE_SECONDS`
    (a launch's own overhead, some 30 us on the CPU build, is then a few per cent), the batch
    reaches ``max_batch`` or the clock is out; then that batch again, up to :data:`REPEATS`
    times while the clock lasts, the least time kept (a launch that lost the core to another
    process, on a shared machine, is not the function's cost)."""
    launch(1)
    k = 1
    while True:
        seconds = _timed(launch, k)
        if seconds >= SAMPLE_SECONDS or k >= max_batch or clock.left() <= 4 * seconds:  # CPU and wall time
            break
        k = min(max_batch, 4 * k)
    for _ in range(REPEATS - 1):
        if clock.left() <= seconds:
            break
        seconds = min(seconds, _timed(launch, k))
    return seconds / k


def _timed(launch: Callable[[int], None], k: int) -> float:
    """The calling thread's CPU seconds of ``launch(k)`` (a CPU launch on one OpenMP thread runs on
    it): the function's cost, not the time other processes of a shared machine take from it."""
    t0 = time.thread_time()
    launch(k)
    return time.thread_time() - t0


def probe_costs(problem, seconds: float, seed: int = 0) -> CostTimings:
    """Time ``problem``'s device functions (module docstring) within about ``seconds`` (a slow
    function's first launch may overrun it). ``seed`` draws the random permutations and moves
    (the timings, not the draws, differ between runs)."""
    dev, n = cpu_device(), problem.n
    code = problem.user_code()
    mod = code.module("engine/perm_eval.cu", dev)  # built before the clock (compile time)
    clock = _Clock(seconds)
    fields, arrays = problem.device_data()
    data = upload(fields, arrays, dev)
    cs, ws, cache_dtype = problem.cache_entries(), problem.work_entries(), problem.cache_dtype
    rng = np.random.default_rng(seed)
    kmax = max(1, MAX_ENTRIES // max(n, cs, ws))
    pool = rng.permuted(np.broadcast_to(np.arange(n, dtype=np.int32), (min(kmax, POOL), n)), axis=1)
    copies = -(-kmax // len(pool))
    out = dev.zeros(kmax * (n + 1), np.int64)

    def run(name: str, k: int, args: tuple) -> None:
        mod.kernel(name)(k, 1, args + data, threads=1)

    def tiled(a: np.ndarray) -> np.ndarray:  # the pool's rows again and again, kmax of them
        return np.ascontiguousarray(np.tile(a, (copies,) + (1,) * (a.ndim - 1))[:kmax])

    d_pool = dev.asarray(pool)
    caches = dev.zeros((len(pool), max(1, cs)), cache_dtype)
    work = dev.zeros((kmax, ws), np.int64)
    run("perm_cost", len(pool), (d_pool, len(pool), n, out))
    run("perm_prepare", len(pool), (d_pool, len(pool), n, caches, cs, work, ws))
    perms = tiled(pool)
    d_perms, base, caches = dev.asarray(perms), dev.asarray(tiled(to_host(out)[:len(pool)])), dev.asarray(
        tiled(to_host(caches)))
    cost = _per_call(lambda k: run("perm_cost", k, (d_perms, k, n, out)), kmax, clock)
    scratch = dev.zeros((kmax, n), np.int32)
    pair, row = {}, {}
    for move in problem.moves:
        kind = MOVES.index(move)
        i = rng.integers(0, n, size=kmax)
        j = (i + rng.integers(1, n, size=kmax)) % n
        if move != "insert":
            i, j = np.minimum(i, j), np.maximum(i, j)
        moves = dev.asarray(np.stack([np.full(kmax, kind), i, j], axis=1).astype(np.int32))
        pair[move] = _per_call(lambda k, mv=moves: run("perm_pair", k, (d_perms, mv, k, n, caches, cs, base, scratch,
                                                                        out)), kmax, clock)
        if code.has(f"{move}_row"):
            rows = dev.asarray(np.stack([np.full(kmax, kind), i], axis=1).astype(np.int32))
            row[move] = _per_call(lambda k, r=rows: run("perm_row", k, (d_perms, r, k, n, caches, cs, base, work, ws,
                                                                        scratch, out)), kmax, clock)
    partial = None
    if code.has("partial_insert_row"):
        lens, elems = dev.asarray(np.full(kmax, n - 1, np.int32)), dev.asarray(perms[:, n - 1].copy())
        partial = _per_call(lambda k: run("perm_partial", k, (d_perms, lens, elems, k, n, work, ws, out)), kmax, clock)
    return CostTimings(n, cost, pair, row, partial, time.perf_counter() - clock.start)
