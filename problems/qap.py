"""The quadratic assignment problem (QAP): QAPLIB ``.dat`` / ``.sln`` files and the exact cost.

Conventions (QAPLIB's; Burkard, Karisch and Rendl 1997):

* A ``.dat`` file holds ``n``, then matrix ``A`` (n x n, row-major), then matrix ``B``, as a stream
  of integers with any line breaks.
* ``A`` is called the *flow* matrix (between units i, j) and ``B`` the *distance* matrix (between
  locations), as QAPLIB's description does. Several families store the distances first (nug, sko,
  had, ...); the cost is the same either way, so we keep the file's order and names.
* A solution is a permutation ``p`` that puts unit ``i`` on location ``p[i]`` (0-based in Python,
  1-based in files). Its cost is ``sum_ij A[i, j] * B[p[i], p[j]]``, an exact integer.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from metaheur.errors import InputFormatError, MetaheurError
from metaheur.problems.arrays import exact_integers
from metaheur.problems.fingerprint import fingerprint
from metaheur.problems.interface import LoadedSolution, Problem, ProblemFormats, check_permutation
from metaheur.problems.textio import is_number_list, parse_ints, read_text, token_line

if TYPE_CHECKING:
    from metaheur.islands.params import IslandParams

INT32_MAX = 2**31 - 1
#: Dominance below which a QAP is of the uniformly random class (58 for uniform entries); none of
#: QAPLIB's 126 instances lies between 79 and 101.
UNIFORM_DOMINANCE = 80.0


def matrix_dominance(matrix: np.ndarray) -> float:
    """The dominance of a flow or distance matrix (Vollmann and Buffa 1966; Taillard 1995,
    "Comparison of iterative searches for the quadratic assignment problem"): 100 times the
    standard deviation of its entries over the absolute value of their mean (0 when the mean is
    0); uniformly random entries give 100 / sqrt(3) = 58."""
    m = np.asarray(matrix, dtype=np.float64)
    mean = abs(m.mean())
    return float(100.0 * m.std() / mean) if mean else 0.0


def _looks_like_qaplib(path: str | os.PathLike) -> bool:
    """Whether a file starts with a number, as a QAPLIB ``.dat`` does (TSPLIB files start with a keyword)."""
    first = read_text(path).lstrip()[:32].split()
    return bool(first) and first[0].lstrip("+-").isdigit()


def _generate(spec: str) -> QAP:
    from metaheur.problems.generators import generated_size, random_qap

    n, seed = generated_size(spec, max_n=5000)
    return random_qap(n, seed, name=f"gen-qap-{n}-s{seed}")


@dataclass(frozen=True, eq=False)
class QAP(Problem):
    """A QAP instance: ``flow`` (A) and ``distance`` (B), both n x n int64."""

    title = "quadratic assignment problem"
    crossovers = ("ux", "cx", "pmx", "none")
    picture = "assignment"

    name: str
    flow: np.ndarray
    distance: np.ndarray
    source: str | None = None
    kind: str = field(default="qap", init=False)

    def __post_init__(self) -> None:
        a = exact_integers(self.flow, f"{self.name}: flow matrix")
        b = exact_integers(self.distance, f"{self.name}: distance matrix")
        if a.ndim != 2 or a.shape[0] != a.shape[1] or a.shape != b.shape:
            raise MetaheurError(f"{self.name}: flow and distance must be square matrices of one size")
        if a.shape[0] < 1:
            raise MetaheurError(f"{self.name}: a QAP needs n >= 1")
        object.__setattr__(self, "flow", a)
        object.__setattr__(self, "distance", b)
        self.flow.setflags(write=False)
        self.distance.setflags(write=False)

    def fingerprint(self) -> str:
        """A fingerprint of the instance's data (name, size and both matrices)."""
        return fingerprint(f"{self.kind}:{self.name}:{self.n}", (self.flow, self.distance))

    @property
    def n(self) -> int:
        return int(self.flow.shape[0])

    @property
    def cost_fits_int64(self) -> bool:
        """True when every cost and swap delta is guaranteed to fit a signed 64-bit integer."""
        bound = int(np.abs(self.flow).max()) * int(np.abs(self.distance).max()) * self.n * self.n * 4
        return bound < 2**63

    @property
    def fits_int32(self) -> bool:
        """True when both matrices fit int32 (what the kernels store)."""
        return all(int(np.abs(m).max()) <= INT32_MAX for m in (self.flow, self.distance))

    def properties(self) -> dict:
        """Matrix properties shown by ``metaheur info``."""
        out = {}
        for label, m in (("flow", self.flow), ("distance", self.distance)):
            out[f"{label}_symmetric"] = bool(np.array_equal(m, m.T))
            out[f"{label}_zero_diagonal"] = bool(not np.diagonal(m).any())
            out[f"{label}_min"] = int(m.min())
            out[f"{label}_max"] = int(m.max())
            out[f"{label}_dominance"] = round(matrix_dominance(m), 1)
        return out

    @classmethod
    def describe_lines(cls, props: dict) -> list[str]:
        lines = []
        for label in ("flow", "distance"):
            sym = "symmetric" if props[f"{label}_symmetric"] else "asymmetric"
            diag = "zero diagonal" if props[f"{label}_zero_diagonal"] else "non-zero diagonal"
            lines.append(f"{label:<11} {sym}, {diag}, entries {props[f'{label}_min']}..{props[f'{label}_max']}, "
                         f"dominance {props[f'{label}_dominance']}")
        return lines

    @property
    def dominance(self) -> float:
        """The larger of the two matrices' dominances (:func:`matrix_dominance`): 41-79 for uniformly
        random instances (tai*a, rou, had, lipa), 101-155 for nug, sko, tho and kra, 185-1,150
        for sparse real-life-like ones (tai*b, ste, esc, bur) among the 126 QAPLIB instances."""
        return max(matrix_dominance(self.flow), matrix_dominance(self.distance))

    @property
    def uniformly_random(self) -> bool:
        """Whether the instance is of the uniformly random class (tai*a, rou, had, lipa): its
        :attr:`dominance` below ``UNIFORM_DOMINANCE``, as Taillard (1995) tells QAPLIB's classes
        apart. The defaults that depend on the class ask this."""
        return self.dominance < UNIFORM_DOMINANCE

    def check_permutation(self, perm, source: str | None = None) -> np.ndarray:
        """``perm`` as a 0-based int64 array, or a :class:`MetaheurError` saying why it is not one."""
        return check_permutation(perm, self.n, source)

    def evaluate(self, perms: np.ndarray) -> np.ndarray:
        """Exact costs of a k x n batch (:meth:`cost` of each)."""
        return np.array([self.cost(p) for p in np.asarray(perms)], dtype=np.int64)

    def value(self, perm) -> int:
        return self.cost(perm)

    def cost(self, perm) -> int:
        """Exact ``sum_ij A[i, j] * B[p[i], p[j]]``, recomputed from scratch."""
        p = self.check_permutation(perm)
        permuted = self.distance[np.ix_(p, p)]
        if self.cost_fits_int64:
            return int(np.einsum("ij,ij->", self.flow, permuted, dtype=np.int64))
        return int(sum(int(x) for x in (self.flow.astype(object) * permuted.astype(object)).ravel()))

    def swap_delta(self, perm, r: int, s: int) -> int:
        """Exact cost change of swapping the locations of units ``r`` and ``s`` (reference formula)."""
        p = self.check_permutation(perm)
        q = p.copy()
        q[r], q[s] = q[s], q[r]
        return self.cost(q) - self.cost(p)

    # how the islands solve it (metaheur/problems/qap_solving.py)
    def default_params(self):
        from metaheur.problems import qap_solving

        return qap_solving.default_params(self)

    def default_migration(self):
        from metaheur.problems import qap_solving

        return qap_solving.default_migration(self)

    def operators(self, device, params, ls_budget=None, quadrant=None):
        from metaheur.islands.operators import QAPOperators

        return QAPOperators(self, device, params, ls_budget, quadrant)

    def island_algorithms(self) -> dict:
        from metaheur.islands.tabu import TabuIsland

        return {"none": TabuIsland}

    def wave_blocks_per_sm(self, device) -> int:
        """The tabu search's blocks a multiprocessor runs at once (its block follows n)."""
        from metaheur.search import qap_tabu

        return qap_tabu.wave_blocks_per_sm(self, device)

    def precompile(self, device) -> None:
        from metaheur.problems import qap_solving

        qap_solving.precompile(self, device)

    def check_memory(self, devices) -> None:
        from metaheur.problems import qap_solving

        qap_solving.check_memory(self, devices)

    def local_search_island(self, params: IslandParams) -> IslandParams:
        """A tabu island: one continued robust tabu search (:func:`~metaheur.islands.params.ls_island`)."""
        from metaheur.islands.params import ls_island_params

        return ls_island_params(params)

    def default_local_search_islands(self, cpu_islands: int) -> int:
        from metaheur.problems import qap_solving

        return qap_solving.default_tabu_islands(cpu_islands)

    def draw(self, ax, perm) -> None:
        from metaheur.plots import plot_assignment

        plot_assignment(self, perm, ax)


