"""kernels/engine/mh_rng.cuh against its numpy twin metaheur/engine/rng.py, bit for bit, and the basic
distribution of its draws."""

from __future__ import annotations

import numpy as np
import pytest
from kernel_helpers import RNG_KERNEL

from metaheur.engine import load_module
from metaheur.engine import rng as host_rng

EDGE = [0, 1, 2, 3, 2**31 - 1, 2**32, 2**63 - 1, 2**63, 2**64 - 2, 2**64 - 1]


@pytest.fixture(scope="module")
def rng_module(tmp_path_factory):
    path = tmp_path_factory.mktemp("rng") / "rng_test.cu"
    path.write_text(RNG_KERNEL)
    return load_module(str(path), "cpu")


@pytest.fixture(scope="module")
def rng_sim(tmp_path_factory):
    path = tmp_path_factory.mktemp("rng_sim") / "rng_test.cu"
    path.write_text(RNG_KERNEL)
    return load_module(str(path), "cpu", sim=True)


def _grid_of_draws(module, block):
    r = np.random.default_rng(3)
    keys = np.array(EDGE + list(r.integers(0, 2**63, size=6, dtype=np.uint64) * 2 + 1), dtype=np.uint64)
    counters = np.array(EDGE + list(range(4, 40)) + list(r.integers(0, 2**63, size=20, dtype=np.uint64)),
                        dtype=np.uint64)
    m = np.resize(np.array([1, 2, 3, 7, 10, 1000, 65536, 2**31 - 1, 123456789], np.int32), counters.size)
    nk, nc = keys.size, counters.size
    r64 = np.zeros((nk, nc), np.uint64)
    u = np.zeros((nk, nc), np.float64)
    below = np.full((nk, nc), -1, np.int32)
    module.kernel("draws")(nk, block, (keys, counters, nc, m, r64, u, below))
    return keys, counters, m, r64, u, below


def test_kernel_draws_equal_numpy(rng_module):
    keys, counters, m, r64, u, below = _grid_of_draws(rng_module, 1)
    k, c = keys[:, None], counters[None, :]
    assert np.array_equal(r64, host_rng.rand64(k, c))
    assert np.array_equal(u, host_rng.uniform(k, c))  # exact doubles, not approximately
    assert np.array_equal(below, host_rng.below(k, c, m[None, :]))
    assert ((below >= 0) & (below < m[None, :])).all()


def test_sim_mode_draws_are_the_same(rng_module, rng_sim):
    fast = _grid_of_draws(rng_module, 1)
    sim = _grid_of_draws(rng_sim, (7, 2))
    for a, b in zip(fast[3:], sim[3:], strict=True):
        assert np.array_equal(a, b)


def test_stream_keys_equal_numpy(rng_module):
    seeds = np.array([*EDGE, 12345], dtype=np.uint64)
    streams = np.array([*EDGE, 4, 5, 1000], dtype=np.uint64)
    out = np.zeros((seeds.size, streams.size), np.uint64)
    rng_module.kernel("stream_keys")(seeds.size, 1, (seeds, streams, streams.size, out))
    assert np.array_equal(out, host_rng.stream_key(seeds[:, None], streams[None, :]))
    assert np.unique(out).size == out.size  # different (seed, stream) pairs, different keys


def test_known_values_of_splitmix64():
    # SplitMix64 with state 0 (gamma 0x9E3779B97F4A7C15): the first outputs of the reference C code
    assert int(host_rng.rand64(0, 0)) == 0xE220A8397B1DCDAF
    assert int(host_rng.rand64(0, 1)) == 0x6E789E6AA1B965F4
    assert int(host_rng.rand64(0, 2)) == 0x06C45D188009454F


def test_distribution(rng_module):
    count, m = 100_000, 10
    key = int(host_rng.stream_key(2024, 5))
    u = np.zeros(count, np.float64)
    below = np.full(count, -1, np.int32)
    rng_module.kernel("many_uniform")(64, 1, (key, count, m, u, below), threads=2)
    assert np.array_equal(u, host_rng.uniform(key, np.arange(count)))
    assert abs(u.mean() - 0.5) < 0.01
    assert abs(u.var() - 1 / 12) < 0.005
    assert u.min() > 0.0 and u.max() <= 1.0
    assert np.unique(u).size > count - 5
    counts = np.bincount(below, minlength=m)
    assert counts.size == m and (below >= 0).all()  # covers [0, m) and nothing else
    assert (np.abs(counts - count / m) < 0.05 * count / m).all(), counts
    # neighbouring counters are not correlated
    assert abs(np.corrcoef(u[:-1], u[1:])[0, 1]) < 0.02


def test_below_covers_small_and_large_ranges():
    key = host_rng.stream_key(1, 2)
    draws = host_rng.below(key, np.arange(5000), 3)
    assert set(np.unique(draws)) == {0, 1, 2}
    assert (host_rng.below(key, np.arange(1000), 1) == 0).all()
    big = host_rng.below(key, np.arange(20000), 2**31 - 1)
    assert big.min() >= 0 and big.max() < 2**31 - 1 and big.max() > 2**31 * 0.99 and big.min() < 2**31 * 0.01
