"""The GPU build against the CPU build, bit for bit, with GPU-sized blocks (marked ``gpu``: run
only where CuPy finds a device, e.g. ``pytest -m gpu tests/engine``).

Every comparison is written once against a "device run" (a module, its device and its block
shapes), so the same code also runs here against the CPU fiber simulation
(``test_helpers_against_the_simulation``, not marked ``gpu``): a machine without a GPU checks the
test code itself, and a GPU machine checks the kernels.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest
import qap_reference as RQ
import tsp_reference as RT
from kernel_helpers import REDUCE, RNG_KERNEL, make_tsp, random_perms

from metaheur.devices import Device, gpu_devices, parse_device, to_host
from metaheur.engine import load_module
from metaheur.engine import rng as host_rng
from metaheur.problems import QAP, clustered_tsp, uniform_tsp
from metaheur.problems.qap.device_data import qap_data
from metaheur.problems.tsp.device_data import neighbours, tsp_data
from metaheur.problems.tsp.full_moves import TourCache

GPU_QAP_BLOCKS = [(32, 4), (128, 1), (32, 8), (16, 16), (1024, 1)]
GPU_TSP_BLOCKS = [(128,), (32, 8), (256,), (1024,)]
#: Weight types compared on a GPU: GEO only through its matrix (CUDA's cos/acos may differ from the
#: host's libm in the last bit, so tsp_data gives a GPU the matrix); EXPLICIT and MATRIX use code 0.
GPU_TSP_WEIGHTS = ["EUC_2D", "CEIL_2D", "ATT", "MAN_2D", "MAX_2D", "MATRIX", "EXPLICIT", "GEO", "TWIN"]


@dataclass
class Target:
    """Where the compared build runs: a device, simulation or not, and the block shapes to use."""

    device: Device
    sim: bool
    qap_blocks: list
    tsp_blocks: list

    def module(self, source: str, defines=None):
        return load_module(source, self.device, defines, sim=self.sim)

    def put(self, array: np.ndarray):
        return self.device.asarray(np.ascontiguousarray(array))


def _gpu_target() -> Target:
    gpus = gpu_devices()
    if not gpus:
        pytest.skip("no CUDA device visible to CuPy (metaheur.devices.gpu_devices() is empty)")
    return Target(gpus[0], False, GPU_QAP_BLOCKS, GPU_TSP_BLOCKS)


@pytest.fixture
def gpu() -> Target:
    return _gpu_target()


SIM_TARGET = Target(parse_device("cpu"), True, [(32, 4), (7, 3)], [(128,), (32, 2)])

# ------------------------------------------------------------------------------------------ QAP


def _qap(n: int, seed: int, symmetric: bool) -> QAP:
    rng = np.random.default_rng(seed)
    mats = [rng.integers(-50, 100, size=(n, n)) for _ in range(2)]
    if symmetric:
        mats = [np.triu(m) + np.triu(m, 1).T for m in mats]
    return QAP(f"q{n}", *mats)


def compare_qap(target: Target, n: int, batch: int, symmetric: bool, seed: int = 1) -> None:
    q = _qap(n, seed, symmetric)
    host = qap_data(q, "cpu")
    dev = qap_data(q, target.device)
    assert host.defines == dev.defines
    cpu = load_module(RQ.QAP_MOVES, "cpu", host.defines)
    other = target.module(RQ.QAP_MOVES, dev.defines)
    rng = np.random.default_rng(seed)
    perms = random_perms(rng, batch, n)
    moves = np.array([rng.choice(n, 2, replace=False) for _ in range(batch)], np.int32)
    after = perms.copy()
    for sol, (r, s) in enumerate(moves):
        after[sol, [r, s]] = after[sol, [s, r]]
    # CPU build: full deltas, one update, best moves
    delta = np.full((batch, n, n), -7, np.int64)
    cpu.kernel("qap_delta_full")(batch, 1, (host.a, host.b, perms, delta, n))
    updated = delta.copy()
    cpu.kernel("qap_delta_update")(batch, 1, (host.a, host.b, after, moves, updated, np.zeros((batch, 4 * n), np.int32),
                                              n))
    tabu = rng.integers(0, 30, size=(batch, n, n)).astype(np.int32)
    now = np.full(batch, 15, np.int64)
    cost = np.array([q.cost(p) for p in after], np.int64)
    best = cost + rng.integers(-5, 5, size=batch)
    move = np.zeros((batch, 2), np.int32)
    value = np.zeros(batch, np.int64)
    cpu.kernel("qap_best_move")(batch, 1, (updated, after, tabu, now, cost, best, n, move, value))
    for sol in range(min(batch, 2)):  # the CPU build itself against the reference
        assert np.array_equal(np.triu(updated[sol], 1), RQ.delta_matrix(q.flow, q.distance, after[sol]))
    for block in target.qap_blocks:
        d = target.put(np.full((batch, n, n), -7, np.int64))
        p_dev, a_dev = target.put(perms), target.put(after)
        other.kernel("qap_delta_full")(batch, block, (dev.a, dev.b, p_dev, d, n))
        target.device.synchronize()
        np.testing.assert_array_equal(to_host(d), delta, err_msg=f"qap_delta_full n={n} {block}")
        other.kernel("qap_delta_update")(batch, block, (dev.a, dev.b, a_dev, target.put(moves), d,
                                                        target.put(np.zeros((batch, 4 * n), np.int32)), n))
        np.testing.assert_array_equal(to_host(d), updated, err_msg=f"qap_delta_update n={n} {block}")
        m2 = target.put(np.zeros((batch, 2), np.int32))
        v2 = target.put(np.zeros(batch, np.int64))
        other.kernel("qap_best_move")(batch, block, (d, a_dev, target.put(tabu), target.put(now), target.put(cost),
                                                     target.put(best), n, m2, v2))
        np.testing.assert_array_equal(to_host(m2), move, err_msg=f"qap_best_move n={n} {block}")
        np.testing.assert_array_equal(to_host(v2), value, err_msg=f"qap_best_move n={n} {block}")
        compare_qap_stream(target, other, dev, q, (perms, after, moves, tabu, now, cost, best), block,
                           (delta, updated, move, value))


def compare_qap_stream(target: Target, module, dev, q: QAP, inputs: tuple, block, expected: tuple) -> None:
    """The streaming variants (qap_delta_update_stream, qap_best_move_stream) on ``target`` make
    the classic kernels' CPU-build results ``expected`` (deltas before and after, move, value)."""
    perms, after, moves, tabu, now, cost, best = inputs
    before, updated, move, value = expected
    batch, n = perms.shape
    d = target.put(before.copy())
    bt = target.put(np.ascontiguousarray(q.distance.T).astype(np.int32))
    module.kernel("qap_delta_update_stream")(batch, block, (dev.a, dev.at, dev.b, bt, target.put(after),
                                                            target.put(moves), d,
                                                            target.put(np.zeros((batch, 8 * n), np.int32)), n))
    np.testing.assert_array_equal(to_host(d), updated, err_msg=f"qap_delta_update_stream n={n} {block}")
    m2, v2 = target.put(np.zeros((batch, 2), np.int32)), target.put(np.zeros(batch, np.int64))
    module.kernel("qap_best_move_stream")(batch, block, (d, target.put(after), target.put(tabu), target.put(now),
                                                         target.put(cost), target.put(best), n, m2, v2))
    np.testing.assert_array_equal(to_host(m2), move, err_msg=f"qap_best_move_stream n={n} {block}")
    np.testing.assert_array_equal(to_host(v2), value, err_msg=f"qap_best_move_stream n={n} {block}")


