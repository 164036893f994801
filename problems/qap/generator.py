"""The QAP's seeded generator (``gen:qap:N[:SEED]``): :func:`random_qap`, uniform random instances
in the style of Taillard's ``tai*a`` (Taillard 1991): symmetric flow and distance matrices with
integer entries uniform in [0, 99] and zero diagonals. Options make asymmetric matrices and
non-zero diagonals for tests."""

from __future__ import annotations

import numpy as np

from metaheur.errors import MetaheurError
from metaheur.problem.generators import generated_size
from metaheur.problems.qap.problem import QAP


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


def generate(spec: str) -> QAP:
    """The instance named ``gen:qap:N[:SEED]``."""
    n, seed = generated_size(spec, max_n=5000)
    return random_qap(n, seed, name=f"gen-qap-{n}-s{seed}")
