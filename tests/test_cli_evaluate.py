"""``metaheur evaluate`` against files of another instance or problem, and plain lists of cities
and locations (issue 24, item 4)."""

from __future__ import annotations

import json
import sys

import numpy as np
import pytest
from cliutil import QUICK, cpu_runner, fifo, ok, user_error

from metaheur.cli import cli
from metaheur.problems import random_qap, uniform_tsp, write_sln, write_tour

QAP_SPEC, TSP_SPEC = "gen:qap:9:2", "gen:tsp:12:4"


@pytest.fixture
def runner(monkeypatch, tmp_path):
    monkeypatch.delenv("METAHEUR_INSTANCES", raising=False)
    return cpu_runner(monkeypatch, tmp_path)


@pytest.fixture
def files(tmp_path):
    """A QAP solution and a TSP tour, each as a native file and as a result JSON."""
    qap, tsp = random_qap(9, seed=2), uniform_tsp(12, seed=4)
    perm, tour = np.random.default_rng(0).permutation(9), np.random.default_rng(1).permutation(12)
    write_sln(tmp_path / "q.sln", qap, perm)
    write_tour(tmp_path / "t.tour", tsp, tour)
    (tmp_path / "q.json").write_text(json.dumps({"instance": qap.name, "problem": "QAP", "permutation": perm.tolist(),
                                                 "cost": qap.cost(perm)}))
    (tmp_path / "t.json").write_text(json.dumps({"instance": tsp.name, "problem": "TSP", "permutation": tour.tolist(),
                                                 "cost": tsp.tour_length(tour)}))
    return {"qap": qap, "tsp": tsp, "perm": perm, "tour": tour}


def cost(runner, spec: str, path: str) -> dict:
    return json.loads(ok(runner.invoke(cli, ["evaluate", spec, path, "--json"])))


@pytest.mark.parametrize(("spec", "path", "fragments"), [
    ("gen:qap:9:3", "q.json", ("q.json: a result of instance gen-qap-9-s2, not of gen-qap-9-s3",)),
    (QAP_SPEC, "t.tour", ("t.tour: this is a TSP tour file, the instance gen-qap-9-s2 is a QAP",)),
    (QAP_SPEC, "t.json", ("t.json: this is a result of a TSP (gen-tsp-12-s4), the instance gen-qap-9-s2 is a QAP",)),
    (TSP_SPEC, "q.sln", ("q.sln: this is a QAP solution file (.sln), the instance gen-tsp-12-s4 is a TSP",)),
    (TSP_SPEC, "q.json", ("this is a result of a QAP (gen-qap-9-s2), the instance gen-tsp-12-s4 is a TSP",)),
])
def test_a_file_of_another_instance_or_problem_is_refused(runner, files, spec, path, fragments):
    user_error(runner.invoke(cli, ["evaluate", spec, path]), *fragments)


def test_a_tour_naming_another_library_instance_is_refused(runner, files, tmp_path):
    text = (tmp_path / "t.tour").read_text().replace("NAME : gen-tsp-12-s4.tour", "NAME : pr2392.opt.tour")
    (tmp_path / "other.tour").write_text(text)
    user_error(runner.invoke(cli, ["evaluate", TSP_SPEC, "other.tour"]), "a tour of pr2392, not of gen-tsp-12-s4")


def test_plain_city_lists(runner, files, tmp_path):
    """One or more cities per line, 1-based (LKH), or Concorde's count line and 0-based cities."""
    tour, length = files["tour"], files["tsp"].tour_length(files["tour"])
    (tmp_path / "one.txt").write_text("\n".join(str(c + 1) for c in tour) + "\n")
    (tmp_path / "rows.txt").write_text(" ".join(str(c + 1) for c in tour[:5]) + "\n"
                                       + " ".join(str(c + 1) for c in tour[5:]) + "\n-1\n")
    (tmp_path / "concorde.sol").write_text(f"12\n{' '.join(str(c) for c in tour)}\n")
    for name in ("one.txt", "rows.txt"):
        ev = cost(runner, TSP_SPEC, name)
        assert ev["cost"] == length and ev["note"] is None
    ev = cost(runner, TSP_SPEC, "concorde.sol")
    assert ev["cost"] == length and ev["note"] == "the file numbers cities from 0"
    (tmp_path / "short.txt").write_text("1 2 3\n")
    user_error(runner.invoke(cli, ["evaluate", TSP_SPEC, "short.txt"]), "the list has 3 cities", "n = 12")
    (tmp_path / "twice.txt").write_text(" ".join(["1"] * 12) + "\n")
    user_error(runner.invoke(cli, ["evaluate", TSP_SPEC, "twice.txt"]), "not a permutation of 1..12")


