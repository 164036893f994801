"""The wheel carries every package and every kernel source, in the design card's layout:
metaheur/ as metaheur, problems/ as metaheur.problems, kernels/ as metaheur.kernels."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: The kernels' resource table: package data, what simulated devices answer occupancy queries from.
RESOURCE_TABLE = "metaheur/engine/kernel_resources.csv"
LAYOUT = {"metaheur": "metaheur", "problems": "metaheur/problems", "kernels": "metaheur/kernels"}


def _expected_files() -> set[str]:
    """Every tracked source file of the three package directories, under its installed name."""
    out = {"LICENSE"}
    for folder, installed in LAYOUT.items():
        for path in (ROOT / folder).rglob("*"):
            if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc":
                out.add(f"{installed}/{path.relative_to(ROOT / folder).as_posix()}")
    return out


@pytest.mark.slow
def test_wheel_holds_every_package_and_kernel_source(tmp_path):
    subprocess.run([sys.executable, "-m", "pip", "wheel", str(ROOT), "--no-deps", "-q", "-w", str(tmp_path)],
                   check=True, capture_output=True)
    [wheel] = tmp_path.glob("metaheur-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    names |= {"LICENSE" for n in names if n.endswith(".dist-info/licenses/LICENSE") or n.endswith(".dist-info/LICENSE")}
    expected = _expected_files()
    assert {"metaheur/py.typed", "metaheur/kernels/qap/qap_tabu.cu", "metaheur/kernels/engine/mh_cpu_shim.h",
            "metaheur/islands/island.py", "metaheur/problems/qap/problem.py", RESOURCE_TABLE, "LICENSE"} <= expected
    assert expected - names == set()
    packages = {p.parent.as_posix() for p in map(Path, names) if p.name == "__init__.py"}
    assert packages >= {"metaheur/engine", "metaheur/islands", "metaheur/search", "metaheur/ga",
                        *(f"metaheur/problems/{kind}" for kind in ("qap", "tsp", "atsp", "pfsp", "lop"))}
    assert not any(n.startswith(("tests/", "experiments/", "problems/", "kernels/")) for n in names)


def test_the_resource_table_is_package_data():
    """The simulated devices' occupancy queries read the resource table through
    importlib.resources from the package itself, not from a checkout's experiments/ (an installed
    wheel has none)."""
    from importlib import resources

    from metaheur.engine import sm90

    table = resources.files("metaheur.engine").joinpath("kernel_resources.csv")
    assert table.is_file()
    assert Path(str(table)) == sm90.RESOURCE_TABLE
    assert "experiments" not in sm90.RESOURCE_TABLE.parts
    assert sm90.table_resources()[("qap/qap_tabu.cu", "qap_tabu_run", "-")].registers > 0
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert '"metaheur.engine" = ["kernel_resources.csv"]' in pyproject