# ------------------------------------------------------------------------------------------ TSP


def _run_tsp(module, kernel, data, tours, pos, neigh, block, device_put, write_all=1):
    s, n = tours.shape
    k = neigh.shape[1]
    shape = {"tsp_2opt_full": (n, n), "tsp_oropt_full": (n, 3, n, 2), "tsp_2opt_cand": (n, k, 2),
             "tsp_oropt_cand": (n, 3, k, 4)}[kernel]
    all_out = device_put(np.full((s, *shape) if write_all else 1, -3, np.int64))
    move = device_put(np.full((s, 4), -9, np.int32))
    delta = device_put(np.full(s, -9, np.int64))
    if kernel.endswith("_full"):
        args = (data.xy, data.mat, device_put(tours), n, write_all, all_out, move, delta)
    else:
        args = (data.xy, data.mat, device_put(tours), device_put(pos), device_put(neigh), n, k, write_all, all_out,
                move, delta)
    module.kernel(kernel)(s, block, args)
    return to_host(all_out), to_host(move), to_host(delta)


CACHED_KIND = {"tsp_2opt_full": "2opt", "tsp_oropt_full": "oropt"}  # TourCache's names of the full kernels


def compare_tsp(target: Target, weight: str, n_full: int, n_cand: int, tmp_path, batch: int = 3) -> None:
    for n, kernels in ((n_full, ["tsp_2opt_full", "tsp_oropt_full"]), (n_cand, ["tsp_2opt_cand", "tsp_oropt_cand"])):
        tsp, host = make_tsp(weight, n, seed=n, tmp_path=tmp_path)
        if weight == "EXPLICIT":
            dev = tsp_data(tsp, target.device)
        else:
            dev = tsp_data(tsp, target.device, use_matrix=True if weight == "MATRIX" else None)
        if weight == "GEO" and target.device.is_gpu:
            assert dev.weight_code == 0, "a GPU evaluates GEO through the matrix"
        cpu = load_module("tsp/tsp_moves.cu", "cpu", host.defines)
        other = target.module("tsp/tsp_moves.cu", dev.defines)
        neigh = neighbours(tsp, 10)
        rng = np.random.default_rng(n)
        tours = random_perms(rng, batch, n)
        pos = np.zeros_like(tours)
        cpu.kernel("tsp_positions")(batch, 1, (tours, pos, n))
        for block in target.tsp_blocks:
            pos_dev = target.put(np.full_like(tours, -1))
            other.kernel("tsp_positions")(batch, block, (target.put(tours), pos_dev, n))
            np.testing.assert_array_equal(to_host(pos_dev), pos)
        for kernel in kernels:
            expected = _run_tsp(cpu, kernel, host, tours, pos, neigh, 1, np.ascontiguousarray)
            ref = {"tsp_2opt_full": RT.two_opt_full, "tsp_oropt_full": RT.or_opt_full}.get(kernel)
            if ref is not None and weight != "GEO":  # the CPU build itself against the reference, one tour
                np.testing.assert_array_equal(expected[0][0], ref(tsp.dist, tours[0]))
            for block in target.tsp_blocks:
                got = _run_tsp(other, kernel, dev, tours, pos, neigh, block, target.put)
                for a, b in zip(expected, got, strict=True):
                    np.testing.assert_array_equal(b, a, err_msg=f"{kernel} {weight} n={n} {block}")
                got0 = _run_tsp(other, kernel, dev, tours, pos, neigh, block, target.put, write_all=0)
                np.testing.assert_array_equal(got0[1], expected[1])
                np.testing.assert_array_equal(got0[2], expected[2])
                if kernel in CACHED_KIND:  # the cached variant: the same best moves, one or several blocks a tour
                    for parts in (1, 3):
                        move, delta = target.put(np.full((batch, 4), -9, np.int32)), target.put(np.full(batch, -9))
                        TourCache(dev, batch, parts).best_moves(other, target.put(tours), block,
                                                                {CACHED_KIND[kernel]: (move, delta)})
                        np.testing.assert_array_equal(to_host(move), expected[1], err_msg=f"cached {kernel} {parts}")
                        np.testing.assert_array_equal(to_host(delta), expected[2], err_msg=f"cached {kernel} {parts}")