def test_plain_assignment_list(runner, files, tmp_path):
    perm = files["perm"]
    (tmp_path / "plain.txt").write_text(" ".join(str(p + 1) for p in perm) + "\n")
    ev = cost(runner, QAP_SPEC, "plain.txt")
    assert ev["cost"] == files["qap"].cost(perm) and ev["stated_cost"] is None
    assert cost(runner, QAP_SPEC, "q.sln")["cost"] == ev["cost"]  # the .sln (n, cost, permutation) still reads
    (tmp_path / "zero.txt").write_text(" ".join(str(p) for p in perm) + "\n")
    ev = cost(runner, QAP_SPEC, "zero.txt")
    assert ev["cost"] == files["qap"].cost(perm) and ev["note"] == "the file numbers locations from 0"


def test_a_one_line_list_is_an_assignment_not_a_sln(runner, files, tmp_path):
    """``1 2 3`` for n = 9 is a list of 3 locations, not a .sln of n = 1 and cost 2; a .sln on one
    line (n, the cost, n locations) still reads as one."""
    (tmp_path / "three.txt").write_text("1 2 3\n")
    user_error(runner.invoke(cli, ["evaluate", QAP_SPEC, "three.txt"]),
               "three.txt: the list has 3 numbers, the instance has n = 9")
    perm, qap = files["perm"], files["qap"]
    (tmp_path / "flat.sln").write_text(f"9 {qap.cost(perm)} " + " ".join(str(p + 1) for p in perm) + "\n")
    ev = cost(runner, QAP_SPEC, "flat.sln")
    assert ev["cost"] == ev["stated_cost"] == qap.cost(perm)


def test_special_files_are_not_read(runner, files, tmp_path):
    """A FIFO (which would wait for a writer) or a device (``/dev/zero`` would fill the memory;
    ``/dev/null`` checks it safely) as a solution, a warm start or a configuration: one line."""
    with fifo(tmp_path / "pipe"):
        for args in (["evaluate", QAP_SPEC, "pipe"], ["solve", QAP_SPEC, *QUICK, "--initial", "pipe"],
                     ["solve", QAP_SPEC, *QUICK, "--config", "pipe"]):
            user_error(runner.invoke(cli, args), "pipe: not a regular file (a FIFO)")
        for args in (["evaluate", QAP_SPEC, "/dev/null"], ["solve", QAP_SPEC, *QUICK, "--initial", "/dev/null"],
                     ["solve", QAP_SPEC, *QUICK, "--config", "/dev/null"]):
            user_error(runner.invoke(cli, args), "/dev/null: not a regular file (a character device)")


FAILING = """
from pathlib import Path

from metaheur import Problem, ProblemFormats


class Failing(Problem):
    kind = "failing"

    def __init__(self, n, source):
        self.name, self.n, self.source = "failing", n, source

    def evaluate(self, perms):
        raise ZeroDivisionError("no value\\nfor this one")

    def fingerprint(self):
        return "failing"


Failing.formats = ProblemFormats(read=lambda path: Failing(int(Path(path).read_text()), str(path)))
"""


def test_a_users_evaluate_that_fails_is_one_line(runner, tmp_path, monkeypatch):
    (tmp_path / "failing_problem.py").write_text(FAILING)
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "three.inst").write_text("3\n")
    (tmp_path / "r.json").write_text('{"permutation": [2, 0, 1]}')
    result = runner.invoke(cli, ["evaluate", "--problem", "failing_problem:Failing", "three.inst", "r.json"])
    sys.modules.pop("failing_problem", None)
    err = user_error(result)
    assert err == "metaheur: error: the problem's evaluate failed: ZeroDivisionError: no value for this one"
