"""TSP instance data for the kernels: coordinates or a matrix on a device, and neighbour lists.

Coordinate instances are evaluated on the fly (``MH_TSP_WEIGHT`` picks TSPLIB's function at
compile time, see kernels/tsp/tsp_dist.cuh), which keeps memory O(n) and, for local search, is faster
than a matrix that does not fit the caches. EXPLICIT instances use their matrix; GEO uses the
matrix on a GPU (CUDA's cos/acos may differ from the host's in the last bit) when it fits. The
transformation of an ATSP is evaluated from its block of arc costs (``TWIN``,
:class:`~metaheur.problems.atsp.TwinTSP`), a quarter of its matrix.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from metaheur.devices import Device, parse_device, to_host
from metaheur.errors import MetaheurError
from metaheur.problems.tsp.kernels import WEIGHT_CODES
from metaheur.problems.tsp.params import MAX_NEIGHBOURS
from metaheur.problems.tsp.problem import MATRIX_BUDGET, TSP


@dataclass
class TSPData:
    """What the TSP kernels take: ``xy`` (n x 2 double; radians for GEO) and ``mat`` (n x n int32,
    or for ``TWIN`` :meth:`~metaheur.problems.atsp.TwinTSP.kernel_costs`), one of them a 1-element
    placeholder, and the ``MH_TSP_WEIGHT`` code."""

    device: Device
    n: int
    weight_code: int
    xy: object
    mat: object

    @property
    def defines(self) -> dict:
        return {"MH_TSP_WEIGHT": self.weight_code}


def tsp_data(tsp: TSP, device: str | Device = "cpu", *, use_matrix: bool | None = None,
             matrix_budget: int = MATRIX_BUDGET) -> TSPData:
    """Upload ``tsp`` for the kernels (see the module docstring for the choice of distances)."""
    dev = parse_device(device)
    if tsp.n < 3:
        raise MetaheurError(f"{tsp.name}: a TSP search needs at least 3 cities")
    if tsp.weight_type == "TWIN" and not use_matrix:
        return TSPData(dev, tsp.n, WEIGHT_CODES["TWIN"], dev.asarray(np.zeros(2, np.float64)),
                       dev.asarray(tsp.kernel_costs()))
    if use_matrix is None:
        use_matrix = tsp.weight_type == "EXPLICIT" or (tsp.weight_type == "GEO" and dev.is_gpu)
    if use_matrix:
        mat = tsp.distance_matrix(matrix_budget)
        if mat is None:
            if tsp.weight_type == "EXPLICIT" or (tsp.weight_type == "GEO" and dev.is_gpu):
                raise MetaheurError(f"{tsp.name}: the {tsp.n} x {tsp.n} distance matrix "
                                    f"({tsp.matrix_bytes() / 2**20:.0f} MiB) exceeds the memory budget")
            use_matrix = False
        else:
            return TSPData(dev, tsp.n, 0, dev.asarray(np.zeros(2, np.float64)), dev.asarray(mat))
    if tsp.weight_type in ("EUC_2D", "CEIL_2D", "ATT", "MAN_2D", "MAX_2D"):
        span = tsp.coords.max(axis=0) - tsp.coords.min(axis=0)
        longest = {"MAN_2D": float(span.sum()), "MAX_2D": float(span.max())}.get(tsp.weight_type,
                                                                                  float(np.hypot(*span)))
        if longest + 1 >= 2**31:
            raise MetaheurError(f"{tsp.name}: {tsp.weight_type} distances up to {longest:.3g} exceed the kernels' "
                                "32-bit range")
    xy = tsp.geo if tsp.weight_type == "GEO" else tsp.coords
    return TSPData(dev, tsp.n, WEIGHT_CODES[tsp.weight_type], dev.asarray(xy, np.float64),
                   dev.asarray(np.zeros(1, np.int32)))


def _grid(xy: np.ndarray):
    """Uniform grid with about two cities a cell: (cell_of, cell_start, cell_items, gx, gy, side)."""
    n = xy.shape[0]
    lo = xy.min(axis=0)
    span = np.maximum(xy.max(axis=0) - lo, 1e-9)
    side = float(np.sqrt(span[0] * span[1] * 2.0 / n)) or float(max(span))
    side = max(side, float(max(span)) / 4096.0)
    gx = max(1, min(4096, int(span[0] / side) + 1))
    gy = max(1, min(4096, int(span[1] / side) + 1))
    cx = np.minimum((xy[:, 0] - lo[0]) / side, gx - 1).astype(np.int64)
    cy = np.minimum((xy[:, 1] - lo[1]) / side, gy - 1).astype(np.int64)
    cell_of = (cy * gx + cx).astype(np.int32)
    cell_items = np.argsort(cell_of, kind="stable").astype(np.int32)
    cell_start = np.zeros(gx * gy + 1, dtype=np.int32)
    np.cumsum(np.bincount(cell_of, minlength=gx * gy), out=cell_start[1:])
    return cell_of, cell_start, cell_items, gx, gy, side


def neighbours(tsp: TSP, k: int, device: str | Device = "cpu", *, matrix_budget: int = MATRIX_BUDGET,
               quadrant: int = 0) -> np.ndarray:
    """The ``k`` nearest cities of every city (n x k int32), ordered by exact TSPLIB distance, ties
    by index. Coordinate instances use a grid kernel (Euclidean candidates, then re-ranked by the
    instance's distance); others the distance matrix; the transformation of an ATSP its own lists
    (:meth:`~metaheur.problems.atsp.TwinTSP.candidates`).

    ``quadrant`` > 0 (coordinate instances only): the list holds the ``quadrant`` nearest cities of
    each of the four quadrants around the city, then the nearest others up to ``k`` (Helsgaun's
    quadrant candidates, which keep links between clusters); still ordered by distance."""
    n = tsp.n
    k = int(min(k, n - 1))
    if k < 1:
        raise MetaheurError("neighbour lists need k >= 1 and at least 2 cities")
    if tsp.weight_type == "TWIN":
        return tsp.candidates(k)
    if tsp.weight_type in ("EXPLICIT", "GEO"):
        mat = tsp.distance_matrix(matrix_budget)
        if mat is None:
            raise MetaheurError(f"{tsp.name}: neighbour lists need the distance matrix, which exceeds the budget")
        rows = mat.astype(np.int64) * n + np.arange(n)[None, :]  # distance, then index
        np.fill_diagonal(rows, np.iinfo(np.int64).max)
        part = np.argpartition(rows, k - 1, axis=1)[:, :k]
        order = np.take_along_axis(rows, part, axis=1).argsort(axis=1)
        return np.ascontiguousarray(np.take_along_axis(part, order, axis=1), dtype=np.int32)
    from metaheur.engine import load_module, shapes
    from metaheur.problems.tsp.kernels import KNN

    dev = parse_device(device)
    if k > MAX_NEIGHBOURS:
        raise MetaheurError(f"neighbour lists hold at most {MAX_NEIGHBOURS} cities")
    quadrant = int(quadrant)
    if quadrant < 0 or 4 * quadrant > k:
        raise MetaheurError(f"quadrant neighbours: need 0 <= 4 * quadrant <= k, got quadrant={quadrant}, k={k}")
    cell_of, cell_start, cell_items, gx, gy, side = _grid(tsp.coords)
    out = dev.zeros((n, k), np.int32)
    module = load_module("tsp/tsp_knn.cu", dev)
    threads = shapes.threads(KNN) if dev.is_gpu else 1
    args = (dev.asarray(tsp.coords), dev.asarray(cell_of), dev.asarray(cell_start), dev.asarray(cell_items),
            gx, gy, side, n, k)
    if quadrant:
        module.kernel("tsp_knn_quadrant")(((n + threads - 1) // threads,), (threads,), (*args, quadrant, out))
    else:
        module.kernel("tsp_knn_grid")(((n + threads - 1) // threads,), (threads,), (*args, out))
    near = to_host(out).astype(np.int64)
    dist = tsp.dist(np.arange(n)[:, None], near)
    order = np.argsort(dist * n + near, axis=1, kind="stable")
    return np.ascontiguousarray(np.take_along_axis(near, order, axis=1), dtype=np.int32)
