"""The asymmetric travelling salesman problem: TSPLIB ``TYPE: ATSP`` files, directed tour lengths,
and the transformation that lets the symmetric TSP machinery solve it.

An instance is an n x n matrix of arc costs, ``matrix[i, j]`` the cost of going from city ``i`` to
city ``j``. TSPLIB marks missing arcs with a large value, which it also puts on the diagonal: a
positive diagonal is read as that marker and every arc at or above it is *forbidden* (a tour
through it still has its exact length, the sum of the arcs as written). Tours are 0-based city
orders, read in their direction; ``.tour`` files are shared with the symmetric TSP.

:func:`jonker_volgenant` turns an ATSP of n cities into a symmetric TSP of 2n (Jonker and
Volgenant, "Transforming asymmetric into symmetric traveling salesman problems", Operations
Research Letters 2(4), 1983; the form LKH-3 uses). See :class:`JVTransform` for the costs.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from metaheur.errors import InputFormatError, MetaheurError
from metaheur.problems.arrays import exact_integers
from metaheur.problems.fingerprint import fingerprint
from metaheur.problems.interface import ProblemFormats, SearchForm, check_permutation
from metaheur.problems.textio import read_text
from metaheur.problems.tsp import (
    EXPLICIT_FORMATS,
    TSP,
    TourProblem,
    _dimension,
    _explicit_matrix,
    _node_lines,
    _sections,
    read_solution,
    write_tour,
)

#: Largest arc cost the transformation takes (its symmetric costs are the kernels' int32).
INT32_MAX = 2**31 - 1


@dataclass(frozen=True, eq=False)
class ATSP(TourProblem):
    """An asymmetric TSP instance: ``matrix`` (n x n int64), ``matrix[i, j]`` the cost of arc
    ``i -> j``; arcs at or above ``no_edge`` (when given) are forbidden. ``display`` holds
    coordinates for drawing when the instance has any (the generator's cities). Its islands
    search the symmetric transformation (:meth:`search_form`)."""

    title = "asymmetric travelling salesman problem"
    directed = True

    name: str
    matrix: np.ndarray
    no_edge: int | None = None
    display: np.ndarray | None = None
    comment: str = ""
    source: str | None = None
    weight_format: str = "FULL_MATRIX"
    kind: str = field(default="atsp", init=False)
    weight_type: str = field(default="EXPLICIT", init=False)
    _cache: dict = field(default_factory=dict, init=False, repr=False)

    def __post_init__(self) -> None:
        m = check_arc_matrix(self.matrix, self.name)
        m.setflags(write=False)
        object.__setattr__(self, "matrix", m)
        if self.no_edge is not None:
            object.__setattr__(self, "no_edge", int(self.no_edge))
        if self.display is not None:
            d = np.ascontiguousarray(self.display, dtype=np.float64)
            if d.shape != (m.shape[0], 2):
                raise MetaheurError(f"{self.name}: display coordinates must be an n x 2 array")
            object.__setattr__(self, "display", d)

    def fingerprint(self) -> str:
        """A fingerprint of the instance's data (name, size, format and arc matrix)."""
        return fingerprint(f"{self.kind}:{self.name}:{self.n}:{self.weight_type}:{self.weight_format}",
                           (self.coords, self.matrix))

    @property
    def n(self) -> int:
        return int(self.matrix.shape[0])

    @property
    def coords(self) -> None:
        """No coordinates define the costs (``display`` may hold some for drawing)."""
        return None

    def matrix_bytes(self, itemsize: int = 4) -> int:
        """Memory of the search's costs: the n x n block of :class:`TwinTSP`."""
        return self.n * self.n * itemsize

    def allowed(self) -> np.ndarray:
        """n x n booleans: the arcs a tour may use (off the diagonal and below ``no_edge``)."""
        ok = ~np.eye(self.n, dtype=bool)
        if self.no_edge is not None:
            ok &= self.matrix < self.no_edge
        return ok

    def dist(self, i, j) -> np.ndarray:
        """Exact costs of the arcs ``i -> j`` (0-based, broadcast arrays) as int64."""
        i, j = np.broadcast_arrays(np.asarray(i, dtype=np.int64), np.asarray(j, dtype=np.int64))
        return self.matrix[i, j]

    def check_tour(self, tour, source: str | None = None) -> np.ndarray:
        """``tour`` as a validated 0-based int64 permutation of the cities."""
        return check_permutation(tour, self.n, source)

    def tour_length(self, tour) -> int:
        """Exact length of the closed tour in its direction, recomputed from scratch."""
        t = self.check_tour(tour)
        return int(self.matrix[t, np.roll(t, -1)].sum(dtype=np.int64))

    def transformed(self) -> JVTransform:
        """The symmetric instance of 2n cities that the search runs on (built once)."""
        if "jv" not in self._cache:
            self._cache["jv"] = jonker_volgenant(self)
        return self._cache["jv"]

    def search_form(self) -> SearchForm:
        """The symmetric transformation (Jonker and Volgenant 1983, :class:`JVTransform`): its tours
        have the directed lengths; directed tours become its tours that keep every twin edge, in
        canonical form."""
        jv = self.transformed()
        return SearchForm(jv.tsp, lambda tours: jv.tsp.canonical(np.stack([jv.to_symmetric(t) for t in tours])),
                          jv.to_directed)

    def default_params(self):
        """Those of the transformation (:meth:`TwinTSP.default_params`)."""
        return self.transformed().tsp.default_params()


def check_arc_matrix(matrix, name: str) -> np.ndarray:
    """A square matrix of arc costs as int64: exact integers (:func:`exact_integers`, the checks
    of every array), non-negative, and within the 32 bits of the kernels."""
    m = exact_integers(matrix, f"{name}: arc cost matrix")
    if m.ndim != 2 or m.shape[0] != m.shape[1]:
        raise MetaheurError(f"{name}: the arc cost matrix must be square, got shape {m.shape}")
    if m.shape[0] < 3:
        raise MetaheurError(f"{name}: an ATSP needs at least 3 cities, got {m.shape[0]}")
    if m.size and (m.min() < 0 or m.max() > INT32_MAX):
        raise MetaheurError(f"{name}: arc costs must lie in 0 .. {INT32_MAX}, got {m.min()} .. {m.max()}")
    return m


# ------------------------------------------------------------------------------ transformation


@dataclass(frozen=True, eq=False)
class TwinTSP(TSP):
    """The symmetric instance of :func:`jonker_volgenant`: cities ``i`` and ``i + n/2`` are twins.

    Its distances are computed, never stored as an n x n matrix: ``block`` (n/2 x n/2 int32) holds
    ``block[i, j] = d(i + n/2, j)``, the twin edge ``-M`` on its diagonal, and ``forbidden`` is the
    cost of every edge joining two cities or two twins: a quarter of the memory of the matrix, and
    what the kernels read (``MH_TSP_WEIGHT`` 7, ``TWIN``, of kernels/tsp_dist.cuh). Built here, not
    given by a user, so it skips the checks of user matrices; every value fits int32 by
    construction."""

    block: np.ndarray | None = None
    forbidden: int = 0

    def __post_init__(self) -> None:
        b = np.ascontiguousarray(self.block, dtype=np.int32)
        b.setflags(write=False)
        object.__setattr__(self, "block", b)
        object.__setattr__(self, "forbidden", int(self.forbidden))

    def fingerprint(self) -> str:
        return fingerprint(f"{self.kind}:{self.name}:{self.n}:{self.weight_type}:{self.forbidden}", (self.block,))

    def default_params(self):
        from metaheur.problems import tsp_solving

        return tsp_solving.twin_default_params(self)

    @property
    def n(self) -> int:
        return 2 * int(self.block.shape[0])

    def dist(self, i, j) -> np.ndarray:
        """Exact distances as int64, computed from ``block`` and ``forbidden``."""
        i, j = np.broadcast_arrays(np.asarray(i, dtype=np.int64), np.asarray(j, dtype=np.int64))
        half = self.block.shape[0]
        cross = (i >= half) != (j >= half)
        row = np.where(cross, np.maximum(i, j) - half, 0)  # the twin's ATSP city
        col = np.where(cross, np.minimum(i, j), 0)
        return np.where(i == j, 0, np.where(cross, self.block[row, col].astype(np.int64), self.forbidden))

    def kernel_costs(self) -> np.ndarray:
        """What the kernels take as ``mat`` for ``TWIN``: ``block`` row by row, then ``forbidden``
        (int32; built when uploaded, not cached, so that it does not travel with the instance)."""
        return np.append(self.block.ravel(), np.int32(self.forbidden)).astype(np.int32)

    def arc_costs(self) -> np.ndarray:
        """The n/2 x n/2 block ``[i, j] = d(i + n/2, j)``: arc i -> j plus M (forbidden: the
        forbidden value, also on the diagonal)."""
        block = self.block.astype(np.int64)
        np.fill_diagonal(block, self.forbidden)
        return block

    def duals(self) -> tuple[np.ndarray, np.ndarray]:
        """:func:`assignment_duals` of :meth:`arc_costs` (cached, and shipped with the instance to
        the islands' worker processes: O(n^2) to O(n^3) time, O(n) memory)."""
        if "duals" not in self._cache:
            self._cache["duals"] = assignment_duals(self.arc_costs())
        return self._cache["duals"]

    def reduced_costs(self) -> np.ndarray:
        """The reduced costs ``c(i, j) - u_i - v_j`` of :meth:`arc_costs` under the optimal duals of
        :meth:`duals` (n/2 x n/2 int64, all >= 0)."""
        u, v = self.duals()
        return self.arc_costs() - u[:, None] - v[None, :]

    def tied_arcs(self) -> np.ndarray:
        """For each of the n cities (its incoming arcs, first n/2) and twins (outgoing arcs), how
        many of its arcs have zero reduced cost: the ties that rank first in :meth:`candidates`."""
        zero = self.reduced_costs() == 0
        np.fill_diagonal(zero, False)
        return np.concatenate([zero.sum(axis=0), zero.sum(axis=1)])

    def candidates(self, k: int) -> np.ndarray:
        """Candidate lists (n x k int32): a city's twin, then its k - 1 edges of least reduced cost
        in the assignment relaxation of the ATSP (arc i -> j: ``c(i, j) - u_i - v_j`` with the
        optimal duals of :func:`assignment_duals`; ties by cost, then index), each list sorted by
        distance as the kernels expect. Reduced costs pick the arcs of good tours far better than
        costs on instances with many equal arcs (rbg323, rbg358: 6% of their arcs cost 0), and
        the assignment bound is often tight for the ATSP (Johnson, Gutin, McGeoch et al.,
        "Experimental analysis of heuristics for the ATSP", 2002)."""
        half = self.n // 2
        k = int(min(k, self.n - 1, half))
        block, reduced = self.arc_costs(), self.reduced_costs()
        # tie-breaking keys: reduced cost, then cost, then index (all exact int64; costs < 2^31)
        order_out = np.lexsort((np.broadcast_to(np.arange(half), block.shape), block, reduced), axis=1)
        order_in = np.lexsort((np.broadcast_to(np.arange(half)[:, None], block.shape), block, reduced), axis=0).T
        out = np.empty((self.n, k), dtype=np.int64)
        idx = np.arange(half)
        out[:half, 0], out[half:, 0] = idx + half, idx
        out[half:, 1:] = order_out[:, : k - 1]  # twin i + n/2 meets city j over arc i -> j
        out[:half, 1:] = order_in[:, : k - 1] + half  # city j meets twin i + n/2 over arc i -> j
        dist = self.dist(np.arange(self.n)[:, None], out)
        order = np.lexsort((out, dist), axis=1)
        return np.ascontiguousarray(np.take_along_axis(out, order, axis=1), dtype=np.int32)

    def random_tours(self, count: int, rng: np.random.Generator) -> np.ndarray:
        """``count`` tours that keep every twin edge, in random order: random directed tours of the
        ATSP (a random permutation of all 2n cities would break most twin edges, and local search
        repairs those slowly: each one costs 2M)."""
        half = self.n // 2
        cities = np.array([rng.permutation(half) for _ in range(count)]).reshape(count, half)
        return np.stack([cities, cities + half], axis=2).reshape(count, self.n)


@dataclass(frozen=True)
class JVTransform:
    """The symmetric instance of an ATSP (Jonker and Volgenant 1983), costs chosen so that every
    symmetric tour of a directed tour has exactly the directed length.

    City ``i`` gets a twin ``i + n``. Costs: ``d(i, i + n) = -M`` (twin edge); ``d(i + n, j) =
    c(i, j) + M`` for an allowed arc ``i -> j``; ``forbidden`` for a forbidden arc and for every
    edge between two cities or two twins. A directed tour ``t`` becomes ``t0, t0+n, t1, t1+n, ...``
    whose length is ``sum c - n M + n M``: the ATSP length itself.

    With ``UB`` the length of some feasible directed tour (:func:`upper_bound`), ``M = UB // 2 + 1``
    and ``forbidden = UB + M + 1``, every optimal symmetric tour is the image of an optimal
    directed tour: a tour with t < n twin edges and no forbidden edge has length
    ``2 (n - t) M + (its arcs) >= 2M > UB``; a tour with k >= 1 forbidden edges has length at least
    ``k (forbidden - M) > UB``. Both values must fit the kernels' int32, so UB must stay below
    about 1.4e9 (docs/decisions/atsp-method.md).
    """

    atsp: ATSP
    tsp: TwinTSP
    big_m: int
    forbidden: int

    def to_symmetric(self, tour) -> np.ndarray:
        """The symmetric tour (2n cities) of a directed tour."""
        t = self.atsp.check_tour(tour)
        return np.stack([t, t + self.atsp.n], axis=1).ravel()

    def to_directed(self, tour) -> np.ndarray:
        """The directed tour of a symmetric tour that keeps every twin edge: read in the direction
        in which each city is followed by its twin. Raises if a twin edge is missing."""
        n = self.atsp.n
        t = self.tsp.check_tour(tour)
        start = int(np.flatnonzero(t < n)[0])
        t = np.roll(t, -start)  # a city first
        if np.all(t[1::2] == t[0::2] + n):
            return t[0::2].copy()
        r = np.roll(t[::-1], 1)  # the other direction, still a city first
        if np.all(r[1::2] == r[0::2] + n):
            return r[0::2].copy()
        raise MetaheurError(f"{self.atsp.name}: internal error: a symmetric tour does not keep every twin edge")


def assignment_duals(cost: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Optimal dual potentials ``u, v`` of the assignment problem on the square int64 ``cost``:
    ``cost - u[:, None] - v[None, :] >= 0``, zero on an optimal assignment, whose cost is
    ``u.sum() + v.sum()``. Shortest augmenting paths with potentials (the Hungarian method of
    Kuhn 1955 in the O(n^3) form of Jonker and Volgenant 1987, without their initialisation),
    the inner scan vectorised."""
    n = cost.shape[0]
    big = np.iinfo(np.int64).max // 4
    u, v = np.zeros(n + 1, np.int64), np.zeros(n + 1, np.int64)
    row_of = np.zeros(n + 1, np.int64)  # row_of[j]: the row (1-based) matched to column j; column 0 is the root
    way = np.zeros(n + 1, np.int64)
    for i in range(1, n + 1):
        row_of[0], j0 = i, 0
        minv = np.full(n + 1, big, np.int64)
        used = np.zeros(n + 1, dtype=bool)
        while True:
            used[j0] = True
            i0 = row_of[j0]
            cur = cost[i0 - 1] - u[i0] - v[1:]
            free = ~used[1:]
            better = free & (cur < minv[1:])
            minv[1:][better] = cur[better]
            way[1:][better] = j0
            masked = np.where(free, minv[1:], big)
            j1 = int(masked.argmin()) + 1
            delta = masked[j1 - 1]
            u[row_of[used]] += delta
            v[used] -= delta
            minv[~used] -= delta
            j0 = j1
            if row_of[j0] == 0:
                break
        while j0:
            j1 = way[j0]
            row_of[j0] = row_of[j1]
            j0 = j1
    return u[1:], v[1:]


def upper_bound(atsp: ATSP) -> int:
    """Length of a feasible directed tour: the shorter of a nearest-neighbour tour from city 0
    (when it finds one over allowed arcs) and the sum over cities of their dearest allowed arc."""
    ok = atsp.allowed()
    if not ok.any(axis=1).all():
        k = int(np.flatnonzero(~ok.any(axis=1))[0])
        raise MetaheurError(f"{atsp.name}: city {k + 1} has no allowed outgoing arc, so no tour exists")
    bound = int(np.where(ok, atsp.matrix, 0).max(axis=1).sum())
    cost = np.where(ok, atsp.matrix, np.iinfo(np.int64).max)
    seen = np.zeros(atsp.n, dtype=bool)
    city, length = 0, 0
    for _ in range(atsp.n - 1):
        seen[city] = True
        row = np.where(seen, np.iinfo(np.int64).max, cost[city])
        nxt = int(row.argmin())
        if row[nxt] == np.iinfo(np.int64).max:
            return bound
        length += int(row[nxt])
        city = nxt
    if not ok[city, 0]:
        return bound
    return min(bound, length + int(atsp.matrix[city, 0]))


def jonker_volgenant(atsp: ATSP) -> JVTransform:
    """The symmetric instance of ``atsp`` (see :class:`JVTransform` for the costs)."""
    ub = upper_bound(atsp)
    big_m = ub // 2 + 1
    forbidden = ub + big_m + 1
    ok = atsp.allowed()
    top = int(atsp.matrix[ok].max()) + big_m if ok.any() else big_m
    if forbidden > INT32_MAX or top > INT32_MAX:
        raise MetaheurError(f"{atsp.name}: arc costs too large for the transformation to 32-bit costs (a tour of "
                            f"length {ub} is known; it must stay below {(2 * INT32_MAX) // 3}): scale them down")
    block = np.where(ok, atsp.matrix + big_m, forbidden)  # block[i, j]: edge (i + n, j), arc i -> j
    np.fill_diagonal(block, -big_m)  # the twin edges
    tsp = TwinTSP(f"{atsp.name}-jv", "TWIN", comment=f"Jonker-Volgenant transformation of {atsp.name}",
                  source=atsp.source, block=block, forbidden=forbidden)
    tsp.duals()  # before the instance travels to worker processes
    return JVTransform(atsp, tsp, big_m, forbidden)


# ---------------------------------------------------------------------------------------- reading

_ATSP_TYPE = re.compile(r"^\s*TYPE\s*:\s*ATSP\s*$", re.MULTILINE | re.IGNORECASE)


def is_atsp_file(path: str | os.PathLike) -> bool:
    """Whether a TSPLIB file declares ``TYPE: ATSP``."""
    return bool(_ATSP_TYPE.search(read_text(path)))


def read_atsp(path: str | os.PathLike, name: str | None = None) -> ATSP:
    """Read a TSPLIB ``TYPE: ATSP`` file: EXPLICIT weights in any EDGE_WEIGHT_FORMAT (FULL_MATRIX
    row by row, ``matrix[i, j]`` the arc i -> j; a triangle format gives a symmetric matrix). A
    positive diagonal is the no-edge marker (see the module docstring)."""
    text = read_text(path)
    if not text.strip():
        raise InputFormatError(path, "empty file")
    header, sections = _sections(path, text.splitlines())
    kind, kind_line = header.get("TYPE", ("", None))
    if kind.upper() != "ATSP":
        raise InputFormatError(path, f"TYPE {kind!r} is not ATSP", kind_line)
    n = _dimension(path, header)
    wtype, wline = header.get("EDGE_WEIGHT_TYPE", ("EXPLICIT", None))
    if wtype.upper() != "EXPLICIT":
        raise InputFormatError(path, f"EDGE_WEIGHT_TYPE {wtype} is not supported for an ATSP (EXPLICIT only)", wline)
    fmt, fline = header.get("EDGE_WEIGHT_FORMAT", ("FULL_MATRIX", None))
    fmt = fmt.upper()
    if fmt not in EXPLICIT_FORMATS:
        raise InputFormatError(path, f"unknown EDGE_WEIGHT_FORMAT {fmt!r}", fline)
    if "EDGE_WEIGHT_SECTION" not in sections:
        raise InputFormatError(path, "no EDGE_WEIGHT_SECTION")
    if n < 3:
        raise InputFormatError(path, f"DIMENSION {n}: an ATSP needs at least 3 cities", header["DIMENSION"][1])
    first, body = sections["EDGE_WEIGHT_SECTION"]
    matrix = _explicit_matrix(path, fmt, first, body, n, symmetric=False)
    if matrix.min() < 0 or matrix.max() > INT32_MAX:
        raise InputFormatError(path, f"arc costs must lie in 0 .. {INT32_MAX}", first)
    diagonal = int(np.diag(matrix).max())
    display = None
    for section in ("DISPLAY_DATA_SECTION", "NODE_COORD_SECTION"):
        if display is None and section in sections:
            start, lines = sections[section]
            display = _node_lines(path, section, start, lines, n)
    inst_name = (name or header.get("NAME", ("", 0))[0] or Path(path).stem).removesuffix(".atsp")
    return ATSP(inst_name, matrix, no_edge=diagonal if diagonal > 0 else None, display=display,
                comment=header.get("COMMENT", ("", 0))[0], source=os.fspath(path), weight_format=fmt)


def _generate(spec: str) -> ATSP:
    from metaheur.problems.generators import asymmetric_tsp, generated_size

    n, seed = generated_size(spec, max_n=5000)
    return asymmetric_tsp(n, seed, name=f"gen-atsp-{n}-s{seed}")


ATSP.formats = ProblemFormats(
    extensions=(".atsp",), folder="atsp", read=read_atsp, sniff=is_atsp_file, read_solution=read_solution,
    write_solution=lambda atsp, path, tour: write_tour(path, atsp, tour), solution_suffix=".tour",
    generators={"atsp": _generate})
