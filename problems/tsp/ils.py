"""Batched iterated local search for the TSP: 2-opt, Or-opt and Lin-Kernighan moves (chains of
3-opt steps) with neighbour lists and don't-look bits, and double-bridge kicks (kernels/tsp/tsp_ils.cu),
and :func:`solve_ils`, the time-limited driver that runs one search per CPU core."""

from __future__ import annotations

import time

import numpy as np

from metaheur import live
from metaheur.devices import Device, parse_device, to_host
from metaheur.engine import cpu_threads, load_module
from metaheur.engine.rng import stream_key
from metaheur.engine.source import kernel_constants
from metaheur.errors import MetaheurError
from metaheur.problems.tsp.device_data import neighbours, tsp_data
from metaheur.problems.tsp.params import KICK_TYPES, LK_MOVES, ILSParams
from metaheur.problems.tsp.problem import TSP
from metaheur.search.batch import BatchResult, LaunchPacer

_KERNEL = kernel_constants("tsp/tsp_ils.cu")
#: Columns of the statistics (MH_ILS_* in kernels/tsp/tsp_ils.cu).
N_STATS = _KERNEL["MH_ILS_NSTATS"]
COST, KICKS, CTR, BETTER, MOVES, BEST, PENDING = (
    _KERNEL[f"MH_ILS_{c}"] for c in ("COST", "KICKS", "CTR", "BETTER", "MOVES", "BEST", "PENDING"))
LOG_CAPACITY = _KERNEL["MH_ILS_LOG"]
INIT_MOVES = 20_000  # improving moves per launch of the initial descent (per search on a GPU, per CPU thread)
LAUNCH_SECONDS = 0.05  # target length of one kernel launch (time limits are checked between launches)
SHARE_SECONDS = 0.25  # how often solve_ils compares its searches


def work_ints(n: int) -> int:
    """Scratch int32 per search (the `work` layout of tsp_ils_run in kernels/tsp/tsp_ils.cu)."""
    return 3 * int(n) + 2 * LOG_CAPACITY + 3


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
    """Greedy-edge tour over the neighbour-list edges (kernels/tsp/tsp_construct.cu)."""
    dev = parse_device(device)
    n, k = neigh.shape
    edges = candidate_edges(tsp, neigh)
    data = tsp_data(tsp, dev)
    module = load_module("tsp/tsp_construct.cu", dev, data.defines)
    out = dev.zeros(n, np.int32)
    module.kernel("tsp_greedy")(1, 1, (dev.asarray(edges), len(edges), data.xy, data.mat, dev.asarray(neigh), n, k,
                                       dev.zeros(6 * n, np.int32), out))
    return to_host(out).astype(np.int64)


