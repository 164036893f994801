"""Reading whitespace-separated numbers with exact line numbers for error messages, and the
``FILE#NAME`` pick of one instance of a file of several.

The fast path converts all tokens at once with numpy; only when a token is bad do we walk the
lines again to say where.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import numpy as np

from metaheur.errors import InputFormatError
from metaheur.inputs import INSTANCE, is_integer, parse_int, read_bytes


def split_pick(spec: str | os.PathLike) -> tuple[str | os.PathLike, str | None]:
    """``FILE#NAME`` (or ``FILE#K``) as the file and the pick of one instance of several; a spec that
    is an existing file, or has no ``#`` between a file and a pick, as it is with no pick."""
    text = os.fspath(spec)
    base, mark, pick = text.rpartition("#")
    if not mark or not base or not pick or os.path.exists(os.path.expanduser(text)):
        return spec, None
    return base, pick


def read_text(path: str | os.PathLike, kind: str = INSTANCE) -> str:
    """Whole file as text (UTF-8, else Latin-1), read through :func:`metaheur.inputs.read_bytes`
    (a regular file within the cap of ``kind``); a missing, unreadable, special, too large or
    binary file is an :class:`InputFormatError`."""
    raw = read_bytes(path, kind)
    if b"\x00" in raw:
        raise InputFormatError(path, "binary data (NUL bytes); expected a text file")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("latin-1")


def token_line(lines: Sequence[str], index: int, first_line: int = 1) -> int:
    """1-based line number of token ``index`` (0-based) in ``lines``; the last line if past the end."""
    count = 0
    for offset, line in enumerate(lines):
        width = len(line.split())
        if index < count + width:
            return first_line + offset
        count += width
    return first_line + max(len(lines) - 1, 0)


def _plain(text: str) -> bool:
    """Whether the numbers of ``text`` may go to Python's or numpy's conversions: ASCII without
    underscores (they also take ``1_000`` and other scripts' digits, which a file never means)."""
    return text.isascii() and "_" not in text


def _bad_token(path, lines: Sequence[str], tokens: list[str], first_line: int, kind: str) -> InputFormatError:
    for k, tok in enumerate(tokens):
        try:
            value = parse_int(tok) if kind == "integer" else _parse_float(tok)
        except ValueError:
            return InputFormatError(path, f"{tok!r} is not {'an' if kind == 'integer' else 'a'} {kind}",
                                    token_line(lines, k, first_line))
        if kind == "number" and not np.isfinite(value):
            return InputFormatError(path, f"{tok!r} is not a finite number", token_line(lines, k, first_line))
        if kind == "integer" and not -(2**63) <= value < 2**63:
            return InputFormatError(path, f"{tok!r} is out of the 64-bit integer range",
                                    token_line(lines, k, first_line))
    return InputFormatError(path, f"cannot read the {kind}s", first_line)


def _parse_float(token: str) -> float:
    """``token`` as a float when it is plain ASCII (:func:`_plain`); a ValueError otherwise."""
    if not _plain(token):
        raise ValueError(token)
    return float(token)


def parse_ints(path, lines: Sequence[str], first_line: int = 1) -> np.ndarray:
    """All tokens of ``lines`` as int64 (ASCII digits with an optional sign,
    :func:`metaheur.inputs.is_integer`); a non-integer token raises with its line."""
    text = " ".join(lines)
    tokens = text.split()
    try:
        if not _plain(text):
            raise ValueError
        values = np.array([int(t) for t in tokens], dtype=np.int64)
    except (ValueError, OverflowError):
        raise _bad_token(path, lines, tokens, first_line, "integer") from None
    return values


def parse_floats(path, lines: Sequence[str], first_line: int = 1) -> np.ndarray:
    """All tokens of ``lines`` as float64; a non-numeric or non-finite token raises with its line."""
    text = " ".join(lines)
    tokens = text.split()
    try:
        if not _plain(text):
            raise ValueError
        values = np.array(tokens, dtype=np.float64) if tokens else np.zeros(0)
    except ValueError:
        raise _bad_token(path, lines, tokens, first_line, "number") from None
    if not np.all(np.isfinite(values)):
        raise _bad_token(path, lines, tokens, first_line, "number")
    return values


def is_number_list(text: str) -> bool:
    """Whether a solution file is a plain list of numbers (no TSPLIB keywords)."""
    first = text.split(maxsplit=1)[:1]
    return bool(first) and is_integer(first[0])


def numbered_permutation(path, values: np.ndarray, line: int | None = None) -> tuple[np.ndarray, bool]:
    """A permutation as a file numbers it (1-based, or 0-based when the values run over 0..n-1,
    as some published files do) made 0-based, and whether it was 0-based."""
    n = values.size
    zero_based = n > 0 and int(values.min()) == 0 and int(values.max()) == n - 1
    p = values if zero_based else values - 1
    if n == 0 or p.min() < 0 or p.max() >= n or np.bincount(p, minlength=n).max() != 1:
        raise InputFormatError(path, f"not a permutation of 1..{n}", line)
    return p, zero_based


def read_square_matrices(path, count: int, least: int, most: int, dense: str) -> np.ndarray:
    """The matrices of a file holding ``n``, then ``count`` (1 or 2) n x n integer matrices, row-major
    with any whitespace (QAPLIB's and LOLIB's instances), as a count x n x n int64 array; one-line
    errors naming the file and line for an empty file, ``n`` below ``least`` or above ``most`` (too
    large for ``dense``, "a dense QAP"), too few or too many numbers."""
    lines = read_text(path).splitlines()
    values = parse_ints(path, lines)
    expected, found = ("an n x n matrix", "the {n} x {n} matrix") if count == 1 else (
        "two n x n matrices", "the two {n} x {n} matrices")
    if values.size == 0:
        raise InputFormatError(path, f"empty file; expected n followed by {expected}")
    n = int(values[0])
    if n < least:
        raise InputFormatError(path, f"n = {n}; the first number must be the size n >= {least}", token_line(lines, 0))
    if n > most:
        raise InputFormatError(path, f"n = {n} is too large for {dense}", token_line(lines, 0))
    need = 1 + count * n * n
    if values.size < need:
        raise InputFormatError(
            path, f"truncated: n = {n} needs {count * n * n} matrix entries, the file has {values.size - 1}",
            max(len(lines), 1))
    if values.size > need:
        raise InputFormatError(path, f"{values.size - need} numbers after {found.format(n=n)} (is n = {n} right?)",
                               token_line(lines, need))
    return values[1:].reshape(count, n, n)
