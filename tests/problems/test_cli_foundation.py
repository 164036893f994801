"""The foundation commands: ``metaheur info INSTANCE``, ``metaheur evaluate`` and ``metaheur --version``."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys

import numpy as np
import pytest
from click.testing import CliRunner

import metaheur
from metaheur.cli import cli
from metaheur.problems import random_qap, uniform_tsp, write_sln, write_tour
from metaheur.problems.qap import matrix_dominance


@pytest.fixture
def runner(monkeypatch):
    monkeypatch.delenv("METAHEUR_INSTANCES", raising=False)
    return CliRunner()


def ok(result):
    assert result.exit_code == 0, (result.output, result.exception)
    assert result.stderr == ""
    return result.stdout


# --------------------------------------------------------------------------------------------- info


@pytest.mark.parametrize("kind", ["qap", "tsp", "atsp", "pfsp", "lop"])
def test_info_of_a_registered_problem_lists_its_files_crossovers_and_sections(runner, kind):
    """``metaheur info PROBLEM``: what a --config file may set for it, every key with its default,
    taken from the problem's declarations (its search_params, else the engine's [perm])."""
    cls = metaheur.problem_class(kind)
    data = json.loads(ok(runner.invoke(cli, ["info", kind, "--json"])))
    own = cls.search_params or (metaheur.PermSearchParams,)
    assert data["kind"] == kind and list(data["sections"]) == [c.section for c in own]
    assert list(data["crossovers"]) == list(cls.crossovers)
    for section in own:
        keys = data["sections"][section.section]["keys"]
        assert keys == json.loads(json.dumps(dataclasses.asdict(section())))
    text = ok(runner.invoke(cli, ["info", kind.upper()]))
    assert text.startswith(f"problem     {kind}: {cls.title}")
    assert all(f"[{c.section}]" in text for c in own)


def test_info_of_the_tsp_shows_its_eax_section_and_a_file_named_like_a_problem_is_an_instance(runner, tmp_path,
                                                                                             monkeypatch):
    text = ok(runner.invoke(cli, ["info", "tsp"]))
    assert "[eax]" in text and "  tries = 30" in text and "eax (EAXIsland)" in text
    monkeypatch.chdir(tmp_path)
    (tmp_path / "qap").write_text("3\n\n0 1 2\n1 0 3\n2 3 0\n\n0 5 6\n5 0 7\n6 7 0\n")
    assert ok(runner.invoke(cli, ["info", "qap"])).startswith("instance    qap\nproblem     QAP\nn           3")


def test_info_generated_qap_text(runner):
    qap = random_qap(12, seed=1)
    out = ok(runner.invoke(cli, ["info", "gen:qap:12"]))
    lines = out.splitlines()
    assert lines[0] == "instance    gen-qap-12-s1"
    assert lines[1] == "problem     QAP"
    assert lines[2] == "n           12"
    for label, m in (("flow", qap.flow), ("distance", qap.distance)):
        line = f"{label:<11} symmetric, zero diagonal, entries 0..{m.max()}, dominance {matrix_dominance(m):.1f}"
        assert line in lines
    assert "best known  unknown" in lines
    assert lines[-1] == "source      gen:qap:12:1"


def test_info_generated_qap_json(runner):
    qap = random_qap(12, seed=3)
    data = json.loads(ok(runner.invoke(cli, ["info", "gen:qap:12:3", "--json"])))
    assert data["instance"] == "gen-qap-12-s3"
    assert data["problem"] == "QAP"
    assert data["n"] == 12
    assert data["source"] == "gen:qap:12:3"
    assert data["best_known"] is None and data["best_known_optimal"] is None
    assert data["flow_symmetric"] is True and data["distance_zero_diagonal"] is True
    assert data["flow_max"] == int(qap.flow.max()) and data["distance_min"] == 0


def test_info_generated_tsp_text_and_json(runner):
    out = ok(runner.invoke(cli, ["info", "gen:tsp:1000:7"]))
    assert "problem     TSP" in out
    assert "n           1000" in out
    assert "weights     EUC_2D\n" in out
    assert "coordinates yes" in out
    assert "full matrix 3.8 MiB as int32" in out  # 1000 * 1000 * 4 bytes
    data = json.loads(ok(runner.invoke(cli, ["info", "gen:tsp-clustered:100", "--json"])))
    assert data == {
        "instance": "gen-tsp-clustered-100-s1", "problem": "TSP", "n": 100,
        "source": "gen:tsp-clustered:100:1",
        "best_known": None, "best_known_optimal": None, "edge_weight_type": "EUC_2D",
        "edge_weight_format": None, "has_coordinates": True, "full_matrix_mib": 0.0,
    }


def test_info_temp_files(runner, tmp_path):
    dat = tmp_path / "mine.dat"
    dat.write_text("2\n0 3\n3 0\n1 -2\n5 1\n")
    out = ok(runner.invoke(cli, ["info", str(dat)]))
    assert "instance    mine" in out
    assert "flow        symmetric, zero diagonal, entries 0..3, dominance 100.0" in out  # entries 0, 3, 3, 0
    assert "distance    asymmetric, non-zero diagonal, entries -2..5, dominance 199.0" in out  # 1, -2, 5, 1
    assert f"source      {dat}" in out

    tsp = tmp_path / "tri.tsp"
    tsp.write_text("NAME : tri\nTYPE : TSP\nDIMENSION : 3\nEDGE_WEIGHT_TYPE : EXPLICIT\n"
                   "EDGE_WEIGHT_FORMAT : UPPER_ROW\nEDGE_WEIGHT_SECTION\n4 5\n6\nEOF\n")
    data = json.loads(ok(runner.invoke(cli, ["info", str(tsp), "--json"])))
    assert data["instance"] == "tri" and data["n"] == 3
    assert data["edge_weight_type"] == "EXPLICIT" and data["edge_weight_format"] == "UPPER_ROW"
    assert data["has_coordinates"] is False
    out = ok(runner.invoke(cli, ["info", str(tsp)]))
    assert "weights     EXPLICIT (UPPER_ROW)" in out
    assert "coordinates no" in out


def test_info_file_named_like_a_library_instance_of_another_size(runner, tmp_path):
    """A file called nug12.dat that is not nug12 (n differs) gets no best-known value."""
    path = tmp_path / "nug12.dat"
    path.write_text("1\n5\n7\n")
    data = json.loads(ok(runner.invoke(cli, ["info", str(path), "--json"])))
    assert data["instance"] == "nug12" and data["n"] == 1
    assert data["best_known"] is None


def test_info_suffixless_file_is_sniffed(runner, tmp_path):
    qap = tmp_path / "qapfile"
    qap.write_text("1\n2\n3\n")
    assert json.loads(ok(runner.invoke(cli, ["info", str(qap), "--json"])))["problem"] == "QAP"
    tsp = tmp_path / "tspfile"
    tsp.write_text("NAME: t\nTYPE: TSP\nDIMENSION: 3\nEDGE_WEIGHT_TYPE: MAX_2D\nNODE_COORD_SECTION\n"
                   "1 0 0\n2 1 1\n3 2 2\n")
    data = json.loads(ok(runner.invoke(cli, ["info", str(tsp), "--json"])))
    assert data["problem"] == "TSP" and data["edge_weight_type"] == "MAX_2D"


# ----------------------------------------------------------------------------------------- evaluate


def test_evaluate_sln_and_result_json_for_qap(runner, tmp_path):
    qap = random_qap(9, seed=2)
    perm = np.random.default_rng(0).permutation(9)
    cost = write_sln(tmp_path / "s.sln", qap, perm)
    data = json.loads(ok(runner.invoke(cli, ["evaluate", "gen:qap:9:2", str(tmp_path / "s.sln"), "--json"])))
    assert data["cost"] == cost == qap.cost(perm)
    assert data["stated_cost"] == cost
    assert data["best_known"] is None and data["gap_percent"] is None
    (tmp_path / "r.json").write_text(json.dumps({"permutation": perm.tolist(), "cost": cost + 1}))
    out = ok(runner.invoke(cli, ["evaluate", "gen:qap:9:2", str(tmp_path / "r.json")]))
    assert f"cost        {cost}" in out
    assert f"warning     the file states cost {cost + 1}, the exact cost is {cost}" in out
    assert "gap" not in out


def test_evaluate_tour_and_result_json_for_tsp(runner, tmp_path):
    tsp = uniform_tsp(50, seed=4)
    tour = np.random.default_rng(1).permutation(50)
    length = write_tour(tmp_path / "t.tour", tsp, tour)
    args = ["evaluate", "gen:tsp:50:4", str(tmp_path / "t.tour"), "--json"]
    data = json.loads(ok(runner.invoke(cli, args)))
    assert data["cost"] == length == tsp.tour_length(tour)
    assert data["problem"] == "TSP" and data["n"] == 50
    (tmp_path / "r.json").write_text(json.dumps({"permutation": tour.tolist()}))
    args = ["evaluate", "gen:tsp:50:4", str(tmp_path / "r.json"), "--json"]
    data = json.loads(ok(runner.invoke(cli, args)))
    assert data["cost"] == length
    assert data["stated_cost"] is None


# ------------------------------------------------------------------------------------------ version


def test_version_cli_runner():
    result = CliRunner().invoke(cli, ["--version"])
    assert result.exit_code == 0
    assert result.stdout.strip() == f"metaheur, version {metaheur.__version__}"
    assert metaheur.__version__[0].isdigit()


def test_version_and_help_in_a_fresh_interpreter():
    proc = subprocess.run([sys.executable, "-m", "metaheur.cli", "--version"], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0
    assert proc.stdout.strip() == f"metaheur, version {metaheur.__version__}"
    proc = subprocess.run([sys.executable, "-m", "metaheur.cli", "--help"], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0
    assert "info" in proc.stdout and "evaluate" in proc.stdout


def test_usage_errors_exit_2(runner):
    result = runner.invoke(cli, ["evaluate", "gen:qap:5"])  # missing SOLUTION_FILE
    assert result.exit_code == 2
    assert "Missing argument" in result.stderr
    result = runner.invoke(cli, ["no-such-command"])
    assert result.exit_code == 2
