"""Fuzzing the flow shop readers (Taillard's, VRF's and OR-Library's formats, job orders) with the
mutations of test_fuzz_readers: a corrupted file gives exactly what an independent oracle says, or
an InputFormatError naming the file, nothing else."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given
from test_fuzz_readers import FUZZ, MUTATIONS, Invalid, _outcome, expect_input_error, int_tokens, mutate, write

from metaheur.problems.pfsp import read_pfsp
from metaheur.problems.pfsp.files import read_flow_shops, read_job_order

TIMES = np.random.default_rng(30).integers(0, 100, size=(3, 4))  # m = 3 machines, n = 4 jobs
M, N = TIMES.shape
LIMIT = 2**31 - 1
TAILLARD_TEXT = ("number of jobs, number of machines, initial seed, upper bound and lower bound :\n"
                 f"  {N}  {M}  12345  0  0\nprocessing times :\n"
                 + "\n".join(" ".join(str(int(v)) for v in row) for row in TIMES) + "\n")
VRF_TEXT = f"{N} {M}\n" + "\n".join(" ".join(f"{i} {int(TIMES[i, j])}" for i in range(M)) for j in range(N)) + "\n"
ORLIB_TEXT = (" +++++\n instance one\n +++++\n first (2 x 3)\n" + VRF_TEXT
              + " +++++\n instance two\n +++++\n second\n 2 1\n 0 9\n 0 8\n +++++\n")
ORDER = [3, 1, 4, 2]
ORDER_TEXT = "# b: makespan 321\n" + " ".join(map(str, ORDER)) + "\n"


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    return tmp_path_factory.mktemp("fuzz_pfsp")


def _lines(content: bytes) -> list[str]:
    try:
        return content.decode("utf-8").splitlines()
    except UnicodeDecodeError:
        return content.decode("latin-1").splitlines()


def _ints(lines: list[str]) -> list[int]:
    return int_tokens(" ".join(lines))


def _times_ok(values: list[int]) -> None:
    if any(not 0 <= t <= LIMIT for t in values):
        raise Invalid("time")


def oracle_vrf(content: bytes) -> np.ndarray:
    """VRF's meaning: the first non-blank line is ``n m``, the rest n x m (machine, time) pairs."""
    if b"\x00" in content:
        raise Invalid("binary")
    lines = _lines(content)
    filled = [k for k, line in enumerate(lines) if line.split()]
    if not filled or len(lines[filled[0]].split()) != 2:
        raise Invalid("header")
    n, m = _ints([lines[filled[0]]])
    if n < 2 or m < 1 or n * m > 50_000_000:
        raise Invalid("size")
    values = _ints(lines[filled[0] + 1:])
    if len(values) != 2 * n * m:
        raise Invalid("count")
    times = np.zeros((m, n), dtype=np.int64)
    for j in range(n):
        pairs = values[2 * m * j: 2 * m * (j + 1)]
        machines = pairs[0::2]
        if sorted(machines) != list(range(m)):
            raise Invalid("machines")
        _times_ok(pairs[1::2])
        for i, t in zip(machines, pairs[1::2], strict=True):
            times[i, j] = t
    return times


def oracle_taillard(content: bytes) -> np.ndarray:
    """Taillard's meaning: one label line, ``n m ...`` on the next filled line, an optional
    ``processing times`` label, then m rows of n times."""
    if b"\x00" in content:
        raise Invalid("binary")
    lines = _lines(content)
    labels = [k for k, line in enumerate(lines) if "number of jobs" in line.lower()]
    if not labels:
        return oracle_vrf(content)
    if len(labels) > 1 or any(line.split() for line in lines[: labels[0]]):
        raise Invalid("labels")
    filled = [k for k in range(labels[0] + 1, len(lines)) if lines[k].split()]
    if not filled or len(lines[filled[0]].split()) < 2:
        raise Invalid("header")
    n, m = _ints([lines[filled[0]]])[:2]
    if n < 2 or m < 1 or n * m > 50_000_000:
        raise Invalid("size")
    body = filled[0] + 1
    if len(filled) > 1 and "processing times" in lines[filled[1]].lower():
        body = filled[1] + 1
    values = _ints(lines[body:])
    if len(values) != n * m:
        raise Invalid("count")
    _times_ok(values)
    return np.array(values, dtype=np.int64).reshape(m, n)


