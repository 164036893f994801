"""QAPLIB files (Burkard, Karisch and Rendl 1997): ``.dat`` instances (``n``, then the matrices ``A``
and ``B``, n*n integers each, any line breaks), ``.sln`` solutions (``n``, the cost, a 1-based
permutation) and plain assignment lists; :data:`QAP.formats <metaheur.problems.qap.QAP.formats>`."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from metaheur.errors import InputFormatError
from metaheur.inputs import SOLUTION, is_integer
from metaheur.problem.interface import LoadedSolution, ProblemFormats
from metaheur.problem.textio import (
    is_number_list,
    numbered_permutation,
    parse_ints,
    read_square_matrices,
    read_text,
    token_line,
)
from metaheur.problems.qap.generator import generate
from metaheur.problems.qap.problem import QAP


def _looks_like_qaplib(path: str | os.PathLike) -> bool:
    """Whether a file starts with a number, as a QAPLIB ``.dat`` does (TSPLIB files start with a keyword)."""
    return is_number_list(read_text(path).lstrip()[:32])



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
    flow, dist = read_square_matrices(path, 2, 1, 100_000, "a dense QAP")
    return QAP(name or Path(path).stem, flow, dist, source=os.fspath(path))


def read_sln(path: str | os.PathLike, qap: QAP | None = None) -> QAPSolution:
    """Read a QAPLIB ``.sln`` file: ``n``, the cost, then a 1-based permutation (0-based accepted).

    Some published files store the inverse permutation. Given the instance, the orientation whose
    cost equals the stated cost is returned (``orientation`` says which); when neither matches,
    the permutation is returned as written with ``orientation = "direct"`` and the caller sees the
    mismatch by comparing ``stated_cost`` with the recomputed cost.
    """
    text = read_text(path, SOLUTION)
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
    lines = read_text(path, SOLUTION).splitlines()
    p = parse_ints(path, lines)
    n = qap.n
    if p.size != n:
        raise InputFormatError(path, f"the list has {p.size} numbers, the instance has n = {n} "
                                     "(a QAPLIB .sln starts with n and the cost)")
    return numbered_permutation(path, p)


def write_sln(path: str | os.PathLike, qap: QAP, perm) -> int:
    """Write ``perm`` as a QAPLIB ``.sln`` (``n cost`` then the 1-based permutation); returns the cost."""
    p = qap.check_permutation(perm)
    cost = qap.cost(p)
    rows = [" ".join(str(int(x) + 1) for x in p[k : k + 20]) for k in range(0, qap.n, 20)]
    Path(path).write_text(f"{qap.n} {cost}\n" + "\n".join(rows) + "\n")
    return cost


def _is_sln(text: str, n: int) -> bool:
    """Whether a QAP solution file of numbers is a QAPLIB ``.sln`` (``n``, the cost, the
    permutation) rather than a plain assignment list: ``n`` numbers are a list; ``n + 2`` numbers
    starting with ``n``, or a first line of two numbers (the size and the cost), a ``.sln``."""
    tokens = text.split()
    if len(tokens) == n:
        return False
    first_line = next((line.split() for line in text.splitlines() if line.strip()), [])
    return len(first_line) == 2 or (len(tokens) == n + 2 and is_integer(tokens[0]) and int(tokens[0]) == n)


def read_solution(qap: QAP, path: str | os.PathLike) -> LoadedSolution:
    """A QAP solution file: a QAPLIB ``.sln`` or a plain assignment list; a TSP tour file is
    refused with both problems named."""
    path = Path(path)
    text = read_text(path, SOLUTION)
    if path.suffix.lower() == ".tour" or "TOUR_SECTION" in text.upper():
        raise InputFormatError(path, f"this is a TSP tour file, the instance {qap.name} is a QAP")
    if not is_number_list(text):
        raise InputFormatError(path, f"not a QAP solution: {qap.name} is a QAP, which takes a QAPLIB .sln "
                                     "or a plain list of locations")
    if not _is_sln(text, qap.n):
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
    generators={"qap": generate}, sniff_broad=True)
