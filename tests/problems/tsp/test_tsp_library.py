"""The TSPLIB benchmark files under $METAHEUR_INSTANCES: every file parses, every optimal tour
scores exactly its published value (split from tests/problems/test_library.py).

Skipped (with a message) when METAHEUR_INSTANCES is not set.
"""

from __future__ import annotations

import numpy as np
import pytest
from library_files import _names

from metaheur.problems import TSP, load_instance, load_solution, read_tsplib

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
