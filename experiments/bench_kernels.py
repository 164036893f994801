"""Neighbourhood moves evaluated per second by the move kernels, per build and size.

For each kernel and size, one launch evaluates the neighbourhood of ``batch`` solutions (one
block each); the rate is moves per launch / seconds per launch (best of ``--repeat`` samples, each
at least ``--min-time`` long, after a warm-up launch). Rows:

* ``cpu-1``: the CPU build with one OpenMP thread (``threads=1`` in the kernel call);
* ``cpu-N``: the CPU build with every core (``threads=os.cpu_count()``; blocks are spread over
  the threads, so a batch of one solution still uses one core);
* ``numpy``: the vectorised numpy version of the same computation (tests/problems/<name>/<name>_reference.py), one
  solution at a time; a row that would take more than ``--numpy-budget`` seconds a launch is
  skipped and listed as such;
* ``cuda:K``: every GPU of metaheur.devices.gpu_devices(), timed with device synchronisation,
  with the fraction of a memory-bandwidth limit (``--bandwidth-gbs``, default 4800 GB/s: an
  H200's HBM3e) that the move rate implies under the byte model below.

Kernels and sizes (moves counted):

* QAP (generated tai*a-like instances: symmetric, uniform in [0, 99], zero diagonal, so
  MH_QAP_SYMMETRIC) n = 50, 100, 256, batches 1 and 64 (GPU also 1024): ``qap_delta_full``
  (n(n-1)/2 swap deltas of O(n) each), ``qap_delta_update`` (n(n-1)/2 delta entries updated after
  one swap: O(1) each, 2n-3 of them O(n)), ``qap_best_move`` (n(n-1)/2 entries scanned under the
  robust-tabu rules).
* TSP (generated uniform EUC_2D instances; pla85900 (CEIL_2D) from $METAHEUR_INSTANCES when
  present) n = 1000, 10000, 85900, k = 10 nearest neighbours, batches 1 and 8 (GPU also 128, or
  two tours per multiprocessor when that is more: 264 on an H200's 132, so that every SM has work):
  ``tsp_2opt_cand`` (2 n k moves), ``tsp_oropt_cand`` (12 n k moves); ``tsp_2opt_full`` for
  n = 1000 and 10000 (n(n-3)/2 moves); ``tsp_oropt_full`` for n = 1000 (n(5n-16) moves); and
  ``neighbours()`` (the KNN grid kernel plus the host's re-ranking; "moves" = cities).
* the ``cached`` variants of the full kernels beside each (``tsp_2opt_cached``,
  ``tsp_oropt_cached``; TSPDescentBatch(kernel="cached"), problems/tsp/full_moves.py): a launch is
  the tour-order cache, the kernel over P blocks a tour (P fills the GPU's block slots, 1 on the
  CPU; the note column) and, for P > 1, the reduction of the parts, as the descent runs them;
  every backend checks that their best moves and deltas equal the classic kernel's.

Byte model (minimal bytes each move must read or write from memory, from experiments/gpu_model.py,
which also gives each kernel's arithmetic bound; the GPU rows' GB/s is moves/s x bytes/move, and
the fraction is of --bandwidth-gbs):

* qap_delta_full: 8 B a move (the long long delta written; the O(n) rows of A and B it reads are
  shared by the whole block and served from cache);
* qap_delta_update: 16 B an entry (the delta read and written back);
* qap_best_move: 16 B a move (the delta, 8 B, and the two int32 tabu entries);
* tsp_2opt_cand: 32 B a move (per candidate: neighbour index, position and coordinates of c,
  4 + 4 + 16 B, shared by the two variants; per variant the tour entry and coordinates of d,
  4 + 16 B);
* tsp_oropt_cand: 42 B a move (per candidate 8 B of neighbour index and position; per variant the
  two tour entries and coordinates around the insertion point, 8 + 32 B);
* tsp_2opt_full: 128 B a move (four coordinate gathers by city number, a 32-byte sector each);
* tsp_2opt_cached: 20 B a move (the coordinates of positions j and j + 1 in tour order, 16 B
  shared with the neighbouring lanes, and edge[j], 4 B, read along the row);
* tsp_oropt_full and tsp_oropt_cached: see experiments/gpu_model.py.
The coordinates and tours of these instances (at most 85,900 cities: 1.4 MB + 0.3 MB a tour) fit
in an H200's 50 MB L2 cache, so DRAM bandwidth is not what bounds the TSP kernels: the fraction
says how far a kernel is from that roofline, not that it is memory-bound.

    python experiments/bench_kernels.py [--quick] [--repeat 3] [--out experiments/results] [--label NAME]
    python experiments/bench_kernels.py --gpu-check QAP_N TSP_N BATCH [--gpu-tours T1,T2,...] ...

``--gpu-check`` keeps the rows of experiments/gpu_check.sh only; with it, ``--gpu-tours`` gives
the GPU rows of the 2-opt kernels (``tsp_2opt_cand``, ``tsp_2opt_full``, ``tsp_2opt_cached``) one
row per tour count instead of BATCH / 8 tours (and of the one-tour row), each count still raised
to two per multiprocessor (e.g. 264,660,1320: 2, 5 and 10 a multiprocessor of a 132-SM H100 SXM
or H200); the or-opt rows keep BATCH / 8.

Writes ``bench_kernels_<label>.csv`` and ``.md`` (label: --label, else the host name) under
--out, and prints the table and the ratio "CPU build 1 core / numpy" for the O(1) QAP update at
n = 100 (the project's target is >= 5x).
"""

