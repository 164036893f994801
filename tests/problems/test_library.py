"""The QAPLIB / TSPLIB benchmark files under $METAHEUR_INSTANCES: every file parses, every published
solution scores exactly its published value, the best-known table equals bks.csv.

Skipped (with a message) when METAHEUR_INSTANCES is not set.
"""

from __future__ import annotations

import csv
import functools
import json
import os
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from metaheur.cli import cli
from metaheur.problem.best_known import TABLES, best_known
from metaheur.problems import QAP, TSP, load_instance, load_solution, read_qaplib, read_tsplib

LIBRARIES = {"qaplib": ".dat", "tsplib": ".tsp"}
SOLUTION_SUFFIX = {"qaplib": ".sln", "tsplib": ".opt.tour"}


def _root() -> Path | None:
    value = os.environ.get("METAHEUR_INSTANCES")
    return Path(value) if value and Path(value).is_dir() else None


def _names(library: str, suffix: str) -> list:
    """Instance names having a file with ``suffix`` (collected at import; one placeholder when unset)."""
    root = _root()
    if root is None or not (root / library).is_dir():
        return [pytest.param(None, id="no-instances")]
    names = sorted(p.name[: -len(suffix)] for p in (root / library).glob(f"*{suffix}"))
    return names or [pytest.param(None, id="no-files")]


@functools.cache
def _bks(root: Path, library: str) -> dict[str, dict]:
    with open(root / library / "bks.csv", newline="") as handle:
        return {row["name"]: row for row in csv.DictReader(handle)}


@pytest.fixture
def qaplib_bks(instances_dir):
    return _bks(instances_dir, "qaplib")


@pytest.fixture
def tsplib_bks(instances_dir):
    return _bks(instances_dir, "tsplib")


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


# --------------------------------------------------------------------------------------------- TSP


@pytest.mark.parametrize("name", _names("tsplib", ".tsp"))
def test_tsplib_file_parses_with_its_size(instances_dir, tsplib_bks, name):
    tsp = read_tsplib(instances_dir / "tsplib" / f"{name}.tsp")
    assert isinstance(tsp, TSP)
    assert tsp.name == name
    assert tsp.n == int(tsplib_bks[name]["n"])
    if tsp.weight_type != "EXPLICIT":
        assert tsp.coords.shape == (tsp.n, 2)
        assert tsp.matrix is None


@pytest.mark.parametrize("name", _names("tsplib", ".opt.tour"))
def test_tsplib_optimal_tour_scores_best_known(instances_dir, tsplib_bks, name):
    tsp = load_instance(instances_dir / "tsplib" / f"{name}.tsp")
    sol = load_solution(tsp, instances_dir / "tsplib" / f"{name}.opt.tour")
    assert tsp.tour_length(sol.permutation) == int(tsplib_bks[name]["best_known"])
    if tsp.n > 20_000:
        assert "matrix" not in tsp._cache


@pytest.mark.parametrize(
    "name, canonical",
    # TSPLIB FAQ: length of the tour 1, 2, ..., n, to check the distance functions
    [("pcb442", 221440), ("gr666", 423710), ("att532", 309636)],
)
def test_tsplib_canonical_tours(instances_dir, name, canonical):
    path = instances_dir / "tsplib" / f"{name}.tsp"
    if not path.is_file():
        pytest.skip(f"{path} not present")
    tsp = read_tsplib(path)
    assert tsp.tour_length(np.arange(tsp.n)) == canonical


# ----------------------------------------------------------------------------- tables and lookups


@pytest.mark.parametrize("library", sorted(LIBRARIES))
def test_every_bks_row_has_its_file_and_vice_versa(instances_dir, library):
    names = set(_bks(instances_dir, library))
    suffix = LIBRARIES[library]
    files = {p.name[: -len(suffix)] for p in (instances_dir / library).glob(f"*{suffix}")}
    assert names == files


@pytest.mark.parametrize("library", sorted(LIBRARIES))
def test_best_known_table_equals_bks_csv(instances_dir, library):
    rows = _bks(instances_dir, library)
    assert rows
    for name, row in rows.items():
        entry = best_known(name, int(row["n"]))
        assert entry is not None, name
        assert entry.library == library.upper()
        assert (entry.n, entry.value, entry.optimal) == (
            int(row["n"]), int(row["best_known"]), row["optimal"] == "true"), name
    table = {k for entries in TABLES.values() for k, v in entries.items() if v.library.lower() == library}
    assert table == {name.lower() for name in rows}


def test_library_names_resolve_through_the_environment(instances_dir, monkeypatch):
    monkeypatch.setenv("METAHEUR_INSTANCES", str(instances_dir))
    qap = load_instance("nug12")
    assert isinstance(qap, QAP) and qap.n == 12
    tsp = load_instance("berlin52.tsp")
    assert isinstance(tsp, TSP) and tsp.n == 52
    assert load_instance("KROA100").name == "kroA100"  # case-insensitive fallback


# ------------------------------------------------------------------------------------ metaheur CLI

CLI_CASES = [
    ("qaplib", "nug12", ".sln"),
    ("qaplib", "tai40a", ".sln"),  # 0-based file
    ("qaplib", "kra30a", ".sln"),  # inverse permutation
    ("qaplib", "tai100a", ".sln"),  # the .sln holds an older value than the table
    ("tsplib", "att48", ".opt.tour"),
    ("tsplib", "ulysses16", ".opt.tour"),
    ("tsplib", "bays29", ".opt.tour"),
    ("tsplib", "pla33810", ".opt.tour"),
]


@pytest.mark.parametrize("library, name, suffix", CLI_CASES)
def test_cli_evaluate_json(instances_dir, qaplib_bks, tsplib_bks, library, name, suffix):
    folder = instances_dir / library
    solution = folder / f"{name}{suffix}"
    if not solution.is_file():
        pytest.skip(f"{solution} not present")
    runner = CliRunner()
    instance = folder / f"{name}{LIBRARIES[library]}"
    result = runner.invoke(cli, ["evaluate", str(instance), str(solution), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    bks = int((qaplib_bks if library == "qaplib" else tsplib_bks)[name]["best_known"])
    assert data["best_known"] == bks
    assert data["instance"] == name
    assert data["problem"] == ("QAP" if library == "qaplib" else "TSP")
    if library == "qaplib":
        assert data["cost"] == data["stated_cost"]
    else:
        assert data["cost"] == bks
    assert data["gap_percent"] == pytest.approx(100.0 * (data["cost"] - bks) / bks)
    if name == "tai100a":
        assert data["cost"] > bks and data["gap_percent"] > 0
    if name == "tai40a":
        assert "from 0" in data["note"]
    if name == "kra30a":
        assert "inverse" in data["note"]


def test_cli_evaluate_by_library_name(instances_dir):
    runner = CliRunner()
    result = runner.invoke(cli, ["evaluate", "nug12", str(instances_dir / "qaplib" / "nug12.sln")],
                           env={"METAHEUR_INSTANCES": str(instances_dir)})
    assert result.exit_code == 0, result.output
    assert "cost        578" in result.stdout
    assert "gap         0.0000 %" in result.stdout
