"""Shared helpers of the kernel-engine tests: test kernels written into tmp_path, instances, random data.

Test kernels are small ``.cu`` files written into a test's ``tmp_path`` and loaded by path
(``load_module(str(path), "cpu", sim=...)``); they include the project's headers by name
(``#include "mh_common.cuh"``), which the loader finds in ``kernels/engine/``.
"""

from __future__ import annotations

import numpy as np

from metaheur.problems import TSP, asymmetric_tsp, read_tsplib
from metaheur.problems.tsp.device_data import tsp_data

#: Block shapes of the simulation tests: one thread, a warp, 2-D, a non-power of two, a large block.
SIM_BLOCKS = [(1, 1), (32, 1), (8, 4), (7, 3), (128, 1)]

#: Weight types of the TSP kernels: name -> MH_TSP_WEIGHT code (``MATRIX`` = a coordinate
#: instance evaluated through its int32 matrix; ``EXPLICIT`` = a TSPLIB EXPLICIT file; ``TWIN`` =
#: the Jonker-Volgenant transformation of an ATSP, even sizes only).
TSP_WEIGHTS = ["EUC_2D", "CEIL_2D", "ATT", "GEO", "MAN_2D", "MAX_2D", "MATRIX", "EXPLICIT", "TWIN"]


def random_perms(rng: np.random.Generator, count: int, n: int) -> np.ndarray:
    """``count`` random permutations of ``range(n)`` as a C-contiguous int32 (count x n) array."""
    return np.ascontiguousarray([rng.permutation(n) for _ in range(count)], dtype=np.int32)


def explicit_tsp(tmp_path, n: int, seed: int) -> TSP:
    """A TSPLIB EXPLICIT (LOWER_DIAG_ROW) instance written to a file and read back: symmetric,
    random integer weights with many ties (0 .. 40)."""
    rng = np.random.default_rng(seed)
    m = rng.integers(0, 41, size=(n, n))
    m = np.tril(m, -1) + np.tril(m, -1).T
    lines = [f"NAME: expl{n}", "TYPE: TSP", f"DIMENSION: {n}", "EDGE_WEIGHT_TYPE: EXPLICIT",
             "EDGE_WEIGHT_FORMAT: LOWER_DIAG_ROW", "EDGE_WEIGHT_SECTION"]
    values = [str(int(m[i, j])) for i in range(n) for j in range(i + 1)]
    lines += [" ".join(values[k:k + 17]) for k in range(0, len(values), 17)]  # any line breaks
    lines.append("EOF")
    path = tmp_path / f"expl{n}-{seed}.tsp"
    path.write_text("\n".join(lines) + "\n")
    tsp = read_tsplib(path)
    assert tsp.weight_type == "EXPLICIT" and np.array_equal(tsp.matrix, m)
    return tsp


def coord_tsp(weight: str, n: int, seed: int) -> TSP:
    """A coordinate instance of TSPLIB type ``weight`` (``MATRIX``: EUC_2D, to be evaluated
    through its matrix) whose distances hit TSPLIB's rounding cases: half-integer coordinates
    (EUC_2D/CEIL_2D/MAN_2D/MAX_2D distances of exactly x.5 and exact integers), and duplicate
    cities (zero distances, ties)."""
    rng = np.random.default_rng(seed)
    if weight == "GEO":
        # DDD.MM: degrees and minutes < 60, both hemispheres
        deg = rng.integers(-70, 71, size=(n, 2)).astype(np.float64)
        minutes = rng.integers(0, 60, size=(n, 2)) / 100.0
        xy = np.where(deg < 0, deg - minutes, deg + minutes)
        xy[:, 1] *= 2  # longitudes up to +-140
    elif weight == "ATT":
        xy = rng.integers(0, 8000, size=(n, 2)).astype(np.float64)
    else:
        xy = rng.integers(-300, 300, size=(n, 2)) + rng.choice([0.0, 0.5], size=(n, 2))
        # pairs of cities at distance exactly 2.5 (3-4-5 triangle halved) and 0.5 on one axis
        if n >= 4:
            xy[1] = xy[0] + [1.5, 2.0]
            xy[3] = xy[2] + [0.5, 0.0]
    if n >= 6:
        xy[5] = xy[4]  # a duplicate city
    return TSP(f"{weight.lower()}-{n}-{seed}", "EUC_2D" if weight == "MATRIX" else weight, coords=xy)