from __future__ import annotations

import argparse
import csv
import datetime as _dt
import math
import os
import platform
import socket
import sys
import time
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
# the numpy oracles (tests/problems/qap/qap_reference.py, tests/problems/tsp/tsp_reference.py)
sys.path.insert(1, str(Path(__file__).resolve().parents[1] / "tests" / "problems" / "qap"))
sys.path.insert(2, str(Path(__file__).resolve().parents[1] / "tests" / "problems" / "tsp"))
import numpy as np
import qap_reference as RQ
import tsp_reference as RT
from gpu_model import BYTES_PER_MOVE
from lib.report import commit, out_folder

from metaheur.devices import cpu_device, gpu_devices, to_host
from metaheur.engine import load_module, set_cpu_threads
from metaheur.engine.cpu_build import find_compiler
from metaheur.problems import load_instance, random_qap, uniform_tsp
from metaheur.problems.qap.device_data import qap_data
from metaheur.problems.tsp.device_data import neighbours, tsp_data
from metaheur.problems.tsp.full_moves import TourCache, parts_for
from metaheur.problems.tsp.kernels import FULL_2OPT

COLUMNS = ["kernel", "instance", "n", "k", "batch", "backend", "threads", "block", "moves_per_launch",
           "seconds_per_launch", "moves_per_s", "bytes_per_move", "gb_per_s", "bandwidth_fraction", "note"]


@dataclass
class Config:
    quick: bool
    repeat: int
    min_time: float
    numpy_budget: float
    bandwidth_gbs: float
    qap_sizes: list
    qap_batches: list
    qap_gpu_batches: list
    tsp_sizes: list
    tsp_full_sizes: list
    tsp_oropt_full_sizes: list
    tsp_batches: list
    tsp_gpu_batches: list
    knn_sizes: list
    tsp_2opt_gpu_batches: list | None = None  # the 2-opt kernels' GPU tour counts (None: tsp_gpu_batches)
    k: int = 10
    library: bool = True  # also pla85900 from $METAHEUR_INSTANCES (not in --quick or --gpu-check)
    gpus: tuple = ()
    rows: list = field(default_factory=list)
    skipped: list = field(default_factory=list)


# ------------------------------------------------------------------------------------------ timing


def measure(fn, sync, repeat: int, min_time: float) -> float:
    """Best seconds per call of ``fn`` over ``repeat`` samples of at least ``min_time`` each, after a
    warm-up call; ``sync`` waits for the device."""
    fn()
    sync()
    start = time.perf_counter()
    fn()
    sync()
    once = time.perf_counter() - start
    inner = max(1, math.ceil(min_time / max(once, 1e-7)))
    best = once
    for _ in range(repeat if once < 1.0 else min(repeat, 1)):  # launches of seconds: one more sample
        start = time.perf_counter()
        for _ in range(inner):
            fn()
        sync()
        best = min(best, (time.perf_counter() - start) / inner)
    return best


def _no_sync() -> None:
    pass


