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
    argv: list[str]  # arguments; "@" stands for tmp_path
    culprit: str  # the path (or name) the message must give ("@" expanded)
    fragment: str  # a piece of the message
    line: int | None = None  # the line number that must be given


def info(files: dict, name: str, fragment: str, line: int | None = None) -> Case:
    """``metaheur info @/name`` must fail naming @/name."""
    return Case(files, ["info", f"@/{name}"], f"@/{name}", fragment, line)


def evaluate(files: dict, instance: str, solution: str, fragment: str, line: int | None = None,
             culprit: str | None = None) -> Case:
    """``metaheur evaluate INSTANCE @/solution`` must fail naming the solution (or ``culprit``)."""
    return Case(files, ["evaluate", instance, f"@/{solution}"], culprit or f"@/{solution}", fragment, line)


def tsp_text(dimension="5", wtype="EUC_2D", kind="TSP", body=None) -> str:
    body = body if body is not None else "1 0 0\n2 10 0\n3 10 10\n4 0 10\n5 5 15\n"
    return (f"NAME : bad\nTYPE : {kind}\nDIMENSION : {dimension}\nEDGE_WEIGHT_TYPE : {wtype}\n"
            f"NODE_COORD_SECTION\n{body}EOF\n")


EXPLICIT_HEAD = ("NAME : e\nTYPE : TSP\nDIMENSION : 4\nEDGE_WEIGHT_TYPE : EXPLICIT\n"
                 "EDGE_WEIGHT_FORMAT : UPPER_ROW\nEDGE_WEIGHT_SECTION\n")
QAP_OK = {"ok.dat": GOOD_DAT}
TSP_OK = {"ok.tsp": GOOD_TSP}

