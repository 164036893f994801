"""The ``cached`` full-neighbourhood kernels of kernels/tsp/tsp_moves.cu (issue 62: ``tsp_cache_tour``,
``tsp_2opt_cached``, ``tsp_oropt_cached``, ``tsp_best_of_parts``) bit for bit against the ``classic``
ones (``tsp_2opt_full``, ``tsp_oropt_full``: every delta, the same best move and delta) and against
the numpy reference (tests/problems/tsp/tsp_reference.py), for every weight type, with one and several blocks a
tour; in the fiber simulation in several thread orders; and the descent with either variant."""

from __future__ import annotations

import numpy as np
import pytest
import tsp_reference as R
from kernel_helpers import SIM_BLOCKS, TSP_WEIGHTS, make_tsp, random_perms

from metaheur.engine import load_module
from metaheur.errors import MetaheurError
from metaheur.problems import TSP, uniform_tsp
from metaheur.problems.tsp.descent import TSPDescentBatch
from metaheur.problems.tsp.device_data import tsp_data
from metaheur.problems.tsp.full_moves import COORDLESS, parts_for

SIZES = [5, 6, 7, 33, 65]
PARTS = [1, 2, 3, 7]
#: cached kernel -> (classic kernel, the numpy reference, its all_out shape for n)
PAIRS = {"tsp_2opt_cached": ("tsp_2opt_full", R.two_opt_full, lambda n: (n, n)),
         "tsp_oropt_cached": ("tsp_oropt_full", R.or_opt_full, lambda n: (n, 3, n, 2))}
ORDERS = ["forward", "reverse", "random:3"]


def cache(module, data, tours, block=1):
    """(txy, edge) of ``tsp_cache_tour``; txy stays the placeholder for weights without coordinates."""
    s, n = tours.shape
    txy = np.full(2, -7.0) if data.weight_code in COORDLESS else np.full((s, n, 2), -7.0)
    edge = np.full((s, n), -7, np.int32)
    module.kernel("tsp_cache_tour")(s, block, (data.xy, data.mat, tours, n, txy, edge))
    return txy, edge


def classic(module, kernel, data, tours, write_all=1):
    s, n = tours.shape
    shape = PAIRS[kernel][2](n)
    all_out = np.full((s, *shape) if write_all else 1, -3, np.int64)
    move, delta = np.full((s, 4), -9, np.int32), np.full(s, -9, np.int64)
    module.kernel(PAIRS[kernel][0])(s, 1, (data.xy, data.mat, tours, n, write_all, all_out, move, delta))
    return all_out, move, delta


def cached(module, kernel, data, tours, parts, *, write_all=1, block=1):
    """(all_out, move, delta) of the cached kernel with ``parts`` blocks a tour, reduced by
    tsp_best_of_parts when parts > 1."""
    s, n = tours.shape
    txy, edge = cache(module, data, tours, block)
    all_out = np.full((s, *PAIRS[kernel][2](n)) if write_all else 1, -3, np.int64)
    move, delta = np.full((s * parts, 4), -9, np.int32), np.full(s * parts, -9, np.int64)
    module.kernel(kernel)(s * parts, block, (data.xy, data.mat, tours, txy, edge, n, parts, write_all, all_out,
                                             move, delta))
    if parts == 1:
        return all_out, move, delta
    best, best_delta = np.full((s, 4), -9, np.int32), np.full(s, -9, np.int64)
    module.kernel("tsp_best_of_parts")(s, block, (n, parts, int(kernel == "tsp_oropt_cached"), move, delta, best,
                                                  best_delta))
    return all_out, best, best_delta


def ties_tsp(n: int, seed: int) -> TSP:
    """Cities on a 4 x 4 integer grid: many equal deltas, so that ties decide the best move."""
    coords = np.random.default_rng(seed).integers(0, 4, size=(n, 2)).astype(np.float64)
    return TSP("ties", "EUC_2D", coords=coords)


@pytest.fixture(scope="module")
def modules():
    return {}


def module_for(modules, data, sim=False):
    key = (data.weight_code, sim)
    if key not in modules:
        modules[key] = load_module("tsp/tsp_moves.cu", "cpu", data.defines, sim=sim)
    return modules[key]


@pytest.mark.parametrize(("weight", "n"), [(w, n) for w in TSP_WEIGHTS for n in SIZES if w != "TWIN" or n % 2 == 0]
                         + [("TWIN", 34), ("TWIN", 66)])