def add_row(cfg: Config, *, kernel, instance, n, k, batch, backend, threads, block, moves, seconds, note="") -> None:
    rate = moves / seconds
    row = {"kernel": kernel, "instance": instance, "n": n, "k": k if k else "", "batch": batch, "backend": backend,
           "threads": threads, "block": block, "moves_per_launch": moves, "seconds_per_launch": seconds,
           "moves_per_s": rate, "bytes_per_move": "", "gb_per_s": "", "bandwidth_fraction": "", "note": note}
    if backend.startswith("cuda") and kernel in BYTES_PER_MOVE:
        gbs = rate * BYTES_PER_MOVE[kernel] / 1e9
        row.update(bytes_per_move=BYTES_PER_MOVE[kernel], gb_per_s=gbs, bandwidth_fraction=gbs / cfg.bandwidth_gbs)
    cfg.rows.append(row)
    extra = f"  {row['bandwidth_fraction']:.1%} of {cfg.bandwidth_gbs:.0f} GB/s" if row["gb_per_s"] != "" else ""
    print(f"{kernel:<17} {instance:<16} n={n:<6} batch={batch:<5} {backend:<8} {_fmt_rate(rate):>12} moves/s  "
          f"({seconds * 1e3:9.3f} ms/launch){extra}", flush=True)


def skip_row(cfg: Config, *, kernel, instance, n, batch, backend, why) -> None:
    cfg.skipped.append(f"{kernel} {instance} n={n} batch={batch} {backend}: {why}")
    print(f"{kernel:<17} {instance:<16} n={n:<6} batch={batch:<5} {backend:<8} skipped: {why}", flush=True)


def _fmt_rate(rate: float) -> str:
    for unit, scale in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if rate >= scale:
            return f"{rate / scale:.2f} {unit}"
    return f"{rate:.1f} "


def _backends(cfg: Config):
    """(label, device, threads) of the compiled builds."""
    cores = os.cpu_count() or 1
    out = [("cpu-1", cpu_device(), 1)]
    if cores > 1:
        out.append((f"cpu-{cores}", cpu_device(), cores))
    out += [(g.name, g, None) for g in cfg.gpus]
    return out


# --------------------------------------------------------------------------------------------- QAP


def bench_qap(cfg: Config) -> None:
    for n in cfg.qap_sizes:
        q = random_qap(n, seed=n)  # tai*a-like: symmetric, zero diagonal
        name = f"gen-qap-{n}"
        pairs = n * (n - 1) // 2
        for label, dev, threads in _backends(cfg):
            data = qap_data(q, dev)
            module = load_module(RQ.QAP_MOVES, dev, data.defines)  # experiments/kernels/qap/qap_moves.cu
            block = (32, 4) if dev.is_gpu else (1,)
            sync = dev.synchronize if dev.is_gpu else _no_sync
            for batch in cfg.qap_batches + (cfg.qap_gpu_batches if dev.is_gpu else []):
                rng = np.random.default_rng(batch)
                perms = np.array([rng.permutation(n) for _ in range(batch)], np.int32)
                moves = np.array([rng.choice(n, 2, replace=False) for _ in range(batch)], np.int32)
                after = perms.copy()
                for sol, (r, s) in enumerate(moves):
                    after[sol, [r, s]] = after[sol, [s, r]]
                p_dev, a_dev, m_dev = dev.asarray(perms), dev.asarray(after), dev.asarray(moves)
                delta = dev.zeros((batch, n, n), np.int64)
                work = dev.zeros((batch, 8 * n), np.int32)  # the streaming update's u, v and sums
                bt = dev.asarray(np.ascontiguousarray(q.distance.T).astype(np.int32))
                tabu = dev.asarray(rng.integers(0, 20, size=(batch, n, n)).astype(np.int32))
                now = dev.asarray(np.full(batch, 10, np.int64))
                cost = dev.asarray(np.full(batch, 10**9, np.int64))
                best = dev.asarray(np.full(batch, 10**9 - 50, np.int64))
                move_out = dev.zeros((batch, 2), np.int32)
                value_out = dev.zeros(batch, np.int64)
                calls = {
                    "qap_delta_full": partial(module.kernel("qap_delta_full"), batch, block,
                                              (data.a, data.b, p_dev, delta, n), threads=threads),
                    "qap_delta_update": partial(module.kernel("qap_delta_update"), batch, block,
                                                (data.a, data.b, a_dev, m_dev, delta, work, n), threads=threads),
                    "qap_best_move": partial(module.kernel("qap_best_move"), batch, block,
                                             (delta, a_dev, tabu, now, cost, best, n, move_out, value_out),
                                             threads=threads),
                    # the streaming variants, side by side until a GPU decides (docs/gpu-model.md)
                    "qap_delta_update_stream": partial(module.kernel("qap_delta_update_stream"), batch, block,
                                                       (data.a, data.at, data.b, bt, a_dev, m_dev, delta, work, n),
                                                       threads=threads),
                    "qap_best_move_stream": partial(module.kernel("qap_best_move_stream"), batch, block,
                                                    (delta, a_dev, tabu, now, cost, best, n, move_out, value_out),
                                                    threads=threads),
                }
                calls["qap_delta_full"]()
                sync()
                for kernel, fn in calls.items():
                    seconds = measure(fn, sync, cfg.repeat, cfg.min_time)
                    add_row(cfg, kernel=kernel, instance=name, n=n, k=None, batch=batch, backend=label,
                            threads=threads or "", block="x".join(map(str, block)), moves=batch * pairs,
                            seconds=seconds)
        bench_qap_numpy(cfg, q, name)


