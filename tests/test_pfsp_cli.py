"""The permutation flow shop from the command line: solve by library name, generated name and a
file given with --problem; evaluate a written solution; info; malformed files (exit 2)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from cliutil import QUICK, cpu_runner, ok, user_error

from metaheur.cli import cli
from metaheur.problems.pfsp import generated_pfsp, read_pfsp


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
