"""Fuzzing the LOLIB readers (style of test_fuzz_readers.py): a corrupted instance or solution file
gives exactly what an independent oracle says, or an InputFormatError naming the file; whitespace
edits give back the original."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from test_fuzz_readers import (
    FUZZ,
    MUTATIONS,
    NEUTRAL,
    WHITESPACE,
    Invalid,
    expect_input_error,
    mutate,
    oracle_ints,
    respace,
    write,
)

from metaheur.problems.lop import LOP
from metaheur.problems.lop.files import read_lolib, read_order

N = 5
MATRIX = np.random.default_rng(31).integers(-20, 500, size=(N, N))
BASE = LOP(MATRIX, "base")
ORDER = np.array([3, 0, 4, 1, 2])
LOLIB_TEXT = f"{N}\n" + "\n".join(" ".join(f"{int(v):4d}" for v in row) for row in MATRIX) + "\n"
SOL_TEXT = " ".join(str(int(x) + 1) for x in ORDER) + "\n"


def oracle_lolib(content: bytes) -> np.ndarray:
    values = oracle_ints(content)
    if not values or not 2 <= values[0] <= 100_000:
        raise Invalid("n")
    n = values[0]
    if len(values) != 1 + n * n:
        raise Invalid("count")
    matrix = np.array(values[1:], dtype=object).reshape(n, n)
    if sum(abs(int(matrix[i, j])) for i in range(n) for j in range(n) if i != j) >= 2**62:
        raise Invalid("overflow")
    return matrix.astype(np.int64)


def oracle_order(content: bytes, n: int) -> list[int]:
    values = oracle_ints(content)
    if len(values) != n:
        raise Invalid("length")
    offset = 0 if (min(values) == 0 and max(values) == n - 1) else 1
    order = [v - offset for v in values]
    if sorted(order) != list(range(n)):
        raise Invalid("permutation")
    return order


def _outcome(fn):
    try:
        return fn(), None
    except Invalid as exc:
        return None, exc


def test_base_files_are_valid(tmp_path):
    assert np.array_equal(read_lolib(write(tmp_path, "b", LOLIB_TEXT.encode())).matrix, MATRIX)
    assert read_order(write(tmp_path, "b.sol", SOL_TEXT.encode()), BASE).tolist() == ORDER.tolist()


@FUZZ
@given(mutations=MUTATIONS)
def test_fuzz_lolib(tmp_path_factory, mutations):
    content = mutate(LOLIB_TEXT.encode(), mutations)
    path = write(tmp_path_factory.getbasetemp(), "fuzz_lolib", content)
    expected, invalid = _outcome(lambda: oracle_lolib(content))
    try:
        lop = read_lolib(path)
    except Exception as exc:
        expect_input_error(exc, path)
        assert invalid is not None, f"valid file rejected: {exc}"
        return
    assert invalid is None, f"invalid file ({invalid}) accepted"
    assert np.array_equal(lop.matrix, expected)
    assert isinstance(lop.value(np.arange(lop.n)), int)


@FUZZ
@given(mutations=MUTATIONS)
def test_fuzz_order(tmp_path_factory, mutations):
    content = mutate(SOL_TEXT.encode(), mutations)
    path = write(tmp_path_factory.getbasetemp(), "fuzz.sol", content)
    expected, invalid = _outcome(lambda: oracle_order(content, N))
    try:
        order = read_order(path, BASE)
    except Exception as exc:
        expect_input_error(exc, path)
        assert invalid is not None, f"valid file rejected: {exc}"
    else:
        assert invalid is None, f"invalid file ({invalid}) accepted"
        assert order.tolist() == expected
    try:  # without an instance: an order of as many items as the file lists, or an error
        free = read_order(path)
    except Exception as exc:
        expect_input_error(exc, path)
    else:
        assert sorted(free.tolist()) == list(range(free.size))


@NEUTRAL
@given(seps=WHITESPACE, lead=st.sampled_from(["", "\n", "  \n\t"]))
def test_neutral_whitespace(tmp_path_factory, seps, lead):
    folder = tmp_path_factory.getbasetemp()
    lop = read_lolib(write(folder, "n_lolib", (lead + respace(LOLIB_TEXT.split(), seps)).encode()))
    assert np.array_equal(lop.matrix, MATRIX)
    order = read_order(write(folder, "n.sol", (lead + respace(SOL_TEXT.split(), seps)).encode()), BASE)
    assert order.tolist() == ORDER.tolist()
