"""QAP: exact cost and swap delta against brute force, QAPLIB .dat/.sln reading and writing."""

from __future__ import annotations

import statistics

import numpy as np
import pytest
from testutil import sparse_qap

from metaheur.errors import InputFormatError, MetaheurError
from metaheur.problem.interface import check_permutation
from metaheur.problems import random_qap
from metaheur.problems.qap import QAP, matrix_dominance, read_qaplib, read_sln, write_sln

# ------------------------------------------------------------------------------------------ helpers


def brute_cost(flow, dist, perm) -> int:
    """sum_ij a_ij * b_p(i)p(j) with Python integers (no numpy arithmetic)."""
    n = len(perm)
    total = 0
    for i in range(n):
        for j in range(n):
            total += int(flow[i][j]) * int(dist[perm[i]][perm[j]])
    return total


def taillard_delta(a, b, p, r, s) -> int:
    """Cost change of swapping the locations of units r and s (Taillard 1991, general matrices)."""
    pr, ps = p[r], p[s]
    d = (a[r][r] * (b[ps][ps] - b[pr][pr]) + a[r][s] * (b[ps][pr] - b[pr][ps])
         + a[s][r] * (b[pr][ps] - b[ps][pr]) + a[s][s] * (b[pr][pr] - b[ps][ps]))
    for k in range(len(p)):
        if k in (r, s):
            continue
        pk = p[k]
        d += (a[k][r] * (b[pk][ps] - b[pk][pr]) + a[k][s] * (b[pk][pr] - b[pk][ps])
              + a[r][k] * (b[ps][pk] - b[pr][pk]) + a[s][k] * (b[pr][pk] - b[ps][pk]))
    return int(d)


def random_instance(rng, n, low=-50, high=50) -> QAP:
    """Asymmetric matrices with non-zero diagonals and negative entries."""
    flow = rng.integers(low, high, size=(n, n))
    dist = rng.integers(low, high, size=(n, n))
    return QAP(f"rand{n}", flow, dist)


def write_tokens(path, tokens, rng) -> None:
    """Write tokens with random separators: spaces, tabs, newlines, blank lines, CRLF."""
    seps = [" ", "  ", "\t", "\n", "\n\n", "\r\n", " \n "]
    parts = []
    for tok in tokens:
        parts.append(str(tok))
        parts.append(seps[int(rng.integers(len(seps)))])
    path.write_text("   \n" + "".join(parts) + "\n\n", newline="")


def inverse(p) -> np.ndarray:
    inv = np.empty_like(p)
    inv[p] = np.arange(len(p))
    return inv


# --------------------------------------------------------------------------------------------- cost


@pytest.mark.parametrize("seed", range(12))
def test_cost_matches_brute_force(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 10))
    qap = random_instance(rng, n)
    assert not np.array_equal(qap.flow, qap.flow.T) or n == 1
    for _ in range(5):
        p = rng.permutation(n)
        assert qap.cost(p) == brute_cost(qap.flow, qap.distance, p)
        assert isinstance(qap.cost(p), int)


def test_cost_accepts_lists_and_integral_floats():
    rng = np.random.default_rng(3)
    qap = random_instance(rng, 6)
    p = rng.permutation(6)
    expected = brute_cost(qap.flow, qap.distance, p)
    assert qap.cost(list(p)) == expected
    assert qap.cost(p.astype(np.float64)) == expected
    assert qap.cost(p.astype(np.int32)) == expected


def test_cost_exact_beyond_int64():
    """Entries near 2**40 overflow int64 in the sum; the cost must still be exact."""
    rng = np.random.default_rng(7)
    n = 5
    flow = rng.integers(2**39, 2**40, size=(n, n))
    dist = rng.integers(2**39, 2**40, size=(n, n))
    qap = QAP("big", flow, dist)
    assert not qap.cost_fits_int64
    p = rng.permutation(n)
    exact = brute_cost(flow, dist, p)
    assert exact > 2**63
    assert qap.cost(p) == exact


def test_identity_cost_is_elementwise_product_sum():
    flow = np.array([[1, 2], [3, 4]])
    dist = np.array([[5, 6], [7, 8]])
    qap = QAP("t2", flow, dist)
    assert qap.cost([0, 1]) == 1 * 5 + 2 * 6 + 3 * 7 + 4 * 8
    # swapped: b[p(i), p(j)] with p = (1, 0)
    assert qap.cost([1, 0]) == 1 * 8 + 2 * 7 + 3 * 6 + 4 * 5


