"""Batched iterated local search for the TSP: 2-opt, Or-opt, 3-opt and Lin-Kernighan moves with
neighbour lists and don't-look bits, and double-bridge kicks (kernels/tsp_ils.cu)."""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from metaheur.devices import Device, parse_device, to_host
from metaheur.engine import load_module
from metaheur.engine.rng import stream_key
from metaheur.errors import MetaheurError
from metaheur.ops import neighbours, tsp_data
from metaheur.problems import TSP
from metaheur.search.batch import BatchResult, LaunchPacer

N_STATS = 6
COST, KICKS, CTR, BETTER, MOVES, BEST = range(N_STATS)
LOG_CAPACITY = 4096  # MH_ILS_LOG in kernels/tsp_ils.cu
MAX_LK_DEPTH = 64  # MH_LK_DEPTH in kernels/tsp_ils.cu
KICK_TYPES = {"double-bridge": 0, "shuffle": 1, "walk": 2, "segment-bridge": 3, "near-bridge": 4}


@dataclass(frozen=True)
class ILSParams:
    """Parameters of the iterated local search (see kernels/tsp_ils.cu for the moves).

    ``neighbours``: candidate list length k; ``window``: longest kicked segment; ``k5``: neighbours
    tried at depth 3 of the 3-opt move (0: no 3-opt); ``lk_depth``: longest Lin-Kernighan chain
    (0: no LK); ``kick``: ``double-bridge`` (local segment swap), ``shuffle`` or ``walk``
    (random-walk double bridge); ``temperature``: accept a kick that lengthens the tour by less
    than ``temperature * u * length / n`` (0: only kicks that do not lengthen it).
    """

    neighbours: int = 10
    window: int = 50
    k5: int = 5
    lk_depth: int = 30
    kick: str = "double-bridge"
    temperature: float = 0.3

    def __post_init__(self) -> None:
        if not 1 <= self.neighbours <= 32:
            raise MetaheurError(f"neighbour lists hold 1 to 32 cities, got {self.neighbours}")
        if self.window < 1:
            raise MetaheurError(f"kick window must be at least 1, got {self.window}")
        if self.k5 < 0 or not 0 <= self.lk_depth <= MAX_LK_DEPTH:
            raise MetaheurError(f"k5 must be >= 0 and lk_depth in 0..{MAX_LK_DEPTH}")
        if self.kick not in KICK_TYPES:
            raise MetaheurError(f"kick must be one of {', '.join(KICK_TYPES)}, got {self.kick!r}")
        if self.temperature < 0:
            raise MetaheurError(f"temperature must be >= 0, got {self.temperature}")


def candidate_edges(tsp: TSP, neigh: np.ndarray) -> np.ndarray:
    """The distinct edges of the neighbour lists, sorted by length, then by city (m x 2 int32)."""
    n, k = neigh.shape
    i = np.repeat(np.arange(n), k)
    j = neigh.ravel().astype(np.int64)
    pairs = np.unique(np.minimum(i, j) * n + np.maximum(i, j))
    lo, hi = pairs // n, pairs % n
    order = np.lexsort((hi, lo, tsp.dist(lo, hi)))
    return np.ascontiguousarray(np.stack([lo[order], hi[order]], axis=1), dtype=np.int32)


def greedy_tour(tsp: TSP, neigh: np.ndarray, device: str | Device = "cpu") -> np.ndarray:
    """Greedy-edge tour over the neighbour-list edges (kernels/tsp_construct.cu)."""
    dev = parse_device(device)
    n, k = neigh.shape
    edges = candidate_edges(tsp, neigh)
    data = tsp_data(tsp, dev)
    module = load_module("tsp_construct.cu", dev, data.defines)
    out = dev.zeros(n, np.int32)
    module.kernel("tsp_greedy")(1, 1, (dev.asarray(edges), len(edges), data.xy, data.mat, dev.asarray(neigh), n, k,
                                       dev.zeros(6 * n, np.int32), out))
    return to_host(out).astype(np.int64)


