"""Best-improvement 2-opt + Or-opt descent of many tours at once: the GPU-suited counterpart of
the first-improvement searches of kernels/tsp_ils.cu.

Each pass evaluates the whole candidate neighbourhood of every tour in parallel (one block per
tour, one thread per move: ``tsp_2opt_cand`` and ``tsp_oropt_cand`` of kernels/tsp_moves.cu, or
the full neighbourhoods for small n) and applies each tour's best improving move
(``tsp_apply_best``) — the GPU local search of Luong, Melab and Talbi, "GPU computing for parallel
local search metaheuristic algorithms" (IEEE Trans. Computers, 2013). Passes are queued on the
device and the host looks at the deltas only every few passes.
"""

from __future__ import annotations

import time

import numpy as np

from metaheur import live
from metaheur.device_data import neighbours, tsp_data
from metaheur.devices import Device, parse_device, to_host
from metaheur.engine import load_module, shapes
from metaheur.errors import MetaheurError
from metaheur.problems import TSP
from metaheur.search.batch import BatchResult

FULL_NEIGHBOURHOOD_N = 200  # up to this n a pass evaluates every 2-opt and Or-opt move
PASSES_PER_CHECK = 8  # passes queued between two looks at the deltas
GPU_BLOCK = shapes.threads(shapes.DESCENT)


class TSPDescentBatch:
    """Best-improvement descents of a batch of tours on one device.

    ``k``: candidate-list length for n > :data:`FULL_NEIGHBOURHOOD_N` (``neigh``: the lists, when
    the caller has them). ``block``: threads per tour (default 128 on a GPU, 1 on the CPU).
    :meth:`run` takes S x n tours and returns them at a local optimum of 2-opt plus Or-opt
    (segments of 1-3 cities, both orientations) over that neighbourhood."""

    def __init__(self, tsp: TSP, device: str | Device = "cpu", *, k: int = 10, neigh=None,
                 full: bool | None = None, block: int | None = None):
        if tsp.n < 5:
            raise MetaheurError(f"{tsp.name}: a 2-opt / Or-opt descent needs at least 5 cities")
        self.tsp = tsp
        self.device = dev = parse_device(device)
        self.full = tsp.n <= FULL_NEIGHBOURHOOD_N if full is None else full
        self.block = block or (GPU_BLOCK if dev.is_gpu else 1)
        self.data = tsp_data(tsp, dev)
        self.module = load_module("tsp_moves.cu", dev, self.data.defines)
        if not self.full:
            neigh = neighbours(tsp, k, dev) if neigh is None else neigh
            self.neigh = dev.asarray(np.ascontiguousarray(neigh, dtype=np.int32))
            self.k = int(neigh.shape[1])

    def _pass(self, batch: int, tours, pos, move2, delta2, moveo, deltao, cost, moves) -> None:
        dev, n, d, block = self.device, self.tsp.n, self.data, self.block
        unused = dev.zeros(1, np.int64)
        if self.full:
            self.module.kernel("tsp_2opt_full")(batch, block, (d.xy, d.mat, tours, n, 0, unused, move2, delta2))
            self.module.kernel("tsp_oropt_full")(batch, block, (d.xy, d.mat, tours, n, 0, unused, moveo, deltao))
        else:
            cand = (d.xy, d.mat, tours, pos, self.neigh, n, self.k, 0, unused)
            self.module.kernel("tsp_2opt_cand")(batch, block, (*cand, move2, delta2))
            self.module.kernel("tsp_oropt_cand")(batch, block, (*cand, moveo, deltao))
        self.module.kernel("tsp_apply_best")(batch, block, (tours, pos, n, move2, delta2, moveo, deltao, cost, moves))

    def run(self, tours, *, max_passes: int | None = None, time_limit: float | None = None) -> BatchResult:
        """Descend from every tour of ``tours`` until no tour has an improving move, or after
        ``max_passes`` passes (one move per tour and pass), or ``time_limit`` seconds (checked every
        few passes, as many as the time left allows at the measured speed). ``iterations``: moves
        applied to each tour; ``extra["passes"]``."""
        tsp, dev = self.tsp, self.device
        start = np.array([tsp.check_tour(t) for t in np.atleast_2d(tours)], dtype=np.int32)
        batch, n = start.shape
        t0 = time.perf_counter()
        d_tours = dev.asarray(start)
        pos = dev.zeros((batch, n), np.int32)
        self.module.kernel("tsp_positions")(batch, self.block, (d_tours, pos, n))
        move2, moveo = dev.zeros((batch, 4), np.int32), dev.zeros((batch, 4), np.int32)
        delta2, deltao = dev.zeros(batch, np.int64), dev.zeros(batch, np.int64)
        cost = dev.asarray(np.array([tsp.tour_length(t) for t in start], dtype=np.int64))
        moves = dev.zeros(batch, np.int64)
        passes, launches, reason = 0, 0, "local optimum"
        chunk = 1 if time_limit is not None else PASSES_PER_CHECK  # with a time limit: one pass, timed, first
        while True:
            step = chunk if max_passes is None else min(chunk, max_passes - passes)
            if step <= 0:
                reason = "passes"
                break
            for _ in range(step):
                self._pass(batch, d_tours, pos, move2, delta2, moveo, deltao, cost, moves)
            passes += step
            launches += 3 * step
            if min(to_host(delta2).min(), to_host(deltao).min()) >= 0:
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
        dev.synchronize()
        return BatchResult(best=to_host(d_tours).astype(np.int64), best_costs=to_host(cost).copy(),
                           iterations=to_host(moves).copy(), seconds=time.perf_counter() - t0, launches=launches,
                           stop_reason=reason, extra={"passes": passes})


def wave_blocks_per_sm(tsp: TSP, device: Device) -> int:
    """Descents of ``tsp`` that one multiprocessor of ``device`` runs at once: the fewest resident
    blocks (driver's occupancy query, :data:`GPU_BLOCK` threads) of the kernels of a pass."""
    full = tsp.n <= FULL_NEIGHBOURHOOD_N
    module = load_module("tsp_moves.cu", device, tsp_data(tsp, device).defines)
    names = ("tsp_2opt_full", "tsp_oropt_full") if full else ("tsp_2opt_cand", "tsp_oropt_cand")
    return min(module.kernel(name).resident_blocks(shapes.DESCENT) for name in (*names, "tsp_apply_best"))
