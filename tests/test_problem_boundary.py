"""The framework knows no problem (docs/architecture.md): no module under metaheur/ imports a
built-in problem's package or is named after a problem, none asks whether an instance is of a
problem class (``isinstance``) or picks an island's behaviour by comparing crossover names; the
same holds for the problem layer's shared modules (problems/*.py). Each built-in problem is one
package under problems/ and one folder under kernels/ (the ATSP's kernels are the TSP's)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from metaheur.problems import registered

ROOT = Path(__file__).resolve().parents[1]
PROBLEM_PACKAGES = sorted(p.name for p in (ROOT / "problems").iterdir() if (p / "__init__.py").is_file())
PROBLEM_CLASSES = {"QAP", "TSP", "ATSP", "TwinTSP", "PFSP", "LOP"}
FRAMEWORK = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "metaheur").rglob("*.py"))
SHARED = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "problems").glob("*.py"))


def problem_imports(path: Path) -> list[tuple[int, str]]:
    """``(line, module)`` of every import of a built-in problem's package in ``path``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        names = [node.module or ""] if isinstance(node, ast.ImportFrom) else (
            [a.name for a in node.names] if isinstance(node, ast.Import) else [])
        if isinstance(node, ast.ImportFrom) and node.module == "metaheur.problems":
            names += [f"metaheur.problems.{a.name}" for a in node.names]
        found += [(node.lineno, name) for name in names
                  if any(name == f"metaheur.problems.{p}" or name.startswith(f"metaheur.problems.{p}.")
                         for p in PROBLEM_PACKAGES)]
    return found


def type_checks(path: Path) -> list[int]:
    """Lines of every ``isinstance(x, <a problem class>)`` in ``path``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "isinstance"
                and len(node.args) == 2):
            nodes = list(ast.walk(node.args[1]))
            names = {n.id for n in nodes if isinstance(n, ast.Name)} | {
                n.attr for n in nodes if isinstance(n, ast.Attribute)}
            if names & PROBLEM_CLASSES:
                found.append(node.lineno)
    return found


def crossover_branches(path: Path) -> list[int]:
    """Lines of every comparison of a ``crossover`` (a name or an attribute) with a string."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            named = any(getattr(s, "id", getattr(s, "attr", None)) == "crossover" for s in sides)
            if named and any(isinstance(s, ast.Constant) and isinstance(s.value, str) for s in sides):
                found.append(node.lineno)
    return found


@pytest.mark.parametrize("module", [m for m in FRAMEWORK if m != "metaheur/__init__.py"])
def test_the_framework_imports_no_problem(module):
    found = problem_imports(ROOT / module)
    assert not found, f"{module} imports problem-specific code: {found}"


def test_no_framework_module_is_named_after_a_problem():
    kinds = set(registered())
    named = [m for m in FRAMEWORK if any(kind in Path(m).stem.split("_") for kind in kinds)]
    assert not named, named


@pytest.mark.parametrize("module", FRAMEWORK + SHARED)
def test_no_shared_module_branches_on_the_problem_type_or_a_crossover_name(module):
    assert not type_checks(ROOT / module), f"{module}: isinstance on a problem class"
    assert not crossover_branches(ROOT / module), f"{module}: compares a crossover with a name"


def test_each_built_in_problem_is_one_package_and_one_kernel_folder():
    assert set(PROBLEM_PACKAGES) == set(registered())
    for kind, cls in registered().items():
        assert cls.__module__.startswith(f"metaheur.problems.{kind}."), (kind, cls.__module__)
    folders = {p.name for p in (ROOT / "kernels").iterdir() if p.is_dir() and p.name != "__pycache__"}
    assert folders == {"engine", "qap", "tsp"}


def test_the_checks_find_what_they_look_for(tmp_path):
    """The scans are not blind: each reports a planted case of every form it looks for."""
    source = tmp_path / "planted.py"
    source.write_text("from metaheur.problems.qap.tabu import TabuParams\nimport metaheur.problems.tsp\n"
                      "from metaheur.problems import lop\nfrom metaheur.problems import load_instance\n"
                      "def f(p, ga):\n    if ga.crossover == 'eax' or 'none' != crossover:\n"
                      "        return isinstance(p, (QAP, problems.TSP))\n")
    assert problem_imports(source) == [(1, "metaheur.problems.qap.tabu"), (2, "metaheur.problems.tsp"),
                                       (3, "metaheur.problems.lop")]
    assert type_checks(source) == [7]
    assert crossover_branches(source) == [6, 6]
