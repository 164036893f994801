"""The QAPLIB / TSPLIB benchmark files under $METAHEUR_INSTANCES: the best-known table equals bks.csv,
library names resolve, ``metaheur evaluate`` scores the published solutions (that every file parses
and every published solution scores exactly its published value: qap/test_qap_library.py,
tsp/test_tsp_library.py).

Skipped (with a message) when METAHEUR_INSTANCES is not set.
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from library_files import LIBRARIES, _bks

from metaheur.cli import cli
from metaheur.problem.best_known import TABLES, best_known
from metaheur.problems import QAP, TSP, load_instance

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
