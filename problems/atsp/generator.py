"""The ATSP's seeded generator (``gen:atsp:N[:SEED]``): :func:`asymmetric_tsp`, cities uniform in
the TSP generator's square, the arc ``i -> j`` costing the Euclidean distance times a factor drawn
for that direction alone, uniform in [1, 1.5), rounded to the nearest integer (so ``i -> j`` and
``j -> i`` differ)."""

from __future__ import annotations

import numpy as np

from metaheur.errors import MetaheurError
from metaheur.problem.generators import generated_size
from metaheur.problems.atsp.problem import ATSP
from metaheur.problems.tsp.generators import SQUARE


def asymmetric_tsp(n: int, seed: int = 1, *, name: str | None = None) -> ATSP:
    """``n`` cities uniform in the 10^6 square; arc ``i -> j`` costs ``nint(e(i, j) * f_ij)`` with
    ``f_ij`` uniform in [1, 1.5) for each direction apart. The cities are kept for drawing."""
    if n < 3:
        raise MetaheurError(f"an ATSP needs at least 3 cities, got {n}")
    rng = np.random.default_rng(seed)
    coords = rng.integers(0, SQUARE, size=(n, 2)).astype(np.float64)
    factor = rng.uniform(1.0, 1.5, size=(n, n))
    euclid = np.hypot(coords[:, None, 0] - coords[None, :, 0], coords[:, None, 1] - coords[None, :, 1])
    matrix = np.floor(euclid * factor + 0.5).astype(np.int64)
    np.fill_diagonal(matrix, 0)
    return ATSP(name or f"gen-atsp-{n}-s{seed}", matrix, display=coords, source=f"gen:atsp:{n}:{seed}")


def generate(spec: str) -> ATSP:
    """The instance named ``gen:atsp:N[:SEED]``."""
    n, seed = generated_size(spec, max_n=5000)
    return asymmetric_tsp(n, seed, name=f"gen-atsp-{n}-s{seed}")