def bench_qap_numpy(cfg: Config, q, name: str) -> None:
    n = q.n
    pairs = n * (n - 1) // 2
    a, b = q.flow.astype(np.int64), q.distance.astype(np.int64)
    rng = np.random.default_rng(0)
    p = rng.permutation(n)
    delta = RQ.delta_matrix(a, b, p)
    r, s = (int(x) for x in rng.choice(n, 2, replace=False))
    after = p.copy()
    after[[r, s]] = after[[s, r]]
    tabu = rng.integers(0, 20, size=(n, n))
    fns = {
        "qap_delta_full": lambda: RQ.delta_matrix(a, b, p),
        "qap_delta_update": lambda: RQ.delta_update(a, b, after, delta, r, s),
        "qap_best_move": lambda: RQ.best_move(delta, after, tabu, 10, 10**9, 10**9 - 50),
    }
    for kernel, fn in fns.items():
        one = measure(fn, _no_sync, cfg.repeat, cfg.min_time)  # numpy evaluates one solution a call
        for batch in cfg.qap_batches:
            if one * batch > cfg.numpy_budget:
                skip_row(cfg, kernel=kernel, instance=name, n=n, batch=batch, backend="numpy",
                         why=f"~{one * batch:.1f} s a launch (over the {cfg.numpy_budget:g} s budget)")
                continue
            seconds = measure(lambda f=fn, bt=batch: [f() for _ in range(bt)], _no_sync, cfg.repeat, cfg.min_time)
            add_row(cfg, kernel=kernel, instance=name, n=n, k=None, batch=batch, backend="numpy", threads="",
                    block="", moves=batch * pairs, seconds=seconds)


# --------------------------------------------------------------------------------------------- TSP


def tsp_instances(cfg: Config):
    out = [uniform_tsp(n, seed=1) for n in cfg.tsp_sizes]
    if cfg.library and not cfg.quick and os.environ.get("METAHEUR_INSTANCES"):
        try:
            out.append(load_instance("pla85900"))
        except Exception as exc:  # not there: say so, carry on
            print(f"pla85900 not loaded: {exc}", flush=True)
            cfg.skipped.append(f"pla85900: not loaded ({exc})")
    return out


def gpu_tour_counts(cfg: Config, kernel: str) -> list:
    """The GPU tour counts of ``kernel``'s rows."""
    if kernel.startswith("tsp_2opt") and cfg.tsp_2opt_gpu_batches is not None:
        return cfg.tsp_2opt_gpu_batches
    return cfg.tsp_gpu_batches


def tsp_batch_kernels(cfg: Config, kernels: list, dev) -> list[tuple[int, list]]:
    """(tours, the kernels timed with that many) on ``dev``: the CPU batches (on a GPU only for the
    kernels without tour counts of their own, ``--gpu-tours``, so that the first GPU launch of a
    2-opt kernel, the one gpu_session.sh profiles, is one of those counts), then on a GPU each
    kernel's GPU tour counts."""
    own = {k for k in kernels if dev.is_gpu and k.startswith("tsp_2opt") and cfg.tsp_2opt_gpu_batches is not None}
    out = [(batch, [k for k in kernels if k not in own]) for batch in cfg.tsp_batches]
    if dev.is_gpu:
        counts = dict.fromkeys(b for kernel in kernels for b in gpu_tour_counts(cfg, kernel))
        out += [(b, [k for k in kernels if b in gpu_tour_counts(cfg, k)]) for b in counts]
    return out


