"""The linear ordering problem (LOP): order n items so that the sum of ``M[p_i][p_j]`` over every
pair placed in that order (``i < j``) is largest (Marti and Reinelt, "The Linear Ordering
Problem", Springer 2011). A maximisation problem; the diagonal of ``M`` never counts.

An order ``p`` lists the items first to last (0-based here, 1-based in files). With
``D = M - M^T`` and ``S`` the sum of the off-diagonal entries, the value is
``(S + sum_{i<j} D[p_i][p_j]) / 2``, and moving an item past others changes it by a sum of ``D``
entries: what the insertion neighbourhood's O(n) row delta uses (Schiavinotto and Stuetzle,
"The linear ordering problem: instances, search space analysis and algorithms", J. Math. Model.
Algorithms 3, 2004).
"""

from __future__ import annotations

import numpy as np

from metaheur.errors import MetaheurError
from metaheur.problems.arrays import exact_integers
from metaheur.problems.fingerprint import fingerprint
from metaheur.problems.qap import check_permutation

SUM_LIMIT = 2**62
BATCH_ENTRIES = 1 << 22  # k * n * n entries scored at once by evaluate


def absolute_sum(matrix: np.ndarray) -> int:
    """The exact sum of the absolute values of the off-diagonal entries of an int64 matrix."""
    rough = float(np.abs(matrix.astype(np.float64)).sum() - np.abs(np.diagonal(matrix).astype(np.float64)).sum())
    if rough < 2.0**60:
        return int(np.abs(matrix).sum() - np.abs(np.diagonal(matrix)).sum())
    off = matrix[~np.eye(matrix.shape[0], dtype=bool)]
    return sum(abs(int(x)) for x in off)


def overflow_reason(matrix: np.ndarray) -> str | None:
    """Why sums of ``matrix``'s entries could leave int64 (every value and delta is at most twice the
    off-diagonal absolute sum), or ``None`` when they cannot."""
    total = absolute_sum(matrix)
    if total < SUM_LIMIT:
        return None
    return f"the absolute values of the matrix entries sum to {total}, at least 2**62: values could overflow 64 bits"


class LOP:
    """A LOP instance: the n x n int64 matrix ``M``; ``evaluate`` scores orders exactly."""

    kind = "lop"
    title = "linear ordering problem"
    sense = "max"

    def __init__(self, matrix, name: str = "lop", source: str | None = None):
        m = exact_integers(matrix, f"{name}: LOP matrix")
        if m.ndim != 2 or m.shape[0] != m.shape[1]:
            raise MetaheurError(f"{name}: the LOP matrix must be square, got shape {m.shape}")
        if m.shape[0] < 1:
            raise MetaheurError(f"{name}: a LOP needs n >= 1")
        reason = overflow_reason(m)
        if reason:
            raise MetaheurError(f"{name}: {reason}")
        m.setflags(write=False)
        self.matrix = m
        self.name = name
        self.n = int(m.shape[0])
        self.source = source

    def fingerprint(self) -> str:
        """A fingerprint of the instance's data (name, size and matrix)."""
        return fingerprint(f"{self.kind}:{self.name}:{self.n}", (self.matrix,))

    def check_solution(self, perm, where: str | None = None) -> np.ndarray:
        """``perm`` as a 0-based int64 order, or a :class:`MetaheurError` saying why it is not one."""
        return check_permutation(perm, self.n, where)

    def evaluate(self, perms) -> np.ndarray:
        """Exact values ``sum_{i<j} M[p_i][p_j]`` of a k x n batch of orders (int64)."""
        p = np.asarray(perms, dtype=np.int64)
        if p.ndim == 1:
            p = p[None, :]
        if p.ndim != 2 or p.shape[1] != self.n:
            raise MetaheurError(f"{self.name}: expected orders of {self.n} items, got shape {p.shape}")
        upper = np.triu(np.ones((self.n, self.n), dtype=bool), 1)
        out = np.empty(p.shape[0], dtype=np.int64)
        step = max(1, BATCH_ENTRIES // (self.n * self.n))
        for start in range(0, p.shape[0], step):
            chunk = p[start : start + step]
            permuted = self.matrix[chunk[:, :, None], chunk[:, None, :]]
            out[start : start + step] = np.where(upper, permuted, 0).sum(axis=(1, 2), dtype=np.int64)
        return out

    def value(self, perm) -> int:
        """The exact value of one order, recomputed from scratch."""
        return int(self.evaluate(self.check_solution(perm)[None, :])[0])

    def properties(self) -> dict:
        """Matrix properties shown by ``metaheur info``."""
        m = self.matrix
        off = m[~np.eye(self.n, dtype=bool)]
        return {
            "matrix_min": int(m.min()),
            "matrix_max": int(m.max()),
            "zero_entries_percent": round(100.0 * float(np.count_nonzero(off == 0)) / max(off.size, 1), 1),
            "symmetric": bool(np.array_equal(m, m.T)),
            # an order collects one entry of each pair, at best the larger one
            "upper_bound": int(np.maximum(m, m.T)[np.triu_indices(self.n, 1)].sum()),
        }


def random_lop(n: int, seed: int = 1, *, agree: float = 0.8, name: str | None = None) -> LOP:
    """An xLOLIB-like random LOP (our own generator, after the input-output tables behind LOLIB:
    sparse, heavy-tailed entries). A hidden order is drawn; for every pair of items one entry is
    zero with probability 0.3 each, the others are ``floor(exp(N(3, 1.5^2)))``; the larger of the
    pair's two entries goes to the direction of the hidden order with probability ``agree``, the
    other way otherwise (noise). The diagonal is zero. Seeded: the same ``(n, seed)`` gives the
    same matrix."""
    if n < 1:
        raise MetaheurError(f"LOP size must be at least 1, got {n}")
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