def test_cached_kernels_equal_classic_and_reference(modules, tmp_path, weight, n):
    tsp, data = make_tsp(weight, n, seed=n + 5, tmp_path=tmp_path)
    module = module_for(modules, data)
    tours = random_perms(np.random.default_rng(n), 3, n)
    for kernel, (_, reference, _) in PAIRS.items():
        expected = classic(module, kernel, data, tours)
        for sol, tour in enumerate(tours):  # the classic kernel itself against numpy
            np.testing.assert_array_equal(expected[0][sol], reference(tsp.dist, tour), err_msg=f"{kernel} {weight}")
        for parts in PARTS:
            got = cached(module, kernel, data, tours, parts)
            for a, b in zip(expected, got, strict=True):
                np.testing.assert_array_equal(b, a, err_msg=f"{kernel} {weight} n={n} parts={parts}")
            placeholder, move0, delta0 = cached(module, kernel, data, tours, parts, write_all=0)
            assert placeholder.tolist() == [-3]
            np.testing.assert_array_equal(move0, expected[1])
            np.testing.assert_array_equal(delta0, expected[2])


@pytest.mark.parametrize("weight", ["EUC_2D", "GEO", "MATRIX", "TWIN"])
def test_tour_cache_is_the_tours_edges_and_coordinates(modules, tmp_path, weight):
    n = 34
    tsp, data = make_tsp(weight, n, seed=2, tmp_path=tmp_path)
    tours = random_perms(np.random.default_rng(1), 2, n)
    txy, edge = cache(module_for(modules, data), data, tours)
    np.testing.assert_array_equal(edge, tsp.dist(tours, np.roll(tours, -1, axis=1)))
    if data.weight_code in COORDLESS:
        assert txy.tolist() == [-7.0, -7.0]  # a placeholder, not touched
    else:
        np.testing.assert_array_equal(txy, np.asarray(data.xy)[tours])


def test_ties_go_to_the_smallest_move_index_across_parts(modules):
    """On a small integer grid many moves share the best delta: every split between blocks
    returns the classic kernel's move, the smallest index among them."""
    for seed in range(3):
        tsp = ties_tsp(40, seed)
        data = tsp_data(tsp, "cpu")
        module = module_for(modules, data)
        tours = random_perms(np.random.default_rng(seed), 4, 40)
        for kernel in PAIRS:
            expected = classic(module, kernel, data, tours)
            flat = expected[0].reshape(4, -1)
            assert (flat == flat.min(axis=1, keepdims=True)).sum(axis=1).max() > 1, "the instance must have ties"
            for parts in (2, 5, 16):
                got = cached(module, kernel, data, tours, parts, write_all=0)
                np.testing.assert_array_equal(got[1], expected[1], err_msg=f"{kernel} parts={parts}")
                np.testing.assert_array_equal(got[2], expected[2])


def test_parts_without_a_move_are_skipped(modules):
    """n = 5: 2-opt rows 3 and 4 have no valid move, so parts 3 .. 6 of 7 find none; the tour's
    move is still the classic one. With n = 3 no part has one: (-1, ...) and delta 0."""
    tsp = uniform_tsp(5, seed=1)
    data = tsp_data(tsp, "cpu")
    module = module_for(modules, data)
    tours = random_perms(np.random.default_rng(0), 2, 5)
    expected = classic(module, "tsp_2opt_cached", data, tours, write_all=0)
    got = cached(module, "tsp_2opt_cached", data, tours, 7, write_all=0)
    np.testing.assert_array_equal(got[1], expected[1])
    np.testing.assert_array_equal(got[2], expected[2])
    tiny = TSP("tiny", "EUC_2D", coords=np.array([[0.0, 0.0], [3.0, 0.0], [0.0, 4.0]]))
    data = tsp_data(tiny, "cpu")
    for kernel in PAIRS:
        tours = random_perms(np.random.default_rng(0), 2, 3)
        _, move, delta = cached(module_for(modules, data), kernel, data, tours, 4)
        assert (move == -1).all() and (delta == 0).all(), kernel


# ---------------------------------------------------------------- the fiber simulation, thread orders