def compare_knn(target: Target, sizes=(20000, 5000)) -> None:
    if target.sim:  # neighbours() launches the grid kernel itself; compare the kernel in the simulation
        return
    for tsp in (uniform_tsp(sizes[0], 3), clustered_tsp(sizes[1], 4)):
        for k in (10, 32):
            np.testing.assert_array_equal(neighbours(tsp, k, target.device), neighbours(tsp, k, "cpu"))


def compare_rng_and_reductions(target: Target, tmp_path) -> None:
    rng_path = tmp_path / "rng_gpu.cu"
    rng_path.write_text(RNG_KERNEL)
    module = target.module(str(rng_path))
    keys = np.array([0, 1, 2**63, 2**64 - 1, 987654321987654321], np.uint64)
    counters = np.array([*range(100), 2**40, 2**64 - 1], np.uint64)
    m = np.resize(np.array([1, 7, 1000, 2**31 - 1], np.int32), counters.size)
    outs = [target.put(np.zeros((keys.size, counters.size), t)) for t in (np.uint64, np.float64, np.int32)]
    module.kernel("draws")(keys.size, target.tsp_blocks[0], (target.put(keys), target.put(counters), counters.size,
                                                            target.put(m), *outs))
    k, c = keys[:, None], counters[None, :]
    np.testing.assert_array_equal(to_host(outs[0]), host_rng.rand64(k, c))
    np.testing.assert_array_equal(to_host(outs[1]), host_rng.uniform(k, c))
    np.testing.assert_array_equal(to_host(outs[2]), host_rng.below(k, c, m[None, :]))
    red_path = tmp_path / "reduce_gpu.cu"
    red_path.write_text(REDUCE)
    module = target.module(str(red_path))
    grid, items = 4, 3000
    keys = np.random.default_rng(5).integers(-1000, 1000, size=(grid, items)).astype(np.int64)
    for block in [*target.qap_blocks, *target.tsp_blocks, (33,), (1000,)]:
        nt = int(np.prod(block))
        outs = [target.put(np.zeros((grid, nt, 2), np.int64)) for _ in range(3)]
        module.kernel("reduce")(grid, block, (target.put(keys), items, *outs))
        key, idx, total = (to_host(o) for o in outs)
        for b in range(grid):
            i1, i2 = int(np.argmin(keys[b])), int(np.argmin(-keys[b]))
            assert (key[b] == [keys[b, i1], -keys[b, i2]]).all() and (idx[b] == [i1, i2]).all(), block
            assert (total[b] == [keys[b].sum(), nt]).all(), block