CASES = {
    # ---- QAP instance files
    "qap-truncated": info({"t.dat": "3\n0 1 2\n1 0 3\n2 3 0\n0 5 6\n5 0\n"}, "t.dat", "truncated", 6),
    "qap-non-numeric": info({"n.dat": "2\n0 1\n1 O\n0 4\n4 0\n"}, "n.dat", "'O' is not an integer", 3),
    "qap-float-token": info({"f.dat": "2\n0 1\n1 0\n0 4.5\n4 0\n"}, "f.dat", "'4.5' is not an integer", 4),
    "qap-extra-numbers": info({"x.dat": GOOD_DAT + "\n\n17 18\n"}, "x.dat",
                              "2 numbers after the two 3 x 3 matrices", 12),
    "qap-empty": info({"e.dat": "\n  \n"}, "e.dat", "empty"),
    "qap-bad-n": info({"z.dat": "0\n"}, "z.dat", "n = 0", 1),
    # ---- TSP instance files
    "tsp-dimension-vs-coords": info({"d.tsp": tsp_text(dimension="6")}, "d.tsp",
                                    "NODE_COORD_SECTION has 5 lines, DIMENSION = 6", 10),
    "tsp-dimension-vs-coords-more": info({"d.tsp": tsp_text(dimension="4")}, "d.tsp",
                                         "NODE_COORD_SECTION has 5 lines, DIMENSION = 4", 10),
    "tsp-dimension-vs-weights-short": info({"w.tsp": EXPLICIT_HEAD + "1 2 3\n4 5\nEOF\n"}, "w.tsp",
                                           "needs 6 weights, found 5", 8),
    "tsp-dimension-vs-weights-long": info({"w.tsp": EXPLICIT_HEAD + "1 2 3\n4 5 6\n7\nEOF\n"}, "w.tsp",
                                          "1 weights too many", 9),
    "tsp-non-numeric-coordinate": info({"c.tsp": tsp_text(body="1 0 0\n2 10 0\n3 ten 10\n4 0 10\n5 5 15\n")},
                                       "c.tsp", "'ten' is not a number", 8),
    "tsp-duplicate-node-id": info({"i.tsp": tsp_text(body="1 0 0\n2 10 0\n3 10 10\n3 0 10\n5 5 15\n")},
                                  "i.tsp", "node ids must be 1..5", 9),
    "tsp-unknown-weight-type": info({"u.tsp": tsp_text(wtype="EUCLIDEAN")}, "u.tsp",
                                    "unknown EDGE_WEIGHT_TYPE 'EUCLIDEAN'", 4),
    "tsp-unsupported-euc3d": info({"3.tsp": tsp_text(wtype="EUC_3D", body="1 0 0 0\n")}, "3.tsp",
                                  "EDGE_WEIGHT_TYPE EUC_3D is not supported", 4),
    "atsp-coordinates": info({"a.tsp": tsp_text(kind="ATSP")}, "a.tsp",
                             "EDGE_WEIGHT_TYPE EUC_2D is not supported for an ATSP (EXPLICIT only)", 4),
    "tsp-missing-dimension": info({"m.tsp": "NAME : m\nTYPE : TSP\nEDGE_WEIGHT_TYPE : EUC_2D\nEOF\n"},
                                  "m.tsp",
                                  "missing DIMENSION"),
    "tsp-garbage-line": info({"g.tsp": "NAME : g\nhello world\n"}, "g.tsp", "not a TSPLIB keyword", 2),
    # ---- files that are not files
    "missing-instance": info({}, "nothere.dat", "no such file"),
    "missing-instance-evaluate": evaluate({}, "@/nothere.tsp", "x.tour", "no such file",
                                          culprit="@/nothere.tsp"),
    "missing-solution": evaluate(QAP_OK, "@/ok.dat", "nothere.sln", "no such file"),
    "directory-instance": info({"sub/keep.txt": "x"}, "sub", "not a file"),
    "directory-solution": evaluate({**TSP_OK, "sub/keep.txt": "x"}, "@/ok.tsp", "sub",
                                   "not a regular file (a directory)"),
    "binary-instance": info({"bin.dat": b"\x7fELF\x02\x01\x01\x00\x00\x00\xff\xfe"}, "bin.dat", "binary"),
    "binary-tsp": info({"bin.tsp": b"NAME : x\n\x00\x01\x02"}, "bin.tsp", "binary"),
    "binary-solution": evaluate({**QAP_OK, "bin.sln": b"\x00\x00\x01"}, "@/ok.dat", "bin.sln", "binary"),
    # ---- QAP solutions (.sln)
    "sln-not-permutation": evaluate({**QAP_OK, "p.sln": "3 10\n1 1 2\n"}, "@/ok.dat", "p.sln",
                                    "not a permutation", 2),
    "sln-out-of-range": evaluate({**QAP_OK, "r.sln": "3 10\n1 2 4\n"}, "@/ok.dat", "r.sln",
                                 "not a permutation", 2),
    "sln-wrong-size": evaluate({**QAP_OK, "s.sln": "4 10\n1 2 3 4\n"}, "@/ok.dat", "s.sln",
                               "n = 4, the instance has n = 3", 1),
    "sln-too-few-entries": evaluate({**QAP_OK, "f.sln": "3 10\n1 2\n"}, "@/ok.dat", "f.sln",
                                    "2 entries, n = 3", 2),
    "sln-non-numeric": evaluate({**QAP_OK, "x.sln": "3 10\n1 2\nthree\n"}, "@/ok.dat", "x.sln", "'three'", 3),
    # ---- TSP solutions (.tour) and result JSON
    "tour-not-permutation": evaluate({**TSP_OK, "p.tour": "TOUR_SECTION\n1 2 3 3 5\n-1\nEOF\n"}, "@/ok.tsp",
                                     "p.tour", "not a permutation"),
    "tour-wrong-size": evaluate({**TSP_OK, "s.tour": "TOUR_SECTION\n1 2 3 4\n-1\nEOF\n"}, "@/ok.tsp",
                                "s.tour",
                                "tour has 4 cities, expected 5", 2),
    "tour-wrong-dimension": evaluate({**TSP_OK, "d.tour": "DIMENSION : 6\nTOUR_SECTION\n1 2 3 4 5 6\n-1\n"},
                                     "@/ok.tsp", "d.tour", "tour DIMENSION 6 but the instance has n = 5", 1),
    "tour-no-section": evaluate({**TSP_OK, "n.tour": "NAME : x\nTYPE : TOUR\nEOF\n"}, "@/ok.tsp", "n.tour",
                                "no TOUR_SECTION"),
    "tour-empty-section": evaluate({**TSP_OK, "e.tour": "TOUR_SECTION\n-1\nEOF\n"}, "@/ok.tsp", "e.tour",
                                   "0 cities, expected 5", 2),
    "result-json-bad-permutation": evaluate({**TSP_OK, "r.json": '{"permutation": [0, 1, 2, 3, 3]}'},
                                            "@/ok.tsp", "r.json", "not a permutation"),
    "result-json-invalid": evaluate({**TSP_OK, "r.json": '{"permutation": [0, 1,\n'}, "@/ok.tsp", "r.json",
                                    "invalid JSON"),
    "result-json-too-deep": evaluate({**TSP_OK, "r.json": "[" * 100_000}, "@/ok.tsp", "r.json",
                                     "invalid JSON"),
    "result-json-huge-number": evaluate({**TSP_OK, "r.json": '{"permutation": [' + "7" * 5000 + "]}"},
                                        "@/ok.tsp", "r.json", "invalid JSON"),
    "result-json-no-permutation": evaluate({**QAP_OK, "r.json": '{"cost": 5}'}, "@/ok.dat", "r.json",
                                           "no 'permutation' key"),
    # ---- integers are ASCII digits with an optional sign (Python's int() takes 1_000 and other digits)
    "qap-underscore-digits": info({"u.dat": "2\n0 1_0\n1 0\n0 4\n4 0\n"}, "u.dat", "'1_0' is not an integer", 2),
    "qap-arabic-indic-digits": info({"a.dat": "2\n0 1\n1 0\n0 \u0664\n4 0\n"}, "a.dat", "is not an integer", 4),
    "tsp-dimension-underscore": info({"d.tsp": tsp_text(dimension="0_5")}, "d.tsp",
                                     "DIMENSION '0_5' is not an integer", 3),
    "tsp-coordinate-arabic-indic": info({"c.tsp": tsp_text(body="1 0 0\n2 10 0\n3 \u0661\u0660 10\n4 0 10\n5 5 15\n")},
                                        "c.tsp", "is not a number", 8),
    "flow-shop-pick-superscript": Case({"f.txt": "instance a1\nfirst\n2 1\n0 5\n0 6\n+++\ninstance b2\nsecond\n"
                                                 "2 1\n0 3\n0 4\n"},
                                       ["info", "@/f.txt#\u00b2"], "@/f.txt", "no instance named"),
    "builtin-underscore-digits": Case({}, ["info", "gen:qap:1_0"], "gen:qap:1_0", "bad built-in instance"),
    "builtin-pfsp-arabic-indic-digits": Case({}, ["info", "gen:pfsp:\u0665:2"], "gen:pfsp:", "bad built-in instance"),
    "result-json-true-cost": evaluate({**QAP_OK, "r.json": '{"permutation": [0, 1, 2], "cost": true}'}, "@/ok.dat",
                                      "r.json", "'cost' must be an integer, got true"),
    "result-json-float-permutation": evaluate({**QAP_OK, "r.json": '{"permutation": [0.0, 1.0, 2.0]}'}, "@/ok.dat",
                                              "r.json", "'permutation' must be a list of integers"),
    "result-json-nan": evaluate({**QAP_OK, "r.json": '{"permutation": [0, 1, 2], "cost": NaN}'}, "@/ok.dat",
                                "r.json", "NaN is not a JSON number"),
    # ---- a one-line list is a plain assignment, not a .sln whose first numbers are n and the cost
    "qap-one-line-list-of-another-size": evaluate({**QAP_OK, "l.txt": "1 2 3 4\n"}, "@/ok.dat", "l.txt",
                                                  "the list has 4 numbers, the instance has n = 3"),
    # ---- built-in names
    "bad-builtin-evaluate": evaluate({"x.sln": "1 0\n1\n"}, "gen:qap:x", "x.sln", "bad built-in instance",
                                     culprit="gen:qap:x"),
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
    argv = [a.replace("@", str(tmp_path)) if a.startswith("@/") else a for a in case.argv]
    culprit = case.culprit.replace("@", str(tmp_path)) if case.culprit.startswith("@/") else case.culprit
    return argv, culprit


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