@pytest.mark.gpusim
@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize(("weight", "n"), [("EUC_2D", 33), ("MATRIX", 34), ("GEO", 7), ("TWIN", 12)])
def test_cached_kernels_in_the_simulation_in_every_order(modules, tmp_path, monkeypatch, order, weight, n):
    """Every thread of a block as a fiber, in several orders between barriers, several block
    shapes and parts: the CPU build's (one thread a block) deltas, moves and caches."""
    monkeypatch.setenv("METAHEUR_SIM_ORDER", order)
    _, data = make_tsp(weight, n, seed=9, tmp_path=tmp_path)
    fast, sim = module_for(modules, data), module_for(modules, data, sim=True)
    tours = random_perms(np.random.default_rng(9), 2, n)
    caches = cache(fast, data, tours)
    for block in SIM_BLOCKS:
        for a, b in zip(caches, cache(sim, data, tours, block), strict=True):
            np.testing.assert_array_equal(b, a, err_msg=str(block))
        for kernel in PAIRS:
            expected = classic(fast, kernel, data, tours)
            for parts in (1, 3):
                got = cached(sim, kernel, data, tours, parts, block=block)
                for a, b in zip(expected, got, strict=True):
                    np.testing.assert_array_equal(b, a, err_msg=f"{kernel} {block} parts={parts} {order}")


# ------------------------------------------------------------------------------------------ the descent


def test_descent_with_either_kernel_makes_the_same_moves():
    tsp = uniform_tsp(120, seed=6)
    start = np.array([np.random.default_rng(k).permutation(120) for k in range(3)])
    one = TSPDescentBatch(tsp, full=True, several=False).run(start)
    two = TSPDescentBatch(tsp, full=True, several=False, kernel="cached").run(start)
    assert one.stop_reason == two.stop_reason == "local optimum"
    assert np.array_equal(one.best, two.best) and np.array_equal(one.best_costs, two.best_costs)
    assert np.array_equal(one.iterations, two.iterations) and one.extra == two.extra
    assert [tsp.tour_length(t) for t in two.best] == two.best_costs.tolist()
    assert (two.iterations > 0).all()


@pytest.mark.gpusim
@pytest.mark.parametrize("threads", [False, True])
def test_cached_descent_on_a_simulated_gpu_shares_tours_between_blocks(monkeypatch, threads):
    """On a simulated GPU few tours are split between several blocks each (parts_for, from the
    driver's occupancy query and the device's multiprocessors), in fast mode and with every
    thread of a block run: the same tours as the classic kernels on the CPU."""
    from metaheur.devices import gpu_devices
    from metaheur.engine import simcuda

    monkeypatch.setenv("METAHEUR_SIMULATED_GPUS", "1")
    monkeypatch.setenv("METAHEUR_SIMULATED_GPU_SMS", "4")
    monkeypatch.delenv("METAHEUR_NO_GPU", raising=False)
    if threads:
        monkeypatch.setenv("METAHEUR_SIMULATED_THREADS", "1")
    gpu_devices.cache_clear()
    simcuda.reset()
    try:
        tsp = uniform_tsp(40, seed=8)
        start = np.array([np.random.default_rng(k).permutation(40) for k in range(2)])
        expected = TSPDescentBatch(tsp, full=True, several=False).run(start, max_passes=6)
        gpu = TSPDescentBatch(tsp, "cuda:0", full=True, several=False, kernel="cached", block=32)
        parts = parts_for(gpu.module, gpu.device, 2, tsp.n, gpu.block)
        assert parts > 1
        got = gpu.run(start, max_passes=6)
        assert np.array_equal(got.best, expected.best) and np.array_equal(got.best_costs, expected.best_costs)
        assert np.array_equal(got.iterations, expected.iterations)
    finally:
        monkeypatch.undo()
        gpu_devices.cache_clear()
        simcuda.reset()


def test_parts_on_the_cpu_and_an_unknown_kernel():
    tsp = uniform_tsp(30, seed=1)
    descent = TSPDescentBatch(tsp, kernel="cached")
    assert parts_for(descent.module, descent.device, 1, tsp.n, 1) == 1
    with pytest.raises(MetaheurError, match="descent kernel must be one of classic, cached"):
        TSPDescentBatch(tsp, kernel="fast")


def test_parts_fill_every_block_slot_with_a_nearly_full_last_wave():
    """132 multiprocessors x 5 resident blocks = 660 slots (the H200's 2-opt at 32 x 8 threads)."""
    from types import SimpleNamespace

    module = SimpleNamespace(kernel=lambda name: SimpleNamespace(resident_blocks=lambda block: 5))
    gpu = SimpleNamespace(is_gpu=True, cores=132)
    parts = {batch: parts_for(module, gpu, batch, 10_000, (32, 8)) for batch in (1, 128, 264, 660, 1000, 1320)}
    # 264 tours: 3 a tour fill the slots but take 2 waves for 1.2 waves of work; 5 make 2 full waves
    assert parts == {1: 64, 128: 10, 264: 5, 660: 1, 1000: 3, 1320: 1}
    assert parts_for(module, gpu, 1, 40, (32, 8)) == 40  # at most n
