"""Malformed input: exit status 2 and exactly one line on stderr naming the file (and the line), no traceback.

Every case runs twice: in a fresh interpreter (``python -m metaheur.cli``) and through click's CliRunner.
"""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner

from metaheur.cli import cli

GOOD_DAT = "3\n\n0 1 2\n1 0 3\n2 3 0\n\n0 5 6\n5 0 7\n6 7 0\n"
GOOD_TSP = ("NAME : five\nTYPE : TSP\nDIMENSION : 5\nEDGE_WEIGHT_TYPE : EUC_2D\nNODE_COORD_SECTION\n"
            "1 0 0\n2 10 0\n3 10 10\n4 0 10\n5 5 15\nEOF\n")


@dataclass
class Case:
    files: dict[str, str | bytes]  # name -> content, written under tmp_path
    argv: list[str]  # arguments; "{dir}" stands for tmp_path
    culprit: str  # the path that must be named ("{dir}" expanded)
    fragment: str  # a piece of the message
    line: int | None = None  # the line number that must be given


def tsp_text(dimension="5", wtype="EUC_2D", kind="TSP", body=None) -> str:
    body = body if body is not None else "1 0 0\n2 10 0\n3 10 10\n4 0 10\n5 5 15\n"
    return (f"NAME : bad\nTYPE : {kind}\nDIMENSION : {dimension}\nEDGE_WEIGHT_TYPE : {wtype}\n"
            f"NODE_COORD_SECTION\n{body}EOF\n")


EXPLICIT_HEAD = "NAME : e\nTYPE : TSP\nDIMENSION : 4\nEDGE_WEIGHT_TYPE : EXPLICIT\nEDGE_WEIGHT_FORMAT : UPPER_ROW\n"

