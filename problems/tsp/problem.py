"""The symmetric travelling salesman problem: the instance and exact tour lengths.

Every symmetric TSPLIB instance (Reinelt 1991; TSPLIB95 documentation; the reader is
problems/tsp/tsplib.py): coordinate types EUC_2D, CEIL_2D, ATT, GEO, MAN_2D, MAX_2D and EXPLICIT.
Coordinate instances keep only their coordinates and compute distances on demand, so a pla85900
tour is scored in O(n) memory; :meth:`TSP.distance_matrix` builds a full matrix only within a
memory budget. Tours are 0-based city orders in Python, 1-based in files.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar

import numpy as np

from metaheur.errors import MetaheurError
from metaheur.problem.arrays import exact_integers
from metaheur.problem.fingerprint import fingerprint
from metaheur.problem.interface import Problem, check_permutation
from metaheur.problems.tsp.distances import COORD_TYPES, geo_radians, pair_distances
from metaheur.problems.tsp.params import EAXParams, ILSParams

if TYPE_CHECKING:
    from metaheur.engine.catalogue import KernelTable
    from metaheur.islands.base import Island

COORD_LIMIT = 7e8
#: Default memory budget for a full distance matrix (bytes).
MATRIX_BUDGET = 256 * 2**20


def _check_tsp_matrix(name: str, m: np.ndarray) -> None:
    """A symmetric TSP's distances: non-negative, and d[i, j] = d[j, i] (the two directions of a
    tour have one length)."""
    if m.size and m.min() < 0:
        i, j = (int(x) for x in np.argwhere(m < 0)[0])
        raise MetaheurError(f"{name}: negative distance d({i + 1},{j + 1}) = {m[i, j]}: distances must be >= 0")
    asym = m != m.T
    if asym.any():
        i, j = (int(x) for x in np.argwhere(asym)[0])
        raise MetaheurError(f"{name}: the matrix is not symmetric (d({i + 1},{j + 1}) = {m[i, j]}, "
                            f"d({j + 1},{i + 1}) = {m[j, i]}): use metaheur.ATSP for the asymmetric TSP")


def tsplib_properties(inst) -> dict:
    """What ``metaheur info`` shows of a TSPLIB instance (TSP or ATSP)."""
    return {"edge_weight_type": inst.weight_type, "edge_weight_format": inst.weight_format,
            "has_coordinates": inst.display is not None, "full_matrix_mib": round(inst.matrix_bytes() / 2**20, 1)}


def tsplib_lines(props: dict) -> list[str]:
    """The lines of ``metaheur info`` for :func:`tsplib_properties`."""
    weights = props["edge_weight_type"]
    if props["edge_weight_format"]:
        weights += f" ({props['edge_weight_format']})"
    return [f"weights     {weights}", f"coordinates {'yes' if props['has_coordinates'] else 'no'}",
            f"full matrix {props['full_matrix_mib']} MiB as int32"]


def canonical_tours(tours: np.ndarray) -> np.ndarray:
    """Each tour rotated to start at city 0 and turned so that its second city is smaller than
    its last: one array per cycle, so equal tours compare equal (migration, duplicates)."""
    tours = np.asarray(tours)
    n = tours.shape[1]
    start = np.argmax(tours == 0, axis=1)
    idx = (start[:, None] + np.arange(n)[None, :]) % n
    out = np.take_along_axis(tours, idx, axis=1)
    flip = out[:, 1] > out[:, -1]
    out[flip, 1:] = out[flip, 1:][:, ::-1]
    return out


class TourProblem(Problem):
    """What the symmetric and the asymmetric TSP share: tours drawn on the cities, TSPLIB
    properties, ``.tour`` solution files; the TSP's crossovers and island algorithms (the ATSP's
    islands search its symmetric transformation)."""

    crossovers = ("eax", "ox", "none")
    search_params: ClassVar[tuple[type, ...]] = (ILSParams, EAXParams)
    picture = "tour"
    picture_column = True
    directed = False  # whether a tour is read in its direction (the ATSP's arrows)

    @classmethod
    def island_algorithms(cls) -> dict[str, type[Island]]:
        """The ILS island without crossover, the EAX GA for ``eax`` (problems/tsp/solving.py)."""
        from metaheur.problems.tsp import solving

        return solving.island_algorithms()

    @classmethod
    def kernel_table(cls) -> KernelTable:
        """kernels/tsp/: the searches of a TSP and of an ATSP's transformation (problems/tsp/kernels.py)."""
        from metaheur.problems.tsp.kernels import TABLE

        return TABLE

    def evaluate(self, perms: np.ndarray) -> np.ndarray:
        """Exact lengths of a k x n batch of tours (:meth:`tour_length` of each)."""
        return np.array([self.tour_length(t) for t in np.asarray(perms)], dtype=np.int64)

    def value(self, perm) -> int:
        return self.tour_length(perm)

    def properties(self) -> dict:
        return tsplib_properties(self)

    @classmethod
    def describe_lines(cls, props: dict) -> list[str]:
        return tsplib_lines(props)

    def draw(self, ax, perm) -> None:
        from metaheur.problems.tsp.picture import plot_tour

        plot_tour(self, perm, ax)