# ---------------------------------------------------------------------------------------- tests


@pytest.mark.gpu
@pytest.mark.parametrize(("n", "batch"), [(2, 3), (31, 8), (64, 8), (100, 4), (129, 4)])
@pytest.mark.parametrize("symmetric", [False, True], ids=["asym", "sym"])
def test_qap_kernels_gpu_equal_cpu(gpu, n, batch, symmetric):
    compare_qap(gpu, n, batch, symmetric, seed=n)


@pytest.mark.gpu
@pytest.mark.parametrize("weight", GPU_TSP_WEIGHTS)
def test_tsp_kernels_gpu_equal_cpu(gpu, weight, tmp_path):
    compare_tsp(gpu, weight, n_full=150, n_cand=2000 if weight not in ("EXPLICIT", "GEO", "TWIN") else 600,
                tmp_path=tmp_path)


@pytest.mark.gpu
def test_knn_gpu_equals_cpu(gpu):
    compare_knn(gpu)


@pytest.mark.gpu
def test_rng_and_block_reductions_on_gpu(gpu, tmp_path):
    compare_rng_and_reductions(gpu, tmp_path)


@pytest.mark.gpu
def test_gpu_arrays_are_checked(gpu):
    cupy = gpu.device.cupy  # CuPy, or the simulated devices' layer (METAHEUR_SIMULATED_GPUS)
    module = load_module("tsp/tsp_moves.cu", gpu.device, {"MH_TSP_WEIGHT": 1})
    tours = np.arange(5, dtype=np.int32)[None]
    with pytest.raises(TypeError, match="needs a cupy array"):
        module.kernel("tsp_positions")(1, 32, (tours, cupy.zeros((1, 5), np.int32), 5))
    with pytest.raises(TypeError, match="needs dtype int32"):
        module.kernel("tsp_positions")(1, 32, (cupy.asarray(tours), cupy.zeros((1, 5), np.int64), 5))


def test_helpers_against_the_simulation(tmp_path):
    """The comparisons above, run against the CPU fiber simulation (small sizes)."""
    compare_qap(SIM_TARGET, 9, 2, symmetric=False)
    compare_qap(SIM_TARGET, 6, 2, symmetric=True)
    for weight in ("EUC_2D", "EXPLICIT", "GEO", "TWIN"):
        compare_tsp(SIM_TARGET, weight, n_full=12, n_cand=40, tmp_path=tmp_path, batch=2)
    compare_rng_and_reductions(SIM_TARGET, tmp_path)
