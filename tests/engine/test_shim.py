"""The CPU shim (kernels/engine/mh_cpu_shim.h): fiber simulation with real barriers, divergence
detection, fast mode's one-thread blocks, atomics under OpenMP, and the block reductions of
kernels/engine/mh_common.cuh for every block shape."""

from __future__ import annotations

import numpy as np
import pytest
from kernel_helpers import REDUCE

from metaheur.engine import load_module
from metaheur.errors import MetaheurError

BARRIER = r"""
#include "mh_common.cuh"
/* Three phases separated by barriers; each reads what OTHER threads wrote in the phase before,
 * so any thread running ahead of a barrier (or a missing barrier) reads a stale value. */
extern "C" __global__ void rotate(const long long *in, long long *out, int *shape) {
  __shared__ long long s[MH_MAX_BLOCK];
  const int t = mh_tid(), nt = mh_nthreads();
  const long long b = mh_block();
  s[t] = in[b * nt + t];
  __syncthreads();
  const long long right = s[(t + 1) % nt];
  __syncthreads();
  s[t] = right * 3 + t;
  __syncthreads();
  out[b * nt + t] = s[(t + nt - 1) % nt] + 1000000 * s[(t + 2) % nt];
  /* the thread's coordinates, and what the block looked like from inside */
  shape[(b * nt + t) * 6 + 0] = threadIdx.x;
  shape[(b * nt + t) * 6 + 1] = threadIdx.y;
  shape[(b * nt + t) * 6 + 2] = threadIdx.z;
  shape[(b * nt + t) * 6 + 3] = blockDim.x;
  shape[(b * nt + t) * 6 + 4] = blockDim.y;
  shape[(b * nt + t) * 6 + 5] = blockDim.z;
}

/* Every thread of a block counts itself; the block's index as the kernel sees it. */
extern "C" __global__ void census(int *count, int *where) {
  const long long b = mh_block();
  atomicAdd(&count[b], 1);
  if (mh_tid() == 0) {
    where[3 * b] = blockIdx.x; where[3 * b + 1] = blockIdx.y; where[3 * b + 2] = blockIdx.z;
  }
}
"""

DIVERGENT = r"""
#include "mh_common.cuh"
/* mode 0: barrier inside a branch that only threads t < 2 take
 * mode 1: thread 0 leaves early, the others meet at a barrier
 * mode 2: branch with a barrier on both sides (every thread passes one): legal
 * mode 3: uniform barriers in a loop whose trip count is the same for all: legal */
extern "C" __global__ void diverge(int *out, int mode) {
  const int t = mh_tid();
  if (mode == 0) { if (t < 2) __syncthreads(); }
  if (mode == 1) { if (t == 0) return; __syncthreads(); }
  if (mode == 2) { if (t % 2) { __syncthreads(); } else { __syncthreads(); } }
  if (mode == 3) { for (int k = 0; k < 3; ++k) __syncthreads(); }
  out[mh_block() * mh_nthreads() + t] = t + 1;
}
"""

ATOMICS = r"""
#include "mh_common.cuh"
/* Every block adds its items into the same few counters. */
extern "C" __global__ void accumulate(const long long *values, int per_block, int *count, int *tickets,
                                      unsigned int *ucount, unsigned long long *usum, long long *lmin,
                                      int *imin, int *imax) {
  const long long b = mh_block();
  for (int k = mh_tid(); k < per_block; k += mh_nthreads()) {
    const long long v = values[b * per_block + k];
    tickets[b * per_block + k] = atomicAdd(&count[0], 1);
    atomicAdd(&ucount[0], 2u);
    atomicAdd(&usum[0], (unsigned long long)v);
    atomicMin(&lmin[0], v - 5000000000LL);
    atomicMin(&imin[0], (int)(v % 1000003));
    atomicMax(&imax[0], (int)(v % 1000003));
  }
}

/* Shared memory is per block, also when blocks run on several OpenMP threads at once. */
extern "C" __global__ void shared_per_block(const long long *values, int per_block, long long *out) {
  __shared__ long long s[256];
  const long long b = mh_block();
  for (int k = mh_tid(); k < per_block; k += mh_nthreads()) s[k] = values[b * per_block + k];
  __syncthreads();
  if (mh_tid() == 0) {
    long long acc = 0;
    for (int r = 0; r < 200; ++r)  /* long enough for another block to interfere */
      for (int k = 0; k < per_block; ++k) acc += s[k] * (r + 1);
    out[b] = acc;
  }
}
"""



