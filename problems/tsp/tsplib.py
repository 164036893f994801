"""TSPLIB files (Reinelt 1991; TSPLIB95 documentation): ``.tsp`` instances with every coordinate
type and the nine EDGE_WEIGHT_FORMATs of EXPLICIT matrices, ``.tour`` solutions and plain city
lists; :data:`TSP.formats <metaheur.problems.tsp.TSP.formats>`. The ATSP's reader shares the
section parser (problems/atsp/problem.py)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import numpy as np

from metaheur.errors import InputFormatError, MetaheurError
from metaheur.inputs import SOLUTION, parse_int
from metaheur.problem.best_known import best_known
from metaheur.problem.interface import LoadedSolution, ProblemFormats
from metaheur.problem.textio import (
    is_number_list,
    numbered_permutation,
    parse_floats,
    parse_ints,
    read_text,
    token_line,
)
from metaheur.problems.tsp.distances import COORD_TYPES, UNSUPPORTED_TYPES
from metaheur.problems.tsp.generators import generate
from metaheur.problems.tsp.problem import COORD_LIMIT, TSP

EXPLICIT_FORMATS = (
    "FULL_MATRIX", "UPPER_ROW", "LOWER_ROW", "UPPER_DIAG_ROW", "LOWER_DIAG_ROW",
    "UPPER_COL", "LOWER_COL", "UPPER_DIAG_COL", "LOWER_DIAG_COL",
)
# For a symmetric matrix a column-wise triangle is the opposite row-wise triangle.
_COLUMN_AS_ROW = {
    "UPPER_COL": "LOWER_ROW", "LOWER_COL": "UPPER_ROW",
    "UPPER_DIAG_COL": "LOWER_DIAG_ROW", "LOWER_DIAG_COL": "UPPER_DIAG_ROW",
}
_KEYWORDS = {
    "NAME", "TYPE", "COMMENT", "DIMENSION", "CAPACITY", "EDGE_WEIGHT_TYPE", "EDGE_WEIGHT_FORMAT",
    "EDGE_DATA_FORMAT", "NODE_COORD_TYPE", "DISPLAY_DATA_TYPE", "EOF",
}
_SECTIONS = {
    "NODE_COORD_SECTION", "DEPOT_SECTION", "DEMAND_SECTION", "EDGE_DATA_SECTION", "FIXED_EDGES_SECTION",
    "DISPLAY_DATA_SECTION", "TOUR_SECTION", "EDGE_WEIGHT_SECTION",
}
_HEADER = re.compile(r"^\s*([A-Za-z_]+)\s*(?::\s*(.*?))?\s*$")



def _split_header(line: str):
    """``(KEY, value)`` for a TSPLIB keyword line, or ``None`` for a data line."""
    m = _HEADER.match(line)
    if not m:
        return None
    key = m.group(1).upper()
    if key in _KEYWORDS or key in _SECTIONS:
        return key, (m.group(2) or "").strip()
    return None


def _sections(path, lines: list[str]):
    """Split a TSPLIB file into header keywords and sections ``{NAME: (first line no, lines)}``."""
    header: dict[str, tuple[str, int]] = {}
    sections: dict[str, tuple[int, list[str]]] = {}
    current: str | None = None
    for number, line in enumerate(lines, 1):
        stripped = line.strip()
        if not stripped:
            continue
        parsed = _split_header(stripped)
        if parsed is None:
            if current is None:
                m = _HEADER.match(stripped)
                if m and m.group(2) is not None:
                    continue  # an unknown "KEY : value" keyword: TSPLIB extensions are ignored
                raise InputFormatError(path, f"unexpected line {stripped[:40]!r} (not a TSPLIB keyword)", number)
            sections[current][1].append(line)
            continue
        key, value = parsed
        if key == "EOF":
            break
        if key in _SECTIONS:
            if key in sections:
                raise InputFormatError(path, f"{key} appears twice", number)
            current = key
            sections[key] = (number + 1, [value] if value else [])
            continue
        current = None
        if key == "COMMENT" and key in header:  # several COMMENT lines are common: keep them all
            header[key] = (f"{header[key][0]} {value}".strip(), header[key][1])
            continue
        if key in header:
            raise InputFormatError(path, f"keyword {key} appears twice", number)
        header[key] = (value, number)
    return header, sections


def _dimension(path, header) -> int:
    if "DIMENSION" not in header:
        raise InputFormatError(path, "missing DIMENSION")
    value, line = header["DIMENSION"]
    try:
        n = parse_int(value)
    except ValueError:
        raise InputFormatError(path, f"DIMENSION {value!r} is not an integer", line) from None
    if n < 1:
        raise InputFormatError(path, f"DIMENSION {n} must be at least 1", line)
    return n


def _node_lines(path, section: str, first: int, lines: list[str], n: int) -> np.ndarray:
    """An ``id x y`` section (n lines, ids a permutation of 1..n) as an n x 2 coordinate array."""
    rows = [(first + k, ln) for k, ln in enumerate(lines) if ln.strip()]
    if len(rows) != n:
        where = rows[-1][0] if rows else max(first - 1, 1)
        raise InputFormatError(path, f"{section} has {len(rows)} lines, DIMENSION = {n}", where)
    for number, ln in rows:
        if len(ln.split()) != 3:
            raise InputFormatError(path, f"{section}: expected 'id x y', got {ln.strip()[:40]!r}", number)
    values = parse_floats(path, [ln for _, ln in rows], rows[0][0]).reshape(n, 3)
    ids = values[:, 0]
    if not np.all(ids == np.round(ids)) or ids.min() < 1 or ids.max() > n or np.unique(ids).size != n:
        seen: set[float] = set()
        for k, v in enumerate(ids):
            if v != round(v) or not 1 <= v <= n or v in seen:
                raise InputFormatError(path, f"{section}: node ids must be 1..{n}, each once", rows[k][0])
            seen.add(v)
    coords = np.empty((n, 2))
    coords[ids.astype(np.int64) - 1] = values[:, 1:]
    return coords


def _triangle_count(fmt: str, n: int) -> int:
    if fmt == "FULL_MATRIX":
        return n * n
    diag = "DIAG" in fmt
    return n * (n + 1) // 2 if diag else n * (n - 1) // 2


def _explicit_matrix(path, fmt: str, first: int, lines: list[str], n: int, *, symmetric: bool = True) -> np.ndarray:
    """Expand an EDGE_WEIGHT_SECTION in any TSPLIB format into an n x n matrix: a triangle is
    mirrored; a FULL_MATRIX is kept as written, and must be symmetric when ``symmetric``."""
    weights = parse_ints(path, lines, first)
    need = _triangle_count(fmt, n)
    if weights.size < need:
        raise InputFormatError(
            path, f"EDGE_WEIGHT_SECTION truncated: {fmt} with DIMENSION = {n} needs {need} weights, found "
            f"{weights.size}", first + max(len(lines) - 1, 0))
    if weights.size > need:
        raise InputFormatError(
            path, f"EDGE_WEIGHT_SECTION has {weights.size - need} weights too many for {fmt} with DIMENSION = {n}",
            token_line(lines, need, first))
    if fmt == "FULL_MATRIX":
        m = weights.reshape(n, n)
        if symmetric and not np.array_equal(m, m.T):
            i, j = np.argwhere(m != m.T)[0]
            raise InputFormatError(
                path, f"FULL_MATRIX is not symmetric (d({i + 1},{j + 1}) = {m[i, j]}, d({j + 1},{i + 1}) = "
                f"{m[j, i]}); an asymmetric instance needs TYPE: ATSP", first)
        return m.copy()
    row_fmt = _COLUMN_AS_ROW.get(fmt, fmt)
    m = np.zeros((n, n), dtype=np.int64)
    upper = row_fmt.startswith("UPPER")
    k = 0 if "DIAG" in row_fmt else 1
    rows, cols = np.triu_indices(n, k) if upper else np.tril_indices(n, -k)
    # triu/tril indices come out row by row, which is the file's order for the row formats.
    m[rows, cols] = weights
    m[cols, rows] = weights
    return m


def read_tsplib(path: str | os.PathLike, name: str | None = None) -> TSP:
    """Read a symmetric TSPLIB ``.tsp`` file exactly (every EDGE_WEIGHT_TYPE listed in the module doc)."""
    text = read_text(path)
    lines = text.splitlines()
    if not text.strip():
        raise InputFormatError(path, "empty file")
    header, sections = _sections(path, lines)
    kind, kind_line = header.get("TYPE", ("TSP", None))
    if not kind.upper().startswith("TSP"):
        raise InputFormatError(path, f"TYPE {kind!r} is not supported (symmetric TSP only)", kind_line)
    n = _dimension(path, header)
    if "EDGE_WEIGHT_TYPE" not in header:
        raise InputFormatError(path, "missing EDGE_WEIGHT_TYPE")
    wtype, wline = header["EDGE_WEIGHT_TYPE"]
    wtype = wtype.upper()
    if wtype in UNSUPPORTED_TYPES:
        raise InputFormatError(path, f"EDGE_WEIGHT_TYPE {wtype} is not supported", wline)
    if wtype not in COORD_TYPES and wtype != "EXPLICIT":
        raise InputFormatError(path, f"unknown EDGE_WEIGHT_TYPE {wtype!r}", wline)
    if "FIXED_EDGES_SECTION" in sections:
        raise InputFormatError(path, "FIXED_EDGES_SECTION is not supported", sections["FIXED_EDGES_SECTION"][0] - 1)
    inst_name = name or header.get("NAME", (Path(path).stem, 0))[0] or Path(path).stem
    inst_name = inst_name.removesuffix(".tsp")
    comment = header.get("COMMENT", ("", 0))[0]
    display = None
    if "DISPLAY_DATA_SECTION" in sections:
        first, body = sections["DISPLAY_DATA_SECTION"]
        display = _node_lines(path, "DISPLAY_DATA_SECTION", first, body, n)
    if wtype == "EXPLICIT":
        if "EDGE_WEIGHT_FORMAT" not in header:
            raise InputFormatError(path, "EXPLICIT weights need an EDGE_WEIGHT_FORMAT")
        fmt, fline = header["EDGE_WEIGHT_FORMAT"]
        fmt = fmt.upper()
        if fmt not in EXPLICIT_FORMATS:
            raise InputFormatError(path, f"unknown EDGE_WEIGHT_FORMAT {fmt!r}", fline)
        if "EDGE_WEIGHT_SECTION" not in sections:
            raise InputFormatError(path, "EXPLICIT weights but no EDGE_WEIGHT_SECTION")
        first, body = sections["EDGE_WEIGHT_SECTION"]
        matrix = _explicit_matrix(path, fmt, first, body, n)
        weights_line = first
        if display is None and "NODE_COORD_SECTION" in sections:
            first, body = sections["NODE_COORD_SECTION"]
            display = _node_lines(path, "NODE_COORD_SECTION", first, body, n)
        try:
            return TSP(inst_name, "EXPLICIT", matrix=matrix, weight_format=fmt, display=display,
                       comment=comment, source=os.fspath(path))
        except InputFormatError:
            raise
        except MetaheurError as exc:  # distances the TSP refuses (negative, asymmetric): the file's error
            raise InputFormatError(path, str(exc).removeprefix(f"{inst_name}: "), weights_line) from None
    if "NODE_COORD_SECTION" not in sections:
        raise InputFormatError(path, f"EDGE_WEIGHT_TYPE {wtype} needs a NODE_COORD_SECTION")
    first, body = sections["NODE_COORD_SECTION"]
    coords = _node_lines(path, "NODE_COORD_SECTION", first, body, n)
    far = np.flatnonzero(np.abs(coords).max(axis=1) > COORD_LIMIT)
    if far.size:
        rows = [first + k for k, ln in enumerate(body) if ln.strip()]
        order = [int(float(ln.split()[0])) - 1 for ln in body if ln.strip()]
        line = rows[order.index(int(far[0]))]
        raise InputFormatError(path, f"coordinate beyond +-{COORD_LIMIT:.0e}: distances must fit 32-bit integers", line)
    return TSP(inst_name, wtype, coords=coords, display=display, comment=comment, source=os.fspath(path))


def read_tour(path: str | os.PathLike, tsp: TSP | None = None) -> np.ndarray:
    """Read the (first) tour of a TSPLIB ``.tour`` file as a 0-based array.

    The ``-1`` terminator and ``EOF`` are optional. With ``tsp`` given the tour must visit its
    cities; otherwise its DIMENSION (or its own length) decides.
    """
    text = read_text(path, SOLUTION)
    lines = text.splitlines()
    if is_number_list(text):
        return read_city_list(path, tsp)[0]
    header, sections = _sections(path, lines)
    if "TOUR_SECTION" not in sections:
        raise InputFormatError(path, "no TOUR_SECTION")
    first, body = sections["TOUR_SECTION"]
    values = parse_ints(path, body, first)
    stop = np.flatnonzero(values == -1)
    tour = values[: stop[0]] if stop.size else values
    n = tsp.n if tsp is not None else (_dimension(path, header) if "DIMENSION" in header else tour.size)
    if "DIMENSION" in header and _dimension(path, header) != n:
        raise InputFormatError(path, f"tour DIMENSION {_dimension(path, header)} but the instance has n = {n}",
                               header["DIMENSION"][1])
    if tour.size != n:
        raise InputFormatError(path, f"tour has {tour.size} cities, expected {n}",
                               token_line(body, max(tour.size - 1, 0), first))
    if tour.size == 0:
        raise InputFormatError(path, "TOUR_SECTION lists no cities", first)
    p = tour - 1
    if n and (p.min() < 0 or p.max() >= n or np.bincount(p, minlength=n).max() != 1):
        raise InputFormatError(path, f"tour is not a permutation of 1..{n}", first)
    return p


def read_city_list(path: str | os.PathLike, tsp: TSP | None = None) -> tuple[np.ndarray, bool]:
    """Read a plain list of cities (one or more numbers per line, as LKH and Concorde write
    tours) as a 0-based tour, and whether the file numbered cities from 0.

    Cities are 1-based, or 0-based when they run over 0..n-1 (Concorde). A leading count equal
    to n (Concorde's first line) and a ``-1`` terminator are allowed.
    """
    lines = read_text(path, SOLUTION).splitlines()
    values = parse_ints(path, lines)
    stop = np.flatnonzero(values == -1)
    cities = values[: stop[0]] if stop.size else values
    n = tsp.n if tsp is not None else None
    if cities.size >= 2 and int(cities[0]) == cities.size - 1 and (n is None or n == cities.size - 1):
        cities = cities[1:]  # a leading count
    n = cities.size if n is None else n
    if cities.size != n:
        raise InputFormatError(path, f"the list has {cities.size} cities, the instance has n = {n}")
    return numbered_permutation(path, cities)


def write_tour(path: str | os.PathLike, tsp: TSP, tour, name: str | None = None) -> int:
    """Write a TSPLIB ``.tour`` (1-based, ``-1`` and ``EOF`` terminated); returns the tour length."""
    t = tsp.check_tour(tour)
    length = tsp.tour_length(t)
    head = [
        f"NAME : {name or tsp.name}.tour",
        f"COMMENT : Length = {length} (metaheur)",
        "TYPE : TOUR",
        f"DIMENSION : {tsp.n}",
        "TOUR_SECTION",
    ]
    Path(path).write_text("\n".join(head) + "\n" + "\n".join(str(int(c) + 1) for c in t) + "\n-1\nEOF\n")
    return length


def _tour_name(text: str) -> str | None:
    """The instance a .tour file's NAME names (``pr2392.opt.tour`` -> ``pr2392``), if any."""
    for line in text.splitlines()[:20]:
        key, _, value = line.partition(":")
        if key.strip().upper() == "NAME" and value.strip():
            return value.strip().split(".")[0]
    return None


def read_solution(tsp, path: str | os.PathLike) -> LoadedSolution:
    """A tour of a TSP or ATSP: a TSPLIB ``.tour`` or a plain city list; a QAP ``.sln``, or a
    ``.tour`` that names another known instance, is refused with both named."""
    path = Path(path)
    text = read_text(path, SOLUTION)
    if path.suffix.lower() == ".sln":
        raise InputFormatError(path, f"this is a QAP solution file (.sln), the instance {tsp.name} is a "
                                     f"{tsp.kind.upper()}")
    if is_number_list(text):
        tour, zero_based = read_city_list(path, tsp)
        return LoadedSolution(tour, None, "the file numbers cities from 0" if zero_based else None)
    header = _tour_name(text)
    if header and header.lower() != tsp.name.lower() and best_known(header) is not None:
        raise InputFormatError(path, f"a tour of {header}, not of {tsp.name}")
    return LoadedSolution(read_tour(path, tsp), None, None)


def _looks_like_tsplib(path: str | os.PathLike) -> bool:
    """Whether a file starts with a keyword, not a number (the QAPLIB files' start)."""
    return not is_number_list(read_text(path))


def read_tsplib_file(path: str | os.PathLike) -> TSP:
    """A TSPLIB file: :func:`read_tsplib`, or :func:`~metaheur.problems.atsp.read_atsp` when it
    says ``TYPE: ATSP``."""
    from metaheur.problems.atsp import is_atsp_file, read_atsp

    return read_atsp(path) if is_atsp_file(path) else read_tsplib(path)


TSP.formats = ProblemFormats(
    extensions=(".tsp",), folder="tsplib", read=read_tsplib_file, sniff=_looks_like_tsplib, read_solution=read_solution,
    write_solution=lambda tsp, path, tour: write_tour(path, tsp, tour), solution_suffix=".tour",
    generators={"tsp": generate, "tsp-uniform": generate, "tsp-clustered": generate}, sniff_broad=True)