CASES = {
    # ---- QAP instance files
    "qap-truncated": Case({"t.dat": "3\n0 1 2\n1 0 3\n2 3 0\n0 5 6\n5 0\n"}, ["info", "{dir}/t.dat"],
                          "{dir}/t.dat", "truncated", 6),
    "qap-non-numeric": Case({"n.dat": "2\n0 1\n1 O\n0 4\n4 0\n"}, ["info", "{dir}/n.dat"],
                            "{dir}/n.dat", "'O' is not an integer", 3),
    "qap-float-token": Case({"f.dat": "2\n0 1\n1 0\n0 4.5\n4 0\n"}, ["info", "{dir}/f.dat"],
                            "{dir}/f.dat", "'4.5' is not an integer", 4),
    "qap-extra-numbers": Case({"x.dat": GOOD_DAT + "\n\n17 18\n"}, ["info", "{dir}/x.dat"],
                              "{dir}/x.dat", "2 numbers after the two 3 x 3 matrices", 12),
    "qap-empty": Case({"e.dat": "\n  \n"}, ["info", "{dir}/e.dat"], "{dir}/e.dat", "empty"),
    "qap-bad-n": Case({"z.dat": "0\n"}, ["info", "{dir}/z.dat"], "{dir}/z.dat", "n = 0", 1),
    # ---- TSP instance files
    "tsp-dimension-vs-coords": Case({"d.tsp": tsp_text(dimension="6")}, ["info", "{dir}/d.tsp"],
                                    "{dir}/d.tsp", "NODE_COORD_SECTION has 5 lines, DIMENSION = 6", 10),
    "tsp-dimension-vs-coords-more": Case({"d.tsp": tsp_text(dimension="4")}, ["info", "{dir}/d.tsp"],
                                         "{dir}/d.tsp", "NODE_COORD_SECTION has 5 lines, DIMENSION = 4", 10),
    "tsp-dimension-vs-weights-short": Case(
        {"w.tsp": EXPLICIT_HEAD + "EDGE_WEIGHT_SECTION\n1 2 3\n4 5\nEOF\n"}, ["info", "{dir}/w.tsp"],
        "{dir}/w.tsp", "needs 6 weights, found 5", 8),
    "tsp-dimension-vs-weights-long": Case(
        {"w.tsp": EXPLICIT_HEAD + "EDGE_WEIGHT_SECTION\n1 2 3\n4 5 6\n7\nEOF\n"}, ["info", "{dir}/w.tsp"],
        "{dir}/w.tsp", "1 weights too many", 9),
    "tsp-non-numeric-coordinate": Case({"c.tsp": tsp_text(body="1 0 0\n2 10 0\n3 ten 10\n4 0 10\n5 5 15\n")},
                                       ["info", "{dir}/c.tsp"], "{dir}/c.tsp", "'ten' is not a number", 8),
    "tsp-duplicate-node-id": Case({"i.tsp": tsp_text(body="1 0 0\n2 10 0\n3 10 10\n3 0 10\n5 5 15\n")},
                                  ["info", "{dir}/i.tsp"], "{dir}/i.tsp", "node ids must be 1..5", 9),
    "tsp-unknown-weight-type": Case({"u.tsp": tsp_text(wtype="EUCLIDEAN")}, ["info", "{dir}/u.tsp"],
                                    "{dir}/u.tsp", "unknown EDGE_WEIGHT_TYPE 'EUCLIDEAN'", 4),
    "tsp-unsupported-euc3d": Case({"3.tsp": tsp_text(wtype="EUC_3D", body="1 0 0 0\n")}, ["info", "{dir}/3.tsp"],
                                  "{dir}/3.tsp", "EDGE_WEIGHT_TYPE EUC_3D is not supported", 4),
    "tsp-unsupported-atsp": Case({"a.tsp": tsp_text(kind="ATSP")}, ["info", "{dir}/a.tsp"],
                                 "{dir}/a.tsp", "TYPE 'ATSP' is not supported", 2),
    "tsp-missing-dimension": Case({"m.tsp": "NAME : m\nTYPE : TSP\nEDGE_WEIGHT_TYPE : EUC_2D\nEOF\n"},
                                  ["info", "{dir}/m.tsp"], "{dir}/m.tsp", "missing DIMENSION"),
    "tsp-garbage-line": Case({"g.tsp": "NAME : g\nhello world\n"}, ["info", "{dir}/g.tsp"],
                             "{dir}/g.tsp", "not a TSPLIB keyword", 2),
    # ---- files that are not files
    "missing-instance": Case({}, ["info", "{dir}/nothere.dat"], "{dir}/nothere.dat", "no such file"),
    "missing-instance-evaluate": Case({}, ["evaluate", "{dir}/nothere.tsp", "{dir}/x.tour"],
                                      "{dir}/nothere.tsp", "no such file"),
    "missing-solution": Case({"ok.dat": GOOD_DAT}, ["evaluate", "{dir}/ok.dat", "{dir}/nothere.sln"],
                             "{dir}/nothere.sln", "no such file"),
    "directory-instance": Case({"sub/keep.txt": "x"}, ["info", "{dir}/sub"], "{dir}/sub", "not a file"),
    "directory-solution": Case({"ok.tsp": GOOD_TSP, "sub/keep.txt": "x"},
                               ["evaluate", "{dir}/ok.tsp", "{dir}/sub"], "{dir}/sub", "is a directory"),
    "binary-instance": Case({"bin.dat": b"\x7fELF\x02\x01\x01\x00\x00\x00\xff\xfe"}, ["info", "{dir}/bin.dat"],
                            "{dir}/bin.dat", "binary"),
    "binary-tsp": Case({"bin.tsp": b"NAME : x\n\x00\x01\x02"}, ["info", "{dir}/bin.tsp"], "{dir}/bin.tsp", "binary"),
    "binary-solution": Case({"ok.dat": GOOD_DAT, "bin.sln": b"\x00\x00\x01"},
                            ["evaluate", "{dir}/ok.dat", "{dir}/bin.sln"], "{dir}/bin.sln", "binary"),
    # ---- QAP solutions (.sln)
    "sln-not-permutation": Case({"ok.dat": GOOD_DAT, "p.sln": "3 10\n1 1 2\n"},
                                ["evaluate", "{dir}/ok.dat", "{dir}/p.sln"], "{dir}/p.sln", "not a permutation", 2),
    "sln-out-of-range": Case({"ok.dat": GOOD_DAT, "r.sln": "3 10\n1 2 4\n"},
                             ["evaluate", "{dir}/ok.dat", "{dir}/r.sln"], "{dir}/r.sln", "not a permutation", 2),
    "sln-wrong-size": Case({"ok.dat": GOOD_DAT, "s.sln": "4 10\n1 2 3 4\n"},
                           ["evaluate", "{dir}/ok.dat", "{dir}/s.sln"], "{dir}/s.sln", "n = 4, the instance has n = 3",
                           1),
    "sln-too-few-entries": Case({"ok.dat": GOOD_DAT, "f.sln": "3 10\n1 2\n"},
                                ["evaluate", "{dir}/ok.dat", "{dir}/f.sln"], "{dir}/f.sln", "2 entries, n = 3", 2),
    "sln-non-numeric": Case({"ok.dat": GOOD_DAT, "x.sln": "3 10\n1 2\nthree\n"},
                            ["evaluate", "{dir}/ok.dat", "{dir}/x.sln"], "{dir}/x.sln", "'three'", 3),
    # ---- TSP solutions (.tour)
    "tour-not-permutation": Case({"ok.tsp": GOOD_TSP, "p.tour": "TOUR_SECTION\n1 2 3 3 5\n-1\nEOF\n"},
                                 ["evaluate", "{dir}/ok.tsp", "{dir}/p.tour"], "{dir}/p.tour", "not a permutation"),
    "tour-wrong-size": Case({"ok.tsp": GOOD_TSP, "s.tour": "TOUR_SECTION\n1 2 3 4\n-1\nEOF\n"},
                            ["evaluate", "{dir}/ok.tsp", "{dir}/s.tour"], "{dir}/s.tour",
                            "tour has 4 cities, expected 5", 2),
    "tour-wrong-dimension": Case({"ok.tsp": GOOD_TSP, "d.tour": "DIMENSION : 6\nTOUR_SECTION\n1 2 3 4 5 6\n-1\n"},
                                 ["evaluate", "{dir}/ok.tsp", "{dir}/d.tour"], "{dir}/d.tour",
                                 "tour DIMENSION 6 but the instance has n = 5", 1),
    "tour-no-section": Case({"ok.tsp": GOOD_TSP, "n.tour": "NAME : x\nTYPE : TOUR\nEOF\n"},
                            ["evaluate", "{dir}/ok.tsp", "{dir}/n.tour"], "{dir}/n.tour", "no TOUR_SECTION"),
    "result-json-bad-permutation": Case({"ok.tsp": GOOD_TSP, "r.json": '{"permutation": [0, 1, 2, 3, 3]}'},
                                        ["evaluate", "{dir}/ok.tsp", "{dir}/r.json"], "{dir}/r.json",
                                        "not a permutation"),
    "result-json-invalid": Case({"ok.tsp": GOOD_TSP, "r.json": '{"permutation": [0, 1,\n'},
                                ["evaluate", "{dir}/ok.tsp", "{dir}/r.json"], "{dir}/r.json", "invalid JSON"),
    "result-json-too-deep": Case({"ok.tsp": GOOD_TSP, "r.json": "[" * 100_000},
                                 ["evaluate", "{dir}/ok.tsp", "{dir}/r.json"], "{dir}/r.json", "invalid JSON"),
    "result-json-huge-number": Case({"ok.tsp": GOOD_TSP, "r.json": '{"permutation": [' + "7" * 5000 + "]}"},
                                    ["evaluate", "{dir}/ok.tsp", "{dir}/r.json"], "{dir}/r.json", "invalid JSON"),
    "result-json-no-permutation": Case({"ok.dat": GOOD_DAT, "r.json": '{"cost": 5}'},
                                       ["evaluate", "{dir}/ok.dat", "{dir}/r.json"], "{dir}/r.json",
                                       "no 'permutation' key"),
    # ---- built-in names
    "bad-builtin-evaluate": Case({"x.sln": "1 0\n1\n"}, ["evaluate", "gen:qap:x", "{dir}/x.sln"], "gen:qap:x",
                                 "bad built-in instance"),
    "unknown-builtin-info": Case({}, ["info", "gen:vrp:10"], "gen:vrp:10", "unknown built-in instance"),
}