@pytest.fixture(scope="module")
def kernels(tmp_path_factory):
    """``{name: (fast module, sim module)}`` of the test kernels above."""
    folder = tmp_path_factory.mktemp("shim")
    out = {}
    for name, text in (("barrier", BARRIER), ("divergent", DIVERGENT), ("atomics", ATOMICS), ("reduce", REDUCE)):
        path = folder / f"{name}.cu"
        path.write_text(text)
        out[name] = (load_module(str(path), "cpu"), load_module(str(path), "cpu", sim=True))
    return out


def _expected_rotate(values: np.ndarray, nt: int) -> np.ndarray:
    s = values.reshape(-1, nt)
    t = np.arange(nt)
    right = s[:, (t + 1) % nt]
    s2 = right * 3 + t
    return (s2[:, (t - 1) % nt] + 1000000 * s2[:, (t + 2) % nt]).ravel()


@pytest.mark.parametrize("block", [(1,), (2,), (3,), (32,), (8, 4), (7, 3), (5, 3, 2), (4, 4, 4), (128,), (1024,)])
def test_barriers_in_sim_mode(kernels, block):
    _, sim = kernels["barrier"]
    nt = int(np.prod(block))
    grid = 3
    values = (np.arange(grid * nt, dtype=np.int64) * 7919 + 17) % 100003
    out = np.zeros(grid * nt, np.int64)
    shape = np.zeros((grid * nt, 6), np.int32)
    sim.kernel("rotate")(grid, block, (values, out, shape))
    assert np.array_equal(out, _expected_rotate(values, nt))
    # thread k of a block is (k % bx, k / bx % by, k / (bx by)) and sees the launch's blockDim
    full = tuple(block) + (1,) * (3 - len(block))
    k = np.arange(nt)
    coords = np.stack([k % full[0], k // full[0] % full[1], k // (full[0] * full[1])], axis=1)
    assert np.array_equal(shape[:nt, :3], coords)
    assert np.array_equal(shape[:, 3:], np.tile(full, (grid * nt, 1)))


def test_fast_mode_runs_one_thread_per_block(kernels):
    fast, sim = kernels["barrier"]
    values = np.arange(1, 6, dtype=np.int64) * 11
    out = np.zeros(5, np.int64)
    shape = np.full((5, 6), -1, np.int32)
    fast.kernel("rotate")(5, (8, 4), (values, out, shape))  # the block is ignored: blockDim = 1
    assert np.array_equal(shape, np.tile([0, 0, 0, 1, 1, 1], (5, 1)))
    assert np.array_equal(out, _expected_rotate(values, 1))
    for module, per_block in ((fast, 1), (sim, 12)):
        grid = (3, 2, 2)
        count = np.zeros(12, np.int32)
        where = np.full((12, 3), -1, np.int32)
        module.kernel("census")(grid, (4, 3), (count, where), threads=2)
        assert np.array_equal(count, np.full(12, per_block))
        b = np.arange(12)  # block b is (b % gx, b / gx % gy, b / (gx gy))
        assert np.array_equal(where, np.stack([b % 3, b // 3 % 2, b // 6], axis=1))


@pytest.mark.parametrize("mode", [0, 1])
def test_divergent_barrier_is_an_error_in_sim_mode(kernels, mode):
    fast, sim = kernels["divergent"]
    out = np.zeros(2 * 6, np.int32)
    with pytest.raises(MetaheurError, match="diverged at a barrier"):
        sim.kernel("diverge")(2, (6,), (out, mode))
    # one thread cannot diverge, and fast mode has no barriers
    sim.kernel("diverge")(2, (1,), (out, mode))
    fast.kernel("diverge")(2, (6,), (out, mode))


@pytest.mark.parametrize("mode", [2, 3])
def test_uniform_barriers_are_not_an_error(kernels, mode):
    _, sim = kernels["divergent"]
    out = np.zeros(2 * 6, np.int32)
    sim.kernel("diverge")(2, (3, 2), (out, mode))
    assert np.array_equal(out, np.tile(np.arange(1, 7), 2))
    # the module stays usable after a divergence error
    with pytest.raises(MetaheurError):
        sim.kernel("diverge")(1, (6,), (out, 0))
    out[:] = 0
    sim.kernel("diverge")(2, (6,), (out, mode))
    assert np.array_equal(out, np.tile(np.arange(1, 7), 2))


@pytest.mark.parametrize(("mode", "block"), [("fast", 1), ("fast", 64), ("sim", (16, 2))])
def test_atomics_are_atomic(kernels, mode, block):
    module = kernels["atomics"][0 if mode == "fast" else 1]
    grid, per_block = 256, 200
    rng = np.random.default_rng(7)
    values = rng.integers(0, 2**40, size=grid * per_block, dtype=np.int64)
    count = np.zeros(1, np.int32)
    tickets = np.full(grid * per_block, -1, np.int32)
    ucount = np.zeros(1, np.uint32)
    usum = np.zeros(1, np.uint64)
    lmin = np.full(1, np.iinfo(np.int64).max, np.int64)
    imin = np.full(1, np.iinfo(np.int32).max, np.int32)
    imax = np.full(1, np.iinfo(np.int32).min, np.int32)
    for _ in range(3 if mode == "fast" else 1):  # several launches: races are likely if anything is not atomic
        count[:] = 0
        ucount[:] = 0
        usum[:] = 0
        module.kernel("accumulate")(grid, block, (values, per_block, count, tickets, ucount, usum, lmin, imin, imax),
                                    threads=2)
        assert count[0] == grid * per_block
        assert np.array_equal(np.sort(tickets), np.arange(grid * per_block))  # every old value returned once
        assert ucount[0] == 2 * grid * per_block
        assert int(usum[0]) == int(values.sum())
        assert lmin[0] == values.min() - 5000000000
        assert imin[0] == (values % 1000003).min()
        assert imax[0] == (values % 1000003).max()


def test_shared_memory_is_per_block_under_openmp(kernels):
    fast, _ = kernels["atomics"]
    grid, per_block = 64, 256
    values = np.arange(grid * per_block, dtype=np.int64) * 3 + 1
    out = np.zeros(grid, np.int64)
    fast.kernel("shared_per_block")(grid, 1, (values, per_block, out), threads=2)
    assert np.array_equal(out, values.reshape(grid, per_block).sum(axis=1) * (200 * 201 // 2))


def _lex_argmin(keys: np.ndarray):
    k = int(np.argmin(keys))  # numpy: the first index of the smallest key
    return int(keys[k]), k


@pytest.mark.parametrize("block", [(1,), (2,), (3,), (5,), (31,), (32,), (33,), (7, 3), (6, 5, 3), (100,), (128,),
                                   (1000,), (1024,)])
def test_block_reductions_for_any_block_shape(kernels, block):
    fast, sim = kernels["reduce"]
    nt = int(np.prod(block))
    rng = np.random.default_rng(nt)
    grid, m = 3, 257
    keys = rng.integers(-20, 20, size=(grid, m)).astype(np.int64)  # many ties: the smallest index must win
    keys[1] = 5  # all equal
    keys[2, 200:] = -100  # the minimum first appears late
    for module, threads in ((sim, nt), (fast, 1)):
        key = np.zeros((grid, threads, 2), np.int64)
        idx = np.zeros((grid, threads, 2), np.int64)
        total = np.zeros((grid, threads, 2), np.int64)
        module.kernel("reduce")(grid, block, (keys, m, key, idx, total))
        for b in range(grid):
            k1, i1 = _lex_argmin(keys[b])
            k2, i2 = _lex_argmin(-keys[b])
            assert np.array_equal(key[b], np.tile([k1, k2], (threads, 1))), (block, b)
            assert np.array_equal(idx[b], np.tile([i1, i2], (threads, 1))), (block, b)
            assert np.array_equal(total[b], np.tile([keys[b].sum(), threads], (threads, 1))), (block, b)


def test_reductions_with_fewer_items_than_threads(kernels):
    _, sim = kernels["reduce"]
    keys = np.array([[9, 4, 4]], dtype=np.int64)
    key = np.zeros((1, 64, 2), np.int64)
    idx = np.zeros((1, 64, 2), np.int64)
    total = np.zeros((1, 64, 2), np.int64)
    sim.kernel("reduce")(1, (64,), (keys, 3, key, idx, total))
    assert (key[0, :, 0] == 4).all() and (idx[0, :, 0] == 1).all() and (total[0, :, 0] == 17).all()
    assert (key[0, :, 1] == -9).all() and (idx[0, :, 1] == 0).all() and (total[0, :, 1] == 64).all()
    sim.kernel("reduce")(1, (64,), (keys, 0, key, idx, total))  # no items at all: the identity
    assert (key[0, :, 0] == np.iinfo(np.int64).max).all() and (total[0, :, 0] == 0).all()
