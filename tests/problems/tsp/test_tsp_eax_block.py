"""tsp_eax_block (``ILSParams.eax_kernel = "block"``): tsp_eax's crossover with the O(n) work of
a pair spread over its block must give tsp_eax's children bit for bit (tours, lengths, counters,
statistics, recorded changes), exact tours by the checks of test_tsp_eax.py, on the CPU build and
in the fiber simulation for any block shape and thread order (the race check of the kernel file's
barriers, tests/engine/test_races.py)."""

from __future__ import annotations

import numpy as np
import pytest
from test_tsp_eax import check_children, keys_for, local_optima, random_parents

from metaheur.devices import gpu_devices, to_host
from metaheur.engine import load_module
from metaheur.problems import TSP, clustered_tsp, uniform_tsp
from metaheur.problems.tsp.device_data import neighbours, tsp_data
from metaheur.problems.tsp.eax import N_INFO, SELECTIONS, STRATEGIES, EAXBatch, EdgeFrequency, work_ints

ORDERS = ["forward", "reverse", "random:1", "random:77"]
SHAPES = [(1,), (31,), (33,), (7, 3), (128,)]


def explicit(n: int, seed: int) -> TSP:
    m = np.random.default_rng(seed).integers(1, 1000, size=(n, n))
    return TSP(f"rand-explicit-{n}", "EXPLICIT", matrix=np.triu(m, 1) + np.triu(m, 1).T)


def cases():
    """(instance, parents A, parents B, neighbour lists): random parents, local optima, a pair
    without AB-cycles, tiny and matrix instances, lists that keep groups apart (wide merges)."""
    out = []
    for tsp, count, seed in ((uniform_tsp(300, 1), 8, 1), (clustered_tsp(257, 2), 8, 2), (uniform_tsp(5, 3), 20, 3),
                             (uniform_tsp(8, 4), 20, 4), (explicit(60, 5), 8, 5)):
        a, b = random_parents(tsp.n, count, seed)
        b[0] = np.roll(a[0][::-1], 3)  # the same tour: no AB-cycle, the child is A
        out.append((tsp, a, b, neighbours(tsp, min(8, tsp.n - 1))))
    opt = local_optima(uniform_tsp(200, 6), 8, 6)
    out.append((uniform_tsp(200, 6), opt, np.roll(opt, 1, axis=0), neighbours(uniform_tsp(200, 6), 8)))
    n, group = 40, 10
    grouped = np.array([[g * group + j for j in range(group) if g * group + j != c] for c in range(n)
                        for g in [c // group]], dtype=np.int32)
    rng = np.random.default_rng(7)
    b = np.array([np.concatenate([blk[::-1] if rng.random() < 0.5 else blk for blk in
                                  (np.arange(g * group, (g + 1) * group) for g in rng.permutation(n // group))])
                  for _ in range(8)])
    out.append((uniform_tsp(n, 8), np.tile(np.arange(n), (8, 1)), b, grouped))
    return out


def run_batch(tsp, a, b, neigh, block, strategy, tries, select, seed=3):
    data = tsp_data(tsp)
    count = len(a)
    freq = EdgeFrequency(a, "cpu", data.defines) if select == "entropy" else None
    la = np.array([tsp.tour_length(t) for t in a], dtype=np.int64)
    counters = np.zeros(count, dtype=np.int64)
    batch = EAXBatch(tsp, data, neigh, count, block=block)
    children, lengths = batch(a, b, la, keys_for(count, seed), counters, strategy, tries, select=select, freq=freq)
    changes = None if freq is None else to_host(batch.changes).copy()
    return (to_host(children).copy(), to_host(lengths).copy(), counters, to_host(batch.info_device).copy(),
            changes), batch.info, la


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_block_kernel_gives_the_classic_children_bit_for_bit(strategy):
    for tsp, a, b, neigh in cases():
        for tries, select in ((1, "greedy"), (6, "entropy")):
            classic, _, _ = run_batch(tsp, a, b, neigh, False, strategy, tries, select)
            block, info, la = run_batch(tsp, a, b, neigh, True, strategy, tries, select)
            for x, y in zip(classic, block, strict=True):
                assert (x is None and y is None) or np.array_equal(x, y), (tsp.name, tries, select)
            check_children(tsp, a, b, block[0], block[1], info, la)


@pytest.mark.gpusim
@pytest.mark.parametrize("order", ORDERS)
def test_block_kernel_in_the_thread_simulation_any_shape_and_order(monkeypatch, order):
    """The fiber simulation runs every thread of a block between barriers in ``order``: every
    shape gives the classic kernel's children, counters, statistics and changes."""
    monkeypatch.setenv("METAHEUR_SIM_ORDER", order)
    for tsp, a, b, neigh in cases()[::2]:
        count, n = len(a), tsp.n
        data = tsp_data(tsp)
        freq = EdgeFrequency(a, "cpu", data.defines)
        classic, _, la = run_batch(tsp, a, b, neigh, False, "single", 5, "entropy")
        kernel = load_module("tsp/tsp_eax.cu", "cpu", data.defines, sim=True).kernel("tsp_eax_block")
        for shape in SHAPES:
            out, out_len = np.full((count, n), -1, np.int32), np.zeros(count, np.int64)
            ctr, info = np.zeros(count, np.int64), np.zeros((count, N_INFO), np.int64)
            changes = np.zeros((count, n, 5), np.int32)
            kernel(count, shape, (data.xy, data.mat, neigh.astype(np.int32), n, neigh.shape[1], a.astype(np.int32),
                                  b.astype(np.int32), out, out_len, la, keys_for(count, 3), ctr,
                                  STRATEGIES["single"], 5, np.zeros((count, work_ints(n)), np.int32), info,
                                  SELECTIONS["entropy"], freq.nb, freq.cnt, freq.length, freq.m, freq.h, freq.size,
                                  changes, 1))
            for x, y in zip(classic, (out, out_len, ctr, info, changes), strict=True):
                assert np.array_equal(x, y), (tsp.name, shape)


@pytest.mark.gpu
@pytest.mark.skipif(not gpu_devices(), reason="no CUDA device visible to CuPy")
def test_gpu_block_kernel_matches_the_cpu_build():
    """On a GPU (blocks of 128 threads a pair) the CPU build's classic children, bit for bit."""
    tsp = clustered_tsp(500, 3)
    a, b = random_parents(tsp.n, 16, 2)
    la = np.array([tsp.tour_length(t) for t in a], dtype=np.int64)
    neigh = neighbours(tsp, 8)
    out = []
    for dev, block in (("cpu", False), (gpu_devices()[0].name, True)):
        counters = np.zeros(16, dtype=np.int64)
        batch = EAXBatch(tsp, tsp_data(tsp, dev), neigh, 16, block=block)
        children, lengths = batch(a, b, la, keys_for(16), counters, "single", 8)
        out.append((to_host(children).copy(), to_host(lengths).copy(), counters))
    assert all(np.array_equal(x, y) for x, y in zip(*out, strict=True))