def materialise(case: Case, tmp_path: Path) -> tuple[list[str], str]:
    for name, content in case.files.items():
        target = tmp_path / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            target.write_bytes(content)
        else:
            target.write_text(content)
    argv = [a.replace("{dir}", str(tmp_path)) for a in case.argv]
    return argv, case.culprit.replace("{dir}", str(tmp_path))


def check_message(stderr: str, culprit: str, case: Case) -> None:
    lines = stderr.splitlines()
    assert len(lines) == 1, stderr
    line = lines[0]
    assert "Traceback" not in stderr
    assert line.startswith("metaheur: error: "), line
    assert culprit in line, line
    assert case.fragment in line, line
    if case.line is not None:
        assert f"{culprit}:{case.line}: " in line, line


def _env_without_instances() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("METAHEUR_INSTANCES", None)
    return env


@pytest.mark.parametrize("key", sorted(CASES))
def test_bad_input_subprocess(tmp_path, key):
    case = CASES[key]
    argv, culprit = materialise(case, tmp_path)
    proc = subprocess.run([sys.executable, "-m", "metaheur.cli", *argv], capture_output=True, text=True,
                          env=_env_without_instances(), timeout=60, cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert proc.stdout == ""
    check_message(proc.stderr, culprit, case)


@pytest.mark.parametrize("key", sorted(CASES))
def test_bad_input_cli_runner(tmp_path, key, monkeypatch):
    monkeypatch.delenv("METAHEUR_INSTANCES", raising=False)
    case = CASES[key]
    argv, culprit = materialise(case, tmp_path)
    result = CliRunner().invoke(cli, argv)
    assert result.exit_code == 2, (result.output, result.exception)
    assert isinstance(result.exception, SystemExit)
    assert result.stdout == ""
    check_message(result.stderr, culprit, case)


def test_relative_path_is_named_as_given(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("METAHEUR_INSTANCES", raising=False)
    Path("rel.dat").write_text("2\n1 2\n3\n")
    result = CliRunner().invoke(cli, ["info", "rel.dat"])
    assert result.exit_code == 2
    assert result.stderr.startswith("metaheur: error: rel.dat:3: truncated")


def test_library_name_without_environment(monkeypatch):
    monkeypatch.delenv("METAHEUR_INSTANCES", raising=False)
    result = CliRunner().invoke(cli, ["info", "tai30a"])
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        "metaheur: error: tai30a: no such file (set METAHEUR_INSTANCES to look instances up by name)"]
