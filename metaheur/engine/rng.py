"""The kernels' counter-based generator (kernels/engine/mh_rng.cuh) in numpy, bit for bit.

Draw ``k`` of stream ``key`` is SplitMix64 (Steele, Lea and Flood 2014) evaluated at state
``key + (k + 1) * gamma``; a stream's key is derived from ``(seed, stream id)``.
"""

from __future__ import annotations

import numpy as np

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_STREAM = np.uint64(0x632BE59BD9B4E019)


def mix64(z) -> np.ndarray:
    """SplitMix64's finaliser on uint64 values (wrapping arithmetic)."""
    z = np.asarray(z, dtype=np.uint64)
    with np.errstate(over="ignore"):
        z = (z ^ (z >> np.uint64(30))) * _M1
        z = (z ^ (z >> np.uint64(27))) * _M2
    return z ^ (z >> np.uint64(31))


def stream_key(seed, stream) -> np.ndarray:
    """Key of stream ``stream`` under ``seed`` (``mh_stream_key``)."""
    with np.errstate(over="ignore"):
        inner = mix64(np.asarray(stream, dtype=np.uint64) + _STREAM)
    return mix64(np.asarray(seed, dtype=np.uint64) ^ inner)


def rand64(key, counter) -> np.ndarray:
    """Draw ``counter`` of stream ``key`` (``mh_rand64``)."""
    with np.errstate(over="ignore"):
        state = np.asarray(key, dtype=np.uint64) + (np.asarray(counter, dtype=np.uint64) + np.uint64(1)) * _GOLDEN
    return mix64(state)


def uniform(key, counter) -> np.ndarray:
    """Uniform doubles in (0, 1] (``mh_uniform``)."""
    return ((rand64(key, counter) >> np.uint64(11)) + np.uint64(1)).astype(np.float64) * (1.0 / 9007199254740992.0)


def below(key, counter, m) -> np.ndarray:
    """Integers in ``[0, m)`` (``mh_below``)."""
    high = rand64(key, counter) >> np.uint64(32)
    with np.errstate(over="ignore"):
        return ((high * np.asarray(m, dtype=np.uint64)) >> np.uint64(32)).astype(np.int64)
