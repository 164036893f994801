"""GPU runs of the searches and the solver (marked gpu: they skip where CuPy finds no device).

The searches' kernels are the same source on both builds, so for integer problems a GPU batch
must give bit-for-bit the CPU batch's results for the same starts and random streams.
"""

from __future__ import annotations

import numpy as np
import pytest

from metaheur.devices import gpu_devices
from metaheur.problems import clustered_tsp, random_qap
from metaheur.problems.lop import random_lop
from metaheur.problems.pfsp import random_pfsp, taillard
from metaheur.problems.qap.tabu import QAPTabuBatch
from metaheur.problems.tsp.descent import TSPDescentBatch
from metaheur.problems.tsp.ils import TSPILSBatch
from metaheur.search.perm_search import PermSearchBatch, PermSearchParams

pytestmark = pytest.mark.gpu


@pytest.fixture(scope="module")
def gpu():
    devices = gpu_devices()
    if not devices:
        pytest.skip("no GPU visible to CuPy: GPU tests skipped")
    return devices[0]


@pytest.mark.parametrize("symmetric", [True, False])
def test_tabu_batch_gpu_equals_cpu(gpu, symmetric):
    qap = random_qap(37, seed=3, symmetric=symmetric, zero_diagonal=symmetric)
    starts = np.array([np.random.default_rng(s).permutation(qap.n) for s in range(64)])
    out = []
    for dev in ("cpu", gpu):
        batch = QAPTabuBatch(qap, dev, starts=starts, seed=11)
        out.append(batch.run(3000))
    assert np.array_equal(out[0].best_costs, out[1].best_costs)
    assert np.array_equal(out[0].best, out[1].best)
    assert all(qap.cost(p) == c for p, c in zip(out[1].best, out[1].best_costs, strict=True))


@pytest.mark.parametrize("n", [150, 600])
def test_descent_batch_gpu_equals_cpu(gpu, n):
    tsp = clustered_tsp(n, seed=4)
    starts = np.array([np.random.default_rng(s).permutation(n) for s in range(16)])
    out = [TSPDescentBatch(tsp, dev, k=8).run(starts) for dev in ("cpu", gpu)]
    assert np.array_equal(out[0].best, out[1].best)
    assert np.array_equal(out[0].best_costs, out[1].best_costs)
    assert all(tsp.tour_length(t) == c for t, c in zip(out[1].best, out[1].best_costs, strict=True))


def test_ils_batch_gpu_equals_cpu(gpu):
    tsp = clustered_tsp(400, seed=2)
    out = []
    for dev in ("cpu", gpu):
        batch = TSPILSBatch(tsp, dev, count=32, seed=5)
        out.append(batch.run(200))
    assert np.array_equal(out[0].best_costs, out[1].best_costs)
    assert np.array_equal(out[0].best, out[1].best)
    assert all(tsp.tour_length(t) == c for t, c in zip(out[1].best, out[1].best_costs, strict=True))


@pytest.mark.parametrize(("make", "method", "budget"), [(lambda: taillard("ta031"), "ig", 40),
                                                       (lambda: taillard("ta031"), "ils", 40),
                                                       (lambda: random_pfsp(30, 40, seed=1), "ig", 20),
                                                       (lambda: random_lop(130, 2), "ils", 40),
                                                       (lambda: random_lop(130, 2), "ig", 20)])
def test_problem_interface_searches_gpu_equal_cpu(gpu, make, method, budget):
    """The generic engine on the flow shop's and the LOP's device code (a block of threads a
    search on the GPU, one thread on the CPU; the flow shop's wavefronts with fewer and more
    machines than half the block): the same bests, values and iterations."""
    problem = make()
    starts = np.array([np.random.default_rng(s).permutation(problem.n) for s in range(24)])
    keys = np.arange(1, 25, dtype=np.uint64)
    params = PermSearchParams(method=method)
    out = [PermSearchBatch(problem, dev, len(starts), params).run(starts, keys, budget) for dev in ("cpu", gpu)]
    assert np.array_equal(out[0].best, out[1].best)
    assert np.array_equal(out[0].best_costs, out[1].best_costs)
    assert np.array_equal(out[0].iterations, out[1].iterations)
    assert np.array_equal(out[0].current, out[1].current)
    assert out[1].best_costs.tolist() == [problem.engine_sign * problem.value(p) for p in out[1].best]


@pytest.mark.parametrize("strategy", ["gpu", "hybrid"])
def test_solve_on_gpu(gpu, strategy):
    from metaheur import SolveParams, solve

    result = solve("gen:qap:40", seed=1, params=SolveParams(strategy=strategy), time_limit=5)
    assert result.strategy == strategy
    assert gpu.name in result.devices
    assert result.cost == random_qap(40, seed=1).cost(result.permutation)
    if strategy == "hybrid":
        assert {d.device for d in result.device_loads} >= {"cpu", gpu.name}


def test_flow_shop_gpu_island_runs_a_chain_a_multiprocessor(gpu):
    from metaheur import SolveParams, solve

    result = solve("gen:pfsp:30:5", seed=1, params=SolveParams(strategy="gpu", devices=(gpu.name,)), time_limit=3)
    assert [(r.device, r.population, r.offspring) for r in result.islands] == [(gpu.name, gpu.cores, gpu.cores)]
    assert result.cost == random_pfsp(30, 5, seed=1).value(result.permutation)