@pytest.mark.parametrize("seed", range(8))
def test_swap_delta_matches_brute_force_and_taillard(seed):
    rng = np.random.default_rng(100 + seed)
    n = int(rng.integers(2, 10))
    qap = random_instance(rng, n)
    a, b = qap.flow.tolist(), qap.distance.tolist()
    p = rng.permutation(n)
    base = brute_cost(a, b, p)
    for r in range(n):
        for s in range(n):
            q = p.copy()
            q[r], q[s] = q[s], q[r]
            expected = brute_cost(a, b, q) - base
            assert qap.swap_delta(p, r, s) == expected
            if r != s:
                assert taillard_delta(a, b, list(p), r, s) == expected
    assert qap.swap_delta(p, 0, 0) == 0


def test_swap_delta_does_not_modify_the_permutation():
    rng = np.random.default_rng(5)
    qap = random_instance(rng, 6)
    p = rng.permutation(6)
    before = p.copy()
    qap.swap_delta(p, 1, 4)
    assert np.array_equal(p, before)


def test_properties():
    flow = np.array([[0, 2, 3], [2, 0, 4], [3, 4, 0]])
    dist = np.array([[1, -2, 3], [2, 0, 4], [3, 4, 9]])
    props = QAP("p", flow, dist).properties()
    assert props == {
        "flow_symmetric": True, "flow_zero_diagonal": True, "flow_min": 0, "flow_max": 4, "flow_dominance": 78.2,
        "distance_symmetric": False, "distance_zero_diagonal": False, "distance_min": -2, "distance_max": 9,
        "distance_dominance": 109.0,
    }


def test_dominance_is_the_coefficient_of_variation_in_percent():
    """Vollmann and Buffa's dominance: 100 x population standard deviation / mean of the entries."""
    rng = np.random.default_rng(3)
    m = rng.integers(0, 50, size=(9, 9))
    entries = [int(x) for x in m.ravel()]
    assert matrix_dominance(m) == pytest.approx(100 * statistics.pstdev(entries) / statistics.mean(entries), rel=1e-12)
    assert matrix_dominance(np.zeros((4, 4), dtype=np.int64)) == 0.0
    assert matrix_dominance(np.full((4, 4), 7)) == 0.0
    assert matrix_dominance(-m) == matrix_dominance(m)  # over the mean's absolute value


def test_an_instance_dominance_is_that_of_its_more_dominant_matrix():
    uniform = random_qap(60, seed=2)
    assert matrix_dominance(uniform.flow) == pytest.approx(100 / np.sqrt(3), abs=4)  # uniform entries
    assert uniform.dominance == max(matrix_dominance(uniform.flow), matrix_dominance(uniform.distance))
    sparse = sparse_qap(60, seed=2)
    assert sparse.dominance == matrix_dominance(sparse.flow) > 2 * uniform.dominance


def test_matrices_are_read_only_int64():
    qap = QAP("ro", [[1, 2], [3, 4]], [[0, 1], [1, 0]])
    assert qap.flow.dtype == np.int64 and qap.distance.dtype == np.int64
    with pytest.raises(ValueError):
        qap.flow[0, 0] = 9
    assert qap.n == 2
    assert qap.fits_int32
    assert not QAP("wide", [[2**31]], [[1]]).fits_int32


@pytest.mark.parametrize(
    "flow, dist",
    [
        (np.zeros((2, 3)), np.zeros((2, 3))),
        (np.zeros((2, 2)), np.zeros((3, 3))),
        (np.zeros((0, 0)), np.zeros((0, 0))),
        (np.zeros(4), np.zeros(4)),
    ],
)
def test_constructor_rejects_bad_shapes(flow, dist):
    with pytest.raises(MetaheurError):
        QAP("bad", flow, dist)


# ---------------------------------------------------------------------------------------- .dat file


