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
from metaheur.problems.best_known import BestKnown
from metaheur.problems.lop_best_known import lop_best_known
from metaheur.problems.permutation import PermutationProblem
from metaheur.problems.qap import INT32_MAX, check_permutation

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

# The device code (docs/problems.md, the device contract): ``m`` is M and ``d`` is D = M - M^T,
# both row-major, int32 when their entries fit; values and deltas in the problem's own sense.
DEVICE_CODE = r"""
/* The value: sum over i < j of M[p_i][p_j]; one thread, O(n^2). */
__device__ ll cost(const Data &d, const int *perm) {
  ll v = 0;
  for (int i = 0; i + 1 < d.n; ++i) {
    const auto *row = d.m + (ll)perm[i] * d.n;
    for (int j = i + 1; j < d.n; ++j) v += row[perm[j]];
  }
  return v;
}

/* Swap positions i < j (items a, b): the pair (a, b) turns, and each item c between changes
 * sides with both: -D[a][b] + sum_c (D[b][c] - D[a][c]). */
__device__ ll swap_delta(const Data &d, const int *perm, const ll *cache, int i, int j) {
  const auto *ra = d.d + (ll)perm[i] * d.n, *rb = d.d + (ll)perm[j] * d.n;
  ll v = -(ll)ra[perm[j]];
  for (int k = i + 1; k < j; ++k) v += (ll)rb[perm[k]] - (ll)ra[perm[k]];
  return v;
}

/* Move the item x at position i to position j: x passes the items between, each pair turns:
 * -sum D[x][p_k] over k in (i, j] (moving right), +sum D[x][p_k] over k in [j, i) (left). */
__device__ ll insert_delta(const Data &d, const int *perm, const ll *cache, int i, int j) {
  const auto *rx = d.d + (ll)perm[i] * d.n;
  ll v = 0;
  if (i < j) for (int k = i + 1; k <= j; ++k) v -= rx[perm[k]];
  else for (int k = j; k < i; ++k) v += rx[perm[k]];
  return v;
}

/* In place, a[k] <- a[0] + ... + a[k-1] for k < m (exclusive prefix sums), every thread of the
 * block together (each scans a contiguous chunk; the chunks' totals are added after a barrier). */
__device__ void lop_block_exclusive_scan(ll *a, int m) {
  __shared__ ll s_total[MH_MAX_BLOCK];
  const int t = mh_tid(), nt = mh_nthreads(), chunk = (m + nt - 1) / nt;
  const int lo = mh_imin(m, t * chunk), hi = mh_imin(m, lo + chunk);
  ll run = 0;
  for (int k = lo; k < hi; ++k) { const ll x = a[k]; a[k] = run; run += x; }
  s_total[t] = run;
  __syncthreads();
  ll offset = 0;
  for (int u = 0; u < t; ++u) offset += s_total[u];
  for (int k = lo; k < hi; ++k) a[k] += offset;
  __syncthreads();
}

/* out[j] = insert_delta(i, j) for every j in O(n): one thread keeps a running sum each way from i;
 * a block of threads uses, with t_k = D[x][p_k] (t_i = 0) and E its exclusive prefix sums,
 * out[j] = E(i) - E(j) for j <= i and E(i) - E(j) - t_j for j > i. */
__device__ void insert_row(const Data &d, const int *perm, const ll *cache, int i, ll *out, ll *work) {
  const auto *rx = d.d + (ll)perm[i] * d.n;
  const int t = mh_tid(), nt = mh_nthreads();
  if (nt == 1) { /* one thread (the CPU build): the two running sums, outwards from i */
    ll v = 0;
    out[i] = 0;
    for (int k = i + 1; k < d.n; ++k) out[k] = v -= rx[perm[k]];
    v = 0;
    for (int k = i - 1; k >= 0; --k) out[k] = v += rx[perm[k]];
    return;
  }
  for (int k = t; k < d.n; k += nt) out[k] = k == i ? 0 : (ll)rx[perm[k]];
  __syncthreads();
  lop_block_exclusive_scan(out, d.n);
  const ll at_i = out[i];
  __syncthreads();
  for (int k = t; k < d.n; k += nt) out[k] = at_i - out[k] - (k > i ? (ll)rx[perm[k]] : 0);
  __syncthreads();
}

/* out[k] = value of the partial order seq[0..len) with elem inserted at position k, k = 0..len:
 * the partial order's own value, plus elem's pairs: sum M[elem][s] with elem first, each step
 * right past seq_k adding -D[elem][seq_k]. */
__device__ void partial_insert_row(const Data &d, const int *seq, int len, int elem, ll *out, ll *work) {
  const auto *me = d.m + (ll)elem * d.n;
  const auto *de = d.d + (ll)elem * d.n;
  const int t = mh_tid(), nt = mh_nthreads();
  ll part = 0;
  for (int s = t; s < len; s += nt) {
    const auto *row = d.m + (ll)seq[s] * d.n;
    part += me[seq[s]];
    for (int u = s + 1; u < len; ++u) part += row[seq[u]];
  }
  const ll base = mh_block_sum(part);
  for (int k = t; k <= len; k += nt) out[k] = k < len ? -(ll)de[seq[k]] : 0;
  __syncthreads();
  lop_block_exclusive_scan(out, len + 1);
  for (int k = t; k <= len; k += nt) out[k] += base;
  __syncthreads();
}
"""


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
        """The LOLIB table's entry (problems/lop_best_known.py) of this name and size, or None."""
        return lop_best_known(self.name, self.n)


def _narrow(a: np.ndarray) -> np.ndarray:
    """``a`` as int32 when every entry fits, else int64."""
    if a.size and max(int(a.max()), -int(a.min())) <= INT32_MAX:
        return a.astype(np.int32)
    return a


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


# The file formats (problems/lop_files.py) build LOP objects, so they are attached after the class.
from metaheur.problems import lop_files  # noqa: E402, F401  (sets LOP.formats)
