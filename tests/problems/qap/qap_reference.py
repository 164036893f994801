"""Numpy references of experiments/kernels/qap/qap_moves.cu (swap deltas of Taillard 1991)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

#: The QAP's separate move kernels: no kernel of the package, loaded by path by the kernel tests
#: and benchmarks (``load_module(QAP_MOVES, device, defines)``).
QAP_MOVES = str(Path(__file__).resolve().parents[3] / "experiments" / "kernels" / "qap" / "qap_moves.cu")


def delta_matrix(a: np.ndarray, b: np.ndarray, p: np.ndarray) -> np.ndarray:
    """All swap deltas of permutation ``p``, vectorised: ``D[r, s]`` for r < s, zero elsewhere.

    Mirrors ``qap_delta_full``: the O(n) formula for every pair at once, through matrix products.
    """
    a = np.asarray(a, dtype=np.int64)
    bp = np.asarray(b, dtype=np.int64)[np.ix_(p, p)]  # bp[x, y] = b[p[x], p[y]]
    t = a.T @ bp  # t[r, s] = sum_k a_kr bp_ks
    u = a @ bp.T  # u[r, s] = sum_k a_rk bp_sk
    c = np.einsum("kr,kr->r", a, bp)
    e = np.einsum("rk,rk->r", a, bp)
    # sum over all k of (a_kr - a_ks)(bp_ks - bp_kr) + (a_rk - a_sk)(bp_sk - bp_rk)
    total = t + t.T - c[:, None] - c[None, :] + u + u.T - e[:, None] - e[None, :]
    ad, bd = np.diagonal(a), np.diagonal(bp)
    adr, ads, bdr, bds = ad[:, None], ad[None, :], bd[:, None], bd[None, :]
    # the k = r and k = s terms of that sum (with r, s broadcast as rows, columns)
    k_r = (adr - a) * (bp - bdr) + (adr - a.T) * (bp.T - bdr)
    k_s = (a.T - ads) * (bds - bp.T) + (a - ads) * (bds - bp)
    exact = (adr - ads) * (bds - bdr) + (a - a.T) * (bp.T - bp)
    return np.triu(total - k_r - k_s + exact, 1)


def delta_pair(a: np.ndarray, b: np.ndarray, p: np.ndarray, r: int, s: int) -> int:
    """One swap delta by the O(n) formula, in plain Python integers (the slowest, clearest oracle)."""
    n = len(p)
    A = lambda i, j: int(a[i][j])  # noqa: E731
    B = lambda i, j: int(b[p[i]][p[j]])  # noqa: E731
    d = (A(r, r) - A(s, s)) * (B(s, s) - B(r, r)) + (A(r, s) - A(s, r)) * (B(s, r) - B(r, s))
    for k in range(n):
        if k not in (r, s):
            d += (A(k, r) - A(k, s)) * (B(k, s) - B(k, r)) + (A(r, k) - A(s, k)) * (B(s, k) - B(r, k))
    return d


def delta_update(a: np.ndarray, b: np.ndarray, p_after: np.ndarray, delta: np.ndarray, r: int, s: int) -> None:
    """Vectorised O(1)-per-pair update of ``delta`` (in place) after swap (r, s); mirrors
    ``qap_delta_update``. ``p_after`` is the permutation after the move."""
    if r == s:
        return
    a = np.asarray(a, dtype=np.int64)
    b = np.asarray(b, dtype=np.int64)
    pr, ps = p_after[r], p_after[s]
    u = a[r] - a[s]
    v = b[ps, p_after] - b[pr, p_after]
    u2 = a[:, r] - a[:, s]
    v2 = b[p_after, ps] - b[p_after, pr]
    upd = (u[:, None] - u[None, :]) * (v[:, None] - v[None, :])
    upd += (u2[:, None] - u2[None, :]) * (v2[:, None] - v2[None, :])
    delta += np.triu(upd, 1)
    # pairs touching r or s: the O(n) formula, vectorised over the partner unit
    for x in (r, s):
        row = _deltas_with(a, b, p_after, x)
        k = np.arange(len(p_after))
        lo, hi = np.minimum(k, x), np.maximum(k, x)
        mask = k != x
        delta[lo[mask], hi[mask]] = row[mask]


def _deltas_with(a: np.ndarray, b: np.ndarray, p: np.ndarray, x: int) -> np.ndarray:
    """Deltas of swapping unit ``x`` with every unit k (entry x is meaningless)."""
    bp = b[np.ix_(p, p)]
    # D(x, k) with r = x, s = k, for all k at once (full sums, then remove the k' in {x, k} terms)
    col = (a[:, [x]] - a) * (bp - bp[:, [x]])  # [k', k] = (a_k'x - a_k'k)(bp_k'k - bp_k'x)
    row = (a[[x], :].T - a.T) * (bp.T - bp[[x], :].T)  # [k', k] = (a_xk' - a_kk')(bp_kk' - bp_xk')
    terms = col + row
    total = terms.sum(axis=0)
    k = np.arange(len(p))
    total -= terms[x, k] + terms[k, k]
    exact = (a[x, x] - a[k, k]) * (bp[k, k] - bp[x, x]) + (a[x, k] - a[k, x]) * (bp[k, x] - bp[x, k])
    return total + exact


def best_move(delta: np.ndarray, p: np.ndarray, tabu: np.ndarray, now: int, cost: int, best: int):
    """``(i, j, delta)`` chosen by ``qap_best_move``: aspired, then non-tabu, then tabu; ties to the
    smallest ``i * n + j``."""
    n = len(p)
    i, j = np.triu_indices(n, 1)
    d = delta[i, j]
    is_tabu = (tabu[i, p[j]] > now) & (tabu[j, p[i]] > now)
    category = np.where(d < best - cost, 0, np.where(is_tabu, 2, 1))
    order = np.lexsort((i * n + j, d, category))
    k = order[0]
    return int(i[k]), int(j[k]), int(d[k])
