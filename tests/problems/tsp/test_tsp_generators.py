"""The seeded TSP generators (uniform_tsp, clustered_tsp; split from tests/problems/test_generators.py)."""

from __future__ import annotations

import numpy as np
import pytest

from metaheur.errors import MetaheurError
from metaheur.problems import TSP, clustered_tsp, uniform_tsp
from metaheur.problems.tsp.generators import SQUARE

# --------------------------------------------------------------------------------------------- TSP


@pytest.mark.parametrize("gen", [uniform_tsp, clustered_tsp])
def test_tsp_generators_are_reproducible(gen):
    a, b = gen(400, seed=9), gen(400, seed=9)
    assert np.array_equal(a.coords, b.coords)
    assert not np.array_equal(a.coords, gen(400, seed=10).coords)
    assert isinstance(a, TSP) and a.weight_type == "EUC_2D" and a.n == 400
    assert a.coords.shape == (400, 2)
    assert np.array_equal(a.coords, np.round(a.coords))  # integer coordinates
    assert np.unique(a.coords, axis=0).shape[0] > 390  # (almost) no duplicate cities
    assert a.tour_length(np.arange(400)) > 0
    with pytest.raises(MetaheurError):
        gen(2)


def test_uniform_tsp_fills_the_square():
    tsp = uniform_tsp(5000, seed=1)
    assert tsp.coords.min() >= 0 and tsp.coords.max() < SQUARE
    hist, _, _ = np.histogram2d(tsp.coords[:, 0], tsp.coords[:, 1], bins=4, range=[[0, SQUARE], [0, SQUARE]])
    assert hist.min() > 5000 / 16 * 0.8  # every quarter-of-a-quarter holds its share


def _empty_cells(tsp: TSP, bins: int = 20) -> float:
    square = [[0, SQUARE], [0, SQUARE]]
    hist, _, _ = np.histogram2d(tsp.coords[:, 0], tsp.coords[:, 1], bins=bins, range=square)
    return float((hist == 0).mean())


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_clustered_tsp_is_clustered(seed):
    # n/10 normal clusters leave many more empty cells on a 20 x 20 grid than uniform cities do
    assert _empty_cells(clustered_tsp(1000, seed)) > 2 * _empty_cells(uniform_tsp(1000, seed))
