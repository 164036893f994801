"""The permutation flow shop: readers, Taillard's generator, makespans, bounds, solution files, Gantt chart."""

from __future__ import annotations

import csv
import itertools
import os
from pathlib import Path

import numpy as np
import pytest
from testutil import ORLIB, taillard_text

from metaheur.errors import InputFormatError, MetaheurError
from metaheur.problems.pfsp import (
    PFSP,
    completion_times,
    generated_pfsp,
    machine_lower_bound,
    makespans,
    read_pfsp,
    taillard,
)
from metaheur.problems.pfsp.best_known import TAILLARD, VRF_SMALL
from metaheur.problems.pfsp.files import read_flow_shops, read_job_order, write_job_order
from metaheur.problems.pfsp.generator import lehmer_uniform

TA001_ROW0 = [54, 83, 15, 71, 77, 36, 53, 38, 27, 87, 76, 91, 14, 29, 12, 77, 32, 87, 68, 94]


def shared_pfsp() -> Path:
    root = os.environ.get("METAHEUR_INSTANCES")
    folder = Path(root) / "pfsp" if root else None
    if folder is None or not (folder / "ta001.fsp").is_file():
        pytest.skip("METAHEUR_INSTANCES with pfsp/ta001.fsp not set")
    return folder


def brute_makespan(times: np.ndarray, order) -> int:
    """The textbook double loop, independent of :func:`makespans`."""
    m = times.shape[0]
    finish = [0] * m
    for job in order:
        for i in range(m):
            finish[i] = max(finish[i], finish[i - 1] if i else 0) + int(times[i, job])
    return finish[-1]


def vrf_text(times: np.ndarray) -> str:
    m, n = times.shape
    body = "\n".join("  ".join(f"{i}  {int(times[i, j])}" for i in range(m)) for j in range(n))
    return f"{n}  {m}\n{body}\n"


# ------------------------------------------------------------------------------------ generator


def test_lehmer_matches_the_minimal_standard():
    """Park and Miller's check: 10,000 steps from seed 1 give 1043618065."""
    _, last = lehmer_uniform(1, 10_000, 1, 99)
    assert last == 1043618065


def test_ta001_first_row_and_optimum():
    ta = taillard("ta001")
    assert (ta.n, ta.m) == (20, 5)
    assert ta.times[0].tolist() == TA001_ROW0
    assert ta.bounds() == (1278, 1278, True)
    assert machine_lower_bound(ta.times) <= 1278


def test_generator_reproduces_every_shared_taillard_file():
    folder = shared_pfsp()
    for row in TAILLARD:
        name = row[0]
        assert np.array_equal(read_pfsp(folder / f"{name}.fsp").times, taillard(name).times), name


def test_bounds_table_matches_the_shared_csvs():
    folder = shared_pfsp()
    for path, table, key in ((folder / "bks.csv", TAILLARD, lambda r: (r[1], r[2], r[4], r[5], r[6])),
                             (folder / "vrf" / "bks.csv", VRF_SMALL, lambda r: r[1:])):
        with open(path) as handle:
            rows = {r["name"]: (int(r["n"]), int(r["m"]), int(r["best_known"]), int(r["lower_bound"]),
                                r["optimal"] == "True") for r in csv.DictReader(handle)}
        assert {r[0]: key(r) for r in table} == rows


def test_generated_names():
    assert np.array_equal(generated_pfsp("gen:pfsp:ta031").times, taillard("ta031").times)
    assert np.array_equal(generated_pfsp("gen:pfsp:20:5:873654221").times, taillard("ta001").times)
    a, b = generated_pfsp("gen:pfsp:7:3"), generated_pfsp("gen:pfsp:7:3:2")
    assert a.times.shape == (3, 7) and not np.array_equal(a.times, b.times)
    assert a.times.min() >= 1 and a.times.max() <= 99
    assert np.array_equal(a.times, generated_pfsp("gen:pfsp:7:3:1").times)
    for bad in ("gen:pfsp:ta121", "gen:pfsp:5", "gen:pfsp:x:3", "gen:pfsp:5:3:0", "gen:pfsp:0:3",
                "gen:pfsp:5:3:2147483647"):
        with pytest.raises(MetaheurError):
            generated_pfsp(bad)


