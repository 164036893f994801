"""The problem registry: built-in problems by kind, ``module:Class`` of a user's own, entry points
of the group ``metaheur.problems``, and what a registered problem's formats make found (extension,
library folder, ``gen:`` prefix) through ``load_instance`` and the CLI."""

from __future__ import annotations

import importlib.metadata
import json
import sys
import textwrap

import numpy as np
import pytest
from click.testing import CliRunner

from metaheur import Problem
from metaheur.cli import cli
from metaheur.errors import InputFormatError, MetaheurError
from metaheur.problem.registry import ENTRY_POINT_GROUP, class_for_file
from metaheur.problems import ATSP, QAP, TSP, load_instance, load_solution, problem_class, registered
from metaheur.problems.lop import LOP
from metaheur.problems.pfsp import PFSP

# A user's problem as it would live in a package of its own: a weighted linear arrangement
# (value: sum over positions of position * weight of the element there), files "*.lin" holding the
# weights, library folder "linlib", generated instances gen:lin:N[:SEED].
MODULE = textwrap.dedent('''
    import numpy as np
    from pathlib import Path

    from metaheur import Problem, ProblemFormats
    from metaheur.problem.interface import LoadedSolution
    from metaheur.problem.fingerprint import fingerprint


    class Lin(Problem):
        kind = "lin"
        title = "weighted linear arrangement"

        def __init__(self, weights, name="lin", source=None):
            self.weights = np.asarray(weights, dtype=np.int64)
            self.name, self.n, self.source = name, len(self.weights), source

        def evaluate(self, perms):
            perms = np.asarray(perms)
            return (self.weights[perms] * np.arange(self.n)).sum(axis=1).astype(np.int64)

        def fingerprint(self):
            return fingerprint(f"lin:{self.name}:{self.n}", (self.weights,))

        def properties(self):
            return {"total_weight": int(self.weights.sum())}


    def read(path):
        return Lin([int(x) for x in Path(path).read_text().split()], Path(path).stem, str(path))


    def read_solution(problem, path):
        return LoadedSolution(problem.check_solution([int(x) for x in Path(path).read_text().split()], str(path)),
                              None, None)


    def generate(spec):
        n = int(spec.split(":")[2])
        return Lin(np.arange(1, n + 1), f"gen-lin-{n}")


    Lin.formats = ProblemFormats(extensions=(".lin",), folder="linlib", read=read, read_solution=read_solution,
                                 generators={"lin": generate})
''')


def run_cli(args: list[str]) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, args)
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def user_module(tmp_path, monkeypatch):
    """The module ``lin_problem`` importable from a temporary folder (not installed)."""
    (tmp_path / "lin_problem.py").write_text(MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield "lin_problem"
    sys.modules.pop("lin_problem", None)


@pytest.fixture
def entry_point(user_module, monkeypatch):
    """``lin`` registered through a fake entry point of the group ``metaheur.problems``."""
    ep = importlib.metadata.EntryPoint(name="lin", value="lin_problem:Lin", group=ENTRY_POINT_GROUP)
    real = importlib.metadata.entry_points

    def entry_points(**kw):
        return [*real(**kw), ep] if kw.get("group") == ENTRY_POINT_GROUP else real(**kw)

    monkeypatch.setattr(importlib.metadata, "entry_points", entry_points)


def test_built_in_problems_are_registered_by_kind():
    """By metaheur's own entry points, exactly as a plug-in registers (listed by name)."""
    assert list(registered().items()) == [("atsp", ATSP), ("lop", LOP), ("pfsp", PFSP), ("qap", QAP), ("tsp", TSP)]
    own = {ep.name: ep.value for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP)
           if ep.dist is not None and ep.dist.name == "metaheur"}
    assert own == {kind: f"metaheur.problems.{kind}:{cls.__name__}" for kind, cls in registered().items()}
    assert problem_class("qap") is QAP and problem_class("TSP") is TSP
    assert problem_class("metaheur.problems.atsp:ATSP") is ATSP
    assert all(issubclass(c, Problem) and c.kind == k for k, c in registered().items())


@pytest.mark.parametrize(("spec", "message"), [
    ("qapp", "unknown problem 'qapp' (did you mean qap?): the registered problems are atsp, lop, pfsp, qap, tsp, or "
             "give module:Class"),
    ("vrp", "unknown problem 'vrp': the registered problems are atsp, lop, pfsp, qap, tsp, or give module:Class"),
    ("no_such_module_xyz:Thing", "cannot import no_such_module_xyz"),
    ("metaheur.problems.qap:Nope", "metaheur.problems.qap has no Nope"),
    ("metaheur.problems.qap:read_qaplib", "read_qaplib is not a metaheur.Problem subclass"),
    ("metaheur.problems.qap:", "give a registered name or module:Class"),
])
def test_unknown_names_and_bad_module_paths_are_one_line_errors(spec, message):
    with pytest.raises(MetaheurError) as info:
        problem_class(spec)
    assert message in str(info.value) and "\n" not in str(info.value)