@dataclass(frozen=True)
class QAPSolution:
    """A solution read from a ``.sln`` file."""

    permutation: np.ndarray
    stated_cost: int | None
    orientation: str  # "direct", "inverse" (file stored p^-1) or "unverified" (no instance given)
    zero_based: bool = False  # the file numbered locations from 0 instead of QAPLIB's 1
    source: str | None = None


def read_qaplib(path: str | os.PathLike, name: str | None = None) -> QAP:
    """Read a QAPLIB ``.dat`` file: ``n``, then ``A`` and ``B`` (n*n integers each), any line breaks."""
    text = read_text(path)
    lines = text.splitlines()
    values = parse_ints(path, lines)
    if values.size == 0:
        raise InputFormatError(path, "empty file; expected n followed by two n x n matrices")
    n = int(values[0])
    if n < 1:
        raise InputFormatError(path, f"n = {n}; the first number must be the size n >= 1", token_line(lines, 0))
    if n > 100_000:
        raise InputFormatError(path, f"n = {n} is too large for a dense QAP", token_line(lines, 0))
    need = 1 + 2 * n * n
    if values.size < need:
        last = max(len(lines), 1)
        raise InputFormatError(
            path, f"truncated: n = {n} needs {2 * n * n} matrix entries, the file has {values.size - 1}", last
        )
    if values.size > need:
        raise InputFormatError(
            path, f"{values.size - need} numbers after the two {n} x {n} matrices (is n = {n} right?)",
            token_line(lines, need),
        )
    flow = values[1 : 1 + n * n].reshape(n, n)
    dist = values[1 + n * n :].reshape(n, n)
    return QAP(name or Path(path).stem, flow, dist, source=os.fspath(path))


