"""The linear ordering problem: the LOLIB reader and solution files, the exact value against a
brute-force reference, the generator, the best-known table."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from metaheur.errors import InputFormatError, MetaheurError
from metaheur.problems.lop import LOP, random_lop
from metaheur.problems.lop.best_known import TABLE, instance_set, lop_best_known
from metaheur.problems.lop.files import looks_like_lolib, read_lolib, read_order, write_order
from metaheur.problems.lop.problem import absolute_sum


def reference_value(matrix: np.ndarray, order) -> int:
    """sum over i < j of M[p_i][p_j], in Python integers."""
    p = [int(x) for x in order]
    return sum(int(matrix[p[i], p[j]]) for i in range(len(p)) for j in range(i + 1, len(p)))


def test_value_matches_brute_force_on_random_orders():
    rng = np.random.default_rng(5)
    for n in (2, 3, 7, 40):
        m = rng.integers(-50, 1000, size=(n, n))
        lop = LOP(m)
        perms = np.array([rng.permutation(n) for _ in range(9)])
        values = lop.evaluate(perms)
        assert values.dtype == np.int64
        assert values.tolist() == [reference_value(m, p) for p in perms]
        assert lop.value(perms[0]) == reference_value(m, perms[0])


def test_evaluate_in_chunks_equals_one_by_one(monkeypatch):
    """A batch larger than one chunk gives the same values as scoring each order alone."""
    import metaheur.problems.lop.problem as lop_problem

    lop = random_lop(30, 3)
    rng = np.random.default_rng(1)
    perms = np.array([rng.permutation(30) for _ in range(11)])
    monkeypatch.setattr(lop_problem, "BATCH_ENTRIES", 2 * 30 * 30)
    assert lop.evaluate(perms).tolist() == [lop.value(p) for p in perms]


def test_value_ignores_the_diagonal_and_reverse_order_takes_the_other_entries():
    m = np.array([[9, 1, 2], [3, 9, 4], [5, 6, 9]])
    lop = LOP(m)
    assert lop.value([0, 1, 2]) == 1 + 2 + 4
    assert lop.value([2, 1, 0]) == 6 + 5 + 3
    # every order collects one entry of each pair
    for p in itertools.permutations(range(3)):
        assert lop.value(p) + lop.value(p[::-1]) == m.sum() - np.trace(m)


@pytest.mark.parametrize("high", [5, 2**31, 2**40, 2**62, 2**63 - 1])
@pytest.mark.parametrize("signs", ["positive", "negative", "mixed"])
def test_absolute_sum_is_exact_at_every_magnitude(high, signs):
    """The overflow check sums in numpy (no Python integers however large the entries: a matrix
    of entries near 2^40 was summed entry by entry) and exactly, int64's least value included."""
    rng = np.random.default_rng(high % 1000)
    m = rng.integers(high // 2, high, size=(40, 40), dtype=np.int64, endpoint=True)
    m = -m if signs == "negative" else m * rng.choice([-1, 1], size=m.shape) if signs == "mixed" else m
    m[0, 1] = -(2**63) if high == 2**63 - 1 and signs != "positive" else m[0, 1]
    assert absolute_sum(m) == sum(abs(int(x)) for x in m[~np.eye(40, dtype=bool)])


def test_constructor_refuses_bad_matrices():
    with pytest.raises(MetaheurError, match="square"):
        LOP(np.zeros((2, 3)))
    with pytest.raises(MetaheurError, match="fractional"):
        LOP(np.array([[0, 0.5], [1, 0]]))
    with pytest.raises(MetaheurError, match="overflow 64 bits"):
        LOP(np.array([[0, 2**62], [0, 0]], dtype=np.int64))
    with pytest.raises(MetaheurError, match="overflow 64 bits"):
        LOP(np.array([[0, -(2**61)], [-(2**61), 0]], dtype=np.int64))
    # a large diagonal never counts
    assert LOP(np.array([[2**62, 1], [2, 0]], dtype=np.int64)).value([1, 0]) == 2


def test_check_solution_refuses_non_orders():
    lop = random_lop(5)
    with pytest.raises(MetaheurError, match="not a permutation"):
        lop.check_solution([0, 1, 1, 2, 3], "x")
    with pytest.raises(MetaheurError, match="5 entries, the instance has n = 6"):
        random_lop(6).check_solution([0, 1, 2, 3, 4])


# ---------------------------------------------------------------------------------------- files


def test_read_any_whitespace_and_file_name_kept(tmp_path):
    m = np.array([[0, 3, -1], [2, 0, 7], [4, 5, 0]])
    path = tmp_path / "sgb75.01"
    path.write_text("3\n 0 3\t-1\r\n2 0 7 4\n\n5 0\n")
    lop = read_lolib(path)
    assert lop.name == "sgb75.01" and lop.n == 3 and lop.source == str(path)
    assert np.array_equal(lop.matrix, m)
    assert looks_like_lolib(path)


@pytest.mark.parametrize("text, message", [
    ("", "empty file"),
    ("0\n", "n = 0"),
    ("1\n5\n", "n = 1; the first number must be the size n >= 2"),
    ("2\n1 2 3\n", "truncated: n = 2 needs 4 matrix entries, the file has 3"),
    ("2\n1 2 3 4\n5\n", "1 numbers after the 2 x 2 matrix"),
    ("2\n1 2\n3 x\n", "'x' is not an integer"),
    ("2\n1 2.5\n3 4\n", "'2.5' is not an integer"),
    ("2\n0 4611686018427387904\n0 0\n", "overflow 64 bits"),
    ("2\n0 99999999999999999999\n0 0\n", "out of the 64-bit integer range"),
])
def test_malformed_files_are_one_line_errors_naming_the_file(tmp_path, text, message):
    path = tmp_path / "bad"
    path.write_text(text)
    with pytest.raises(InputFormatError) as info:
        read_lolib(path)
    assert str(info.value).startswith(str(path)) and "\n" not in str(info.value)
    assert message in str(info.value)


def test_sniff_tells_lolib_from_qaplib(tmp_path):
    lolib = tmp_path / "a"
    lolib.write_text("2\n0 1\n2 0\n")
    qap = tmp_path / "b"
    qap.write_text("2\n0 1\n2 0\n0 1\n1 0\n")
    words = tmp_path / "c"
    words.write_text("NAME: x\n")
    assert looks_like_lolib(lolib)
    assert not looks_like_lolib(qap) and not looks_like_lolib(words)
    assert not looks_like_lolib(tmp_path / "missing")


def test_solution_round_trip(tmp_path):
    lop = random_lop(12, 4)
    order = np.random.default_rng(2).permutation(12)
    path = tmp_path / "x.sol"
    value = write_order(path, lop, order)
    assert value == reference_value(lop.matrix, order)
    assert path.read_text().count("\n") == 1
    assert read_order(path, lop).tolist() == order.tolist()
    path.write_text(" ".join(map(str, order)))  # 0-based is accepted
    assert read_order(path, lop).tolist() == order.tolist()


@pytest.mark.parametrize("text, message", [
    ("", "empty file"),
    ("1 2 3", "the order has 3 items, the instance gen-lop-4-s1 has n = 4"),
    ("1 2 2 3", "not a permutation of 1..4"),
    ("1 2 3 a", "'a' is not an integer"),
])
def test_bad_solution_files(tmp_path, text, message):
    path = tmp_path / "bad.sol"
    path.write_text(text)
    with pytest.raises(InputFormatError, match=message) as info:
        read_order(path, random_lop(4))
    assert str(info.value).startswith(str(path))


# ------------------------------------------------------------------------------------ generator


def test_generator_is_seeded_and_plants_an_order():
    a, b, c = random_lop(60, 7), random_lop(60, 7), random_lop(60, 8)
    assert np.array_equal(a.matrix, b.matrix) and not np.array_equal(a.matrix, c.matrix)
    assert a.name == "gen-lop-60-s7" and a.source == "gen:lop:60:7"
    assert not np.diagonal(a.matrix).any() and a.matrix.min() >= 0
    # the hidden order, recovered by the number of pairs each item wins, scores far above a random order
    wins = (a.matrix > a.matrix.T).sum(axis=1)
    planted = a.value(np.argsort(-wins))
    rng = np.random.default_rng(99)
    random_value = int(a.evaluate(np.array([rng.permutation(60) for _ in range(20)])).max())
    assert planted > 1.2 * random_value
    assert planted <= a.properties()["upper_bound"]


def test_generator_refuses_bad_sizes():
    with pytest.raises(MetaheurError, match="at least 2"):
        random_lop(1)


# ---------------------------------------------------------------------------------- best known


def test_best_known_table_lookup():
    entry = lop_best_known("BE75EEC_250", 250)
    assert entry is not None and entry.n == 250 and not entry.optimal
    assert lop_best_known("be75eec_250", 150) is None
    assert lop_best_known("t59b11xx").optimal and lop_best_known("sgb75.01").optimal
    assert lop_best_known("tai12a") is None
    assert instance_set("r100a2") == "MB"
    assert len({row[0] for row in TABLE}) == len(TABLE) == 215


# --------------------------------------------------------------------------------- device code


@pytest.mark.parametrize("n, seed, high", [(2, 1, 9), (3, 2, 9), (17, 3, 1000), (64, 4, 2**40)])
def test_device_code_agrees_with_evaluate(n, seed, high):
    """check_problem: cost, swap_delta, insert_delta, insert_row and partial_insert_row of the CPU
    build (and of the simulated GPUs, with their block of threads) equal numpy's values; the last
    case has int64 matrix fields."""
    from metaheur.problem.permutation_check import check_problem

    m = np.random.default_rng(seed).integers(-high, high, size=(n, n))
    lop = LOP(m, f"r{n}")
    fields, _ = lop.device_data()
    assert [f.dtype for f in fields] == (["int64"] * 2 if high > 2**31 else ["int32"] * 2)
    report = check_problem(lop, trials=8, seed=seed)
    for function in ("cost", "swap_delta", "insert_delta", "insert_row", "partial_insert_row"):
        assert any(f": {function} (" in line for line in report.checks), function


def test_data_is_the_matrix_and_its_antisymmetric_part():
    lop = random_lop(9, 2)
    data = lop.data()
    assert np.array_equal(data["m"], lop.matrix) and np.array_equal(data["d"], lop.matrix - lop.matrix.T)
    assert lop.value_bound() == int(np.abs(lop.matrix).sum())


def test_draw_shows_the_matrix_in_the_order():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    lop = random_lop(12, 5)
    order = np.random.default_rng(3).permutation(12)
    fig, ax = plt.subplots()
    lop.draw(ax, order)
    shown = ax.get_images()[0].get_array()
    plt.close(fig)
    assert shown.shape == (12, 12)
    assert np.allclose(shown, np.log1p(lop.matrix[np.ix_(order, order)]) * (1 - np.eye(12)))