@pytest.mark.parametrize("seed", range(6))
def test_read_dat_with_arbitrary_line_breaks(tmp_path, seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 12))
    flow = rng.integers(-1000, 1000, size=(n, n))
    dist = rng.integers(-1000, 1000, size=(n, n))
    path = tmp_path / f"inst{seed}.dat"
    write_tokens(path, [n, *flow.ravel().tolist(), *dist.ravel().tolist()], rng)
    qap = read_qaplib(path)
    assert qap.n == n
    assert np.array_equal(qap.flow, flow)
    assert np.array_equal(qap.distance, dist)
    assert qap.name == f"inst{seed}"
    assert qap.source == str(path)
    assert read_qaplib(path, name="other").name == "other"


def test_read_dat_qaplib_layout(tmp_path):
    """The usual QAPLIB layout: n, blank line, A row by row, blank line, B (rows wrapped)."""
    path = tmp_path / "small.dat"
    path.write_text("  3\n\n 0 1 2\n 1 0 3\n 2 3 0\n\n 5 6\n 7\n 8 9 1\n 2 3 4\n")
    qap = read_qaplib(path)
    assert qap.flow.tolist() == [[0, 1, 2], [1, 0, 3], [2, 3, 0]]
    assert qap.distance.tolist() == [[5, 6, 7], [8, 9, 1], [2, 3, 4]]


def test_read_dat_errors_name_file_and_line(tmp_path):
    path = tmp_path / "bad.dat"
    path.write_text("2\n1 2\n3 x\n5 6 7 8\n")
    with pytest.raises(InputFormatError) as info:
        read_qaplib(path)
    assert info.value.line == 3
    assert str(info.value).startswith(f"{path}:3: ")
    assert "'x'" in str(info.value)

    path.write_text("2\n1 2 3 4\n5 6 7\n")
    with pytest.raises(InputFormatError, match="truncated"):
        read_qaplib(path)

    path.write_text("2\n1 2 3 4\n5 6 7 8\n9\n")
    with pytest.raises(InputFormatError, match="after the two") as info:
        read_qaplib(path)
    assert info.value.line == 4

    for text in ("", "0\n", "-3 1 2\n", "1.5 2\n"):
        path.write_text(text)
        with pytest.raises(InputFormatError):
            read_qaplib(path)


# ---------------------------------------------------------------------------------------- .sln file


def asymmetric_instance_and_perm(n=7, seed=11):
    """An instance and a permutation whose inverse has a different cost (so orientation is decidable)."""
    rng = np.random.default_rng(seed)
    while True:
        qap = random_instance(rng, n, 0, 100)
        p = rng.permutation(n)
        if qap.cost(p) != qap.cost(inverse(p)):
            return qap, p


def test_read_sln_direct(tmp_path):
    qap, p = asymmetric_instance_and_perm()
    path = tmp_path / "direct.sln"
    path.write_text(f"{qap.n} {qap.cost(p)}\n" + " ".join(str(x + 1) for x in p) + "\n")
    sol = read_sln(path, qap)
    assert sol.orientation == "direct"
    assert not sol.zero_based
    assert np.array_equal(sol.permutation, p)
    assert sol.stated_cost == qap.cost(p)
    assert sol.source == str(path)


def test_read_sln_inverse(tmp_path):
    qap, p = asymmetric_instance_and_perm()
    path = tmp_path / "inverse.sln"
    path.write_text(f"{qap.n}   {qap.cost(p)}\n" + "\n".join(str(x + 1) for x in inverse(p)) + "\n")
    sol = read_sln(path, qap)
    assert sol.orientation == "inverse"
    assert np.array_equal(sol.permutation, p)
    assert qap.cost(sol.permutation) == sol.stated_cost


def test_read_sln_zero_based(tmp_path):
    qap, p = asymmetric_instance_and_perm()
    path = tmp_path / "zero.sln"
    path.write_text(f"{qap.n} {qap.cost(p)}\n" + ",".join(str(x) for x in p).replace(",", " ") + "\n")
    sol = read_sln(path, qap)
    assert sol.zero_based
    assert sol.orientation == "direct"
    assert np.array_equal(sol.permutation, p)
    # 0-based and inverse at once
    path.write_text(f"{qap.n} {qap.cost(p)}\n" + " ".join(str(x) for x in inverse(p)) + "\n")
    sol = read_sln(path, qap)
    assert sol.zero_based and sol.orientation == "inverse"
    assert np.array_equal(sol.permutation, p)