# ------------------------------------------------------------------------------------ makespan


@pytest.mark.parametrize("n, m", [(2, 1), (2, 4), (6, 1), (7, 3), (12, 9)])
def test_makespans_match_the_double_loop(n, m):
    rng = np.random.default_rng(n * 100 + m)
    times = rng.integers(0, 50, size=(m, n))
    perms = np.array([rng.permutation(n) for _ in range(9)])
    expected = [brute_makespan(times, p) for p in perms]
    assert makespans(times, perms).tolist() == expected
    problem = PFSP(times)
    assert problem.evaluate(perms).dtype == np.int64
    assert [problem.value(p) for p in perms] == expected
    assert all(int(completion_times(times, p)[-1, -1]) == e for p, e in zip(perms, expected, strict=True))


def test_small_instance_optimum_by_enumeration_is_above_the_lower_bound():
    times = np.random.default_rng(3).integers(1, 30, size=(4, 6))
    best = min(brute_makespan(times, p) for p in itertools.permutations(range(6)))
    assert machine_lower_bound(times) <= best
    assert makespans(times, np.array(list(itertools.permutations(range(6))))).min() == best


def test_bad_arrays_are_refused():
    for bad in (np.array([[1, -2]]), np.zeros((0, 3)), np.array([1, 2, 3]), np.array([[1.5, 2]]),
                np.array([[2**31, 1]])):
        with pytest.raises(MetaheurError):
            PFSP(bad)


# ------------------------------------------------------------------------------------ readers


def test_taillard_and_vrf_files_read_back(tmp_path):
    times = np.random.default_rng(1).integers(1, 100, size=(3, 5))
    (tmp_path / "a.fsp").write_text(taillard_text(times))
    (tmp_path / "VFR5_3_1_Gap.txt").write_text(vrf_text(times))
    a = read_pfsp(tmp_path / "a.fsp")
    b = read_pfsp(tmp_path / "VFR5_3_1_Gap.txt")
    assert a.name == "a" and b.name == "VFR5_3_1"
    assert np.array_equal(a.times, times) and np.array_equal(b.times, times)


def test_vrf_pairs_in_any_machine_order(tmp_path):
    (tmp_path / "v.txt").write_text("2 3\n2 7 0 1 1 4\n0 5 1 6 2 8\n")
    assert read_pfsp(tmp_path / "v.txt").times.tolist() == [[1, 5], [4, 6], [7, 8]]


def test_shared_vrf_file_and_its_bounds():
    folder = shared_pfsp()
    problem = read_pfsp(folder / "vrf" / "VFR10_10_1_Gap.txt")
    assert (problem.n, problem.m) == (10, 10)
    assert problem.times[:, 0].tolist() == [50, 23, 35, 8, 41, 71, 44, 79, 85, 22]
    assert problem.bounds() == (1097, 797, False)


def test_taillard_concatenation_names_by_seed_and_picks(tmp_path):
    ta1, ta2 = taillard("ta001"), taillard("ta002")
    other = np.random.default_rng(5).integers(1, 9, size=(2, 3))
    text = taillard_text(ta1.times, 873654221) + taillard_text(ta2.times, 379008056) + taillard_text(other, 7)
    path = tmp_path / "tai20_5.txt"
    path.write_text(text)
    assert [d.name for d in read_flow_shops(path)] == ["ta001", "ta002", "tai20_5-3"]
    assert np.array_equal(read_pfsp(f"{path}#ta002").times, ta2.times)
    assert np.array_equal(read_pfsp(f"{path}#3").times, other)
    with pytest.raises(InputFormatError, match="holds 3 instances"):
        read_pfsp(path)
    with pytest.raises(InputFormatError, match="no instance named 'ta009'"):
        read_pfsp(f"{path}#ta009")
    with pytest.raises(InputFormatError, match="#4 asked for"):
        read_pfsp(f"{path}#4")


