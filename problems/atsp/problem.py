"""The asymmetric travelling salesman problem: the instance, directed tour lengths, TSPLIB
``TYPE: ATSP`` files; the transformation that lets the symmetric TSP's searches solve it is in
problems/atsp/twin.py.

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
from metaheur.problem.arrays import INT32_MAX, exact_integers
from metaheur.problem.fingerprint import fingerprint
from metaheur.problem.interface import ProblemFormats, SearchForm, check_permutation
from metaheur.problem.textio import read_text
from metaheur.problems.atsp.twin import JVTransform, jonker_volgenant
from metaheur.problems.tsp.problem import TourProblem
from metaheur.problems.tsp.tsplib import (
    EXPLICIT_FORMATS,
    _dimension,
    _explicit_matrix,
    _node_lines,
    _sections,
    read_solution,
    write_tour,
)


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
    """The instance named ``gen:atsp:N[:SEED]`` (problems/atsp/generator.py)."""
    from metaheur.problems.atsp.generator import generate

    return generate(spec)


ATSP.formats = ProblemFormats(
    extensions=(".atsp",), folder="atsp", read=read_atsp, sniff=is_atsp_file, read_solution=read_solution,
    write_solution=lambda atsp, path, tour: write_tour(path, atsp, tour), solution_suffix=".tour",
    generators={"atsp": _generate})
