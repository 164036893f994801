"""The orchestration talks to problems only through the problem interface: no module of it asks
whether an instance is a QAP, TSP, ATSP or TwinTSP (``isinstance``); only the problem's own
modules under problems/ and the problem's own operators class may."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PROBLEM_CLASSES = {"QAP", "TSP", "ATSP", "TwinTSP"}
ORCHESTRATION = [
    "metaheur/solver.py", "metaheur/cli.py", "metaheur/plots.py", "metaheur/describe.py", "metaheur/warm_start.py",
    "metaheur/progress.py", "metaheur/result.py", "metaheur/checkpoint.py", "metaheur/stopping.py",
    "metaheur/islands/params.py", "metaheur/islands/balance.py", "metaheur/islands/island.py",
    "metaheur/islands/model.py", "metaheur/islands/migration.py", "metaheur/islands/base.py",
    "metaheur/islands/memetic.py", "metaheur/islands/operators.py",
    "problems/instances.py", "problems/registry.py", "problems/interface.py", "problems/best_known.py",
]
#: Classes whose methods may ask: the problem's own operators.
OWN_OPERATORS = {"QAPOperators", "TSPOperators"}


def type_checks(path: Path) -> list[tuple[int, str | None]]:
    """``(line, enclosing class)`` of every ``isinstance(x, <a problem class>)`` in ``path``."""
    tree = ast.parse(path.read_text(), str(path))
    found = []

    def visit(node, cls):
        for child in ast.iter_child_nodes(node):
            if (isinstance(child, ast.Call) and isinstance(child.func, ast.Name) and child.func.id == "isinstance"
                    and len(child.args) == 2):
                nodes = list(ast.walk(child.args[1]))
                names = {n.id for n in nodes if isinstance(n, ast.Name)} | {
                    n.attr for n in nodes if isinstance(n, ast.Attribute)}
                if names & PROBLEM_CLASSES:
                    found.append((child.lineno, cls))
            visit(child, child.name if isinstance(child, ast.ClassDef) else cls)

    visit(tree, None)
    return found


@pytest.mark.parametrize("module", ORCHESTRATION)
def test_no_module_of_the_orchestration_branches_on_the_problem_type(module):
    checks = [(line, cls) for line, cls in type_checks(ROOT / module) if cls not in OWN_OPERATORS]
    assert not checks, f"{module}: isinstance on a problem class at line(s) {[line for line, _ in checks]}"


def test_the_check_finds_a_type_branch(tmp_path):
    """The scan is not blind: it reports a branch of each form, and lets the operators' own pass."""
    source = tmp_path / "planted.py"
    source.write_text("def f(p):\n    return isinstance(p, (QAP, problems.TSP))\n\n"
                      "class TSPOperators:\n    def g(self):\n        return isinstance(self.problem, TwinTSP)\n")
    assert type_checks(source) == [(2, None), (6, "TSPOperators")]