def test_read_sln_without_instance_and_with_wrong_cost(tmp_path):
    qap, p = asymmetric_instance_and_perm()
    path = tmp_path / "x.sln"
    path.write_text(f"{qap.n} 12345\n" + " ".join(str(x + 1) for x in p) + "\n")
    sol = read_sln(path)
    assert sol.orientation == "unverified"
    assert np.array_equal(sol.permutation, p)
    assert sol.stated_cost == 12345
    # neither orientation matches: returned as written, the caller sees the mismatch
    sol = read_sln(path, qap)
    assert sol.orientation == "direct"
    assert np.array_equal(sol.permutation, p)
    assert qap.cost(sol.permutation) != sol.stated_cost


def test_read_sln_errors(tmp_path):
    qap, p = asymmetric_instance_and_perm()
    path = tmp_path / "bad.sln"
    body = " ".join(str(x + 1) for x in p)
    path.write_text(f"{qap.n + 1} 0\n{body} {qap.n + 1}\n")
    with pytest.raises(InputFormatError, match="instance has n"):
        read_sln(path, qap)
    path.write_text(f"{qap.n} 0\n{body} 1\n")
    with pytest.raises(InputFormatError, match="entries") as info:
        read_sln(path, qap)
    assert info.value.line == 2
    dup = " ".join(["1"] * qap.n)
    path.write_text(f"{qap.n} 0\n{dup}\n")
    with pytest.raises(InputFormatError, match="not a permutation"):
        read_sln(path, qap)
    path.write_text(f"{qap.n}\n")
    with pytest.raises(InputFormatError):
        read_sln(path, qap)


@pytest.mark.parametrize("n", [1, 2, 19, 20, 21, 45])
def test_write_sln_round_trip(tmp_path, n):
    rng = np.random.default_rng(n)
    qap = random_instance(rng, n)
    p = rng.permutation(n)
    path = tmp_path / "out.sln"
    cost = write_sln(path, qap, p)
    assert cost == brute_cost(qap.flow, qap.distance, p)
    lines = path.read_text().splitlines()
    assert lines[0].split() == [str(n), str(cost)]
    numbers = [int(t) for line in lines[1:] for t in line.split()]
    assert numbers == [int(x) + 1 for x in p]
    assert all(len(line.split()) <= 20 for line in lines[1:])
    sol = read_sln(path, qap)
    assert np.array_equal(sol.permutation, p)
    assert sol.stated_cost == cost


def test_write_sln_rejects_non_permutation(tmp_path):
    qap = random_instance(np.random.default_rng(1), 4)
    with pytest.raises(MetaheurError):
        write_sln(tmp_path / "x.sln", qap, [0, 0, 1, 2])
    assert not (tmp_path / "x.sln").exists()


# ------------------------------------------------------------------------------ check_permutation


def test_check_permutation_accepts_and_normalises():
    p = check_permutation([2, 0, 1], 3)
    assert p.dtype == np.int64 and p.tolist() == [2, 0, 1]
    assert check_permutation(np.array([1.0, 0.0]), 2).tolist() == [1, 0]
    assert check_permutation(np.array([0], dtype=np.uint8), 1).tolist() == [0]


@pytest.mark.parametrize(
    "perm, pattern",
    [
        ([0, 1], "2 entries, the instance has n = 3"),
        ([0, 1, 2, 3], "4 entries"),
        ([[0, 1, 2]], "entries"),
        ([0, 1, 1], "not a permutation"),
        ([0, 1, 3], "not a permutation"),
        ([-1, 0, 1], "not a permutation"),
        ([0.5, 1, 2], "must be integers"),
        (np.array([0, 1, np.nan]), "must be integers"),
        (["a", "b", "c"], "must be integers"),
    ],
)
def test_check_permutation_errors(perm, pattern):
    with pytest.raises(MetaheurError, match=pattern):
        check_permutation(perm, 3)


def test_check_permutation_names_source():
    with pytest.raises(MetaheurError, match=r"^mysol\.json: "):
        check_permutation([0, 0], 2, "mysol.json")
    qap = QAP("q", np.zeros((3, 3)), np.zeros((3, 3)))
    with pytest.raises(MetaheurError):
        qap.cost([0, 1])
