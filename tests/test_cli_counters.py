"""Counters that mean one thing each (GA generations per island apart from tabu-search steps) in
the summary, the JSON, the status line and the statistics; the status line while populations are
built and after --resume (issue 24 item 5, issue 21 item 8)."""

from __future__ import annotations

import csv
import io
import json
import re
import time

import pytest
from cliutil import QUICK, cpu_runner, ok

from metaheur.cli import cli
from metaheur.islands import model as model_module
from metaheur.problems.tsp.eax_island import EAXIsland


@pytest.fixture
def runner(monkeypatch, tmp_path):
    return cpu_runner(monkeypatch, tmp_path)


def test_generations_per_island_and_search_steps_apart(runner, tmp_path):
    """Two islands, one GA and one tabu island, 3 generations each: 3 GA generations per island and
    3 search steps, not 6 'generations'."""
    args = ["solve", "gen:qap:12", "-g", "3", "--sync", "--epoch-generations", "1", "--strategy", "cpu-islands",
            "--islands", "2", "--walk-islands", "1", "--population", "4", "--offspring", "2", "--ls-budget", "20",
            "--json", "r.json", "--stats", "r.csv", "-v"]
    result = runner.invoke(cli, args)
    out = ok(result)
    data = json.loads((tmp_path / "r.json").read_text())
    assert (data["generations"], data["search_steps"]) == (3, 3)
    assert [(i["algorithm"], i["generations"], i["search_steps"]) for i in data["islands"]] == [
        ("GA (ux)", 3, 0), ("tabu search", 0, 3)]
    assert "generations 3 GA generations per island, 3 steps per local-search island (tabu search)" in out
    assert "(tabu search): 3 steps" in out and "(GA (ux)): 3 generations" in out
    rows = list(csv.DictReader(io.StringIO((tmp_path / "r.csv").read_text())))
    assert {(r["island"], r["generations"], r["search_steps"]) for r in rows} == {("0", "1", "0"), ("1", "0", "1")}
    assert "  gen 3  search steps 3  " in result.stderr.splitlines()[-1]


@pytest.mark.parametrize("instance", ["gen:qap:12", "gen:lop:40", "gen:pfsp:20:5"])
def test_generations_stop_every_island_at_that_count_in_epochs_of_seconds(runner, tmp_path, instance):
    """Without --sync an epoch runs for seconds; -g N still ends every island's generations (or
    its steps, the flow shop's chains) at N, not at the end of the epoch that passes N."""
    result = runner.invoke(cli, ["solve", instance, "-g", "3", "--strategy", "cpu-islands", "--islands", "2",
                                 "--json", "r.json", "-q"])
    ok(result)
    data = json.loads((tmp_path / "r.json").read_text())
    assert data["stop_reason"] == "generations"
    assert [max(i["generations"], i["search_steps"]) for i in data["islands"]] == [3, 3]


def test_status_line_reports_while_a_population_is_built(runner, monkeypatch):
    """A slow first population (a stand-in for 85,900 cities): the status line keeps reporting,
    every PROGRESS_SECONDS, before the first best is known."""
    build = EAXIsland.first_population  # the TSP's default island

    def slow_build(*args, **kwargs):
        time.sleep(0.6)
        return build(*args, **kwargs)

    monkeypatch.setattr(EAXIsland, "first_population", slow_build)
    monkeypatch.setattr(model_module, "PROGRESS_SECONDS", 0.05)
    result = runner.invoke(cli, ["solve", "gen:tsp:30", *QUICK])
    ok(result)
    lines = result.stderr.splitlines()
    building = [line for line in lines if "best -  building populations" in line]
    assert len(building) >= 3, lines
    # the building lines come before the summary (a "starting the islands" line may come first)
    assert lines.index(building[-1]) < min(i for i, line in enumerate(lines)
                                           if "best -" not in line and not line.startswith("starting the islands"))


def test_status_line_reports_while_the_worker_processes_start(runner, monkeypatch):
    warm_up = model_module.IslandModel._warm_up

    def slow_warm_up(self, *args):
        time.sleep(0.6)
        return warm_up(self, *args)

    monkeypatch.setattr(model_module.IslandModel, "_warm_up", slow_warm_up)
    monkeypatch.setattr(model_module, "PROGRESS_SECONDS", 0.05)
    result = runner.invoke(cli, ["solve", "gen:qap:10", "-g", "1", "--sync", "--epoch-generations", "1",
                                 "--islands", "2", "--population", "4", "--offspring", "2", "--ls-budget", "10"])
    ok(result)
    lines = result.stderr.splitlines()
    starting = [k for k, line in enumerate(lines) if line.startswith("starting the islands")]
    assert len(starting) >= 3 and starting == list(range(len(starting))), lines
    # said once, then with the seconds it has taken
    assert lines[0] == "starting the islands" and all(re.fullmatch(r"starting the islands \(\d+\.\d s\)", line)
                                                      for line in lines[1:len(starting)]), lines


def test_status_line_after_resume_starts_from_the_saved_best_and_time(runner, tmp_path):
    ok(runner.invoke(cli, ["solve", "gen:qap:14", *QUICK, "-q", "--json", "first.json", "--checkpoint", "run.npz"]))
    first = json.loads((tmp_path / "first.json").read_text())
    result = runner.invoke(cli, ["solve", "--resume", "run.npz", "-g", "4", "--json", "second.json"])
    ok(result)
    opening = result.stderr.splitlines()[0]
    assert f"best {first['cost']}" in opening and "building" not in opening
    elapsed = float(re.match(r"\s*([\d.]+)", opening).group(1))
    assert elapsed >= round(first["time_s"], 1)
    second = json.loads((tmp_path / "second.json").read_text())
    assert second["generations"] == 4 and second["search_iterations"] > first["search_iterations"]
