"""Best-improvement 2-opt + Or-opt descent of many tours at once: the GPU-suited counterpart of
the first-improvement searches of kernels/tsp/tsp_ils.cu.

Each pass evaluates the whole candidate neighbourhood of every tour in parallel (one block per
tour: the GPU local search of Luong, Melab and Talbi, "GPU computing for parallel local search
metaheuristic algorithms", IEEE Trans. Computers, 2013). With candidate lists a pass then makes
several moves a tour (``tsp_best_at``, ``tsp_apply_disjoint`` of kernels/tsp/tsp_moves.cu): the best
improving move of each position, the best of all first, then every other one whose positions do
not meet those of a move taken before, so that each keeps its exact delta. The full
neighbourhoods of small n (``tsp_2opt_full``, ``tsp_oropt_full``) make each tour's best move
(``tsp_apply_best``). Passes are queued on the device and the host looks at the deltas only
every few passes; the buffers are allocated once for a batch size.

The full neighbourhoods have two kernel variants, the same moves and results bit for bit
(``kernel``, :data:`KERNELS`; issue 62): ``classic`` (``tsp_2opt_full``, ``tsp_oropt_full``: every
move computes its four or six distances from cities gathered by number) and ``cached``
(``tsp_cache_tour`` then ``tsp_2opt_cached``, ``tsp_oropt_cached``: the tour's own edge lengths
cached per position and the coordinates stored in tour order, so that a 2-opt move computes two
distances and an Or-opt move two, and on a GPU several blocks a tour when the tours are fewer
than the device's block slots; problems/tsp/full_moves.py). ``classic`` stays the default until a GPU
measures both (experiments/gpu_session.sh, part 3).

The several-move pass with candidate lists has two kernel variants too (``several_kernel``,
:data:`SEVERAL_KERNELS`; issue 62): ``classic`` (``tsp_best_at`` at every position, then
``tsp_apply_disjoint``: thread 0 takes the best move, then by position every move whose range
meets none taken) and ``dlb`` (``tsp_dlb_best_at``, ``tsp_dlb_apply``): a pass looks only at the
ends of the edges the previous pass changed and the two cities before each, a work list kept on
the device (don't-look bits, Bentley 1992), and all threads select the moves by claims, which takes the moves
of the sequential greedy in order of (delta, position) whatever the thread order. Not the same
moves as ``classic``; a pass that finds no move on its list is followed by one over every
position, so both end at a local optimum of the whole candidate neighbourhood. ``classic`` stays
the default until a GPU measures both (experiments/bench_descent.py).
"""

from __future__ import annotations

import time

import numpy as np

from metaheur import live
from metaheur.devices import Device, parse_device, to_host
from metaheur.engine import load_module, shapes
from metaheur.engine.variants import check_variant
from metaheur.errors import MetaheurError
from metaheur.problems.tsp import params as _params
from metaheur.problems.tsp.device_data import neighbours, tsp_data
from metaheur.problems.tsp.full_moves import TourCache, parts_for
from metaheur.problems.tsp.kernels import DESCENT
from metaheur.problems.tsp.problem import TSP
from metaheur.search.batch import BatchResult

FULL_NEIGHBOURHOOD_N = 200  # up to this n a pass evaluates every 2-opt and Or-opt move
#: The full neighbourhoods' and the several-move pass's kernel variants (module docstring), the
#: variant families "descent kernel" and "several_kernel" (problems/tsp/params.py).
KERNELS, SEVERAL_KERNELS = _params.DESCENT_KERNELS, _params.SEVERAL_KERNELS
PASSES_PER_CHECK = 8  # passes queued between two looks at the deltas
GPU_BLOCK = shapes.threads(DESCENT)


class _Buffers:
    """The device arrays of the passes over ``batch`` tours (allocated once for that size)."""

    def __init__(self, dev: Device, batch: int, n: int, several: bool, cache: TourCache | None = None,
                 dlb: bool = False):
        self.batch, self.cache, self.dlb = batch, cache, dlb
        self.pos = dev.zeros((batch, n), np.int32)
        self.moves = dev.zeros(batch, np.int64)
        self.unused = dev.zeros(1, np.int64)
        if several:
            self.move_at = dev.zeros((batch, n, 4), np.int32)
            self.delta_at = dev.zeros((batch, n), np.int64)
            self.best = dev.zeros(batch, np.int64)
            if dlb:  # the work lists of tsp_dlb_best_at / tsp_dlb_apply
                self.list, self.anchor = dev.zeros((batch, n), np.int32), dev.zeros((batch, n), np.int32)
                self.count, self.dirty = dev.zeros(batch, np.int32), dev.zeros((batch, n), np.int32)
                self.state, self.claim = dev.zeros((batch, n), np.int32), dev.zeros((batch, n), np.int64)
            else:
                self.taken = dev.zeros((batch, n + 1), np.int32)
                self.chosen = dev.zeros((batch, n), np.int32)
        else:
            self.move2, self.moveo = dev.zeros((batch, 4), np.int32), dev.zeros((batch, 4), np.int32)
            self.delta2, self.deltao = dev.zeros(batch, np.int64), dev.zeros(batch, np.int64)

    def improving(self) -> bool:
        """Whether the last pass found an improving move in some tour."""
        if hasattr(self, "best"):
            return bool(to_host(self.best).min() < 0)
        return bool(min(to_host(self.delta2).min(), to_host(self.deltao).min()) < 0)


