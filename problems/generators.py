"""Seeded instance generators: the CLI's built-in instances and the unit tests' data.

* :func:`random_qap` — uniform random QAP in the style of Taillard's ``tai*a`` (Taillard 1991):
  symmetric flow and distance matrices with integer entries uniform in [0, 99] and zero diagonals.
  Options make asymmetric matrices and non-zero diagonals for tests.
* :func:`uniform_tsp` — cities uniform in a 1,000,000 x 1,000,000 square (the DIMACS TSP
  challenge's "E" instances), EUC_2D.
* :func:`clustered_tsp` — the DIMACS "C" instances: n/10 centres uniform in the square, cities
  normally distributed around a random centre with sigma 10^6 / sqrt(n), EUC_2D.

* :func:`asymmetric_tsp` — an ATSP: cities uniform in the same square, the arc ``i -> j`` costs
  the Euclidean distance times a factor drawn for that direction alone, uniform in [1, 1.5),
  rounded to the nearest integer (so ``i -> j`` and ``j -> i`` differ).

Built-in names, accepted wherever an instance is: ``gen:qap:N[:SEED]``, ``gen:tsp:N[:SEED]``
(uniform), ``gen:tsp-clustered:N[:SEED]`` and ``gen:atsp:N[:SEED]``; the seed defaults to 1. Each
problem's formats register its prefixes (:class:`~metaheur.problems.interface.ProblemFormats`).
"""

from __future__ import annotations

import numpy as np

from metaheur.errors import MetaheurError
from metaheur.problems.atsp import ATSP
from metaheur.problems.qap import QAP
from metaheur.problems.tsp import TSP

SQUARE = 1_000_000


def random_qap(n: int, seed: int = 1, *, high: int = 100, symmetric: bool = True,
               zero_diagonal: bool = True, name: str | None = None) -> QAP:
    """Uniform random QAP of size ``n`` with entries in ``[0, high)``."""
    if n < 1:
        raise MetaheurError(f"QAP size must be at least 1, got {n}")
    rng = np.random.default_rng(seed)
    mats = []
    for _ in range(2):
        m = rng.integers(0, high, size=(n, n), dtype=np.int64)
        if symmetric:
            m = np.triu(m, 1) + np.triu(m, 1).T + np.diag(np.diag(m))
        if zero_diagonal:
            np.fill_diagonal(m, 0)
        mats.append(m)
    return QAP(name or f"gen-qap-{n}-s{seed}", mats[0], mats[1], source=f"gen:qap:{n}:{seed}")


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


def generated_size(spec: str, max_n: int) -> tuple[int, int]:
    """``(n, seed)`` of a built-in name ``gen:KIND:N[:SEED]`` (the seed defaults to 1)."""
    parts = spec.split(":")
    usage = f"built-in instances are gen:{parts[1]}:N with an optional :SEED"
    if len(parts) not in (3, 4):
        raise MetaheurError(f"unknown built-in instance {spec!r}: {usage}")
    try:
        n = int(parts[2])
        seed = int(parts[3]) if len(parts) == 4 else 1
    except ValueError:
        raise MetaheurError(f"bad built-in instance {spec!r}: {usage}") from None
    if seed < 0:
        raise MetaheurError(f"bad built-in instance {spec!r}: the seed must be >= 0")
    if n > max_n:
        raise MetaheurError(f"built-in instance {spec!r} is too large")
    return n, seed


def parse_generated(spec: str):
    """The instance named by ``gen:KIND:N[:SEED]`` (through the registered problem whose formats
    generate ``KIND``), or ``None`` when ``spec`` is not such a name."""
    from metaheur.problems.registry import generated

    return generated(spec)
