"""The framework knows no problem (docs/architecture.md, "Layers and folders"): no module under
metaheur/ imports anything of ``metaheur.problems`` (a built-in problem's package, or a name the
package re-exports: the problem interface is the framework's own, ``metaheur.problem``) or is
named after a problem, none asks whether an instance is of a problem class (``isinstance``) or
picks an island's behaviour by comparing crossover names, and importing the framework loads no
problem package. Each built-in problem is one package under problems/ and one folder under
kernels/ (the ATSP's kernels are the TSP's); the engine's kernels are named after no problem."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from metaheur.problem import registered

ROOT = Path(__file__).resolve().parents[1]
PROBLEM_PACKAGES = sorted(p.name for p in (ROOT / "problems").iterdir() if (p / "__init__.py").is_file())
PROBLEM_CLASSES = {"QAP", "TSP", "ATSP", "TwinTSP", "PFSP", "LOP"}
FRAMEWORK = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "metaheur").rglob("*.py"))
#: What importing these must leave unloaded: every built-in problem's package.
ENTRY_MODULES = ("metaheur", "metaheur.solver", "metaheur.cli", "metaheur.islands.model", "metaheur.search.perm_search")


def problem_imports(path: Path) -> list[tuple[int, str]]:
    """``(line, name)`` of every import of ``metaheur.problems`` or anything in it (a problem's
    package, or a name it re-exports, ``from metaheur.problems import QAP``) in ``path``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            names = [f"{base}.{a.name}" for a in node.names] if base == "metaheur.problems" else [base]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        else:
            continue
        found += [(node.lineno, name) for name in names
                  if name == "metaheur.problems" or name.startswith("metaheur.problems.")]
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


@pytest.mark.parametrize("module", FRAMEWORK)
def test_the_framework_imports_no_problem(module):
    found = problem_imports(ROOT / module)
    assert not found, f"{module} imports problem-specific code: {found}"


def test_importing_the_framework_loads_no_problem_package():
    """In a fresh interpreter: the built-in problems load through the registry when a run names
    one, or through ``metaheur.QAP`` (a lazy re-export), never with the framework."""
    probe = ("import importlib, sys\n"
             f"for name in {ENTRY_MODULES!r}:\n"
             "    importlib.import_module(name)\n"
             "    loaded = sorted(m for m in sys.modules if m.startswith('metaheur.problems.'))\n"
             "    assert not loaded, (name, loaded)\n"
             "import metaheur\n"
             "metaheur.QAP\n"
             "print(sorted(m for m in sys.modules if m.count('.') == 2 and m.startswith('metaheur.problems.')))\n")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "['metaheur.problems.qap']"  # the lazy name loads its own package alone


def test_no_engine_kernel_is_named_after_a_problem():
    kinds = set(registered())
    named = [p.name for p in (ROOT / "kernels" / "engine").iterdir()
             if any(kind in p.stem.lower().replace("-", "_").split("_") for kind in kinds)]
    assert not named, named


def test_no_framework_module_is_named_after_a_problem():
    kinds = set(registered())
    named = [m for m in FRAMEWORK if any(kind in Path(m).stem.split("_") for kind in kinds)]
    assert not named, named


@pytest.mark.parametrize("module", FRAMEWORK)
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
                      "from metaheur.problems import lop\nfrom metaheur.problems import QAP\n"
                      "from metaheur.problem import load_instance\n"
                      "def f(p, ga):\n    if ga.crossover == 'eax' or 'none' != crossover:\n"
                      "        return isinstance(p, (QAP, problems.TSP))\n")
    assert problem_imports(source) == [(1, "metaheur.problems.qap.tabu"), (2, "metaheur.problems.tsp"),
                                       (3, "metaheur.problems.lop"), (4, "metaheur.problems.QAP")]
    assert type_checks(source) == [8]
    assert crossover_branches(source) == [7, 7]
