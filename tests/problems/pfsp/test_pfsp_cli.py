"""The permutation flow shop from the command line: solve by library name, generated name, a file
given with --problem and one instance of a file of several (FILE#NAME); evaluate a written
solution; info; malformed files and bad picks (exit 2)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from cliutil import QUICK, cpu_runner, ok, user_error, write_dat
from testutil import ORLIB, taillard_text

from metaheur.cli import cli
from metaheur.problems.pfsp import generated_pfsp, read_pfsp, taillard


@pytest.fixture
def runner(monkeypatch, tmp_path):
    return cpu_runner(monkeypatch, tmp_path)


def vrf_file(path, times: np.ndarray) -> None:
    m, n = times.shape
    rows = ["  ".join(f"{i} {int(times[i, j])}" for i in range(m)) for j in range(n)]
    path.write_text(f"{n} {m}\n" + "\n".join(rows) + "\n")


def test_solve_generated_writes_a_solution_that_evaluate_rescores(runner, tmp_path):
    out = json.loads(ok(runner.invoke(cli, ["solve", "gen:pfsp:30:5", *QUICK, "--json", "-", "--solution", "s.sol",
                                            "--plot", "p.png"])))
    shop = generated_pfsp("gen:pfsp:30:5")
    assert out["problem"] == "PFSP" and out["cost"] == shop.value(out["permutation"])
    assert (tmp_path / "p.png").stat().st_size > 0
    again = json.loads(ok(runner.invoke(cli, ["evaluate", "gen:pfsp:30:5", "s.sol", "--json"])))
    assert again["cost"] == out["cost"] and again["stated_cost"] == out["cost"]
    text = (tmp_path / "s.sol").read_text().splitlines()
    assert sorted(int(j) for line in text[1:] for j in line.split()) == list(range(1, 31))


def test_seeded_sync_runs_are_reproducible(runner):
    runs = [json.loads(ok(runner.invoke(cli, ["solve", "gen:pfsp:25:4:7", *QUICK, "--json", "-"]))) for _ in range(2)]
    assert runs[0]["permutation"] == runs[1]["permutation"] and runs[0]["cost"] == runs[1]["cost"]


def test_solve_a_vrf_file_with_problem_pfsp(runner, tmp_path):
    times = np.random.default_rng(4).integers(1, 99, size=(4, 9))
    vrf_file(tmp_path / "VFR9_4_1_Gap.txt", times)
    out = json.loads(ok(runner.invoke(cli, ["solve", "--problem", "pfsp", "VFR9_4_1_Gap.txt", *QUICK, "--json", "-"])))
    assert out["instance"] == "VFR9_4_1"
    assert out["cost"] == read_pfsp(tmp_path / "VFR9_4_1_Gap.txt").value(out["permutation"])


def test_malformed_file_is_exit_2_naming_file_and_line(runner, tmp_path):
    (tmp_path / "bad_Gap.txt").write_text("3 2\n0 4 1 5\n0 6 2 7\n0 1 1 1\n")
    user_error(runner.invoke(cli, ["solve", "--problem", "pfsp", "bad_Gap.txt", *QUICK]), "bad_Gap.txt:3:",
               "machine 2 is out of range 0..1")
    label = "number of jobs, number of machines, initial seed, upper bound and lower bound :"
    (tmp_path / "neg.fsp").write_text(f"{label}\n 2 1 1 0 0\nprocessing times :\n 3 -4\n")
    user_error(runner.invoke(cli, ["info", "neg.fsp"]), "neg.fsp:4:", "negative")


def test_info_of_a_taillard_instance_shows_its_bounds(runner):
    out = ok(runner.invoke(cli, ["info", "gen:pfsp:ta001"]))
    assert "20 jobs x 5 machines" in out and "1278 (optimal)" in out
    data = json.loads(ok(runner.invoke(cli, ["info", "gen:pfsp:ta001", "--json"])))
    assert (data["problem"], data["upper_bound"], data["optimal"]) == ("PFSP", 1278, True)


def test_solve_by_library_name(runner, instances_dir):
    """ta001 under $METAHEUR_INSTANCES/pfsp/, solved to its optimum (the run stops there)."""
    if not (instances_dir / "pfsp" / "ta001.fsp").is_file():
        pytest.skip("no pfsp/ta001.fsp under METAHEUR_INSTANCES")
    out = json.loads(ok(runner.invoke(cli, ["solve", "ta001", "-t", "20", "--seed", "1", "--json", "-"])))
    assert out["cost"] == 1278 and out["stop_reason"] == "optimal"


def test_file_hash_name_picks_one_instance_of_a_concatenation(runner, tmp_path):
    """Taillard's concatenated files and OR-Library's flowshop1.txt: FILE#NAME and FILE#K pick one
    instance for solve, evaluate and info."""
    ta1, ta2 = taillard("ta001"), taillard("ta002")
    (tmp_path / "tai20_5.txt").write_text(taillard_text(ta1.times, 873654221) + taillard_text(ta2.times, 379008056))
    out = json.loads(ok(runner.invoke(cli, ["solve", "tai20_5.txt#ta002", *QUICK, "--json", "-", "--solution",
                                            "s.sol"])))
    assert out["instance"] == "ta002" and out["cost"] == ta2.value(out["permutation"])
    again = json.loads(ok(runner.invoke(cli, ["evaluate", "tai20_5.txt#2", "s.sol", "--json"])))
    assert again["instance"] == "ta002" and again["cost"] == out["cost"]
    info = ok(runner.invoke(cli, ["info", "tai20_5.txt#1"]))
    assert "ta001" in info and "upper 1278" in info
    (tmp_path / "flowshop1.txt").write_text(ORLIB)
    info = ok(runner.invoke(cli, ["info", "flowshop1.txt#hel2"]))
    assert "2 jobs x 3 machines" in info


def test_a_bad_pick_is_exit_2(runner, tmp_path):
    (tmp_path / "tai20_5.txt").write_text(taillard_text(taillard("ta001").times, 873654221) * 2)
    user_error(runner.invoke(cli, ["info", "tai20_5.txt"]), "holds 2 instances", "FILE#NAME")
    user_error(runner.invoke(cli, ["solve", "tai20_5.txt#ta009", *QUICK]), "no instance named 'ta009'")
    user_error(runner.invoke(cli, ["info", "tai20_5.txt#3"]), "instance #3 asked for, the file holds 2")
    write_dat(tmp_path / "q.dat", 5, 1)
    user_error(runner.invoke(cli, ["info", "q.dat#2"]), "q.dat#2: a QAP file holds one instance")


def test_method_and_moves_choose_the_engines_search(monkeypatch, tmp_path):
    """--method and --moves set the generic engine's local search (over the problem's defaults);
    the QAP, whose search is its own, and a move the problem does not offer are refused in one line."""
    runner = cpu_runner(monkeypatch, tmp_path)
    quick = ["-g", "2", "--sync", "--epoch-generations", "1", "--strategy", "cpu-serial", "--seed", "1"]
    ok(runner.invoke(cli, ["solve", "gen:pfsp:20:5", *quick, "-q", "--method", "tabu", "--moves", "swap",
                           "--json", "r.json"]))
    perm = json.loads((tmp_path / "r.json").read_text())["parameters"]["perm"]
    assert (perm["method"], perm["move"]) == ("tabu", "swap")
    user_error(runner.invoke(cli, ["solve", "gen:qap:12", *quick, "--method", "tabu"]),
               "the QAP has its own ([tabu] in a config file)")
    user_error(runner.invoke(cli, ["solve", "gen:lop:20", *quick, "--moves", "reverse"]),
               "offers the moves insert, swap, not 'reverse'")
