"""The TSP's seeded generators (``gen:tsp:N[:SEED]``, ``gen:tsp-clustered:N[:SEED]``):

* :func:`uniform_tsp` — cities uniform in a 1,000,000 x 1,000,000 square (the DIMACS TSP
  challenge's "E" instances), EUC_2D.
* :func:`clustered_tsp` — the DIMACS "C" instances: n/10 centres uniform in the square, cities
  normally distributed around a random centre with sigma 10^6 / sqrt(n), EUC_2D.
"""

from __future__ import annotations

import numpy as np

from metaheur.errors import MetaheurError
from metaheur.problem.generators import generated_size
from metaheur.problems.tsp.problem import TSP

SQUARE = 1_000_000


def uniform_tsp(n: int, seed: int = 1, *, name: str | None = None) -> TSP:
    """``n`` cities with integer coordinates uniform in the 10^6 square (EUC_2D)."""
    if n < 3:
        raise MetaheurError(f"a TSP needs at least 3 cities, got {n}")
    rng = np.random.default_rng(seed)
    coords = rng.integers(0, SQUARE, size=(n, 2)).astype(np.float64)
    return TSP(name or f"gen-tsp-{n}-s{seed}", "EUC_2D", coords=coords, source=f"gen:tsp:{n}:{seed}")


def clustered_tsp(n: int, seed: int = 1, *, name: str | None = None) -> TSP:
    """``n`` cities in n/10 normal clusters (DIMACS "C" style), integer coordinates, EUC_2D."""
    if n < 3:
        raise MetaheurError(f"a TSP needs at least 3 cities, got {n}")
    rng = np.random.default_rng(seed)
    centres = rng.uniform(0, SQUARE, size=(max(1, n // 10), 2))
    pick = rng.integers(0, centres.shape[0], size=n)
    coords = np.rint(centres[pick] + rng.normal(0.0, SQUARE / np.sqrt(n), size=(n, 2)))
    return TSP(name or f"gen-tsp-clustered-{n}-s{seed}", "EUC_2D", coords=coords,
               source=f"gen:tsp-clustered:{n}:{seed}")


def generate(spec: str) -> TSP:
    """``gen:tsp:N[:SEED]`` (``tsp-uniform`` alike) and ``gen:tsp-clustered:N[:SEED]``."""
    prefix = spec.split(":")[1]
    n, seed = generated_size(spec, max_n=1_000_000)
    make = clustered_tsp if prefix == "tsp-clustered" else uniform_tsp
    return make(n, seed, name=f"gen-{prefix}-{n}-s{seed}")
