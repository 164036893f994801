"""Space-filling-curve start tours (Platzman and Bartholdi, "Spacefilling curves and the planar
travelling salesman problem", J. ACM 36, 1989): the cities in the order in which a Hilbert curve
over their bounding square visits them. Each tour sees the plane under its own random rotation
and shift, so the tours differ from each other while each is a fair tour (within a small factor
of the optimum on uniform instances, where a random tour is O(sqrt n) times too long): a descent
from them needs few, local, moves."""

from __future__ import annotations

import numpy as np

CURVE_ORDER = 16  # the curve's grid is 2^16 x 2^16 cells


def hilbert_index(x: np.ndarray, y: np.ndarray, order: int = CURVE_ORDER) -> np.ndarray:
    """Index along the Hilbert curve of order ``order`` of the integer cells (x, y), 0 <= x, y < 2^order
    (the iterative conversion of Warren, "Hacker's Delight", 2nd ed., section 16-2)."""
    x, y = np.array(x, dtype=np.int64), np.array(y, dtype=np.int64)
    d = np.zeros(np.broadcast(x, y).shape, dtype=np.int64)
    side = np.int64(1) << order
    s = side >> 1
    while s > 0:
        rx, ry = (x & s) > 0, (y & s) > 0
        d += s * s * ((3 * rx.astype(np.int64)) ^ ry.astype(np.int64))
        flip = ~ry & rx
        x, y = np.where(flip, side - 1 - x, x), np.where(flip, side - 1 - y, y)
        swap = ~ry
        x, y = np.where(swap, y, x), np.where(swap, x, y)
        s >>= 1
    return d


def curve_tours(coords: np.ndarray, count: int, rng: np.random.Generator) -> np.ndarray:
    """``count`` Hilbert-curve tours of the cities at ``coords`` (n x 2), each under a random
    rotation of the plane about the cities' centre and a random shift of the curve's square by
    up to half its side (count x n int64)."""
    c = np.asarray(coords, dtype=np.float64)
    c = c - c.mean(axis=0)
    cells = (1 << CURVE_ORDER) - 1
    out = np.empty((count, len(c)), dtype=np.int64)
    for s in range(count):
        angle = rng.uniform(0.0, 2.0 * np.pi)
        rot = c @ np.array([[np.cos(angle), np.sin(angle)], [-np.sin(angle), np.cos(angle)]])
        lo, side = rot.min(axis=0), max(float(np.ptp(rot, axis=0).max()), 1e-9)
        shifted = (rot - lo) / side + rng.uniform(0.0, 0.5, size=2)  # in [0, 1.5)^2
        cell = np.minimum((shifted / 1.5 * cells).astype(np.int64), cells)
        out[s] = np.argsort(hilbert_index(cell[:, 0], cell[:, 1]), kind="stable")
    return out