def test_a_malformed_file_whose_problem_its_content_chose_says_so(tmp_path):
    """A LOLIB matrix short of entries is no LOP file by count, and the QAP's sniffer takes any
    numbers: the QAP reader's error says the file was read as a QAP file and how to say otherwise;
    with --problem the LOP reader's own error stands alone."""
    path = tmp_path / "ranking"
    path.write_text("3\n0 1 2\n3 0 4\n5 6\n")
    with pytest.raises(InputFormatError) as info:
        load_instance(path)
    assert str(info.value).startswith(f"{path}:")
    assert "(read as a QAP file, which its content suggests; give --problem NAME" in str(info.value)
    with pytest.raises(InputFormatError) as info:
        load_instance(path, problem="lop")
    assert "read as" not in str(info.value) and "\n" not in str(info.value)


def test_a_users_class_by_module_path(user_module, tmp_path):
    path = tmp_path / "small.lin"
    path.write_text("5 1 3\n")
    lin = load_instance(path, f"{user_module}:Lin")
    assert (lin.kind, lin.name, lin.n) == ("lin", "small", 3)
    assert lin.value([1, 2, 0]) == 1 * 3 + 2 * 5  # weights 1, 3, 5 at positions 0, 1, 2
    with pytest.raises(MetaheurError, match=r"small\.lin: no registered problem reads \.lin files .* give --problem"):
        load_instance(path)  # not registered: an extension no problem reads is no guess from the content


def test_a_users_class_imports_from_the_working_folder(tmp_path, monkeypatch):
    """``--problem module:Class`` finds the module in the current folder without PYTHONPATH, as
    ``python -m`` would (docs/cli.md); the folder stays on sys.path for the worker processes."""
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", ".", str(tmp_path))])
    monkeypatch.chdir(tmp_path)
    (tmp_path / "here_lin.py").write_text(MODULE)
    (tmp_path / "small.lin").write_text("5 1 3\n")
    try:
        code, out, err = run_cli(["info", "--problem", "here_lin:Lin", "small.lin", "--json"])
    finally:
        sys.modules.pop("here_lin", None)
    assert code == 0, err
    assert json.loads(out)["n"] == 3 and sys.path[0] == str(tmp_path)


def test_an_entry_point_registers_extension_folder_and_generator(entry_point, tmp_path, monkeypatch):
    lin_class = problem_class("lin")
    assert list(registered()) == ["atsp", "lop", "pfsp", "qap", "tsp", "lin"]
    path = tmp_path / "w.lin"
    path.write_text("2 7 1 4")
    assert class_for_file(path) is lin_class
    assert isinstance(load_instance(path), lin_class)  # the extension picks the problem
    library = tmp_path / "lib"
    (library / "linlib").mkdir(parents=True)
    (library / "linlib" / "ring12.lin").write_text(" ".join(map(str, range(12))))
    monkeypatch.setenv("METAHEUR_INSTANCES", str(library))
    found = load_instance("ring12")
    assert isinstance(found, lin_class) and found.n == 12 and found.source.endswith("linlib/ring12.lin")
    gen = load_instance("gen:lin:6")
    assert gen.name == "gen-lin-6" and np.array_equal(gen.weights, np.arange(1, 7))
    assert load_instance("gen:qap:5").kind == "qap"  # the built-in prefixes still work beside it
    with pytest.raises(MetaheurError, match="gen:lin:N"):
        load_instance("gen:nope:5")


def test_a_plug_ins_own_search_parameters_are_a_section(entry_point, monkeypatch, tmp_path):
    """A registered problem's ``search_params`` are a section of the islands' parameters (the
    sections ordered by name)."""
    from dataclasses import dataclass
    from typing import ClassVar

    from metaheur.islands.params import IslandParams, search_sections

    @dataclass(frozen=True)
    class WalkParams:
        section: ClassVar[str] = "walk"
        steps: int = 10

    monkeypatch.setattr(problem_class("lin"), "search_params", (WalkParams,), raising=False)
    assert list(search_sections()) == ["eax", "ils", "perm", "tabu", "walk"]
    assert IslandParams(walk=WalkParams(steps=3)).walk.steps == 3 and IslandParams().walk == WalkParams()
    # its section in a --config file and in SolveParams, with nothing of metaheur/ changed
    from metaheur.config import read_config
    from metaheur.solve_params import SolveParams

    path = tmp_path / "run.toml"
    path.write_text("[walk]\nsteps = 3\n")
    params = SolveParams.from_config(read_config(path))
    assert params.searches == (WalkParams(steps=3),) and params.walk == WalkParams(steps=3)