@dataclass(frozen=True, eq=False)
class TSP(TourProblem):
    """A symmetric TSP instance.

    ``coords`` (n x 2 float64) define the distances for coordinate types; ``matrix`` (n x n int64)
    does for EXPLICIT. ``display`` holds coordinates for drawing when the file gives any.
    """

    title = "symmetric travelling salesman problem"

    name: str
    weight_type: str
    coords: np.ndarray | None = None
    matrix: np.ndarray | None = None
    weight_format: str | None = None
    display: np.ndarray | None = None
    comment: str = ""
    source: str | None = None
    kind: str = field(default="tsp", init=False)
    _cache: dict = field(default_factory=dict, init=False, repr=False)

    def __post_init__(self) -> None:
        if self.weight_type == "EXPLICIT":
            if self.matrix is None:
                raise MetaheurError(f"{self.name}: EXPLICIT instance without a matrix")
            m = exact_integers(self.matrix, f"{self.name}: distance matrix")
            if m.ndim != 2 or m.shape[0] != m.shape[1]:
                raise MetaheurError(f"{self.name}: distance matrix must be square")
            _check_tsp_matrix(self.name, m)
            m.setflags(write=False)
            object.__setattr__(self, "matrix", m)
        elif self.weight_type in COORD_TYPES:
            try:
                c = np.ascontiguousarray(self.coords, dtype=np.float64)
            except (TypeError, ValueError):
                raise MetaheurError(f"{self.name}: coordinates are not an array of numbers") from None
            if c.ndim != 2 or c.shape[1] != 2:
                raise MetaheurError(f"{self.name}: coordinates must be an n x 2 array")
            if not np.isfinite(c).all():
                raise MetaheurError(f"{self.name}: coordinates have NaN or infinite entries "
                                    f"(first at city {int(np.argwhere(~np.isfinite(c))[0][0]) + 1})")
            if c.size and not np.abs(c).max() <= COORD_LIMIT:
                raise MetaheurError(f"{self.name}: coordinates beyond +-{COORD_LIMIT:.0e} are not supported "
                                    "(distances must fit 32-bit integers)")
            c.setflags(write=False)
            object.__setattr__(self, "coords", c)
            if self.display is None:
                object.__setattr__(self, "display", c)
        else:
            raise MetaheurError(f"{self.name}: unsupported EDGE_WEIGHT_TYPE {self.weight_type}")

    def fingerprint(self) -> str:
        """A fingerprint of the instance's data (name, size, distance function, coordinates or matrix)."""
        return fingerprint(f"{self.kind}:{self.name}:{self.n}:{self.weight_type}:{self.weight_format}",
                           (self.coords, self.matrix))

    @property
    def n(self) -> int:
        return int((self.matrix if self.weight_type == "EXPLICIT" else self.coords).shape[0])

    @property
    def geo(self) -> np.ndarray:
        """Radians of the GEO coordinates (cached)."""
        if "geo" not in self._cache:
            self._cache["geo"] = geo_radians(self.coords)
        return self._cache["geo"]

    def dist(self, i, j) -> np.ndarray:
        """Exact distances between cities ``i`` and ``j`` (0-based, broadcast arrays) as int64."""
        i, j = np.broadcast_arrays(np.asarray(i, dtype=np.int64), np.asarray(j, dtype=np.int64))
        if self.weight_type == "EXPLICIT":
            return self.matrix[i, j]
        return pair_distances(self.weight_type, self.coords, i, j,
                              self.geo if self.weight_type == "GEO" else None)

    def check_tour(self, tour, source: str | None = None) -> np.ndarray:
        """``tour`` as a validated 0-based int64 permutation of the cities."""
        return check_permutation(tour, self.n, source)

    def tour_length(self, tour) -> int:
        """Exact length of the closed tour, recomputed from scratch (O(n) memory)."""
        t = self.check_tour(tour)
        return int(self.dist(t, np.roll(t, -1)).sum(dtype=np.int64))

    def matrix_bytes(self, itemsize: int = 4) -> int:
        return self.n * self.n * itemsize

    def canonical(self, perms: np.ndarray) -> np.ndarray:
        """Tours rotated to start at city 0 and turned one way (one array per cycle)."""
        return canonical_tours(np.asarray(perms))

    def random_tours(self, count: int, rng: np.random.Generator) -> np.ndarray:
        """``count`` uniformly random tours (what an EAX population starts from without curve
        starts)."""
        return np.array([rng.permutation(self.n) for _ in range(count)])

    # how the islands solve it (the decisions of problems/tsp/solving.py)
    def default_params(self):
        from metaheur.problems.tsp import solving

        return solving.default_params(self)

    def operators(self, device, params, ls_budget=None, quadrant=None):
        """The TSP's operators; ``quadrant``: the quadrant neighbours of their candidate lists (None:
        the ILS parameters'), asked for by the EAX islands (:attr:`EAXIsland.operator_options
        <metaheur.problems.tsp.eax_island.EAXIsland.operator_options>`)."""
        from metaheur.problems.tsp.operators import TSPOperators

        return TSPOperators(self, device, params, ls_budget, quadrant)

    def wave_blocks_per_sm(self, device) -> int:
        """The descent's blocks a multiprocessor runs at once (the fewest of a pass's kernels)."""
        from metaheur.problems.tsp import descent

        return descent.wave_blocks_per_sm(self, device)

    def precompile(self, device) -> None:
        from metaheur.problems.tsp import solving

        solving.precompile(self, device)

    def distance_matrix(self, budget_bytes: int = MATRIX_BUDGET) -> np.ndarray | None:
        """The full n x n int32 matrix when it fits ``budget_bytes``, else ``None`` (cached)."""
        if "matrix" in self._cache:
            return self._cache["matrix"]
        if self.weight_type == "EXPLICIT":
            m = self.matrix
        elif self.matrix_bytes() > budget_bytes:
            return None
        else:
            n = self.n
            m = np.empty((n, n), dtype=np.int64)
            rows = max(1, (1 << 22) // max(n, 1))
            cols = np.arange(n)
            for start in range(0, n, rows):
                r = np.arange(start, min(n, start + rows))
                m[r] = self.dist(r[:, None], cols[None, :])
        if m.size and np.abs(m).max() >= 2**31:
            raise MetaheurError(f"{self.name}: distances exceed the 32-bit range of the kernels")
        m32 = np.ascontiguousarray(m, dtype=np.int32)
        m32.setflags(write=False)
        self._cache["matrix"] = m32
        return m32