#: The cached full kernels and the classic kernel each is measured against.
CACHED_OF = {"tsp_2opt_cached": "tsp_2opt_full", "tsp_oropt_cached": "tsp_oropt_full"}


def bench_tsp(cfg: Config) -> None:
    for tsp in tsp_instances(cfg):
        n, k = tsp.n, cfg.k
        start = time.perf_counter()
        neigh = neighbours(tsp, k)
        print(f"{tsp.name}: n={n}, {tsp.weight_type}, neighbour lists in {time.perf_counter() - start:.2f} s",
              flush=True)
        kernels = ["tsp_2opt_cand", "tsp_oropt_cand"] + (["tsp_2opt_full", "tsp_2opt_cached"]
                                                         if n in cfg.tsp_full_sizes else [])
        kernels += ["tsp_oropt_full", "tsp_oropt_cached"] if n in cfg.tsp_oropt_full_sizes else []
        per_tour = {"tsp_2opt_cand": 2 * n * k, "tsp_oropt_cand": 12 * n * k, "tsp_2opt_full": n * (n - 3) // 2,
                    "tsp_oropt_full": n * (5 * n - 16)}
        per_tour.update({cached: per_tour[full] for cached, full in CACHED_OF.items()})
        for label, dev, threads in _backends(cfg):
            data = tsp_data(tsp, dev)
            module = load_module("tsp/tsp_moves.cu", dev, data.defines)
            sync = dev.synchronize if dev.is_gpu else _no_sync
            neigh_dev = dev.asarray(neigh)
            for batch, batch_kernels in tsp_batch_kernels(cfg, kernels, dev):
                rng = np.random.default_rng(batch)
                tours = np.array([rng.permutation(n) for _ in range(batch)], np.int32)
                t_dev = dev.asarray(tours)
                pos = dev.zeros((batch, n), np.int32)
                module.kernel("tsp_positions")(batch, (128,) if dev.is_gpu else 1, (t_dev, pos, n))
                placeholder = dev.zeros(1, np.int64)
                move_out = dev.zeros((batch, 4), np.int32)
                delta_out = dev.zeros(batch, np.int64)
                best = {}  # the classic full kernels' best moves, which the cached ones must equal
                for kernel in batch_kernels:
                    block = (FULL_2OPT if kernel.startswith("tsp_2opt_") else (128,)) if dev.is_gpu else (1,)
                    note = ""
                    if kernel in CACHED_OF:
                        parts = parts_for(module, dev, batch, n, block, (kernel,))
                        outs = {"2opt" if kernel == "tsp_2opt_cached" else "oropt": (move_out, delta_out)}
                        fn = partial(TourCache(data, batch, parts).best_moves, module, t_dev, block, outs,
                                     threads=threads)
                        note = f"{parts} block(s) a tour, the cache and reduction launches included"
                    else:
                        args = (data.xy, data.mat, t_dev, n, 0, placeholder, move_out, delta_out)
                        if "cand" in kernel:
                            args = (data.xy, data.mat, t_dev, pos, neigh_dev, n, k, 0, placeholder, move_out, delta_out)
                        fn = partial(module.kernel(kernel), batch, block, args, threads=threads)
                    seconds = measure(fn, sync, cfg.repeat, cfg.min_time)
                    add_row(cfg, kernel=kernel, instance=tsp.name, n=n, k=k if "cand" in kernel else None, batch=batch,
                            backend=label, threads=threads or "", block="x".join(map(str, block)),
                            moves=batch * per_tour[kernel], seconds=seconds, note=note)
                    if kernel.endswith("_full"):
                        best[kernel] = (to_host(move_out).copy(), to_host(delta_out).copy())
                    elif kernel in CACHED_OF:
                        assert all(np.array_equal(a, to_host(b)) for a, b in zip(best[CACHED_OF[kernel]],
                                                                                 (move_out, delta_out), strict=True)), \
                            f"{kernel} and {CACHED_OF[kernel]} disagree ({label}, {batch} tours)"
            if not dev.is_gpu:
                # sanity: the CPU build's best move equals the numpy reference's smallest delta
                ref = RT.two_opt_cand(tsp.dist, tours[0], neigh)
                module.kernel("tsp_2opt_cand")(batch, 1, (data.xy, data.mat, t_dev, pos, neigh_dev, n, k, 0,
                                                          placeholder, move_out, delta_out), threads=threads)
                assert to_host(delta_out)[0] == ref.min(), "CPU build and numpy reference disagree"
        bench_tsp_numpy(cfg, tsp, neigh, kernels, per_tour)