def oracle_order(content: bytes, n: int):
    if b"\x00" in content:
        raise Invalid("binary")
    lines = _lines(content)
    comments = [line for line in lines if line.lstrip().startswith("#")]
    values = _ints([line for line in lines if not line.lstrip().startswith("#")])
    if len(values) != n:
        raise Invalid("length")
    offset = 0 if min(values) == 0 and max(values) == n - 1 else 1
    order = [v - offset for v in values]
    if sorted(order) != list(range(n)):
        raise Invalid("permutation")
    stated = [re.search(r"makespan\s*[:=]?\s*(-?\d+)", c, re.IGNORECASE) for c in comments]
    stated = [int(s.group(1)) for s in stated if s]
    return order, stated[0] if stated else None


def _check(path, read, invalid):
    try:
        got = read()
    except Exception as exc:
        expect_input_error(exc, path)
        assert invalid is not None, f"valid file rejected: {exc}"
        return None
    assert invalid is None, f"invalid file ({invalid}) accepted"
    return got


@FUZZ
@given(mutations=MUTATIONS)
def test_fuzz_taillard(workdir, mutations):
    content = mutate(TAILLARD_TEXT.encode(), mutations)
    path = write(workdir, "fuzz.fsp", content)
    expected, invalid = _outcome(lambda: oracle_taillard(content))
    got = _check(path, lambda: read_pfsp(path), invalid)
    if got is not None:
        assert np.array_equal(got.times, expected)
        assert isinstance(got.value(np.arange(got.n)), int)


@FUZZ
@given(mutations=MUTATIONS)
def test_fuzz_vrf(workdir, mutations):
    content = mutate(VRF_TEXT.encode(), mutations)
    path = write(workdir, "fuzz_Gap.txt", content)
    expected, invalid = _outcome(lambda: oracle_vrf(content))
    got = _check(path, lambda: read_pfsp(path), invalid)
    if got is not None:
        assert np.array_equal(got.times, expected)


@FUZZ
@given(mutations=MUTATIONS)
def test_fuzz_orlib(workdir, mutations):
    """No exact oracle: a result is a list of consistent instances (times m x n, within range)."""
    path = write(workdir, "flowshop.txt", mutate(ORLIB_TEXT.encode(), mutations))
    try:
        found = read_flow_shops(path)
    except Exception as exc:
        expect_input_error(exc, path)
        return
    for data in found:
        assert data.times.ndim == 2 and data.times.size >= 1 and data.times.dtype == np.int64
        assert data.times.min() >= 0 and data.times.max() <= LIMIT


@FUZZ
@given(mutations=MUTATIONS)
def test_fuzz_job_order(workdir, mutations):
    content = mutate(ORDER_TEXT.encode(), mutations)
    path = write(workdir, "fuzz.sol", content)
    expected, invalid = _outcome(lambda: oracle_order(content, N))
    got = _check(path, lambda: read_job_order(path, N), invalid)
    if got is not None:
        assert got.order.tolist() == expected[0] and got.stated_makespan == expected[1]


def test_base_files_are_valid(workdir):
    assert np.array_equal(read_pfsp(write(workdir, "b.fsp", TAILLARD_TEXT.encode())).times, TIMES)
    assert np.array_equal(read_pfsp(write(workdir, "b_Gap.txt", VRF_TEXT.encode())).times, TIMES)
    assert [d.name for d in read_flow_shops(write(workdir, "o.txt", ORLIB_TEXT.encode()))] == ["one", "two"]
    assert read_job_order(write(workdir, "b.sol", ORDER_TEXT.encode()), N).order.tolist() == [2, 0, 3, 1]
