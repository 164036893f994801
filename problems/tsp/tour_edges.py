"""Edge distances between tours, for the distance-aware replacement of memetic TSP islands.

Each tour's undirected edges are integer keys (min(a, b) * n + max(a, b): exact, no collisions),
computed once a tour. The distance of tours x and y, the edges of x missing from y, is half the
size of the symmetric difference of their edge sets, and that equals the symmetric difference of
D_x = E_x xor R and D_y = E_y xor R for any edge set R. With R the edges most of the tours share,
each D is small, so |D_x and D_y| for every pair comes from the few tours that hold each edge of
D (a vectorised count over those pairs) rather than from a set intersection per pair."""

from __future__ import annotations

import numpy as np

PAIR_CHUNK = 1 << 24  # (tour, tour) pairs counted at a time


def edge_keys(tours: np.ndarray) -> np.ndarray:
    """S x n: the keys of each tour's n undirected edges."""
    t = np.atleast_2d(np.asarray(tours, dtype=np.int64))
    n = t.shape[1]
    b = np.roll(t, -1, axis=1)
    return np.minimum(t, b) * n + np.maximum(t, b)


def missing_edges(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """|a| x |b|: edges of tour i of ``a`` missing from tour j of ``b`` (``edge_keys`` rows of
    tours of n >= 3 cities)."""
    na, nb = len(a), len(b)
    keys = np.concatenate([a, b])
    total = na + nb
    edges, inverse, holders = np.unique(keys.ravel(), return_inverse=True, return_counts=True)
    tour_of = np.repeat(np.arange(total), keys.shape[1])
    shared = holders * 2 > total  # R: edges most tours hold
    # D entries (tour, edge): a tour's edges outside R, and the edges of R it lacks
    own = ~shared[inverse]
    has = np.zeros((total, int(shared.sum())), dtype=bool)
    column = np.cumsum(shared) - 1
    has[tour_of[~own], column[inverse[~own]]] = True
    lack_tour, lack_col = np.nonzero(~has)
    item = np.concatenate([inverse[own], len(edges) + lack_col])
    tour = np.concatenate([tour_of[own], lack_tour])
    size = np.bincount(tour, minlength=total)  # |D| of each tour
    inter = _pair_counts(item, tour, na, nb)
    return (size[:na, None] + size[None, na:] - 2 * inter) // 2


def _pair_counts(item: np.ndarray, tour: np.ndarray, na: int, nb: int) -> np.ndarray:
    """na x nb: for tours i < na and na + j, the items both hold (entries (item, tour))."""
    in_a = tour < na
    a_item, a_tour = item[in_a], tour[in_a]
    order = np.argsort(item[~in_a], kind="stable")
    b_item, b_tour = item[~in_a][order], tour[~in_a][order] - na
    groups = int(item.max()) + 1 if item.size else 0
    b_count = np.bincount(b_item, minlength=groups)
    b_start = np.cumsum(b_count) - b_count
    reps = b_count[a_item]
    out = np.zeros(na * nb, dtype=np.int64)
    ends = np.cumsum(reps)
    lo = 0
    while lo < len(a_item):
        hi = max(lo + 1, int(np.searchsorted(ends, (ends[lo - 1] if lo else 0) + PAIR_CHUNK, side="right")))
        rep = reps[lo:hi]
        count = int(rep.sum())
        first = np.repeat(b_start[a_item[lo:hi]], rep)
        within = np.arange(count) - np.repeat(np.cumsum(rep) - rep, rep)
        out += np.bincount(np.repeat(a_tour[lo:hi], rep) * nb + b_tour[first + within], minlength=na * nb)
        lo = hi
    return out.reshape(na, nb)