def test_orlib_concatenation(tmp_path):
    path = tmp_path / "flowshop1.txt"
    path.write_text(ORLIB)
    found = read_flow_shops(path)
    assert [d.name for d in found] == ["car1", "hel2"]
    assert found[0].times.tolist() == [[375, 632, 12], [12, 452, 876]]
    assert read_pfsp(f"{path}#hel2").times.tolist() == [[1, 4], [2, 5], [3, 6]]
    assert read_pfsp(f"{path}#1").name == "car1"


BAD = [
    ("too few times", "2 2\n0 1 1 2\n0 3\n", 3, "truncated"),
    ("non-integer time", "2 2\n0 1 1 2\n0 3.5 1 4\n", 3, "'3.5' is not an integer"),
    ("negative time", "2 2\n0 1 1 2\n0 -3 1 4\n", 3, "processing time -3 is negative"),
    ("header disagrees", "2 2\n0 1 1 2\n0 3 1 4\n0 5 1 6\n", 4, "numbers more than"),
    ("machine out of range", "2 2\n0 1 1 2\n0 3 2 4\n", 3, "machine 2 is out of range 0..1"),
    ("machine twice", "2 2\n0 1 1 2\n1 3 1 4\n", 3, "machine 1 appears twice"),
    ("bad header", "2 2 2\n0 1 1 2\n", 1, "expected"),
    ("zero machines", "2 0\n", 1, "needs n >= 2"),
    ("taillard too few", taillard_text(np.ones((2, 3), int)).rsplit(" ", 1)[0] + "\n", 5, "truncated"),
    ("taillard extra", taillard_text(np.ones((2, 3), int)) + "7\n", 6, "numbers more than"),
    ("taillard negative", taillard_text(np.array([[1, 2, 3], [4, -5, 6]])), 5, "-5 is negative"),
    ("taillard word", taillard_text(np.ones((2, 3), int)).replace(" 1\n", " x\n", 1), 4, "'x' is not an integer"),
    ("taillard preamble", "hello\n" + taillard_text(np.ones((2, 3), int)), 1, "text before"),
]


@pytest.mark.parametrize("label, text, line, message", BAD, ids=[b[0] for b in BAD])
def test_malformed_files_are_one_line_errors_with_file_and_line(tmp_path, label, text, line, message):
    path = tmp_path / "bad.txt"
    path.write_text(text)
    with pytest.raises(InputFormatError) as info:
        read_pfsp(path)
    assert info.value.path == str(path) and info.value.line == line, str(info.value)
    assert message in str(info.value) and "\n" not in str(info.value)


# ------------------------------------------------------------------------------------ solutions


def test_job_order_round_trip(tmp_path):
    ta = taillard("ta001")
    order = np.random.default_rng(2).permutation(20)
    path = tmp_path / "ta001.sol"
    write_job_order(path, ta.name, order, ta.value(order))
    assert path.read_text().splitlines()[1].split()[0] == str(order[0] + 1)
    read = read_job_order(path, 20)
    assert np.array_equal(read.order, order) and read.stated_makespan == ta.value(order) and not read.zero_based
    path.write_text(" ".join(map(str, order)))
    assert read_job_order(path, 20).zero_based
    path.write_text("1 2 3\n")
    with pytest.raises(InputFormatError, match="has 3 numbers"):
        read_job_order(path, 20)
    path.write_text(" ".join(["1"] * 20))
    with pytest.raises(InputFormatError, match="not a permutation"):
        read_job_order(path, 20)


# ------------------------------------------------------------------------------------ picture


def test_gantt_chart_draws_every_operation():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ta = taillard("ta001")
    order = np.arange(20)
    fig, ax = plt.subplots()
    ta.draw(ax, order)
    bars = sum(len(c.get_paths()) for c in ax.collections)
    assert bars == ta.n * ta.m
    assert ax.get_xlim()[1] == ta.value(order)
    plt.close(fig)