def make_tsp(weight: str, n: int, seed: int, tmp_path):
    """``(tsp, data)``: an instance of ``weight`` and its kernel data on the CPU (``data.defines``
    selects the distance function; MATRIX and EXPLICIT use code 0)."""
    if weight == "EXPLICIT":
        tsp = explicit_tsp(tmp_path, n, seed)
        data = tsp_data(tsp, "cpu")
    elif weight == "TWIN":
        assert n % 2 == 0, "a transformed ATSP has an even number of cities"
        tsp = asymmetric_tsp(n // 2, seed=seed).transformed().tsp
        data = tsp_data(tsp, "cpu")
    else:
        tsp = coord_tsp(weight, n, seed)
        data = tsp_data(tsp, "cpu", use_matrix=weight == "MATRIX")
    expected_code = {"MATRIX": 0, "EXPLICIT": 0, "EUC_2D": 1, "CEIL_2D": 2, "ATT": 3, "GEO": 4, "MAN_2D": 5,
                     "MAX_2D": 6, "TWIN": 7}[weight]
    assert data.weight_code == expected_code
    return tsp, data


#: Test kernel of kernels/engine/mh_rng.cuh (test_rng.py, test_gpu.py).
RNG_KERNEL = r"""
#include "mh_common.cuh"
#include "mh_rng.cuh"
/* out[i][j] for keys[i] and counters[j]; block-stride over the counters. */
extern "C" __global__ void draws(const unsigned long long *keys, const unsigned long long *counters, int nc,
                                 const int *m, unsigned long long *r64, double *u, int *below) {
  const long long i = mh_block();
  for (int j = mh_tid(); j < nc; j += mh_nthreads()) {
    r64[i * nc + j] = mh_rand64(keys[i], counters[j]);
    u[i * nc + j] = mh_uniform(keys[i], counters[j]);
    below[i * nc + j] = mh_below(keys[i], counters[j], m[j]);
  }
}

extern "C" __global__ void stream_keys(const unsigned long long *seeds, const unsigned long long *streams, int ns,
                                       unsigned long long *out) {
  const long long i = mh_block();
  for (int j = mh_tid(); j < ns; j += mh_nthreads()) out[i * ns + j] = mh_stream_key(seeds[i], streams[j]);
}

extern "C" __global__ void many_uniform(unsigned long long key, long long count, int m, double *u, int *below) {
  for (long long j = mh_block() * mh_nthreads() + mh_tid(); j < count; j += (long long)gridDim.x * mh_nthreads()) {
    u[j] = mh_uniform(key, (unsigned long long)j);
    below[j] = mh_below(key, (unsigned long long)j, m);
  }
}
"""

#: Test kernel of the block reductions of kernels/engine/mh_common.cuh (test_shim.py, test_gpu.py).
REDUCE = r"""
#include "mh_common.cuh"
/* Each thread takes the lexicographic (key, idx) minimum and the sum of its strided items, then
 * the block combines them; every thread writes what it got back. */
extern "C" __global__ void reduce(const long long *keys, int m, long long *key_out, long long *idx_out,
                                  long long *sum_out) {
  const long long b = mh_block();
  const int t = mh_tid(), nt = mh_nthreads();
  ll key = MH_LL_MAX, idx = MH_LL_MAX, sum = 0;
  for (int k = t; k < m; k += nt) {
    mh_argmin_step(&key, &idx, keys[b * m + k], k);
    sum += keys[b * m + k];
  }
  mh_block_argmin(&key, &idx);
  sum = mh_block_sum(sum);
  /* a second round on other data checks that the shared arrays are reusable */
  ll key2 = MH_LL_MAX, idx2 = MH_LL_MAX;
  for (int k = t; k < m; k += nt) mh_argmin_step(&key2, &idx2, -keys[b * m + k], k);
  mh_block_argmin(&key2, &idx2);
  const ll sum2 = mh_block_sum(1);
  key_out[(b * nt + t) * 2] = key; key_out[(b * nt + t) * 2 + 1] = key2;
  idx_out[(b * nt + t) * 2] = idx; idx_out[(b * nt + t) * 2 + 1] = idx2;
  sum_out[(b * nt + t) * 2] = sum; sum_out[(b * nt + t) * 2 + 1] = sum2;
}
"""