def bench_tsp_numpy(cfg: Config, tsp, neigh, kernels, per_tour) -> None:
    n = tsp.n
    tour = np.random.default_rng(1).permutation(n)
    fns = {
        "tsp_2opt_cand": lambda: RT.two_opt_cand(tsp.dist, tour, neigh),
        "tsp_oropt_cand": lambda: RT.or_opt_cand(tsp.dist, tour, neigh),
        "tsp_2opt_full": lambda: RT.two_opt_full(tsp.dist, tour),
        "tsp_oropt_full": lambda: RT.or_opt_full(tsp.dist, tour),
    }
    for kernel in (k for k in kernels if k in fns):  # the cached kernels compute the same: one numpy row
        cells = {"tsp_2opt_full": n * n, "tsp_oropt_full": 6 * n * n}.get(kernel, 0)  # the reference's temporaries
        if cells > 3000**2:
            # a dozen int64 temporaries of `cells` (0.8 GB each for 2-opt at n = 10,000; the
            # Or-opt reference at n = 1,000 took 15 s, over the budget): estimated, not run
            for batch in cfg.tsp_batches:
                skip_row(cfg, kernel=kernel, instance=tsp.name, n=n, batch=batch, backend="numpy",
                         why=f"{cells:.0e}-cell int64 temporaries (~{12 * 8 * cells / 2**30:.1f} GiB)")
            continue
        one = measure(fns[kernel], _no_sync, 1 if n > 20000 else cfg.repeat, cfg.min_time)
        for batch in cfg.tsp_batches:
            if one * batch > cfg.numpy_budget:
                skip_row(cfg, kernel=kernel, instance=tsp.name, n=n, batch=batch, backend="numpy",
                         why=f"~{one * batch:.1f} s a launch (over the {cfg.numpy_budget:g} s budget)")
                continue
            seconds = one if batch == 1 else measure(lambda f=fns[kernel], bt=batch: [f() for _ in range(bt)],
                                                     _no_sync, cfg.repeat, cfg.min_time)
            add_row(cfg, kernel=kernel, instance=tsp.name, n=n, k=cfg.k if "cand" in kernel else None, batch=batch,
                    backend="numpy", threads="", block="", moves=batch * per_tour[kernel], seconds=seconds)


def bench_knn(cfg: Config) -> None:
    """neighbours(): the KNN grid kernel with the host's grid build and TSPLIB re-ranking."""
    for n in cfg.knn_sizes:
        tsp = uniform_tsp(n, seed=1)
        for label, dev, threads in _backends(cfg):
            set_cpu_threads(threads or 0)
            try:
                seconds = measure(partial(neighbours, tsp, cfg.k, dev), _no_sync, cfg.repeat, cfg.min_time)
            finally:
                set_cpu_threads(0)
            add_row(cfg, kernel="neighbours", instance=tsp.name, n=n, k=cfg.k, batch=1, backend=label,
                    threads=threads or "", block="128" if dev.is_gpu else "1", moves=n, seconds=seconds,
                    note="cities per second, host grid and re-rank included")
        skip_row(cfg, kernel="neighbours", instance=tsp.name, n=n, batch=1, backend="numpy",
                 why="no vectorised numpy KNN in tests/problems/tsp/tsp_reference.py (brute force is O(n^2))")


# ------------------------------------------------------------------------------------------ output


def _compiler() -> str:
    c = find_compiler()
    return c.version if c else "none"


def _cpu_model() -> str:
    return cpu_device().label


def header_lines(cfg: Config, argv: list[str]) -> list[str]:
    gpus = ", ".join(f"{g.name} {g.label} ({g.cores} SMs, {g.memory_bytes / 2**30:.0f} GiB)" for g in cfg.gpus)
    cupy_version = "not installed"
    try:
        import cupy

        cupy_version = cupy.__version__
    except Exception:
        pass
    return [
        f"command: python {' '.join([os.path.relpath(__file__), *argv])}",
        f"date: {_dt.datetime.now().astimezone().isoformat(timespec='seconds')}",
        f"machine: {platform.node()}, {_cpu_model()}, {os.cpu_count()} cores, {platform.platform()}; load average "
        f"at start {os.getloadavg()[0]:.2f}",
        f"GPUs: {gpus or 'none'}; CuPy: {cupy_version}",
        f"Python: {platform.python_version()}; numpy: {np.__version__}; compiler: {_compiler()}; "
        f"metaheur commit: {commit()}",
        f"timing: best of {cfg.repeat} samples of >= {cfg.min_time:g} s after a warm-up; numpy budget "
        f"{cfg.numpy_budget:g} s a launch; bandwidth limit {cfg.bandwidth_gbs:g} GB/s",
    ]