def test_a_broken_plug_in_fails_only_what_uses_it(monkeypatch):
    """An entry point whose module is gone: naming it is a one-line error; a run of another problem
    goes on (the framework reads every registered problem's sections and crossovers) with a warning."""
    import metaheur
    from metaheur.problems import random_qap

    broken = importlib.metadata.EntryPoint(name="gone", value="no_such_module_xyz:Gone", group=ENTRY_POINT_GROUP)
    real = importlib.metadata.entry_points
    monkeypatch.setattr(importlib.metadata, "entry_points",
                        lambda **kw: [*real(**kw), broken] if kw.get("group") == ENTRY_POINT_GROUP else real(**kw))
    with pytest.raises(MetaheurError, match=r"problem gone .*cannot import no_such_module_xyz"):
        problem_class("gone")
    with pytest.warns(RuntimeWarning, match="cannot import no_such_module_xyz"):
        assert metaheur.GAParams(population=0, crossover="eax").population == 0
        result = metaheur.solve(random_qap(8, 2), generations=1, params=metaheur.SolveParams(strategy="cpu-serial",
                                                                                             sync=True))
    assert result.cost == random_qap(8, 2).value(result.permutation)


def test_a_plug_ins_instance_method_island_algorithms_is_tolerated(entry_point, monkeypatch):
    """``island_algorithms`` is a class method now; a plug-in's instance method of old does not
    break the crossovers the framework reads of every registered problem."""
    from metaheur.islands.params import GAParams

    monkeypatch.setattr(problem_class("lin"), "island_algorithms", lambda self: {}, raising=False)
    monkeypatch.setattr(problem_class("lin"), "crossovers", ("none",), raising=False)
    assert GAParams(population=0, crossover="eax").population == 0


def test_without_entry_points_no_problem_is_registered_and_the_error_says_why(monkeypatch):
    """A stale install (metadata without the entry points) is one line saying to reinstall."""
    real = importlib.metadata.entry_points
    monkeypatch.setattr(importlib.metadata, "entry_points",
                        lambda **kw: [] if kw.get("group") == ENTRY_POINT_GROUP else real(**kw))
    with pytest.raises(MetaheurError, match=r"no problem is registered: .*reinstall"):
        problem_class("qap")


def test_an_installed_distribution_registers_through_its_entry_points(user_module, tmp_path, monkeypatch):
    """A dist-info folder on sys.path, as pip leaves one, with the problem under the group."""
    dist = tmp_path / "lin_problem-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: lin-problem\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text(f"[{ENTRY_POINT_GROUP}]\nlin = lin_problem:Lin\n")
    assert problem_class("lin").__module__ == "lin_problem"


def test_the_cli_lists_reads_and_evaluates_a_registered_problem(entry_point, tmp_path):
    code, out, _ = run_cli(["info", "--json"])
    assert code == 0
    problems = {p["kind"]: p for p in json.loads(out)["problems"]}
    assert problems["lin"]["extensions"] == [".lin"] and problems["lin"]["folder"] == "linlib"
    assert problems["qap"]["extensions"] == [".dat"] and problems["atsp"]["folder"] == "atsp"
    code, out, _ = run_cli(["info"])
    assert code == 0 and "lin      weighted linear arrangement (.lin, library folder linlib/)" in out
    path = tmp_path / "w.lin"
    path.write_text("2 7 1 4")
    code, out, _ = run_cli(["info", str(path)])
    assert code == 0 and "problem     LIN" in out and "total weight 14" in out
    sol = tmp_path / "w.sol"
    sol.write_text("3 2 1 0")
    code, out, _ = run_cli(["evaluate", str(path), str(sol), "--json"])
    assert code == 0 and json.loads(out)["cost"] == 1 * 1 + 7 * 2 + 2 * 3
    assert load_solution(load_instance(path), sol).permutation.tolist() == [3, 2, 1, 0]


def test_the_cli_takes_problem_by_module_path(user_module, tmp_path):
    path = tmp_path / "w.txt"
    path.write_text("2 7 1 4")
    code, out, _ = run_cli(["info", "--problem", f"{user_module}:Lin", str(path), "--json"])
    assert code == 0 and json.loads(out)["problem"] == "LIN"
    code, _, err = run_cli(["info", "--problem", "lin_problem:Nope", str(path)])
    assert code == 2 and err.strip() == "metaheur: error: problem 'lin_problem:Nope': lin_problem has no Nope"
    code, _, err = run_cli(["info", "--problem", "qapp", str(path)])
    assert code == 2 and "did you mean qap?" in err and len(err.strip().splitlines()) == 1


def test_a_problem_without_operators_is_refused_in_one_line(user_module, tmp_path):
    path = tmp_path / "w.lin"
    path.write_text("2 7 1 4")
    code, _, err = run_cli(["solve", "--problem", f"{user_module}:Lin", str(path), "-g", "1"])
    assert code == 2 and err.strip() == ("metaheur: error: the LIN problem has no island operators to solve it with: "
                                         "derive it from metaheur.PermutationProblem or give it operators()")
