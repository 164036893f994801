"""LOLIB files of the linear ordering problem: instances and solutions.

* An instance file holds ``n``, then the n x n matrix row-major, as integers with any whitespace
  (LOLIB's format; the files have no extension).
* A solution file (``NAME.sol``) lists the items in their order, first to last, 1-based (0-based
  accepted when the numbers run over 0..n-1), with any whitespace.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from metaheur.errors import InputFormatError
from metaheur.inputs import SOLUTION, is_integer
from metaheur.problem.generators import generated_size
from metaheur.problem.interface import LoadedSolution, ProblemFormats
from metaheur.problem.textio import numbered_permutation, parse_ints, read_square_matrices, read_text, token_line
from metaheur.problems.lop.generator import random_lop
from metaheur.problems.lop.problem import LOP, overflow_reason

MAX_N = 100_000
SOLUTION_SUFFIX = ".sol"


def read_lolib(path: str | os.PathLike, name: str | None = None) -> LOP:
    """Read a LOLIB instance file: ``n``, then ``n * n`` integers (any whitespace)."""
    [matrix] = read_square_matrices(path, 1, 2, MAX_N, "a dense LOP matrix")
    reason = overflow_reason(matrix)
    if reason:
        raise InputFormatError(path, reason)
    return LOP(matrix, name or Path(path).name, source=os.fspath(path))


def looks_like_lolib(path: str | os.PathLike) -> bool:
    """True when the file is integers only and their count is ``1 + n * n`` for the first one, ``n``
    (a QAPLIB file has ``1 + 2 n^2``)."""
    try:
        tokens = read_text(path).split()
    except InputFormatError:
        return False
    if not tokens or not is_integer(tokens[0], signed=False):
        return False
    n = int(tokens[0])
    return n >= 2 and len(tokens) == 1 + n * n


def read_order(path: str | os.PathLike, lop: LOP | None = None) -> np.ndarray:
    """Read a solution file: the items in order, 1-based (or 0-based over 0..n-1), any whitespace;
    returned 0-based. With ``lop`` given, the count must be its ``n``."""
    lines = read_text(path, SOLUTION).splitlines()
    values = parse_ints(path, lines)
    if values.size == 0:
        raise InputFormatError(path, "empty file; expected the items in their order, 1-based")
    if lop is not None and values.size != lop.n:
        raise InputFormatError(path, f"the order has {values.size} items, the instance {lop.name} has n = {lop.n}")
    order, _ = numbered_permutation(path, values, token_line(lines, 0))
    return order


def write_order(path: str | os.PathLike, lop: LOP, perm) -> int:
    """Write ``perm`` as a LOLIB solution file (the 1-based items on one line); returns its value."""
    p = lop.check_solution(perm)
    Path(path).write_text(" ".join(str(int(x) + 1) for x in p) + "\n")
    return lop.value(p)


def read_solution(lop: LOP, path: str | os.PathLike) -> LoadedSolution:
    """A LOP solution file (:func:`read_order`) as the interface's :class:`LoadedSolution`."""
    return LoadedSolution(read_order(path, lop), None, None)


def _generate(spec: str) -> LOP:
    n, seed = generated_size(spec, max_n=20_000)
    return random_lop(n, seed)


LOP.formats = ProblemFormats(
    extensions=(), folder="lop", read=read_lolib, sniff=looks_like_lolib, read_solution=read_solution,
    write_solution=lambda lop, path, perm: write_order(path, lop, perm), solution_suffix=SOLUTION_SUFFIX,
    generators={"lop": _generate})