def summary_lines(cfg: Config) -> list[str]:
    out = []
    for batch in cfg.qap_batches:
        one = [r for r in cfg.rows if r["kernel"] == "qap_delta_update" and r["n"] == 100 and r["batch"] == batch]
        cpu1 = next((r for r in one if r["backend"] == "cpu-1"), None)
        numpy_row = next((r for r in one if r["backend"] == "numpy"), None)
        if cpu1 and numpy_row:
            ratio = cpu1["moves_per_s"] / numpy_row["moves_per_s"]
            out.append(f"QAP O(1) delta update, n = 100, batch {batch}: CPU build 1 core / numpy = {ratio:.1f}x "
                       f"({'meets' if ratio >= 5 else 'MISSES'} the >= 5x target)")
    for n in (1000, 10000, 85900):
        for kernel in ("tsp_2opt_cand", "tsp_oropt_cand"):
            rows = [r for r in cfg.rows if r["kernel"] == kernel and r["n"] == n and r["instance"].startswith("gen")]
            if rows:
                best = max(rows, key=lambda r: r["moves_per_s"])
                out.append(f"{kernel} n = {n}: best {_fmt_rate(best['moves_per_s'])}moves/s ({best['backend']}, "
                           f"batch {best['batch']})")
    return out


def _cell(row: dict, key: str) -> str:
    value = row[key]
    if value == "" or value is None:
        return ""
    if key == "moves_per_s":
        return f"{value:.3e}"
    if key == "seconds_per_launch":
        return f"{value * 1e3:.3f}"
    if key == "gb_per_s":
        return f"{value:.1f}"
    if key == "bandwidth_fraction":
        return f"{value:.1%}"
    return str(value)