def read_sln(path: str | os.PathLike, qap: QAP | None = None) -> QAPSolution:
    """Read a QAPLIB ``.sln`` file: ``n``, the cost, then a 1-based permutation (0-based accepted).

    Some published files store the inverse permutation. Given the instance, the orientation whose
    cost equals the stated cost is returned (``orientation`` says which); when neither matches,
    the permutation is returned as written with ``orientation = "direct"`` and the caller sees the
    mismatch by comparing ``stated_cost`` with the recomputed cost.
    """
    text = read_text(path)
    lines = text.splitlines()
    values = parse_ints(path, lines)
    if values.size < 2:
        raise InputFormatError(path, "expected n, the cost and a permutation", max(len(lines), 1))
    n, stated = int(values[0]), int(values[1])
    if qap is not None and n != qap.n:
        raise InputFormatError(path, f"solution is for n = {n}, the instance has n = {qap.n}", token_line(lines, 0))
    if n < 1:
        raise InputFormatError(path, f"n = {n}; expected n >= 1", token_line(lines, 0))
    body = values[2:]
    if body.size != n:
        line = token_line(lines, min(2 + n, values.size - 1))
        raise InputFormatError(path, f"permutation has {body.size} entries, n = {n}", line)
    # QAPLIB files are 1-based, but a few published ones (tai40a.sln) are 0-based: the values say which.
    p, zero_based = numbered_permutation(path, body, token_line(lines, 2))
    if qap is None:
        return QAPSolution(p, stated, "unverified", zero_based, os.fspath(path))
    if qap.cost(p) != stated:
        inverse = np.argsort(p)
        if qap.cost(inverse) == stated:
            return QAPSolution(inverse, stated, "inverse", zero_based, os.fspath(path))
    return QAPSolution(p, stated, "direct", zero_based, os.fspath(path))