class TSPDescentBatch:
    """Best-improvement descents of a batch of tours on one device.

    ``k``: candidate-list length for n > :data:`FULL_NEIGHBOURHOOD_N` (``neigh``: the lists, when
    the caller has them). ``block``: threads per tour (default 128 on a GPU, 1 on the CPU).
    ``several``: with candidate lists, several disjoint moves a pass (else the best one only).
    ``kernel``: the full neighbourhoods' kernels, ``classic`` or ``cached``; ``several_kernel``: the
    several-move pass's, ``classic`` or ``dlb`` (don't-look bits, moves selected by claims; module
    docstring).
    :meth:`run` takes S x n tours and returns them at a local optimum of 2-opt plus Or-opt
    (segments of 1-3 cities, both orientations) over that neighbourhood."""

    def __init__(self, tsp: TSP, device: str | Device = "cpu", *, k: int = 10, neigh=None,
                 full: bool | None = None, block: int | None = None, several: bool = True, kernel: str = "classic",
                 several_kernel: str = "classic"):
        if tsp.n < 5:
            raise MetaheurError(f"{tsp.name}: a 2-opt / Or-opt descent needs at least 5 cities")
        check_variant("descent kernel", kernel)
        check_variant("several_kernel", several_kernel)
        self.tsp = tsp
        self.device = dev = parse_device(device)
        self.full = tsp.n <= FULL_NEIGHBOURHOOD_N if full is None else full
        self.several = several and not self.full
        self.cached = self.full and kernel == "cached"
        self.dlb = self.several and several_kernel == "dlb"
        self.block = block or (GPU_BLOCK if dev.is_gpu else 1)
        self.data = tsp_data(tsp, dev)
        self.module = load_module("tsp/tsp_moves.cu", dev, self.data.defines)
        self._buffers: _Buffers | None = None
        if not self.full:
            neigh = neighbours(tsp, k, dev) if neigh is None else neigh
            self.neigh = dev.asarray(np.ascontiguousarray(neigh, dtype=np.int32))
            self.k = int(neigh.shape[1])

    def _buffers_for(self, batch: int) -> _Buffers:
        if self._buffers is None or self._buffers.batch != batch:
            self._buffers = None  # freed before the new ones are allocated
            cache = None
            if self.cached:
                cache = TourCache(self.data, batch, parts_for(self.module, self.device, batch, self.tsp.n, self.block))
            self._buffers = _Buffers(self.device, batch, self.tsp.n, self.several, cache, self.dlb)
        return self._buffers

    def _pass(self, tours, cost, buf: _Buffers) -> None:
        n, d, block, batch = self.tsp.n, self.data, self.block, buf.batch
        kernel = self.module.kernel
        if buf.dlb:
            kernel("tsp_dlb_best_at")(batch, block, (d.xy, d.mat, tours, buf.pos, self.neigh, n, self.k, buf.list,
                                                     buf.count, buf.dirty, buf.anchor, buf.move_at, buf.delta_at,
                                                     buf.state))
            kernel("tsp_dlb_apply")(batch, block, (tours, buf.pos, n, buf.list, buf.count, buf.dirty, buf.anchor,
                                                   buf.move_at, buf.delta_at, buf.state, buf.claim, cost, buf.moves,
                                                   buf.best))
            return
        if self.several:
            kernel("tsp_best_at")(batch, block, (d.xy, d.mat, tours, buf.pos, self.neigh, n, self.k, buf.move_at,
                                                 buf.delta_at))
            kernel("tsp_apply_disjoint")(batch, block, (tours, buf.pos, n, buf.move_at, buf.delta_at, buf.taken,
                                                        buf.chosen, cost, buf.moves, buf.best))
            return
        if buf.cache is not None:
            buf.cache.best_moves(self.module, tours, block, {"2opt": (buf.move2, buf.delta2),
                                                             "oropt": (buf.moveo, buf.deltao)})
        elif self.full:
            kernel("tsp_2opt_full")(batch, block, (d.xy, d.mat, tours, n, 0, buf.unused, buf.move2, buf.delta2))
            kernel("tsp_oropt_full")(batch, block, (d.xy, d.mat, tours, n, 0, buf.unused, buf.moveo, buf.deltao))
        else:
            cand = (d.xy, d.mat, tours, buf.pos, self.neigh, n, self.k, 0, buf.unused)
            kernel("tsp_2opt_cand")(batch, block, (*cand, buf.move2, buf.delta2))
            kernel("tsp_oropt_cand")(batch, block, (*cand, buf.moveo, buf.deltao))
        kernel("tsp_apply_best")(batch, block, (tours, buf.pos, n, buf.move2, buf.delta2, buf.moveo, buf.deltao,
                                                cost, buf.moves))

    def lengths(self, tours):
        """Exact lengths of the device tours ``tours`` (S x n int32), as a device array."""
        out = self.device.zeros(len(tours), np.int64)
        self.module.kernel("tsp_lengths")(len(tours), self.block, (self.data.xy, self.data.mat, tours, self.tsp.n,
                                                                   out))
        return out

    def keep_better(self, best, best_len, cand, cand_len) -> None:
        """Tour k of the device tours ``best`` (lengths ``best_len``) becomes tour k of ``cand``
        when that one is not longer (in place, on the device)."""
        self.module.kernel("tsp_keep_better")(len(best), self.block, (best, best_len, cand, cand_len, self.tsp.n))

    def run(self, tours, *, max_passes: int | None = None, time_limit: float | None = None) -> BatchResult:
        """Descend from every tour of ``tours`` until no tour has an improving move, or after
        ``max_passes`` passes, or ``time_limit`` seconds (checked every few passes, as many as the
        time left allows at the measured speed). ``iterations``: moves applied to each tour;
        ``extra["passes"]``."""
        tsp, dev = self.tsp, self.device
        start = np.array([tsp.check_tour(t) for t in np.atleast_2d(tours)], dtype=np.int32)
        d_tours = dev.asarray(start)
        cost = dev.asarray(np.array([tsp.tour_length(t) for t in start], dtype=np.int64))
        out = self.descend(d_tours, cost, max_passes=max_passes, time_limit=time_limit)
        out.best = to_host(d_tours).astype(np.int64)
        return out

    def descend(self, tours, cost, *, max_passes: int | None = None, time_limit: float | None = None,
                wait: bool = True) -> BatchResult:
        """:meth:`run` on the device: ``tours`` (S x n int32) descend in place and ``cost`` (their
        exact lengths, int64) follows them. The result's ``best`` is None (the tours stay on the
        device); ``best_costs`` and ``iterations`` are host copies. ``wait=False``: no
        synchronisation and no copies at the end (``best_costs`` and ``iterations`` are None): the
        host's last wait is its last look at the deltas and the caller's next launches follow at
        once (the kick rounds of problems/tsp/operators.py; the same launches either way)."""
        dev, n = self.device, self.tsp.n
        batch = len(tours)
        t0 = time.perf_counter()
        buf = self._buffers_for(batch)
        with dev.context():
            buf.moves.fill(0)
            if buf.dlb:  # the first pass looks at every position (MH_DLB_ALL), no city is listed
                buf.count.fill(-1)
                buf.dirty.fill(0)
        self.module.kernel("tsp_positions")(batch, self.block, (tours, buf.pos, n))
        passes, launches, reason = 0, 1, "local optimum"
        per_pass = 2 if self.several else (1 + buf.cache.launches(2) if buf.cache else 3)
        chunk = 1 if time_limit is not None else PASSES_PER_CHECK  # with a time limit: one pass, timed, first
        while True:
            step = chunk if max_passes is None else min(chunk, max_passes - passes)
            if step <= 0:
                reason = "passes"
                break
            for _ in range(step):
                self._pass(tours, cost, buf)
            passes += step
            launches += per_pass * step
            if not buf.improving():
                break  # the last pass found no improving move: every tour is a local optimum
            if live.stop_requested():
                reason = "stopped"
                break
            if time_limit is not None:
                spent = time.perf_counter() - t0
                if spent >= time_limit:
                    reason = "time"
                    break
                # as many passes before the next look as fit in the time left (at most PASSES_PER_CHECK)
                chunk = max(1, min(PASSES_PER_CHECK, int((time_limit - spent) * passes / spent)))
        if wait:
            dev.synchronize()
        return BatchResult(best=None, best_costs=to_host(cost).copy() if wait else None,
                           iterations=to_host(buf.moves).copy() if wait else None,
                           seconds=time.perf_counter() - t0, launches=launches, stop_reason=reason,
                           extra={"passes": passes})


def wave_blocks_per_sm(tsp: TSP, device: Device) -> int:
    """Descents of ``tsp`` that one multiprocessor of ``device`` runs at once: the fewest resident
    blocks (driver's occupancy query, :data:`GPU_BLOCK` threads) of the kernels of a pass."""
    full = tsp.n <= FULL_NEIGHBOURHOOD_N
    module = load_module("tsp/tsp_moves.cu", device, tsp_data(tsp, device).defines)
    # with candidate lists a pass is the several-move one (TSPDescentBatch's default)
    names = ("tsp_2opt_full", "tsp_oropt_full", "tsp_apply_best") if full else ("tsp_best_at", "tsp_apply_disjoint")
    return min(module.kernel(name).resident_blocks(DESCENT) for name in names)
