"""Batched robust tabu search for the QAP (kernels/qap/qap_tabu.cu; Taillard 1991 and 2006)."""

from __future__ import annotations

import numpy as np

from metaheur.devices import Device, parse_device, to_host
from metaheur.engine import load_module
from metaheur.engine.rng import rand64, stream_key
from metaheur.engine.source import kernel_constants
from metaheur.errors import MetaheurError
from metaheur.problems.qap import kernels
from metaheur.problems.qap.device_data import qap_data
from metaheur.problems.qap.params import KERNELS, TENURE_RULES, TabuParams
from metaheur.problems.qap.problem import QAP
from metaheur.search.batch import BatchResult, LaunchPacer

_KERNEL = kernel_constants("qap/qap_tabu.cu")
#: Columns of the statistics (MH_TS_* in kernels/qap/qap_tabu.cu).
N_STATS = _KERNEL["MH_TS_NSTATS"]
COST, BEST, ITER, BASE, CTR, TENURE, BEST_ITER = (
    _KERNEL[f"MH_TS_{c}"] for c in ("COST", "BEST", "ITER", "BASE", "CTR", "TENURE", "BEST_ITER"))
ENTRY_LIMIT = _KERNEL["MH_TS_ENTRY_LIMIT"]  # the kernel keeps int32 differences of entries
TENURE_LIMIT = _KERNEL["MH_TS_REBASE"]  # tabu times stay below 2^31: at most this from their base plus a tenure
SAVED_SEARCH = ("perm", "best", "stats", "tabu", "left", "keys")  # what QAPTabuBatch.snapshot holds


def yardstick_start(n: int, seed: int) -> tuple[np.ndarray, int]:
    """The start of the yardstick shared/yardsticks/rots.c for ``seed``: the identity shuffled by
    Fisher-Yates with its SplitMix64 draws (``k = rnd() % (i + 1)``), and the draws it used. With
    ``keys=[seed]`` and ``counters=[draws]``, a :class:`QAPTabuBatch` search from this start
    follows rots.c move for move."""
    p = list(range(n))
    for draws, i in enumerate(range(n - 1, 0, -1)):
        k = int(rand64(np.uint64(seed), draws)) % (i + 1)
        p[i], p[k] = p[k], p[i]
    return np.array(p, dtype=np.int64), max(0, n - 1)


def _start_stats(count: int, counters=None) -> np.ndarray:
    """Statistics of ``count`` searches not started yet: zero, but for the random streams' counters."""
    stats = np.zeros((count, N_STATS), dtype=np.int64)
    if counters is not None:
        stats[:, CTR] = counters
    return stats


def fresh_searches(qap: QAP, starts, keys, counters=None) -> dict[str, np.ndarray]:
    """The saved state (:meth:`QAPTabuBatch.snapshot`) of searches about to start from ``starts``
    with empty memory: resuming it is starting them."""
    starts = np.array([qap.check_permutation(p) for p in np.atleast_2d(starts)], dtype=np.int32)
    S, n = starts.shape
    stats = _start_stats(S, counters)
    stats[:, COST] = stats[:, BEST] = [qap.cost(p) for p in starts]
    return {"perm": starts, "best": starts.copy(), "stats": stats, "tabu": np.zeros((S, n, n), np.int32),
            "left": np.zeros((S, n, n), np.int32), "keys": np.asarray(keys, dtype=np.uint64).reshape(S).copy()}


def default_block(device: Device, n: int) -> tuple[int, int]:
    """Threads of a block: one on the CPU build; rows x columns of the pair scan on a GPU."""
    if not device.is_gpu:
        return (1, 1)
    return kernels.TABU_SMALL if n < kernels.TABU_WIDE_N else kernels.TABU


