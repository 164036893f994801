"""The asymmetric TSP on a simulated GPU: the GPU island searches the transformed instance and the
result is the directed tour with its exact length."""

from __future__ import annotations

import pytest
from testutil import solve_with

from metaheur.islands.params import GAParams
from metaheur.problems import asymmetric_tsp

pytestmark = pytest.mark.gpusim


def test_an_atsp_is_solved_on_a_simulated_gpu(simulated):
    atsp = asymmetric_tsp(30, seed=2)
    result = solve_with(atsp, strategy="gpu", devices=("cuda:0",), generations=3, sync=True, epoch_generations=1,
                        seed=1, ga=GAParams(population=8, crossover="eax"))
    assert (result.problem, result.n, result.devices) == ("ATSP", 30, ["cuda:0"])
    assert sorted(result.permutation) == list(range(30))
    assert result.cost == atsp.tour_length(result.permutation)
