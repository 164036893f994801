"""Numpy references of kernels/tsp/tsp_moves.cu: move deltas, vectorised, and moves applied literally.

``dist(i, j)`` is any exact vectorised distance function (``TSP.dist``). Invalid move indices hold
``INVALID`` exactly as the kernels write them.
"""

from __future__ import annotations

import numpy as np

INVALID = np.iinfo(np.int64).max


def apply_2opt(tour: np.ndarray, i: int, j: int) -> np.ndarray:
    """The tour after 2-opt move (i, j): ``t[i+1 .. j]`` reversed."""
    out = np.array(tour, copy=True)
    out[i + 1 : j + 1] = out[i + 1 : j + 1][::-1]
    return out


def apply_oropt(tour: np.ndarray, i: int, seg_len: int, j: int, rev: int) -> np.ndarray:
    """The tour after Or-opt move (i, L, j, rev): segment ``t[i .. i+L-1]`` (cyclic) moved between
    ``t[j]`` and ``t[j+1]``, reversed when ``rev``. The result is a rotation-equivalent tour."""
    n = len(tour)
    seg_pos = [(i + k) % n for k in range(seg_len)]
    seg = [int(tour[p]) for p in seg_pos]
    after = int(tour[j])
    rest = [int(c) for p, c in enumerate(tour) if p not in seg_pos]
    at = rest.index(after)
    insert = seg[::-1] if rev else seg
    return np.array(rest[: at + 1] + insert + rest[at + 1 :], dtype=np.int64)


def two_opt_full(dist, tour: np.ndarray) -> np.ndarray:
    """n x n deltas of every 2-opt move (i, j) (``tsp_2opt_full`` with write_all)."""
    t = np.asarray(tour, dtype=np.int64)
    n = len(t)
    i, j = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
    a, b, c, d = t[i], t[(i + 1) % n], t[j], t[(j + 1) % n]
    delta = dist(a, c) + dist(b, d) - dist(a, b) - dist(c, d)
    valid = (j >= i + 2) & ~((i == 0) & (j == n - 1))
    return np.where(valid, delta, INVALID)


def _oropt_valid(n: int, i, seg_len, j):
    off = (j - i + 1) % n
    return (off > seg_len) & (n >= seg_len + 3)


def _oropt_delta(dist, t, i, seg_len, j, rev):
    n = len(t)
    prev, s0 = t[(i - 1) % n], t[i]
    sl, nxt = t[(i + seg_len - 1) % n], t[(i + seg_len) % n]
    tj, tj1 = t[j % n], t[(j + 1) % n]
    removed = dist(prev, s0) + dist(sl, nxt) + dist(tj, tj1)
    fwd = dist(tj, s0) + dist(sl, tj1)
    bwd = dist(tj, sl) + dist(s0, tj1)
    return dist(prev, nxt) + np.where(rev == 1, bwd, fwd) - removed


def or_opt_full(dist, tour: np.ndarray) -> np.ndarray:
    """n x 3 x n x 2 deltas of every Or-opt move (i, L, j, rev) (``tsp_oropt_full`` with write_all)."""
    t = np.asarray(tour, dtype=np.int64)
    n = len(t)
    i, seg, j, rev = np.meshgrid(np.arange(n), np.arange(1, 4), np.arange(n), np.arange(2), indexing="ij")
    valid = _oropt_valid(n, i, seg, j) & ((rev == 0) | (seg > 1))
    return np.where(valid, _oropt_delta(dist, t, i, seg, j, rev), INVALID)


def two_opt_cand(dist, tour: np.ndarray, neigh: np.ndarray) -> np.ndarray:
    """n x k x 2 deltas of the candidate 2-opt moves (``tsp_2opt_cand`` with write_all)."""
    t = np.asarray(tour, dtype=np.int64)
    n, k = len(t), neigh.shape[1]
    pos = np.empty(n, dtype=np.int64)
    pos[t] = np.arange(n)
    i = np.arange(n)[:, None]
    a = t[i]
    c = neigh[a, np.arange(k)[None, :]]
    j = pos[c]
    out = np.empty((n, k, 2), dtype=np.int64)
    for v, step in ((0, 1), (1, -1)):
        b, d = t[(i + step) % n], t[(j + step) % n]
        delta = dist(a, c) + dist(b, d) - dist(a, b) - dist(c, d)
        out[:, :, v] = np.where((c != a) & (c != b) & (d != a), delta, INVALID)
    return out


def or_opt_cand(dist, tour: np.ndarray, neigh: np.ndarray) -> np.ndarray:
    """n x 3 x k x 4 deltas of the candidate Or-opt moves (``tsp_oropt_cand`` with write_all)."""
    t = np.asarray(tour, dtype=np.int64)
    n, k = len(t), neigh.shape[1]
    pos = np.empty(n, dtype=np.int64)
    pos[t] = np.arange(n)
    i, seg, q = np.meshgrid(np.arange(n), np.arange(1, 4), np.arange(k), indexing="ij")
    out = np.empty((n, 3, k, 4), dtype=np.int64)
    for v in range(4):
        end_city = t[i] if v < 2 else t[(i + seg - 1) % n]
        pc = pos[neigh[end_city, q]]
        j = pc if v in (0, 3) else (pc - 1) % n
        rev = np.full_like(j, 1 if v in (1, 3) else 0)
        valid = _oropt_valid(n, i, seg, j) & ((rev == 0) | (seg > 1))
        out[..., v] = np.where(valid, _oropt_delta(dist, t, i, seg, j, rev), INVALID)
    return out
