"""Smoke tests of the flow shop's experiment scripts on one small instance: they exit 0 and write
their tables. No timing or quality is asserted: those are what the scripts measure."""

from __future__ import annotations

import csv
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

EXPERIMENTS = Path(__file__).resolve().parents[2] / "experiments"
YARDSTICKS = Path(__file__).resolve().parents[3] / "shared" / "yardsticks"
pytestmark = pytest.mark.slow


def script(name: str, *args: str, env: dict | None = None) -> None:
    proc = subprocess.run([sys.executable, str(EXPERIMENTS / name), *args], capture_output=True, text=True,
                          timeout=300, env=env)
    assert proc.returncode == 0, f"{name}: {proc.stdout[-2000:]}\n{proc.stderr[-3000:]}"


def rows(path: Path) -> list[dict]:
    with open(path, newline="") as handle:
        return list(csv.DictReader(handle))


def test_bench_pfsp_on_ta001(tmp_path, instances_dir):
    folder = Path(os.environ.get("METAHEUR_YARDSTICKS", YARDSTICKS))
    if not (folder / "ig.c").is_file() or not (instances_dir / "pfsp" / "ta001.fsp").is_file():
        pytest.skip("ig.c (METAHEUR_YARDSTICKS) or pfsp/ta001.fsp not found")
    script("bench_pfsp.py", "--instances", "ta001", "--seeds", "1", "--parts", "taillard30", "--yardsticks",
           str(folder), "--out", str(tmp_path))
    table = rows(tmp_path / "bench_pfsp_taillard30.csv")
    assert [r["class"] for r in table] == ["20x5", "overall"]
    runs = rows(tmp_path / "bench_pfsp_taillard30_runs.csv")
    assert len(runs) == 1 and int(runs[0]["metaheur"]) >= 1278 and int(runs[0]["ig"]) >= 1278
    assert "- settings: " in (tmp_path / "bench_pfsp_taillard30.md").read_text()
    script("bench_pfsp.py", "--instances", "ta001", "--seeds", "2", "--parts", "taillard30", "--resume",
           "--yardsticks", str(folder), "--out", str(tmp_path))
    again = rows(tmp_path / "bench_pfsp_taillard30_runs.csv")
    assert [r["seed"] for r in again] == ["0", "1"] and again[0] == runs[0]  # the first run kept, not rerun


def test_pfsp_method_quick(tmp_path):
    script("pfsp_method.py", "--quick", "--configs", "ga,ig,mix-ls", "--ms", "5", "--out", str(tmp_path))
    table = rows(tmp_path / "pfsp_method_quick.csv")
    assert [r["instance"] for r in table] == ["ta001", "ta031", "ARPD"]
    assert all(float(r[c]) >= 0 for r in table for c in ("ga", "ig", "mix-ls"))
    assert "load average at start" in (tmp_path / "pfsp_method_quick.md").read_text()


def test_pfsp_method_tie_and_temperature_configs_change_only_those_settings():
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "experiments"))
    from pfsp_method import params_for

    from metaheur.problems.pfsp import taillard

    problem = taillard("ta001")
    own = problem.default_params()
    for config, ties, temperature in (("default", False, 0.4), ("ties", True, 0.4), ("t07", False, 0.7),
                                      ("ties-t07", True, 0.7)):
        params = params_for(config, problem)
        assert params.ga == own.ga
        assert (params.perm.ties, params.perm.temperature) == (ties, temperature), config
        assert params.perm.destruct == own.perm.destruct and params.perm.method == own.perm.method


def test_pfsp_method_migration_and_generation_configs_change_only_those_settings():
    sys.path.insert(0, str(EXPERIMENTS))
    from pfsp_method import params_for

    from metaheur.problems.pfsp import taillard

    problem = taillard("ta001")
    own = problem.default_params()
    nomig, longer = params_for("nomig", problem), params_for("500n", problem)
    assert (nomig.ga, nomig.perm, nomig.migration.interval) == (own.ga, own.perm, 0)
    assert (longer.ga.ls_budget, longer.perm, longer.migration) == (500 * problem.n, own.perm, None)
    assert longer.ga == replace(own.ga, ls_budget=500 * problem.n)


def test_a_bench_pfsp_part_not_finished_leaves_a_partial_summary_of_every_planned_run(tmp_path):
    sys.path.insert(0, str(EXPERIMENTS))
    from bench_pfsp import save_part

    plan = [("ta001", None, 1278, "20x5"), ("ta002", None, 1359, "20x5"), ("ta011", None, 1582, "20x10")]
    run = {"instance": "ta001", "class": "20x5", "seed": 0, "ms": 1500, "upper_bound": 1278, "metaheur": 1278,
           "ig": 1291, "metaheur_wall_s": 0.1, "load": 1.0, "commit": "abc"}
    # a later seed done by an earlier call, and a run of an instance outside the plan: in the runs table only
    later = run | {"seed": 1, "ig": 1278}
    other = run | {"instance": "ta003", "metaheur": 1300}
    done = {("ta001", 0): run, ("ta001", 1): later, ("ta003", 0): other}
    save_part(done, plan, 2, "bench", ["settings: test"], tmp_path, "PFSP")
    table = {r["class"]: r for r in rows(tmp_path / "bench.csv")}
    assert (table["20x5"]["runs"], table["20x5"]["status"]) == ("2/4", "partial")
    assert table["20x10"]["status"] == "missing" and table["overall"]["runs"] == "2/6"
    assert float(table["20x5"]["arpd_ig"]) == round(100 * 13 / 1278 / 2, 3)
    assert float(table["20x5"]["arpd_metaheur"]) == 0.0
    assert [r["instance"] for r in rows(tmp_path / "bench_runs.csv")] == ["ta001", "ta001", "ta003"]


def test_a_bench_pfsp_runs_table_keeps_its_rows_and_reads_rows_written_before_the_cpu_column(tmp_path):
    sys.path.insert(0, str(EXPERIMENTS))
    from bench_pfsp import RUN_COLUMNS, earlier_runs
    from lib.report import write_csv

    run = {"instance": "ta001", "class": "20x5", "seed": 0, "ms": 1500, "upper_bound": 1278, "metaheur": 1278,
           "ig": 1291, "metaheur_wall_s": 0.1, "load": 1.0, "commit": "abc", "cpu": "Some CPU"}
    write_csv(tmp_path / "runs.csv", [run], RUN_COLUMNS, comment="settings: test")
    assert earlier_runs(tmp_path / "runs.csv") == {("ta001", 0): run}
    write_csv(tmp_path / "old.csv", [run], [c for c in RUN_COLUMNS if c != "cpu"])
    assert earlier_runs(tmp_path / "old.csv")["ta001", 0]["cpu"] == ""
