"""The QAPLIB benchmark files under $METAHEUR_INSTANCES: every file parses, every published
solution scores exactly its published value (split from tests/problems/test_library.py).

Skipped (with a message) when METAHEUR_INSTANCES is not set.
"""

from __future__ import annotations

import pytest
from library_files import _names

from metaheur.problems import QAP, load_instance, load_solution, read_qaplib

# --------------------------------------------------------------------------------------------- QAP


@pytest.mark.parametrize("name", _names("qaplib", ".dat"))
def test_qaplib_file_parses_with_its_size(instances_dir, qaplib_bks, name):
    qap = read_qaplib(instances_dir / "qaplib" / f"{name}.dat")
    assert isinstance(qap, QAP)
    assert qap.name == name
    assert qap.n == int(qaplib_bks[name]["n"])
    assert qap.flow.shape == qap.distance.shape == (qap.n, qap.n)


@pytest.mark.parametrize(("name", "uniform"), [("tai100a", True), ("tai40a", True), ("lipa50a", True),
                                              ("sko100a", False), ("nug28", False), ("tho40", False),
                                              ("tai150b", False), ("esc32h", False)])
def test_qaplib_classes_by_dominance(instances_dir, name, uniform):
    """Taillard's (1995) classes: uniformly random (tai*a, lipa) apart from structured instances."""
    path = instances_dir / "qaplib" / f"{name}.dat"
    if not path.is_file():
        pytest.skip(f"{name}.dat is not in {instances_dir}")
    assert read_qaplib(path).uniformly_random == uniform


@pytest.mark.parametrize("name", _names("qaplib", ".sln"))
def test_qaplib_solution_scores_its_stated_cost(instances_dir, qaplib_bks, name):
    qap = load_instance(instances_dir / "qaplib" / f"{name}.dat")
    sol = load_solution(qap, instances_dir / "qaplib" / f"{name}.sln")
    assert sol.stated_cost is not None
    assert qap.cost(sol.permutation) == sol.stated_cost
    bks = int(qaplib_bks[name]["best_known"])
    # a published solution is never better than the best known value
    assert sol.stated_cost >= bks
