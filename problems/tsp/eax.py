"""Edge Assembly Crossover (EAX) for the TSP on batches of parent pairs (kernels/tsp/tsp_eax.cu).

Nagata and Kobayashi (1997); Nagata and Kobayashi, "A powerful genetic algorithm using edge
assembly crossover for the traveling salesman problem", INFORMS J. Computing 25(2), 2013.
Block ``c`` of a launch crosses ``tours_a[c]`` with ``tours_b[c]``: it splits the union of their
edges into AB-cycles, builds ``tries`` children from A and an E-set each (strategy ``"rand"``:
every AB-cycle with probability 1/2; ``"single"``: one AB-cycle, distinct for each child), merges
the sub-tours greedily over the neighbour lists, and returns the shortest child with its exact
length. Random draws come from stream ``keys[c]`` from draw ``counters[c]`` on, and the counters
are advanced in place.

The child a block returns is the shortest (``select="greedy"``) or, with an
:class:`EdgeFrequency` table of the population, Nagata's entropy-preserving choice
(``select="entropy"``: among the children shorter than A, the largest length gain per unit of
edge-entropy lost).

Scratch memory: :func:`work_ints` ``(n) = 21 n + 4`` int32 per block, so a batch of C pairs
takes ``C * (21 n + 4) * 4`` bytes besides the tours; an :class:`EdgeFrequency` table takes
``n * (4 P + 1) * 4`` bytes for a population of P, and a call given the table ``C * 5 n * 4``
more for the changes the kernel records (:meth:`EdgeFrequency.replace_children`,
:meth:`EdgeFrequency.accept_shorter`).

:class:`EAXGenerations` runs an island's generations in one of three ways
(:data:`~metaheur.problems.tsp.params.EAX_KERNELS`, ``ILSParams.eax_kernel``), the same children
and tables every way: ``classic`` reads every child back and has the host group the table's
changes by city; ``fused`` reads back only the launch's statistics and the accepted children and
updates the table in one launch the host does not wait for; ``block`` does that with the
crossover of :class:`EAXBatch` ``(block=True)``, a pair's O(n) work spread over a block.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from metaheur.devices import Device, parse_device, to_host
from metaheur.engine import load_module, shapes
from metaheur.engine.source import kernel_constant, kernel_constants
from metaheur.engine.variants import check_variant
from metaheur.errors import MetaheurError
from metaheur.problems.tsp.device_data import TSPData
from metaheur.problems.tsp.kernels import EAX_BLOCK, EAX_FREQ
from metaheur.problems.tsp.problem import TSP, canonical_tours

STRATEGIES = {"rand": 0, "single": 1}
SELECTIONS = {"greedy": 0, "entropy": 1}
#: Columns of :attr:`EAXBatch.info`: the MH_EAX_* column defines of kernels/tsp/tsp_eax.cu, in order.
N_INFO = kernel_constant("tsp/tsp_eax.cu", "MH_EAX_NINFO")
INFO_FIELDS = tuple(name.removeprefix("MH_EAX_").lower() for name, column in sorted(
    kernel_constants("tsp/tsp_eax.cu").items(), key=lambda item: item[1])
    if name.startswith("MH_EAX_") and name != "MH_EAX_NINFO")


def work_ints(n: int) -> int:
    """Scratch int32 per block (MH_EAX_WORK in kernels/tsp/tsp_eax.cu)."""
    return 21 * int(n) + 4


@dataclass
class EAXInfo:
    """Per-pair statistics of the last launch (host arrays of length C), see INFO_FIELDS."""

    cycles: np.ndarray  # AB-cycles of the pair
    children: np.ndarray  # children built (the shortest is returned)
    eset: np.ndarray  # AB-cycles in the returned child's E-set
    subtours: np.ndarray  # sub-tours of its intermediate solution
    merges: np.ndarray  # merge moves (each adds at most two edges from neither parent)
    delta: np.ndarray  # returned length minus len_a, as tracked incrementally by the kernel
    wide: np.ndarray  # merges (of all children) that needed the search beyond the neighbour lists
    error: np.ndarray  # non-zero: 7 = len_a was not A's length; others an internal inconsistency
    changed: np.ndarray  # given an EdgeFrequency: cities whose neighbours differ from A's (EAXBatch.changes)


def _as_tours(name: str, tours, n: int, check: bool) -> np.ndarray:
    arr = np.asarray(tours)
    if arr.ndim == 1:
        arr = arr[None, :]
    if arr.ndim != 2 or arr.shape[1] != n:
        raise MetaheurError(f"{name} must be a C x {n} array of tours, got shape {np.shape(tours)}")
    if not np.issubdtype(arr.dtype, np.integer):
        raise MetaheurError(f"{name} must hold integer city indices, got dtype {arr.dtype}")
    if check and arr.size:
        if arr.min() < 0 or arr.max() >= n:
            raise MetaheurError(f"{name}: city indices must lie in 0..{n - 1}")
        bad = np.flatnonzero((np.sort(arr, axis=1) != np.arange(n)).any(axis=1))
        if bad.size:
            raise MetaheurError(f"{name}[{int(bad[0])}] is not a permutation of the {n} cities")
    return np.ascontiguousarray(arr, dtype=np.int32)


def tour_neighbours(tours) -> np.ndarray:
    """R x n x 2 int32: the predecessor and successor of every city in each tour (host arrays)."""
    t = np.atleast_2d(np.asarray(tours))
    r, n = t.shape
    out = np.empty((r * n, 2), dtype=np.int32)
    flat = (t + (np.arange(r, dtype=np.int64) * n)[:, None]).ravel()
    out[flat, 0] = np.roll(t, 1, axis=1).ravel()
    out[flat, 1] = np.roll(t, -1, axis=1).ravel()
    return out.reshape(r, n, 2)


class EdgeFrequency:
    """How many tours of a population of ``size`` hold each edge (Nagata's F(e)), on a device:
    row c of ``nb``/``cnt`` (n x 2P) lists the distinct neighbours of city c in the population and
    their counts, ``length[c]`` how many there are. Built from the population, then kept up to
    date with :meth:`replace` (kernel tsp_eax_freq, one block per city whose neighbours change)."""

    def __init__(self, tours, device: str | Device = "cpu", defines=None):
        t = np.atleast_2d(np.asarray(to_host(tours)))
        self.device = dev = parse_device(device)
        self.size, self.n = (int(x) for x in t.shape)
        if self.size < 2:
            raise MetaheurError("an edge-frequency table needs a population of at least 2 tours")
        self.m = 2 * self.size
        self.nb = dev.zeros((self.n, self.m), np.int32)
        self.cnt = dev.zeros((self.n, self.m), np.int32)
        self.length = dev.zeros(self.n, np.int32)
        self.overflow = dev.zeros(1, np.int64)
        f = np.arange(self.size + 1, dtype=np.float64) / self.size
        with np.errstate(divide="ignore", invalid="ignore"):
            h = np.where(f > 0, -f * np.log(np.where(f > 0, f, 1.0)), 0.0)
        self.h = dev.asarray(h)
        module = load_module("tsp/tsp_eax.cu", dev, defines or {})
        self.kernel, self.accept_kernel = module.kernel("tsp_eax_freq"), module.kernel("tsp_eax_freq_accept")
        empty = np.full((self.size, self.n, 2), -1, dtype=np.int32)
        self._apply(empty, tour_neighbours(t))

    def _apply(self, old_nb: np.ndarray, new_nb: np.ndarray, threads: int | None = None) -> None:
        """Replacements given as R x n x 2 neighbour arrays; only the cities whose neighbours
        change are sent."""
        o0, o1, w0, w1 = old_nb[..., 0], old_nb[..., 1], new_nb[..., 0], new_nb[..., 1]
        changed = ~(((o0 == w0) & (o1 == w1)) | ((o0 == w1) & (o1 == w0)))
        rows, cities = np.nonzero(changed)
        entries = np.empty((cities.size, 5), dtype=np.int32)
        entries[:, 0] = cities
        entries[:, 1:3] = old_nb[rows, cities]
        entries[:, 3:5] = new_nb[rows, cities]
        self.apply_changes(entries, threads)

    def apply_changes(self, entries: np.ndarray, threads: int | None = None) -> None:
        """Apply rows (city, old neighbour x 2, new neighbour x 2) of replaced tours, any order
        (grouped by city here; one block per city)."""
        if len(entries) == 0:
            return
        dev = self.device
        entries = np.asarray(entries, dtype=np.int32)
        entries = entries[np.argsort(entries[:, 0], kind="stable")]
        unique, first = np.unique(entries[:, 0], return_index=True)
        starts = np.append(first, len(entries)).astype(np.int32)
        self.kernel(int(unique.size), 1, (dev.asarray(unique.astype(np.int32)), dev.asarray(starts),
                                          dev.asarray(np.ascontiguousarray(entries[:, 1:3])),
                                          dev.asarray(np.ascontiguousarray(entries[:, 3:5])), int(unique.size),
                                          self.m, self.nb, self.cnt, self.length, self.overflow),
                    threads=None if dev.is_gpu else threads)
        self.check_overflow()

    def check_overflow(self) -> None:
        """Raise if an update found a row full (a read-back: more tours replaced than the
        population holds, a caller's error)."""
        if int(to_host(self.overflow)[0]):
            raise MetaheurError("edge-frequency table overflow: more tours replaced than the population holds")

    def _recorded(self, batch: EAXBatch, what: str) -> None:
        if batch.info is None or batch.recorded is not self:
            raise MetaheurError(f"{what} needs a preceding EAXBatch call with this table (select='entropy', "
                                "or freq given)")

    def accept_shorter(self, batch: EAXBatch) -> None:
        """Account for every child of the last call of ``batch`` that is shorter than its parent A
        replacing A (the EAX island's rule), in one launch of ``tsp_eax_freq_accept`` from the
        batch's own buffers: nothing is prepared or read back by the host (a GPU runs it while
        the host goes on; :meth:`check_overflow` reads its overflow count)."""
        self._recorded(batch, "accept_shorter")
        dev = self.device
        block = shapes.threads(EAX_FREQ) if dev.is_gpu else 1
        grid = -(-self.n // block) if dev.is_gpu else 1  # the CPU build: one thread, the rows in order
        self.accept_kernel(grid, block, (batch.changes, batch.info_device, batch.lengths, batch.len_a, batch.count,
                                         self.n, self.m, self.nb, self.cnt, self.length, self.overflow),
                           threads=None if dev.is_gpu else 1)

    def replace_children(self, batch: EAXBatch, blocks, threads: int | None = None) -> None:
        """Account for the children of ``blocks`` of the last call of ``batch`` (given this table)
        replacing their parents A (from the changes the kernel recorded: no O(n) work a tour)."""
        self._recorded(batch, "replace_children")
        blocks = np.asarray(blocks, dtype=np.int64).ravel()
        if blocks.size == 0:
            return
        counts = batch.info.changed[blocks]
        width = int(counts.max())
        if width == 0:
            return
        dev = batch.device
        with dev.context():  # only the accepted blocks' rows cross to the host
            rows = to_host(batch.changes[dev.asarray(blocks), :width] if dev.is_gpu else batch.changes[blocks, :width])
        self.apply_changes(np.concatenate([rows[i, :c] for i, c in enumerate(counts)]), threads)

    def replace(self, old_tours, new_tours, threads: int | None = None) -> None:
        """Account for each ``old_tours[i]`` of the population being replaced by ``new_tours[i]``."""
        old_t, new_t = np.atleast_2d(to_host(old_tours)), np.atleast_2d(to_host(new_tours))
        if old_t.shape != new_t.shape or old_t.shape[1] != self.n:
            raise MetaheurError(f"replaced and new tours must both be R x {self.n}")
        if old_t.shape[0]:
            self._apply(tour_neighbours(old_t), tour_neighbours(new_t), threads)

    def frequencies(self) -> dict[tuple[int, int], int]:
        """The table as {(a, b): count} with a < b (host; for tests and inspection)."""
        nb, cnt, ln = to_host(self.nb), to_host(self.cnt), to_host(self.length)
        out = {}
        for a in range(self.n):
            for j in range(int(ln[a])):
                b = int(nb[a, j])
                if a < b:
                    out[(a, b)] = int(cnt[a, j])
        return out


class EAXBatch:
    """EAX on ``count`` parent pairs at a time (device buffers kept between calls).

    ``data`` is :func:`metaheur.problems.tsp.device_data.tsp_data` of ``tsp`` (its device is the batch's device);
    ``neigh`` the n x k nearest-city lists (:func:`metaheur.problems.tsp.device_data.neighbours`).
    ``block``: the crossover's O(n) work spread over a block of threads a pair (``tsp_eax_block``,
    on a GPU; the same children as ``tsp_eax``, one thread a pair).
    """

    def __init__(self, tsp: TSP, data: TSPData, neigh, count: int, device: str | Device | None = None, *,
                 block: bool = False):
        dev = data.device if device is None else parse_device(device)
        if dev.name != data.device.name:
            raise MetaheurError(f"EAX on {dev.name} needs the instance data on it, not on {data.device.name}")
        n = tsp.n
        if data.n != n:
            raise MetaheurError(f"instance data are for {data.n} cities, the instance has {n}")
        if n < 3:
            raise MetaheurError(f"{tsp.name}: EAX needs at least 3 cities")
        nb = np.asarray(to_host(neigh))
        if nb.ndim != 2 or nb.shape[0] != n or not 1 <= nb.shape[1] <= n - 1:
            raise MetaheurError(f"neighbour lists must be an n x k array with n = {n} and 1 <= k < n, "
                                f"got shape {nb.shape}")
        if nb.min() < 0 or nb.max() >= n or (nb == np.arange(n)[:, None]).any():
            raise MetaheurError("neighbour lists must hold other cities' indices in 0..n-1")
        if count < 1:
            raise MetaheurError(f"an EAX batch needs at least one pair, got {count}")
        self.tsp, self.data, self.device = tsp, data, dev
        self.n, self.k, self.count = n, int(nb.shape[1]), int(count)
        self.neigh = dev.asarray(np.ascontiguousarray(nb, dtype=np.int32))
        self.kernel = load_module("tsp/tsp_eax.cu", dev, data.defines).kernel("tsp_eax_block" if block else "tsp_eax")
        self.threads = shapes.threads(EAX_BLOCK) if block and dev.is_gpu else 1
        self.work = dev.zeros((self.count, work_ints(n)), np.int32)
        self.children = dev.zeros((self.count, n), np.int32)
        self.lengths = dev.zeros(self.count, np.int64)
        self.info_device = dev.zeros((self.count, N_INFO), np.int64)
        self.len_a = dev.zeros(self.count, np.int64)  # the last call's len_a, on the device
        self._none_i = dev.zeros(1, np.int32)
        self._none_d = dev.zeros(1, np.float64)
        self.changes = None  # C x n x 5, allocated by the first call given an EdgeFrequency
        self.recorded: EdgeFrequency | None = None  # the table whose changes the last call recorded
        self.info: EAXInfo | None = None

    def __call__(self, tours_a, tours_b, len_a, keys, counters, strategy: str = "rand", tries: int = 1, *,
                 select: str = "greedy", freq: EdgeFrequency | None = None, check: bool = True,
                 threads: int | None = None):
        """Children of the pairs (tours_a[c], tours_b[c]): ``(children C x n int32, lengths C int64)``
        as arrays of the batch's device. ``counters`` (int64, C) is advanced in place; a numpy
        ``counters`` is updated on the host also for a GPU batch (a device array is trusted, not
        read back). ``select="entropy"`` needs ``freq``, the edge frequencies of the population
        the parents A come from; given ``freq`` (any selection) the kernel records every child's
        changes for it (:meth:`EdgeFrequency.replace_children`, :meth:`EdgeFrequency.accept_shorter`).
        ``check=False`` skips the (O(C n log n)) validation of the tours."""
        dev, n, C = self.device, self.n, self.count
        if strategy not in STRATEGIES:
            raise MetaheurError(f"EAX strategy must be one of {', '.join(STRATEGIES)}, got {strategy!r}")
        if select not in SELECTIONS:
            raise MetaheurError(f"EAX selection must be one of {', '.join(SELECTIONS)}, got {select!r}")
        if select == "entropy" and not isinstance(freq, EdgeFrequency):
            raise MetaheurError("entropy-preserving selection needs the population's EdgeFrequency table")
        if freq is not None:
            if not isinstance(freq, EdgeFrequency):
                raise MetaheurError(f"freq must be an EdgeFrequency table, got {type(freq).__name__}")
            if freq.n != n or freq.device.name != dev.name:
                raise MetaheurError(f"the EdgeFrequency table is for {freq.n} cities on {freq.device.name}, "
                                    f"not {n} on {dev.name}")
            if self.changes is None:
                self.changes = dev.zeros((C, n, 5), np.int32)
            fargs = (freq.nb, freq.cnt, freq.length, freq.m, freq.h, freq.size, self.changes, 1)
        else:
            fargs = (self._none_i, self._none_i, self._none_i, 1, self._none_d, 1, self._none_i, 0)
        if not isinstance(tries, (int, np.integer)) or tries < 1:
            raise MetaheurError(f"tries (children per pair) must be a positive integer, got {tries!r}")
        gpu_in = dev.is_gpu and not isinstance(tours_a, np.ndarray)
        if gpu_in:  # device arrays: trusted shapes, converted only when needed
            ta, tb = dev.asarray(tours_a, np.int32), dev.asarray(tours_b, np.int32)
            if ta.shape != (C, n) or tb.shape != (C, n):
                raise MetaheurError(f"tours_a and tours_b must be {C} x {n}, got {ta.shape} and {tb.shape}")
        else:
            ta = _as_tours("tours_a", to_host(tours_a), n, check)
            tb = _as_tours("tours_b", to_host(tours_b), n, check)
            if ta.shape[0] != C or tb.shape[0] != C:
                raise MetaheurError(f"this batch crosses {C} pairs: tours_a and tours_b must have {C} rows, "
                                    f"got {ta.shape[0]} and {tb.shape[0]}")
        la = np.asarray(to_host(len_a))
        if la.shape != (C,) or not np.issubdtype(la.dtype, np.integer):
            raise MetaheurError(f"len_a must be {C} integer lengths, got shape {la.shape} dtype {la.dtype}")
        kh = np.asarray(to_host(keys))
        if kh.shape != (C,) or kh.dtype != np.uint64:
            raise MetaheurError(f"keys must be {C} uint64 stream keys (metaheur.engine.rng.stream_key), "
                                f"got shape {kh.shape} dtype {kh.dtype}")
        ctr = self._counters(counters)
        with dev.context():
            self.len_a[...] = dev.asarray(la, np.int64)
        self.kernel(C, self.threads, (self.data.xy, self.data.mat, self.neigh, n, self.k, dev.asarray(ta),
                                      dev.asarray(tb), self.children, self.lengths, self.len_a, dev.asarray(kh), ctr,
                                      STRATEGIES[strategy], int(tries), self.work, self.info_device,
                                      SELECTIONS[select], *fargs),
                    threads=None if dev.is_gpu else threads)
        if ctr is not counters:
            if isinstance(counters, np.ndarray):
                counters[...] = to_host(ctr)
            else:
                with dev.context():
                    counters[...] = ctr
        info = to_host(self.info_device)
        self.info = EAXInfo(*(info[:, i].copy() for i in range(N_INFO)))
        self.recorded = freq
        if self.info.error.any():
            bad = int(np.flatnonzero(self.info.error)[0])
            code = int(self.info.error[bad])
            if code == 7:
                raise MetaheurError(f"EAX: len_a[{bad}] = {int(la[bad])} is not the exact length of tours_a[{bad}] "
                                    "(the child's length from scratch differs from len_a + its tracked change)")
            raise MetaheurError(f"EAX kernel: internal inconsistency {code} on pair {bad} "
                                "(please report it with the instance and seeds)")
        return self.children, self.lengths

    def _counters(self, counters):
        """The kernel's draw counters: ``counters`` itself where the kernel can advance it in place
        (a C-contiguous numpy array on the CPU, a device array on a GPU: trusted, not read back),
        else a device copy (checked)."""
        dev, C = self.device, self.count
        on_device = dev.is_gpu and not isinstance(counters, np.ndarray)
        if on_device:
            if counters.shape != (C,) or counters.dtype != np.int64:
                raise MetaheurError(f"counters must be {C} int64 draw counters, got shape {counters.shape} "
                                    f"dtype {counters.dtype}")
            return counters
        ch = np.asarray(to_host(counters))
        if ch.shape != (C,) or ch.dtype != np.int64:
            raise MetaheurError(f"counters must be {C} int64 draw counters, got shape {ch.shape} dtype {ch.dtype}")
        if (ch < 0).any():
            raise MetaheurError("counters must be non-negative")
        if isinstance(counters, np.ndarray) and not counters.flags.writeable:
            raise MetaheurError("counters are advanced in place and must be writable")
        return dev.asarray(ch) if (dev.is_gpu or not counters.flags.c_contiguous) else counters


def eax_children(tsp: TSP, data: TSPData, neigh, tours_a, tours_b, len_a, keys, counters, strategy: str = "rand",
                 device: str | Device = "cpu", *, tries: int = 1, select: str = "greedy",
                 freq: EdgeFrequency | None = None, threads: int | None = None, return_info: bool = False):
    """One EAX child per pair ``(tours_a[c], tours_b[c])`` (the best of ``tries``), as host arrays
    ``(children C x n int64, lengths C int64)`` (plus an :class:`EAXInfo` with ``return_info``).

    ``len_a[c]`` is the exact length of ``tours_a[c]``; ``keys``/``counters`` (uint64 / int64,
    one per pair) the random streams, advanced in place. ``data = tsp_data(tsp, device)``.
    """
    dev = parse_device(device)
    ta = np.atleast_2d(to_host(tours_a))
    batch = EAXBatch(tsp, data, neigh, ta.shape[0], dev)
    children, lengths = batch(ta, tours_b, len_a, keys, counters, strategy, tries, select=select, freq=freq,
                              threads=threads)
    out = to_host(children).astype(np.int64), to_host(lengths).copy()
    return (*out, batch.info) if return_info else out


class EAXGenerations:
    """The EAX side of one island's generations (Nagata and Kobayashi 2013): the batch that
    builds the children and the population's edge-frequency table, kept in step with the members
    that children replace. ``data`` and ``neigh`` as for :class:`EAXBatch`; ``tries`` children
    (one AB-cycle each) per pair of parents; ``kernel``: how the device is used
    (:data:`~metaheur.problems.tsp.params.EAX_KERNELS`, the same children and tables every way;
    ``fused``: one frequency-update launch from the EAX launch's buffers, which the host does not
    wait for, and only the accepted children read back; ``block``: that, and the crossover's O(n)
    work spread over a block a pair)."""

    def __init__(self, tsp: TSP, data: TSPData, neigh, device: Device, tries: int, kernel: str = "classic"):
        check_variant("eax_kernel", kernel)
        self.tsp, self.data, self.neigh, self.device, self.tries = tsp, data, neigh, device, tries
        self.fused, self.block = kernel in ("fused", "block"), kernel == "block"
        self.batch: EAXBatch | None = None
        self.freq: EdgeFrequency | None = None
        self.last_select = "greedy"
        self._children: np.ndarray | None = None  # classic: the last generation's children, on the host
        self._counters = None  # fused, on a GPU: the kernel's draw counters, zeroed on the device each generation
        self._mirror = None  # fused, on a GPU: the population on the device (begin, accept)

    def begin(self, population: np.ndarray) -> None:
        """Start generations on ``population``: the edge-frequency table that the
        entropy-preserving selection needs is built from it. ``fused`` and ``block`` on a GPU keep
        a copy of it on the device, which :meth:`accept` keeps in step: from here on, the
        population that :meth:`children` is given must change only by :meth:`accept` (until the
        next ``begin``)."""
        self.freq = EdgeFrequency(population, self.device, self.data.defines) if len(population) >= 2 else None
        self._mirror = self.device.asarray(population, np.int32) if self.fused and self.device.is_gpu else None

    def children(self, population: np.ndarray, lengths: np.ndarray, order: np.ndarray, keys: np.ndarray,
                 select: str) -> tuple[np.ndarray, int]:
        """One child per member ``order[i]`` (parent A) with ``order[i + 1]`` (parent B): the best of
        ``tries`` EAX children chosen by ``select`` (greedy without a frequency table); returns
        (the children's exact lengths, children built in all). :meth:`accept` gives the children
        that replace their parents."""
        count = len(order)
        if self.batch is None or self.batch.count != count:
            self.batch = EAXBatch(self.tsp, self.data, self.neigh, count, block=self.block)
            self._counters = self.device.zeros(count, np.int64) if self.device.is_gpu else None
        a, b = self._parents(population, order)
        select = select if self.freq is not None else "greedy"
        freq = self.freq if select == "entropy" or self.fused else None
        counters = np.zeros(count, dtype=np.int64)
        if self._counters is not None and self.fused:
            with self.device.context():
                self._counters.fill(0)
            counters = self._counters
        children, lengths_out = self.batch(a, b, lengths[order], keys, counters, "single", self.tries, select=select,
                                           freq=freq, check=False)
        self.last_select = select
        info = self.batch.info
        if self.fused and self.freq is not None:
            self.freq.check_overflow()  # the previous update's count: the launch above waited for it
        if self.fused:  # the kernel checked each child's length from scratch against len_a + delta
            self._children = None
            out = lengths[order].astype(np.int64) + info.delta
        else:
            self._children = np.array(to_host(children))
            out = np.array(to_host(lengths_out))
        return out, int(info.children.sum())

    def _parents(self, population: np.ndarray, order: np.ndarray):
        """Parents A (``order``) and B (the next in ``order``): host rows, or on a GPU with a device
        copy of the population (``fused``, ``block``) device rows, gathered there (no upload)."""
        if self._mirror is None:
            return population[order], population[np.roll(order, -1)]
        if self._mirror.shape != population.shape:
            raise MetaheurError("the population changed size since begin(): call begin() again")
        dev = self.device
        with dev.context():
            return self._mirror[dev.asarray(order)], self._mirror[dev.asarray(np.roll(order, -1))]

    def accept(self, blocks: np.ndarray, members: np.ndarray, population: np.ndarray) -> np.ndarray:
        """The children of ``blocks`` of the latest :meth:`children`, in canonical form (host
        arrays), which replace ``population[members]``; the edge-frequency table (and a device
        copy of the population) follow. ``blocks`` must be those whose child is shorter than its
        parent A (the fused update applies that rule on the device)."""
        if self.fused:
            dev = self.device
            with dev.context():
                rows = to_host(self.batch.children[dev.asarray(blocks)] if dev.is_gpu
                               else self.batch.children[blocks])
            if self.freq is not None and len(blocks):
                self.freq.accept_shorter(self.batch)
            rows = canonical_tours(rows)
            if self._mirror is not None and len(blocks):
                with dev.context():
                    self._mirror[dev.asarray(members)] = dev.asarray(rows, np.int32)
            return rows
        rows = self._children[blocks]
        if self.freq is not None and len(blocks):
            if self.last_select == "entropy":
                self.freq.replace_children(self.batch, blocks)
            else:
                self.freq.replace(population[members], rows)
        return canonical_tours(rows)