class QAPTabuBatch:
    """``count`` independent robust tabu searches on one device, advanced together.

    ``starts`` (S x n) gives the initial permutations; otherwise they are drawn from ``seed``.
    Search ``k`` draws its tenures from the counter-based stream ``(seed, k)``. The buffers hold
    ``capacity`` (the first S) searches: :meth:`restart` and :meth:`resume` may run fewer in them.
    """

    def __init__(self, qap: QAP, device: str | Device = "cpu", *, count: int | None = None, starts=None,
                 seed: int = 0, params: TabuParams | None = None, keys=None, counters=None):
        self.qap = qap
        self.device = parse_device(device)
        self.params = params or TabuParams()
        if max(int(np.abs(qap.flow).max()), int(np.abs(qap.distance).max())) >= ENTRY_LIMIT:
            raise MetaheurError(f"{qap.name}: tabu search needs matrix entries below 2^29 in magnitude")
        if self.params.scale * qap.n >= TENURE_LIMIT:
            raise MetaheurError(f"{qap.name}: cubic tenure scale x n must be below 2^30, "
                                f"got {self.params.scale} x {qap.n}")
        self.data = qap_data(qap, self.device)
        n = qap.n
        if starts is None:
            if count is None or count < 1:
                raise MetaheurError("give the number of searches (count >= 1) or their start permutations")
            rng = np.random.default_rng(seed)
            starts = np.array([rng.permutation(n) for _ in range(count)])
        starts = np.array([qap.check_permutation(p) for p in np.atleast_2d(starts)], dtype=np.int32)
        self.count = self.capacity = starts.shape[0]
        S, dev = self.count, self.device
        self.module = load_module("qap/qap_tabu.cu", dev, self.data.tabu_defines)
        self.kernel = self.module.kernel(KERNELS[self.params.kernel])
        if keys is None:
            keys = stream_key(np.uint64(seed), np.arange(S, dtype=np.uint64))
        self.delta = dev.zeros((S, n, n), np.int32 if self.data.delta32 else np.int64)
        self.tables = [dev.zeros((S, n, n), np.int32) for _ in range(4)]  # tabu, left, tmin, lpick
        self.bp = dev.zeros((S, n, n), np.int32)
        self.bpt = dev.zeros((S, n, n), np.int32) if not self.data.symmetric else dev.zeros(1, np.int32)
        self.work = dev.zeros((S, 8 * n), np.int32)  # u, v and the sums (the stream kernel beyond shared memory)
        self.block = default_block(dev, n)
        self.aspiration = self.params.aspiration if self.params.aspiration is not None else 5 * n * n
        self.launches = 0
        self.restart(starts, keys, counters)

    def _use(self, count: int) -> None:
        if not 1 <= count <= self.capacity:
            raise MetaheurError(f"this batch holds 1 to {self.capacity} searches, not {count}")
        self.count = count

    def restart(self, starts, keys, counters=None) -> None:
        """Start new searches from ``starts`` (at most :attr:`capacity`) in the buffers already
        allocated, with fresh tabu memory; ``keys`` (and ``counters``) set their random streams."""
        starts = np.asarray(starts, dtype=np.int32)
        if starts.ndim != 2 or starts.shape[1] != self.qap.n:
            raise MetaheurError(f"restart needs permutations of size {self.qap.n}")
        self._use(starts.shape[0])
        dev = self.device
        self.perm = dev.asarray(starts)
        self.best_perm = dev.asarray(starts.copy())
        self.stats = dev.asarray(_start_stats(self.count, counters))
        self.keys = dev.asarray(np.asarray(keys, dtype=np.uint64).reshape(self.count))
        self._launch(0, target=np.iinfo(np.int64).min, init=1)

    def snapshot(self) -> dict[str, np.ndarray]:
        """Every search's state, as host copies: current and best permutations, statistics, tabu
        and departure times, random stream keys. :meth:`resume` continues from it exactly, in
        this batch or in another one of the same size (another process, another machine)."""
        S = self.count
        return {"perm": to_host(self.perm).copy(), "best": to_host(self.best_perm).copy(),
                "stats": to_host(self.stats).copy(), "tabu": to_host(self.tables[0])[:S].copy(),
                "left": to_host(self.tables[1])[:S].copy(), "keys": to_host(self.keys).copy()}

    def resume(self, saved: dict[str, np.ndarray]) -> None:
        """Continue the searches of a :meth:`snapshot` (or of :func:`fresh_searches`) of at most
        :attr:`capacity` searches of this size: the next iterations are those the uninterrupted
        searches would do."""
        S, n, dev = len(np.atleast_1d(saved["keys"])), self.qap.n, self.device
        shapes = {"perm": (S, n), "best": (S, n), "stats": (S, N_STATS), "tabu": (S, n, n), "left": (S, n, n),
                  "keys": (S,)}
        if any(np.shape(saved[k]) != shape for k, shape in shapes.items()):
            raise MetaheurError(f"resume needs the state of {S} searches of size {n}")
        def put(name, dtype):  # a copy: the searches must not write into the saved state
            return dev.asarray(np.array(saved[name], dtype=dtype))

        self._use(S)
        self.perm, self.best_perm, self.stats = put("perm", np.int32), put("best", np.int32), put("stats", np.int64)
        with dev.context():  # the tables keep their capacity: the saved searches fill the first rows
            self.tables[0][:S] = put("tabu", np.int32)
            self.tables[1][:S] = put("left", np.int32)
        self.keys = put("keys", np.uint64)
        self._launch(0, target=np.iinfo(np.int64).min, init=2)

    def _launch(self, iterations: int, target: int, init: int = 0) -> None:
        self.kernel(self.count, self.block, (
            self.data.a, self.data.at, self.data.b, self.qap.n, self.perm, self.best_perm, self.stats, self.keys,
            self.delta, *self.tables, self.bp, self.bpt, self.work, TENURE_RULES[self.params.tenure],
            self.params.scale, int(self.aspiration), int(iterations), int(target), init))
        self.launches += 1

    def run(self, iterations: int | None = None, *, time_limit: float | None = None,
            target: int | None = None) -> BatchResult:
        """Advance every search by ``iterations`` (or until ``time_limit`` seconds, or until a search's
        best cost is at most ``target``), checking the limits between launches."""
        if iterations is None and time_limit is None:
            raise MetaheurError("give an iteration budget or a time limit")
        goal = np.iinfo(np.int64).min if target is None else int(target)
        # the first launch is short (about 2e6 delta updates), later ones are paced by the measured speed
        first = 2000 if iterations is None else iterations
        first = max(1, min(first, 2_000_000 // (self.count * self.qap.n * self.qap.n)))
        pacer = LaunchPacer(iterations, time_limit, first)
        reached = pacer.run(lambda step: self._launch(step, goal), self.device.synchronize,
                            lambda: target is not None and bool((to_host(self.stats)[:, BEST] <= goal).any()),
                            progress=lambda: self._progress(pacer.done))
        stats = to_host(self.stats)
        return BatchResult(
            best=to_host(self.best_perm).astype(np.int64), best_costs=stats[:, BEST].copy(),
            iterations=stats[:, ITER].copy(), seconds=pacer.elapsed(), launches=pacer.launches,
            stop_reason=pacer.reason(reached), extra={"current_costs": stats[:, COST].copy(),
                                                      "best_iteration": stats[:, BEST_ITER].copy()})

    def _progress(self, iterations: int) -> tuple[int, int, np.ndarray]:
        """The batch's best cost, iterations so far and best permutation (the island's report
        between launches, :func:`metaheur.live.beat`)."""
        k = int(np.argmin(to_host(self.stats)[:, BEST]))
        return int(to_host(self.stats)[k, BEST]), iterations * self.count, to_host(self.best_perm[k])

    def current(self) -> tuple[np.ndarray, np.ndarray]:
        """Current permutations and costs (host copies)."""
        return to_host(self.perm).astype(np.int64), to_host(self.stats)[:, COST].copy()


def wave_blocks_per_sm(qap: QAP, device: Device) -> int:
    """Tabu searches of ``qap`` that one multiprocessor of ``device`` runs at once (blocks of
    ``qap_tabu_run`` at :func:`default_block`, by the driver's occupancy query)."""
    module = load_module("qap/qap_tabu.cu", device, qap_data(qap, device).tabu_defines)
    return module.kernel("qap_tabu_run").resident_blocks(default_block(device, qap.n))
