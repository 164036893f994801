"""Taillard's flow shop generator (Taillard 1993, "Benchmarks for basic scheduling problems").

The random numbers are Lehmer's ``X <- 16807 X mod (2^31 - 1)`` (Park and Miller's minimal
standard) computed with Schrage's method; each time is ``1 + floor(X / (2^31 - 1) * 99)``, uniform
in [1, 99], drawn machine by machine and, on each machine, job by job. ta001-ta120 are this
generator run from the time seeds of his paper (:mod:`metaheur.problems.pfsp.best_known`).
"""

from __future__ import annotations

import numpy as np

from metaheur.errors import MetaheurError
from metaheur.problems.pfsp.best_known import TAILLARD

MODULUS = 2**31 - 1
_A, _Q, _R = 16807, 127773, 2836  # Schrage: MODULUS = _A * _Q + _R

TAILLARD_SEEDS = {row[0]: row[1:4] for row in TAILLARD}  # name -> (n, m, time seed)


def lehmer_uniform(seed: int, count: int, low: int, high: int) -> tuple[np.ndarray, int]:
    """``count`` integers uniform in ``[low, high]`` from Taillard's generator, and the next seed."""
    out = np.empty(count, dtype=np.int64)
    x = seed
    span = high - low + 1
    for k in range(count):
        hi, lo = divmod(x, _Q)
        x = _A * lo - _R * hi
        if x < 0:
            x += MODULUS
        out[k] = low + int(x / MODULUS * span)
    return out, x


def taillard_times(n: int, m: int, seed: int) -> np.ndarray:
    """The m x n processing times (machine by machine) of Taillard's generator from ``seed``."""
    if not 1 <= seed < MODULUS:
        raise MetaheurError(f"a Taillard time seed must be in 1..{MODULUS - 1}, got {seed}")
    if n < 1 or m < 1:
        raise MetaheurError(f"a flow shop needs n >= 1 jobs and m >= 1 machines, got n = {n}, m = {m}")
    values, _ = lehmer_uniform(seed, n * m, 1, 99)
    return values.reshape(m, n)


def taillard_instance_times(name: str) -> np.ndarray:
    """The processing times of Taillard's instance ``name`` (ta001..ta120), m x n."""
    key = name.lower()
    if key not in TAILLARD_SEEDS:
        raise MetaheurError(f"unknown Taillard instance {name!r}: ta001..ta120")
    n, m, seed = TAILLARD_SEEDS[key]
    return taillard_times(n, m, seed)