class TSPILSBatch:
    """``count`` independent iterated local searches on one device, advanced together.

    Starts are ``starts`` (S x n tours) or, by default, the greedy-edge tour for every search; the
    searches diverge through their own random streams ``(seed, k)``. The first :meth:`run` first
    brings every start to a local optimum. ``neigh``: the neighbour lists of ``params``, when the
    caller has them already (they are computed otherwise); ``data``: the instance already uploaded
    by :func:`metaheur.problems.tsp.device_data.tsp_data` for this device (``use_matrix`` is then not used);
    ``descended``: the starts are local optima already (a search continued from its best), the
    first run kicks at once.
    """

    def __init__(self, tsp: TSP, device: str | Device = "cpu", *, count: int | None = None, starts=None,
                 seed: int = 0, params: ILSParams | None = None, use_matrix: bool | None = None, neigh=None,
                 data=None, descended: bool = False):
        self.tsp = tsp
        self.device = dev = parse_device(device)
        self.params = params or ILSParams()
        n = tsp.n
        if n < 5:
            raise MetaheurError(f"{tsp.name}: iterated local search needs at least 5 cities")
        self.data = data if data is not None else tsp_data(tsp, dev, use_matrix=use_matrix)
        if neigh is None:  # ``neigh``: the lists these parameters give, when the caller has them already
            neigh = neighbours(tsp, self.params.neighbours, dev, quadrant=min(self.params.quadrant, (n - 1) // 4))
        self.neigh = np.asarray(neigh)
        self.k = self.neigh.shape[1]
        neigh_d = tsp.dist(np.arange(n)[:, None], self.neigh).astype(np.int32)
        if starts is None:
            if count is None or count < 1:
                raise MetaheurError("give the number of searches (count >= 1) or their start tours")
            starts = np.tile(greedy_tour(tsp, self.neigh, dev), (count, 1))
        starts = np.array([tsp.check_tour(t) for t in np.atleast_2d(starts)], dtype=np.int32)
        self.count = S = starts.shape[0]
        self.module = load_module("tsp/tsp_ils.cu", dev, self.data.defines)
        self.kernel = self.module.kernel("tsp_ils_run")
        self.tours = dev.asarray(starts)
        self.best_tours = dev.asarray(starts.copy())
        self.pos = dev.zeros((S, n), np.int32)
        self.stats = dev.zeros((S, N_STATS), np.int64)
        self.keys = dev.asarray(stream_key(np.uint64(seed), np.arange(S, dtype=np.uint64)))
        self.work = dev.zeros((S, work_ints(n)), np.int32)
        self.neigh_dev = dev.asarray(self.neigh)
        self.neigh_d = dev.asarray(neigh_d)
        self.initialised = False
        self.descent_moves = np.zeros(S, dtype=np.int64)  # improving moves of the initial descent, per search
        self.rate = 0.0  # kicks per second of the latest launch
        if descended:
            lengths = np.array([tsp.tour_length(t) for t in starts], dtype=np.int64)
            stats = np.zeros((S, N_STATS), np.int64)
            stats[:, COST] = stats[:, BEST] = lengths
            self.stats = dev.asarray(stats)
            self.initialised = True

    def adopt(self, index: int, tour, length: int | None = None) -> None:
        """Replace search ``index``'s current and best tour with ``tour`` (a local optimum, e.g.
        another search's best); its walk continues from there."""
        tour = np.asarray(self.tsp.check_tour(tour), dtype=np.int32)
        if not self.initialised:
            raise MetaheurError("adopt() needs the searches initialised (call run() first)")
        length = self.tsp.tour_length(tour) if length is None else int(length)
        stats = to_host(self.stats)
        stats[index, COST] = stats[index, BEST] = length
        with self.device.context():  # writes into device arrays go through their device
            self.tours[index] = self.device.asarray(tour)
            self.best_tours[index] = self.device.asarray(tour)
            self.stats[index] = self.device.asarray(stats[index])

    def _cpu_threads(self) -> int:
        """OpenMP threads of a CPU launch: never more than blocks (an idle thread's spin-wait slows
        the busy one)."""
        return max(1, min(self.count, cpu_threads()))

    def _launch(self, kicks: int, target: int, init: int = 0, init_moves: int = 0) -> None:
        p = self.params
        threads = None if self.device.is_gpu else self._cpu_threads()
        self.kernel(self.count, 1, (self.data.xy, self.data.mat, self.neigh_dev, self.neigh_d, self.tsp.n, self.k,
                                    self.tours, self.best_tours, self.pos, self.stats, self.keys, self.work,
                                    int(kicks), KICK_TYPES[p.kick], int(p.window), int(p.k5), LK_MOVES[p.lk_move],
                                    int(p.lk_depth), int(p.lk_breadth1), int(p.lk_breadth2), float(p.temperature),
                                    int(target), init, int(init_moves)), threads=threads)

    def _initial_descent(self, goal: int, pacer: LaunchPacer) -> None:
        """Bring every start to a local optimum in launches of about :data:`INIT_MOVES` improving
        moves (per search on a GPU; on the CPU shared by the searches each thread runs), so that a
        time limit is checked in between: a batch of hundreds of descents from random tours takes
        seconds. A limit (or the run's stop request) reached part-way leaves valid tours; the rest
        of the descent is dropped."""
        per_search = INIT_MOVES if self.device.is_gpu else max(64, INIT_MOVES * self._cpu_threads() // self.count)
        self._launch(0, goal, 1, per_search)
        self.device.synchronize()
        while to_host(self.stats)[:, PENDING].any() and not pacer.out_of_time():
            self._launch(0, goal, 2, per_search)
            self.device.synchronize()
            live.beat(self._progress)
        self.initialised = True
        self.descent_moves = to_host(self.stats)[:, MOVES].copy()

    def _progress(self) -> tuple[int, int, np.ndarray]:
        """The batch's best length, iterations (kicks and descent moves) so far and best tour (its
        tours are refreshed at the end of every launch: the island's report between launches)."""
        stats = to_host(self.stats)
        moves = self.descent_moves if self.initialised else stats[:, MOVES]
        k = int(np.argmin(stats[:, BEST]))
        return int(stats[k, BEST]), int(stats[:, KICKS].sum() + moves.sum()), to_host(self.best_tours[k])

    def run(self, kicks: int | None = None, *, time_limit: float | None = None,
            target: int | None = None) -> BatchResult:
        """Advance every search by ``kicks`` kicks (or until ``time_limit`` seconds, or until one
        reaches ``target``), checking the limits between launches. ``kicks=0`` only descends."""
        if kicks is None and time_limit is None:
            raise MetaheurError("give a kick budget or a time limit")
        goal = np.iinfo(np.int64).min if target is None else int(target)
        # first launch: sized from the rate of earlier launches, else a short probe
        first = max(1, int(self.rate * LAUNCH_SECONDS)) if self.rate > 0 else 32
        pacer = LaunchPacer(kicks, time_limit, first=min(kicks or first, first), target_seconds=LAUNCH_SECONDS)
        if not self.initialised:
            self._initial_descent(goal, pacer)
        at_goal = lambda: bool((to_host(self.stats)[:, BEST] <= goal).any())  # noqa: E731
        reached = pacer.run(lambda step: self._launch(step, goal), self.device.synchronize, at_goal, at_goal(),
                            self._progress)
        if pacer.launches:
            self.rate = pacer.rate
        stats = to_host(self.stats)
        return BatchResult(
            best=to_host(self.best_tours).astype(np.int64), best_costs=stats[:, BEST].copy(),
            iterations=stats[:, KICKS].copy(), seconds=pacer.elapsed(), launches=pacer.launches,
            stop_reason=pacer.reason(reached),
            extra={"improving_kicks": stats[:, BETTER].copy(), "moves": stats[:, MOVES].copy(),
                   "descent_moves": self.descent_moves.copy(),
                   "current_costs": stats[:, COST].copy()})


def solve_ils(tsp: TSP, time_limit: float, seed: int = 0, device: str | Device = "cpu", searches: int | None = None,
              *, params: ILSParams | None = None, patience: float | None = 1.0, target: int | None = None,
              use_matrix: bool | None = None):
    """Iterated local search on ``searches`` parallel searches (default: one per CPU core) for
    ``time_limit`` seconds of wall time, everything included (neighbour lists, start tour, kernel
    build). Every ``SHARE_SECONDS`` the driver looks at the searches: one that has not improved its
    own best for ``patience`` seconds and is behind the best of the batch continues from that best
    tour (``patience=None``: independent searches). Returns ``(tour, length, stats)`` with the
    length recomputed on the host."""
    start = time.perf_counter()
    dev = parse_device(device)
    if searches is None:
        searches = cpu_threads() if not dev.is_gpu else 1
    if searches < 1:
        raise MetaheurError(f"searches must be >= 1, got {searches}")
    batch = TSPILSBatch(tsp, dev, count=searches, seed=seed, params=params, use_matrix=use_matrix)
    result = batch.run(kicks=0, target=target)
    costs = result.best_costs.copy()
    last_gain = np.full(searches, time.perf_counter())
    adopted = 0
    while result.stop_reason != "target":
        left = time_limit - (time.perf_counter() - start)
        if left <= 0:
            break
        result = batch.run(time_limit=min(SHARE_SECONDS, left), target=target)
        now = time.perf_counter()
        last_gain[result.best_costs < costs] = now
        costs = result.best_costs.copy()
        b = result.best_index
        if patience is not None and searches > 1:
            for i in range(searches):
                if costs[i] > costs[b] and now - last_gain[i] >= patience:
                    batch.adopt(i, result.best[b], int(costs[b]))
                    costs[i] = costs[b]
                    last_gain[i] = now
                    adopted += 1
    b = result.best_index
    tour = result.best[b]
    length = int(tsp.tour_length(tour))
    stats = {"seconds": time.perf_counter() - start, "searches": searches, "kicks": int(result.iterations.sum()),
             "search_costs": result.best_costs.tolist(), "adopted": adopted, "stop_reason": result.stop_reason}
    return tour, length, stats
