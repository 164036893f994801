"""The LOP's seeded generator (``gen:lop:N[:SEED]``): :func:`random_lop`, xLOLIB-like instances."""

from __future__ import annotations

import numpy as np

from metaheur.errors import MetaheurError
from metaheur.problems.lop.problem import LOP


def random_lop(n: int, seed: int = 1, *, agree: float = 0.8, name: str | None = None) -> LOP:
    """An xLOLIB-like random LOP (our own generator, after the input-output tables behind LOLIB:
    sparse, heavy-tailed entries). A hidden order is drawn; for every pair of items one entry is
    zero with probability 0.3 each, the others are ``floor(exp(N(3, 1.5^2)))``; the larger of the
    pair's two entries goes to the direction of the hidden order with probability ``agree``, the
    other way otherwise (noise). The diagonal is zero. Seeded: the same ``(n, seed)`` gives the
    same matrix."""
    if n < 2:
        raise MetaheurError(f"LOP size must be at least 2, got {n}")
    if not 0.0 <= agree <= 1.0:
        raise MetaheurError(f"agree must be in [0, 1], got {agree}")
    rng = np.random.default_rng(seed)
    hidden = rng.permutation(n)
    entries = np.floor(np.exp(rng.normal(3.0, 1.5, size=(2, n, n)))).astype(np.int64)
    entries[rng.random(size=(2, n, n)) < 0.3] = 0
    high, low = np.maximum(entries[0], entries[1]), np.minimum(entries[0], entries[1])
    forward = rng.random(size=(n, n)) < agree
    rank = np.empty(n, dtype=np.int64)
    rank[hidden] = np.arange(n)
    before = rank[:, None] < rank[None, :]  # item a comes before item b in the hidden order
    upper = np.triu(np.ones((n, n), dtype=bool), 1)
    matrix = np.zeros((n, n), dtype=np.int64)
    a, b = np.nonzero(upper)
    # for the pair (a, b), orient "first" as the hidden order's earlier item
    first = np.where(before[a, b], a, b)
    second = np.where(before[a, b], b, a)
    fwd = forward[a, b]
    matrix[first, second] = np.where(fwd, high[a, b], low[a, b])
    matrix[second, first] = np.where(fwd, low[a, b], high[a, b])
    return LOP(matrix, name or f"gen-lop-{n}-s{seed}", source=f"gen:lop:{n}:{seed}")