class TSPILSBatch:
    """``count`` independent iterated local searches on one device, advanced together.

    Starts are ``starts`` (S x n tours) or, by default, the greedy-edge tour for every search; the
    searches diverge through their own random streams ``(seed, k)``. The first :meth:`run` first
    brings every start to a local optimum.
    """

    def __init__(self, tsp: TSP, device: str | Device = "cpu", *, count: int | None = None, starts=None,
                 seed: int = 0, params: ILSParams | None = None, use_matrix: bool | None = None):
        self.tsp = tsp
        self.device = dev = parse_device(device)
        self.params = params or ILSParams()
        n = tsp.n
        if n < 5:
            raise MetaheurError(f"{tsp.name}: iterated local search needs at least 5 cities")
        self.data = tsp_data(tsp, dev, use_matrix=use_matrix)
        self.neigh = neighbours(tsp, self.params.neighbours, dev)
        self.k = self.neigh.shape[1]
        neigh_d = tsp.dist(np.arange(n)[:, None], self.neigh).astype(np.int32)
        if starts is None:
            if count is None or count < 1:
                raise MetaheurError("give the number of searches (count >= 1) or their start tours")
            starts = np.tile(greedy_tour(tsp, self.neigh, dev), (count, 1))
        starts = np.array([tsp.check_tour(t) for t in np.atleast_2d(starts)], dtype=np.int32)
        self.count = S = starts.shape[0]
        self.module = load_module("tsp_ils.cu", dev, self.data.defines)
        self.kernel = self.module.kernel("tsp_ils_run")
        self.tours = dev.asarray(starts)
        self.best_tours = dev.asarray(starts.copy())
        self.pos = dev.zeros((S, n), np.int32)
        self.stats = dev.zeros((S, N_STATS), np.int64)
        self.keys = dev.asarray(stream_key(np.uint64(seed), np.arange(S, dtype=np.uint64)))
        self.work = dev.zeros((S, 2 * n + 2 * LOG_CAPACITY), np.int32)
        self.neigh_dev = dev.asarray(self.neigh)
        self.neigh_d = dev.asarray(neigh_d)
        self.initialised = False

    def _launch(self, kicks: int, target: int, init: int) -> None:
        p = self.params
        self.kernel(self.count, 1, (self.data.xy, self.data.mat, self.neigh_dev, self.neigh_d, self.tsp.n, self.k,
                                    self.tours, self.best_tours, self.pos, self.stats, self.keys, self.work,
                                    int(kicks), KICK_TYPES[p.kick], int(p.window), int(p.k5), int(p.lk_depth),
                                    float(p.temperature), int(target), init))

    def run(self, kicks: int | None = None, *, time_limit: float | None = None,
            target: int | None = None) -> BatchResult:
        """Advance every search by ``kicks`` kicks (or until ``time_limit`` seconds, or until one
        reaches ``target``), checking the limits between launches. ``kicks=0`` only descends."""
        if kicks is None and time_limit is None:
            raise MetaheurError("give a kick budget or a time limit")
        goal = np.iinfo(np.int64).min if target is None else int(target)
        pacer = LaunchPacer(kicks, time_limit, first=min(kicks or 1000, 1000), target_seconds=0.05)
        if not self.initialised:
            self._launch(0, goal, 1)
            self.device.synchronize()
            self.initialised = True
        reached = bool((to_host(self.stats)[:, BEST] <= goal).any())
        while not reached:
            step = pacer.next_step()
            if step == 0:
                break
            t0 = time.perf_counter()
            self._launch(step, goal, 0)
            self.device.synchronize()
            pacer.record(step, time.perf_counter() - t0)
            reached = bool((to_host(self.stats)[:, BEST] <= goal).any())
        stats = to_host(self.stats)
        return BatchResult(
            best=to_host(self.best_tours).astype(np.int64), best_costs=stats[:, BEST].copy(),
            iterations=stats[:, KICKS].copy(), seconds=pacer.elapsed(), launches=pacer.launches,
            stop_reason=pacer.reason(reached),
            extra={"improving_kicks": stats[:, BETTER].copy(), "moves": stats[:, MOVES].copy(),
                   "current_costs": stats[:, COST].copy()})
