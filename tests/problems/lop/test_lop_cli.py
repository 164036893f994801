"""The linear ordering problem through the command line: a maximisation everywhere it shows (the
summary, JSON, CSV and the figure say "value" and "gap below the best known"), --target as "at
least", the stop at a proven optimum, files of any name, and `metaheur evaluate` re-scoring every
shared best-known solution. Tests that read LOLIB files skip without METAHEUR_INSTANCES."""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest
from cliutil import cpu_runner, ok, user_error

from metaheur.cli import cli
from metaheur.problems.lop import random_lop

QUICK = ["-g", "2", "--sync", "--epoch-generations", "1", "--strategy", "cpu-serial", "--seed", "1"]


def write_lolib(path, lop) -> None:
    path.write_text(f"{lop.n}\n" + "\n".join(" ".join(map(str, row)) for row in lop.matrix) + "\n")


def test_named_instance_reports_a_maximisation(monkeypatch, tmp_path, instances_dir):
    monkeypatch.setenv("METAHEUR_INSTANCES", str(instances_dir))
    runner = cpu_runner(monkeypatch, tmp_path)
    out = ok(runner.invoke(cli, ["solve", "be75eec_150", *QUICK, "--json", "r.json", "--stats", "s.csv",
                                 "--solution", "o.sol", "--plot", "p.png"]))
    data = json.loads((tmp_path / "r.json").read_text())
    value, bks = data["cost"], 3482828
    assert data["sense"] == "max" and data["best_known"] == bks and value <= bks
    assert data["gap_percent"] == pytest.approx(100 * (bks - value) / bks) and data["gap_percent"] >= 0
    assert f"value       {value}" in out and "% below the best known" in out and "cost" not in out.split("time")[0]
    with open(tmp_path / "s.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert "best_value" in rows[0] and max(int(r["global_best_value"]) for r in rows) == value
    assert (tmp_path / "p.png").stat().st_size > 0
    ev = ok(runner.invoke(cli, ["evaluate", "be75eec_150", "o.sol"]))
    assert f"value       {value}" in ev and "below the best known" in ev


def test_generated_instance_target_means_at_least(monkeypatch, tmp_path):
    runner = cpu_runner(monkeypatch, tmp_path)
    first = json.loads(ok(runner.invoke(cli, ["solve", "gen:lop:60:3", *QUICK, "--json", "-"])))
    assert first["instance"] == "gen-lop-60-s3" and first["sense"] == "max"
    assert first["parameters"]["perm"]["method"] == "ils" and first["parameters"]["ga"]["crossover"] == "ox"
    # a target below what two generations reach is met at once: a run stops at it, never above the limit
    goal = first["cost"] - 1000
    again = json.loads(ok(runner.invoke(cli, ["solve", "gen:lop:60:3", "-t", "60", "--strategy", "cpu-serial",
                                              "--target", str(goal), "--json", "-"])))
    assert again["stop_reason"] == "target" and again["cost"] >= goal and again["time_s"] < 30


def test_stops_at_a_proven_optimum(monkeypatch, tmp_path, instances_dir):
    monkeypatch.setenv("METAHEUR_INSTANCES", str(instances_dir))
    runner = cpu_runner(monkeypatch, tmp_path)
    data = json.loads(ok(runner.invoke(cli, ["solve", "t59b11xx", "-t", "60", "--json", "-"])))
    assert data["cost"] == 209320 and data["stop_reason"] == "optimal" and data["time_s"] < 30


def test_a_file_of_any_name(monkeypatch, tmp_path):
    runner = cpu_runner(monkeypatch, tmp_path)
    lop = random_lop(30, 4)
    write_lolib(tmp_path / "ranking.data.txt", lop)
    write_lolib(tmp_path / "noext", lop)
    for args in (["--problem", "lop", "ranking.data.txt"], ["noext"]):  # an extension-less file is sniffed
        data = json.loads(ok(runner.invoke(cli, ["solve", *args, *QUICK, "--json", "-", "--solution", "o.sol"])))
        assert data["problem"] == "LOP" and data["n"] == 30
        order = np.array((tmp_path / "o.sol").read_text().split(), dtype=int) - 1
        assert lop.value(order) == data["cost"]
        ev = json.loads(ok(runner.invoke(cli, ["evaluate", *args, "o.sol", "--json"])))
        assert ev["cost"] == data["cost"] and ev["sense"] == "max"


def test_malformed_file_is_one_line_exit_2(monkeypatch, tmp_path):
    runner = cpu_runner(monkeypatch, tmp_path)
    (tmp_path / "short").write_text("3\n1 2 3\n4 5 6\n")
    user_error(runner.invoke(cli, ["solve", "--problem", "lop", "short", "-t", "1"]), "short", "truncated")
    (tmp_path / "bad.sol").write_text("1 2 2\n")
    write_lolib(tmp_path / "ok", random_lop(3))
    user_error(runner.invoke(cli, ["evaluate", "--problem", "lop", "ok", "bad.sol"]), "bad.sol", "not a permutation")


def test_evaluate_rescores_every_shared_solution(monkeypatch, tmp_path, instances_dir):
    table = instances_dir / "lop" / "bks.csv"
    if not table.is_file():
        pytest.skip(f"{table} not present")
    monkeypatch.setenv("METAHEUR_INSTANCES", str(instances_dir))
    runner = cpu_runner(monkeypatch, tmp_path)
    with open(table, newline="") as handle:
        rows = list(csv.DictReader(handle))
    for row in rows:
        sol = instances_dir / "lop" / row["set"] / f"{row['name']}.sol"
        ev = json.loads(ok(runner.invoke(cli, ["evaluate", row["name"], str(sol), "--json"])))
        assert (ev["problem"], ev["cost"], ev["best_known"]) == ("LOP", int(row["best_known"]), int(row["best_known"]))
        assert ev["gap_percent"] == 0 and ev["best_known_optimal"] == (row["set"] in ("IO", "SGB"))


def test_library_lookup_by_name_in_sets_and_folder(monkeypatch, tmp_path):
    """A name is found without extension in lop/'s set folders (case aside); a file there is read as
    a LOP even when its content would not say so (the LOP's own error, not the QAP's)."""
    library = tmp_path / "lib"
    (library / "lop" / "SETA").mkdir(parents=True)
    write_lolib(library / "lop" / "SETA" / "Mine.01", random_lop(8, 2))
    (library / "lop" / "SETA" / "broken").write_text("3\n1 2 3\n")
    monkeypatch.setenv("METAHEUR_INSTANCES", str(library))
    runner = cpu_runner(monkeypatch, tmp_path)
    data = json.loads(ok(runner.invoke(cli, ["solve", "mine.01", *QUICK, "--json", "-"])))
    assert (data["problem"], data["instance"], data["n"]) == ("LOP", "Mine.01", 8)
    user_error(runner.invoke(cli, ["info", "broken"]), "truncated: n = 3 needs 9 matrix entries")
