"""Edge Assembly Crossover (EAX) for the TSP on batches of parent pairs (kernels/tsp_eax.cu).

Nagata and Kobayashi (1997); Nagata and Kobayashi, "A powerful genetic algorithm using edge
assembly crossover for the traveling salesman problem", INFORMS J. Computing 25(2), 2013.
Block ``c`` of a launch crosses ``tours_a[c]`` with ``tours_b[c]``: it splits the union of their
edges into AB-cycles, builds ``tries`` children from A and an E-set each (strategy ``"rand"``:
every AB-cycle with probability 1/2; ``"single"``: one AB-cycle, distinct for each child), merges
the sub-tours greedily over the neighbour lists, and returns the shortest child with its exact
length. Random draws come from stream ``keys[c]`` from draw ``counters[c]`` on, and the counters
are advanced in place.

Scratch memory: :func:`work_ints` ``(n) = 21 n + 4`` int32 per block, so a batch of C pairs
takes ``C * (21 n + 4) * 4`` bytes besides the tours.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from metaheur.devices import Device, parse_device, to_host
from metaheur.engine import load_module
from metaheur.errors import MetaheurError
from metaheur.ops.tsp import TSPData
from metaheur.problems import TSP

STRATEGIES = {"rand": 0, "single": 1}
N_INFO = 8
#: Columns of :attr:`EAXBatch.info` (MH_EAX_* in kernels/tsp_eax.cu).
INFO_FIELDS = ("cycles", "children", "eset", "subtours", "merges", "delta", "wide", "error")


def work_ints(n: int) -> int:
    """Scratch int32 per block (MH_EAX_WORK in kernels/tsp_eax.cu)."""
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
    error: np.ndarray  # non-zero: an internal inconsistency (the child is then A)


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


class EAXBatch:
    """EAX on ``count`` parent pairs at a time (device buffers kept between calls).

    ``data`` is :func:`metaheur.ops.tsp_data` of ``tsp`` (its device is the batch's device);
    ``neigh`` the n x k nearest-city lists (:func:`metaheur.ops.neighbours`).
    """

    def __init__(self, tsp: TSP, data: TSPData, neigh, count: int, device: str | Device | None = None):
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
        self.kernel = load_module("tsp_eax.cu", dev, data.defines).kernel("tsp_eax")
        self.work = dev.zeros((self.count, work_ints(n)), np.int32)
        self.children = dev.zeros((self.count, n), np.int32)
        self.lengths = dev.zeros(self.count, np.int64)
        self._info = dev.zeros((self.count, N_INFO), np.int64)
        self.info: EAXInfo | None = None

    def __call__(self, tours_a, tours_b, len_a, keys, counters, strategy: str = "rand", tries: int = 1, *,
                 check: bool = True, threads: int | None = None):
        """Children of the pairs (tours_a[c], tours_b[c]): ``(children C x n int32, lengths C int64)``
        as arrays of the batch's device. ``counters`` (int64, C) is advanced in place; a numpy
        ``counters`` is updated on the host also for a GPU batch. ``check=False`` skips the
        (O(C n log n)) validation of the tours."""
        dev, n, C = self.device, self.n, self.count
        if strategy not in STRATEGIES:
            raise MetaheurError(f"EAX strategy must be one of {', '.join(STRATEGIES)}, got {strategy!r}")
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
        host_counters = isinstance(counters, np.ndarray)
        ch = np.asarray(to_host(counters))
        if ch.shape != (C,) or ch.dtype != np.int64:
            raise MetaheurError(f"counters must be {C} int64 draw counters, got shape {ch.shape} dtype {ch.dtype}")
        if (ch < 0).any():
            raise MetaheurError("counters must be non-negative")
        if host_counters and not counters.flags.writeable:
            raise MetaheurError("counters are advanced in place and must be writable")
        ctr = dev.asarray(ch) if (dev.is_gpu or not counters.flags.c_contiguous) else counters
        self.kernel(C, 1, (self.data.xy, self.data.mat, self.neigh, n, self.k, dev.asarray(ta), dev.asarray(tb),
                           self.children, self.lengths, dev.asarray(la, np.int64), dev.asarray(kh), ctr,
                           STRATEGIES[strategy], int(tries), self.work, self._info),
                    threads=None if dev.is_gpu else threads)
        if ctr is not counters:
            if host_counters:
                counters[...] = to_host(ctr)
            else:
                counters[...] = ctr
        info = to_host(self._info)
        self.info = EAXInfo(*(info[:, i].copy() for i in range(N_INFO)))
        if self.info.error.any():
            bad = int(np.flatnonzero(self.info.error)[0])
            raise MetaheurError(f"EAX kernel: internal inconsistency {int(self.info.error[bad])} on pair {bad} "
                                "(please report it with the instance and seeds)")
        return self.children, self.lengths


def eax_children(tsp: TSP, data: TSPData, neigh, tours_a, tours_b, len_a, keys, counters, strategy: str = "rand",
                 device: str | Device = "cpu", *, tries: int = 1, threads: int | None = None,
                 return_info: bool = False):
    """One EAX child per pair ``(tours_a[c], tours_b[c])`` (the best of ``tries``), as host arrays
    ``(children C x n int64, lengths C int64)`` (plus an :class:`EAXInfo` with ``return_info``).

    ``len_a[c]`` is the exact length of ``tours_a[c]``; ``keys``/``counters`` (uint64 / int64,
    one per pair) the random streams, advanced in place. ``data = tsp_data(tsp, device)``.
    """
    dev = parse_device(device)
    ta = np.atleast_2d(to_host(tours_a))
    batch = EAXBatch(tsp, data, neigh, ta.shape[0], dev)
    children, lengths = batch(ta, tours_b, len_a, keys, counters, strategy, tries, threads=threads)
    out = to_host(children).astype(np.int64), to_host(lengths).copy()
    return (*out, batch.info) if return_info else out
