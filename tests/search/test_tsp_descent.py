"""Best-improvement 2-opt + Or-opt descent (metaheur.search.tsp_descent, ``tsp_apply_best`` of
kernels/tsp_moves.cu) against the numpy references of the move neighbourhoods: every pass makes
the best move the reference finds, lengths are exact, the result is a local optimum, and GPU
launch shapes (the fiber simulation with 32 threads per tour) give the same tours."""

from __future__ import annotations

import numpy as np
import pytest

from metaheur.engine import load_module
from metaheur.errors import MetaheurError
from metaheur.ops import neighbours
from metaheur.problems import clustered_tsp, uniform_tsp
from metaheur.reference import tsp as R
from metaheur.search.tsp_descent import TSPDescentBatch


def best_delta(tsp, tour, neigh=None) -> int:
    """The best 2-opt or Or-opt delta of ``tour`` by the numpy references (0 when none improves)."""
    if neigh is None:
        deltas = (R.two_opt_full(tsp.dist, tour), R.or_opt_full(tsp.dist, tour))
    else:
        deltas = (R.two_opt_cand(tsp.dist, tour, neigh), R.or_opt_cand(tsp.dist, tour, neigh))
    return min(0, *(int(d.min()) for d in deltas))


def random_tours(n: int, count: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.array([rng.permutation(n) for _ in range(count)])


@pytest.mark.parametrize("full", [True, False])
@pytest.mark.parametrize(("n", "seed"), [(5, 1), (6, 2), (9, 3), (33, 4), (70, 5)])
def test_every_pass_makes_the_best_move_of_the_reference(n, seed, full):
    tsp = uniform_tsp(n, seed=seed)
    neigh = None if full else neighbours(tsp, min(8, n - 1))
    search = TSPDescentBatch(tsp, full=full, k=min(8, n - 1))
    tours = random_tours(n, 3, seed)
    lengths = [tsp.tour_length(t) for t in tours]
    for _ in range(3 * n):
        out = search.run(tours, max_passes=1)
        for s in range(len(tours)):
            expected = lengths[s] + best_delta(tsp, tours[s], neigh)
            assert sorted(out.best[s]) == list(range(n))
            assert tsp.tour_length(out.best[s]) == expected == out.best_costs[s]
        if (out.best == tours).all():
            break
        tours, lengths = out.best, list(out.best_costs)
    assert all(best_delta(tsp, t, neigh) == 0 for t in tours)


@pytest.mark.parametrize("instance", [uniform_tsp(300, seed=7), clustered_tsp(250, seed=8)])
def test_descent_ends_at_an_exact_local_optimum(instance):
    search = TSPDescentBatch(instance, k=8)
    assert not search.full
    start = random_tours(instance.n, 4, 9)
    out = search.run(start)
    assert out.stop_reason == "local optimum"
    neigh = neighbours(instance, 8)
    for s in range(len(start)):
        assert out.best_costs[s] == instance.tour_length(out.best[s])
        assert out.best_costs[s] < 0.5 * instance.tour_length(start[s])
        assert best_delta(instance, out.best[s], neigh) == 0
        assert out.iterations[s] > 0
    assert out.extra["passes"] >= out.iterations.max()


def test_gpu_launch_shapes_give_the_same_tours():
    tsp = uniform_tsp(150, seed=3)
    start = random_tours(150, 3, 4)
    one = TSPDescentBatch(tsp, k=8, full=False).run(start)
    sim = TSPDescentBatch(tsp, k=8, full=False, block=32)
    sim.module = load_module("tsp_moves.cu", "cpu", sim.data.defines, sim=True)
    shaped = sim.run(start)
    assert (shaped.best == one.best).all() and (shaped.best_costs == one.best_costs).all()
    assert (shaped.iterations == one.iterations).all()


def test_pass_and_time_limits():
    tsp = uniform_tsp(400, seed=2)
    search = TSPDescentBatch(tsp, k=6)
    out = search.run(random_tours(400, 2, 1), max_passes=5)
    assert out.stop_reason == "passes" and out.extra["passes"] == 5 and out.iterations.max() == 5
    out = search.run(random_tours(400, 2, 1), time_limit=1e-9)
    assert out.stop_reason == "time" and out.extra["passes"] == 1  # a limit is first checked after one pass
    out = search.run(random_tours(400, 2, 1), time_limit=60)
    assert out.stop_reason == "local optimum" and out.extra["passes"] > 8


def test_tiny_instances_are_refused():
    with pytest.raises(MetaheurError, match="at least 5 cities"):
        TSPDescentBatch(uniform_tsp(4, seed=1))
