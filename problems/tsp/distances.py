"""TSPLIB distance functions with TSPLIB's exact rounding (Reinelt, TSPLIB95 documentation, sec. 2).

``nint(x)`` is ``floor(x + 0.5)`` (the C idiom ``(int)(x + 0.5)``), not round-half-even. Every
function takes coordinate arrays and index arrays ``i``, ``j`` and returns int64 distances, so that
nothing bigger than the pairs asked for is ever built. Square roots are IEEE-exact in numpy and in
C; the kernels are compiled without floating-point contraction so that they agree bit for bit.
"""

from __future__ import annotations

import math

import numpy as np

GEO_PI = 3.141592  # TSPLIB's value, not math.pi
GEO_RADIUS = 6378.388

#: Coordinate-based EDGE_WEIGHT_TYPEs we compute (2-D). EXPLICIT is handled by a matrix.
COORD_TYPES = ("EUC_2D", "CEIL_2D", "ATT", "GEO", "MAN_2D", "MAX_2D")
#: Types TSPLIB defines that we do not support (a clear error names them).
UNSUPPORTED_TYPES = ("EUC_3D", "MAN_3D", "MAX_3D", "XRAY1", "XRAY2", "SPECIAL")


def nint(x: np.ndarray) -> np.ndarray:
    """TSPLIB's nearest integer: ``floor(x + 0.5)``."""
    return np.floor(np.asarray(x, dtype=np.float64) + 0.5).astype(np.int64)


def geo_radians(coords: np.ndarray) -> np.ndarray:
    """Latitude/longitude in radians from TSPLIB's DDD.MM coordinates (degrees truncated, .MM minutes)."""
    out = np.empty_like(coords, dtype=np.float64)
    for idx, value in np.ndenumerate(coords):
        degrees = math.trunc(value)
        minutes = value - degrees
        out[idx] = GEO_PI * (degrees + 5.0 * minutes / 3.0) / 180.0
    return out


def geo_distance(lat1: float, lon1: float, lat2: float, lon2: float) -> int:
    """TSPLIB GEO distance between two points given in radians (idealised sphere, km, truncated)."""
    q1 = math.cos(lon1 - lon2)
    q2 = math.cos(lat1 - lat2)
    q3 = math.cos(lat1 + lat2)
    cosine = 0.5 * ((1.0 + q1) * q2 - (1.0 - q1) * q3)
    # Rounding can push the cosine a hair past 1 for nearby points; acos would fail there.
    return int(GEO_RADIUS * math.acos(min(1.0, max(-1.0, cosine))) + 1.0)


def pair_distances(weight_type: str, coords: np.ndarray, i: np.ndarray, j: np.ndarray,
                   geo: np.ndarray | None = None) -> np.ndarray:
    """Distances between nodes ``i[k]`` and ``j[k]`` (0-based) for a coordinate EDGE_WEIGHT_TYPE.

    ``geo`` are the precomputed radians for GEO (see :func:`geo_radians`).
    """
    i = np.asarray(i, dtype=np.int64)
    j = np.asarray(j, dtype=np.int64)
    if weight_type == "GEO":
        if geo is None:
            geo = geo_radians(coords)
        lat, lon = geo[:, 0], geo[:, 1]
        flat_i, flat_j = i.ravel(), j.ravel()
        pairs = zip(flat_i, flat_j, strict=True)
        out = np.fromiter((0 if a == b else geo_distance(lat[a], lon[a], lat[b], lon[b]) for a, b in pairs),
                          dtype=np.int64, count=flat_i.size)
        return out.reshape(i.shape)
    dx = coords[i, 0] - coords[j, 0]
    dy = coords[i, 1] - coords[j, 1]
    if weight_type == "EUC_2D":
        return nint(np.sqrt(dx * dx + dy * dy))
    if weight_type == "CEIL_2D":
        return np.ceil(np.sqrt(dx * dx + dy * dy)).astype(np.int64)
    if weight_type == "ATT":
        r = np.sqrt((dx * dx + dy * dy) / 10.0)
        t = nint(r)
        return np.where(t < r, t + 1, t)
    if weight_type == "MAN_2D":
        return nint(np.abs(dx) + np.abs(dy))
    if weight_type == "MAX_2D":
        return np.maximum(nint(np.abs(dx)), nint(np.abs(dy)))
    raise ValueError(f"not a coordinate EDGE_WEIGHT_TYPE: {weight_type}")