def read_assignment(path: str | os.PathLike, qap: QAP) -> tuple[np.ndarray, bool]:
    """Read a plain assignment list (the location of unit 1, unit 2, ...: n numbers, any line
    breaks, 1-based, or 0-based when they run over 0..n-1) as a 0-based permutation, and whether
    the file numbered locations from 0."""
    lines = read_text(path).splitlines()
    p = parse_ints(path, lines)
    n = qap.n
    if p.size != n:
        raise InputFormatError(path, f"the list has {p.size} numbers, the instance has n = {n} "
                                     "(a QAPLIB .sln starts with n and the cost)")
    return numbered_permutation(path, p)


def numbered_permutation(path, values: np.ndarray, line: int | None = None) -> tuple[np.ndarray, bool]:
    """A permutation as a file numbers it (1-based, or 0-based when the values run over 0..n-1,
    as some published files do) made 0-based, and whether it was 0-based."""
    n = values.size
    zero_based = n > 0 and int(values.min()) == 0 and int(values.max()) == n - 1
    p = values if zero_based else values - 1
    if n == 0 or p.min() < 0 or p.max() >= n or np.bincount(p, minlength=n).max() != 1:
        raise InputFormatError(path, f"not a permutation of 1..{n}", line)
    return p, zero_based


def write_sln(path: str | os.PathLike, qap: QAP, perm) -> int:
    """Write ``perm`` as a QAPLIB ``.sln`` (``n cost`` then the 1-based permutation); returns the cost."""
    p = qap.check_permutation(perm)
    cost = qap.cost(p)
    rows = [" ".join(str(int(x) + 1) for x in p[k : k + 20]) for k in range(0, qap.n, 20)]
    Path(path).write_text(f"{qap.n} {cost}\n" + "\n".join(rows) + "\n")
    return cost


def read_solution(qap: QAP, path: str | os.PathLike) -> LoadedSolution:
    """A QAP solution file: a QAPLIB ``.sln`` or a plain assignment list; a TSP tour file is
    refused with both problems named."""
    path = Path(path)
    text = read_text(path)
    if path.suffix.lower() == ".tour" or "TOUR_SECTION" in text.upper():
        raise InputFormatError(path, f"this is a TSP tour file, the instance {qap.name} is a QAP")
    if not is_number_list(text):
        raise InputFormatError(path, f"not a QAP solution: {qap.name} is a QAP, which takes a QAPLIB .sln "
                                     "or a plain list of locations")
    values = text.split()
    if len(values) == qap.n:
        perm, zero_based = read_assignment(path, qap)
        return LoadedSolution(perm, None, "the file numbers locations from 0" if zero_based else None)
    sol = read_sln(path, qap)
    notes = ["the file stores the inverse permutation"] if sol.orientation == "inverse" else []
    if sol.zero_based:
        notes.append("the file numbers locations from 0")
    return LoadedSolution(sol.permutation, sol.stated_cost, "; ".join(notes) or None)


QAP.formats = ProblemFormats(
    extensions=(".dat",), folder="qaplib", read=read_qaplib, sniff=_looks_like_qaplib, read_solution=read_solution,
    write_solution=lambda qap, path, perm: write_sln(path, qap, perm), solution_suffix=".sln",
    generators={"qap": _generate})
