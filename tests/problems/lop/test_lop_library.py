"""The LOLIB sets under $METAHEUR_INSTANCES/lop: every instance parses, every best-known solution
(``NAME.sol``) re-scores to its bks.csv value, and the project's best-known table equals bks.csv.

Skipped (with a message) when METAHEUR_INSTANCES is not set.
"""

from __future__ import annotations

import csv
import os
from pathlib import Path

import pytest

from metaheur.problems.lop.best_known import TABLE, lop_best_known
from metaheur.problems.lop.files import looks_like_lolib, read_lolib, read_order


def _rows() -> list:
    value = os.environ.get("METAHEUR_INSTANCES")
    table = Path(value) / "lop" / "bks.csv" if value else None
    if table is None or not table.is_file():
        return [pytest.param(None, id="no-instances")]
    with open(table, newline="") as handle:
        return [pytest.param(row, id=row["name"]) for row in csv.DictReader(handle)]


@pytest.mark.parametrize("row", _rows())
def test_solution_rescores_to_bks(instances_dir, row):
    if row is None:
        pytest.skip(f"no lop/bks.csv under {instances_dir}")
    path = instances_dir / "lop" / row["set"] / row["name"]
    lop = read_lolib(path)
    assert lop.name == row["name"] and lop.n == int(row["n"]) and row["sense"] == "max"
    assert looks_like_lolib(path)
    order = read_order(path.with_name(path.name + ".sol"), lop)
    assert lop.value(order) == int(row["best_known"])
    entry = lop_best_known(row["name"], lop.n)
    assert entry is not None and entry.value == int(row["best_known"])
    assert entry.optimal == (row["set"] in ("IO", "SGB"))


def test_table_has_every_bks_row_and_no_other(instances_dir):
    table = instances_dir / "lop" / "bks.csv"
    if not table.is_file():
        pytest.skip(f"{table} not present")
    with open(table, newline="") as handle:
        rows = {(r["name"], r["set"], int(r["n"]), int(r["best_known"])) for r in csv.DictReader(handle)}
    assert {row[:4] for row in TABLE} == rows