def write_results(cfg: Config, out: Path, label: str, argv: list[str]) -> tuple[Path, Path]:
    out.mkdir(parents=True, exist_ok=True)
    header = header_lines(cfg, argv)
    summary = summary_lines(cfg)
    csv_path, md_path = out / f"bench_kernels_{label}.csv", out / f"bench_kernels_{label}.md"
    with open(csv_path, "w", newline="") as handle:
        for line in header:
            handle.write(f"# {line}\n")
        writer = csv.DictWriter(handle, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows(cfg.rows)
    md_cols = ["kernel", "instance", "n", "k", "batch", "backend", "block", "moves_per_launch", "seconds_per_launch",
               "moves_per_s", "gb_per_s", "bandwidth_fraction"]
    titles = {"moves_per_launch": "moves/launch", "seconds_per_launch": "ms/launch", "moves_per_s": "moves/s",
              "gb_per_s": "GB/s (model)", "bandwidth_fraction": "of bandwidth"}
    md = ["# Move-kernel throughput", "", *[f"- {line}" for line in header], "",
          "Moves evaluated per second (see the docstring of experiments/bench_kernels.py for what a move is and the "
          "byte model of the GPU rows). `cpu-1`: the CPU build on one core; `cpu-N`: on N cores (blocks spread "
          "over OpenMP threads, so a batch of one uses one core); `numpy`: tests/problems/*/*_reference.py, "
          "vectorised, one solution at a time.", ""]
    if summary:
        md += ["## Key numbers", "", *[f"- {line}" for line in summary], ""]
    md += ["## All rows", "", "| " + " | ".join(titles.get(c, c) for c in md_cols) + " |",
           "|" + "|".join("---" if c in ("kernel", "instance", "backend", "block") else "---:" for c in md_cols) + "|"]
    for row in cfg.rows:
        md.append("| " + " | ".join(_cell(row, c) for c in md_cols) + " |")
    if cfg.skipped:
        md += ["", "## Skipped", "", *[f"- {line}" for line in cfg.skipped]]
    md_path.write_text("\n".join(md) + "\n")
    return csv_path, md_path


def tour_counts(text: str) -> list[int]:
    """``T1,T2,...`` as positive tour counts (argparse type)."""
    try:
        counts = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected tour counts T1,T2,..., got {text!r}") from None
    if not counts or min(counts) < 1:
        raise argparse.ArgumentTypeError(f"tour counts must be positive integers, got {text!r}")
    return counts


def two_per_sm(counts: list, gpus: tuple) -> list:
    """``counts`` each raised to at least two tours (blocks) per multiprocessor of the largest GPU,
    without repeats."""
    floor = 2 * max((g.cores for g in gpus), default=0)
    return list(dict.fromkeys(max(b, floor) for b in counts))


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, a few seconds (smoke test)")
    parser.add_argument("--repeat", type=int, default=None, help="timed samples per row (default 3, quick 1)")
    parser.add_argument("--min-time", type=float, default=None, help="seconds per sample (default 0.2, quick 0.01)")
    parser.add_argument("--numpy-budget", type=float, default=3.0, help="skip numpy rows slower than this a launch")
    parser.add_argument("--bandwidth-gbs", type=float, default=4800.0, help="memory bandwidth limit (H200: 4800)")
    parser.add_argument("--out", default=None, help="output folder (default results/; --quick: a temporary folder)")
    parser.add_argument("--label", default=None, help="results file suffix (default: the host name)")
    parser.add_argument("--only", choices=["qap", "tsp", "knn"], nargs="*", default=None, help="parts to run")
    parser.add_argument("--gpu-check", nargs=3, type=int, metavar=("QAP_N", "TSP_N", "BATCH"), default=None,
                        help="only the rows of experiments/gpu_check.sh: QAP n = QAP_N with BATCH solutions on a "
                             "GPU, TSP n = TSP_N (2-opt over all pairs too) with BATCH / 8 tours on a GPU (at least "
                             "two per multiprocessor)")
    parser.add_argument("--gpu-tours", type=tour_counts, default=None, metavar="T1,T2,...",
                        help="with --gpu-check: the GPU rows of the 2-opt kernels with these tour counts (one row "
                             "each, each raised to two per multiprocessor) instead of BATCH / 8")
    args = parser.parse_args(argv)
    if args.gpu_tours and not args.gpu_check:
        parser.error("--gpu-tours needs --gpu-check")
    args.out = out_folder(args.out, args.quick)
    quick = args.quick
    cfg = Config(
        quick=quick,
        repeat=args.repeat or (1 if quick else 3),
        min_time=args.min_time if args.min_time is not None else (0.01 if quick else 0.2),
        numpy_budget=args.numpy_budget,
        bandwidth_gbs=args.bandwidth_gbs,
        qap_sizes=[20, 50] if quick else [50, 100, 256],
        qap_batches=[1, 4] if quick else [1, 64],
        qap_gpu_batches=[] if quick else [1024],
        tsp_sizes=[1000] if quick else [1000, 10000, 85900],
        tsp_full_sizes=[1000] if quick else [1000, 10000],
        tsp_oropt_full_sizes=[1000],
        tsp_batches=[1, 2] if quick else [1, 8],
        tsp_gpu_batches=[] if quick else [128],
        knn_sizes=[2000] if quick else [10000, 85900],
        gpus=gpu_devices(),
    )
    if args.gpu_check:
        qap_n, tsp_n, batch = args.gpu_check
        cfg.qap_sizes, cfg.qap_batches, cfg.qap_gpu_batches = [qap_n], [1], [batch]
        cfg.tsp_sizes, cfg.tsp_full_sizes, cfg.tsp_oropt_full_sizes, cfg.tsp_batches = [tsp_n], [tsp_n], [], [1]
        cfg.tsp_gpu_batches, cfg.library = [max(1, batch // 8)], False
        if args.gpu_tours:
            cfg.tsp_2opt_gpu_batches = two_per_sm(args.gpu_tours, cfg.gpus)
    # a GPU row of the TSP kernels launches at least two blocks (tours) per multiprocessor
    cfg.tsp_gpu_batches = two_per_sm(cfg.tsp_gpu_batches, cfg.gpus)
    parts = args.only or ["qap", "tsp", "knn"]
    print("\n".join(header_lines(cfg, argv)), flush=True)
    if "qap" in parts:
        bench_qap(cfg)
    if "tsp" in parts:
        bench_tsp(cfg)
    if "knn" in parts:
        bench_knn(cfg)
    label = args.label or socket.gethostname() or "local"
    csv_path, md_path = write_results(cfg, Path(args.out), label, argv)
    print()
    for line in summary_lines(cfg):
        print(line)
    print(f"wrote {csv_path} and {md_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
