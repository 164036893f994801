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
from metaheur.problem.arrays import INT32_MAX, exact_integers
from metaheur.problem.best_known import BestKnown
from metaheur.problem.interface import check_permutation
from metaheur.problem.permutation import PermutationProblem
from metaheur.problems.lop.best_known import lop_best_known
from metaheur.problems.lop.device import DEVICE_CODE

SUM_LIMIT = 2**62
BATCH_ENTRIES = 1 << 22  # k * n * n entries scored at once by evaluate


def absolute_sum(matrix: np.ndarray) -> int:
    """The exact sum of the absolute values of the off-diagonal entries of an int64 matrix, in
    numpy whatever their size: each absolute value (as uint64) is split into its high and low 32
    bits, summed apart (neither sum can wrap below 2^32 entries) and joined as a Python int."""
    off = np.abs(matrix[~np.eye(matrix.shape[0], dtype=bool)]).astype(np.uint64)  # |-2^63| wraps to 2^63
    high, low = (off >> np.uint64(32)).sum(dtype=np.uint64), (off & np.uint64(0xFFFFFFFF)).sum(dtype=np.uint64)
    return (int(high) << 32) + int(low)


def overflow_reason(matrix: np.ndarray) -> str | None:
    """Why sums of ``matrix``'s entries could leave int64 (every value and delta is at most twice the
    off-diagonal absolute sum), or ``None`` when they cannot."""
    total = absolute_sum(matrix)
    if total < SUM_LIMIT:
        return None
    return f"the absolute values of the matrix entries sum to {total}, at least 2**62: values could overflow 64 bits"

class LOP(PermutationProblem):
    """A LOP instance: the n x n int64 matrix ``M``; ``evaluate`` scores orders exactly."""

    kind = "lop"
    title = "linear ordering problem"
    sense = "max"
    moves = ("insert", "swap")
    device_code = DEVICE_CODE
    distance = "displacement"  # an order's view: how far the items moved (Spearman's footrule)

    def __init__(self, matrix, name: str = "lop", source: str | None = None):
        m = exact_integers(matrix, f"{name}: LOP matrix")
        if m.ndim != 2 or m.shape[0] != m.shape[1]:
            raise MetaheurError(f"{name}: the LOP matrix must be square, got shape {m.shape}")
        if m.shape[0] < 2:
            raise MetaheurError(f"{name}: a LOP needs n >= 2")
        reason = overflow_reason(m)
        if reason:
            raise MetaheurError(f"{name}: {reason}")
        m.setflags(write=False)
        self.matrix = m
        super().__init__(name=name, n=int(m.shape[0]), source=source)

    def default_params(self):
        """Memetic islands after Lugo, Segura and Miranda's MA-EDM (2022): 25 members, 25 children a
        generation by the order crossover (OX keeps a segment of one parent and the others' order of
        the rest), each child brought to a local optimum of the insertion neighbourhood
        (Schiavinotto and Stuetzle's LS_f), survivors by the best-non-penalised replacement over
        Spearman's footrule (:attr:`distance`), no restart. Settings: docs/decisions/lop-method.md."""
        from metaheur.islands.params import GAParams, IslandParams
        from metaheur.search.perm_search import PermSearchParams

        return IslandParams(ga=GAParams(population=25, offspring=25, crossover="ox", restart_after=0, ls_budget=0,
                                        replacement="bnp"),
                            perm=PermSearchParams(method="ils", move="insert"))

    def data(self) -> dict:
        """``m`` = M and ``d`` = M - M^T (row-major; int32 when the entries fit)."""
        return {"m": _narrow(self.matrix), "d": _narrow(self.matrix - self.matrix.T)}

    def value_bound(self) -> int:
        """The off-diagonal absolute sum: no value or delta is larger in magnitude."""
        return absolute_sum(self.matrix)

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


    @classmethod
    def describe_lines(cls, props: dict) -> list[str]:
        """``metaheur info``'s lines for :meth:`properties`."""
        return [f"matrix      {'symmetric' if props['symmetric'] else 'asymmetric'}, entries "
                f"{props['matrix_min']}..{props['matrix_max']}, {props['zero_entries_percent']} % zero off the "
                "diagonal",
                f"bound       {props['upper_bound']} (every pair's larger entry)"]

    picture = "ordered matrix"

    def draw(self, ax, perm) -> None:
        """The matrix with rows and columns in the order ``perm`` (log scale): the value is the
        sum of the entries above the diagonal."""
        p = self.check_solution(perm)
        shown = np.log1p(np.maximum(self.matrix[np.ix_(p, p)], 0).astype(np.float64))
        np.fill_diagonal(shown, 0.0)
        ax.imshow(shown, cmap="viridis", interpolation="nearest")
        ax.set_title("the matrix in this order (log scale)")
        ax.set_xticks([])
        ax.set_yticks([])

    def best_known(self) -> BestKnown | None:
        """The LOLIB table's entry (problems/lop/best_known.py) of this name and size, or None."""
        return lop_best_known(self.name, self.n)


def _narrow(a: np.ndarray) -> np.ndarray:
    """``a`` as int32 when every entry fits, else int64."""
    if a.size and max(int(a.max()), -int(a.min())) <= INT32_MAX:
        return a.astype(np.int32)
    return a
