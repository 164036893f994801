"""Iterated local search for the TSP (kernels/tsp/tsp_ils.cu through metaheur.problems.tsp.ils).

The kernel tracks tour lengths incrementally (move deltas, kick deltas, undo from a log), so the
main checks are that every length it reports is the exact length of the tour it returns, for
every kick and move kind, on tiny, uniform, clustered, EXPLICIT and GEO instances, and that the
current tour stays consistent after every single kick (a rejected kick is undone from the log).
"""

from __future__ import annotations

import time

import numpy as np
import pytest
from testutil import instances_dir

from metaheur.devices import to_host
from metaheur.errors import MetaheurError
from metaheur.problems import TSP, asymmetric_tsp, clustered_tsp, load_instance, uniform_tsp
from metaheur.problems.tsp import ils as tsp_ils_module
from metaheur.problems.tsp.device_data import neighbours
from metaheur.problems.tsp.ils import (
    BEST,
    COST,
    KICK_TYPES,
    LK_MOVES,
    ILSParams,
    TSPILSBatch,
    greedy_tour,
    solve_ils,
)

OPTIMA = {"berlin52": 7542, "kroA100": 21282, "gr96": 55209, "bays29": 2020}


def explicit_tsp(n: int, seed: int) -> TSP:
    """A random symmetric EXPLICIT instance (not metric)."""
    rng = np.random.default_rng(seed)
    m = rng.integers(1, 1000, size=(n, n))
    m = np.triu(m, 1)
    m = m + m.T
    return TSP(f"explicit-{n}-s{seed}", "EXPLICIT", matrix=m)


def geo_tsp(n: int, seed: int) -> TSP:
    """Random GEO cities (DDD.MM coordinates) in Europe."""
    rng = np.random.default_rng(seed)
    coords = np.stack([rng.uniform(35, 60, n), rng.uniform(-10, 30, n)], axis=1).round(2)
    return TSP(f"geo-{n}-s{seed}", "GEO", coords=coords)


def assert_exact(tsp: TSP, batch: TSPILSBatch, result) -> None:
    """Best tours are permutations whose lengths are the reported ones; so is the current tour."""
    for k in range(batch.count):
        tour = result.best[k]
        assert sorted(tour.tolist()) == list(range(tsp.n))
        assert tsp.tour_length(tour) == result.best_costs[k]
    current = to_host(batch.tours)
    stats = to_host(batch.stats)
    for k in range(batch.count):
        assert tsp.tour_length(current[k]) == stats[k, COST]
        assert stats[k, BEST] <= stats[k, COST]


# ------------------------------------------------------------------------------ exact lengths
@pytest.mark.parametrize("n", [5, 6, 7, 8, 9, 10, 11, 12])
def test_tiny_instances_exact(n):
    for seed in (1, 2):
        for kick in KICK_TYPES:
            tsp = uniform_tsp(n, seed)
            batch = TSPILSBatch(tsp, "cpu", count=2, seed=seed, params=ILSParams(kick=kick, window=3))
            assert_exact(tsp, batch, batch.run(kicks=50))


@pytest.mark.parametrize("kick", list(KICK_TYPES))
@pytest.mark.parametrize("lk_move", list(LK_MOVES))
def test_every_kick_and_move_exact(kick, lk_move):
    for tsp in (uniform_tsp(150, 3), clustered_tsp(200, 4)):
        params = ILSParams(kick=kick, lk_move=lk_move, window=30, temperature=0.5)
        batch = TSPILSBatch(tsp, "cpu", count=2, seed=7, params=params)
        assert_exact(tsp, batch, batch.run(kicks=300))


@pytest.mark.parametrize("make", [explicit_tsp, geo_tsp])
def test_matrix_and_geo_exact(make):
    tsp = make(60, 5)
    for params in (ILSParams(), ILSParams(lk_move="2opt", kick="segment-swap"), ILSParams(lk_depth=0, k5=0)):
        batch = TSPILSBatch(tsp, "cpu", count=2, seed=3, params=params)
        assert_exact(tsp, batch, batch.run(kicks=300))


def test_atsp_transformation_exact():
    """The on-the-fly distances of an ATSP's transformation (TWIN) agree with numpy's."""
    tsp = asymmetric_tsp(40, seed=4).transformed().tsp
    for params in (ILSParams(), ILSParams(lk_move="2opt", kick="segment-swap")):
        batch = TSPILSBatch(tsp, "cpu", count=2, seed=3, params=params)
        assert_exact(tsp, batch, batch.run(kicks=300))


def test_quadrant_candidates_exact():
    tsp = clustered_tsp(300, 2)
    batch = TSPILSBatch(tsp, "cpu", count=2, seed=1, params=ILSParams(neighbours=12, quadrant=2))
    assert_exact(tsp, batch, batch.run(kicks=300))


def test_huge_kick_windows_stay_within_the_undo_log():
    """A shuffle of thousands of cities would log more swaps than the undo log holds: the kernel
    caps it (and the local search gives up on a kick whose repair would overflow the log)."""
    tsp = uniform_tsp(5000, 1)
    for kick in ("shuffle", "double-bridge", "segment-swap"):
        batch = TSPILSBatch(tsp, "cpu", count=1, seed=2, params=ILSParams(kick=kick, window=5000))
        assert_exact(tsp, batch, batch.run(kicks=3))


def test_every_kick_keeps_the_tour_consistent():
    """Kick by kick (one kick a launch): the current tour's length is the tracked one after every
    accepted or rejected (undone) kick, and the best never gets worse."""
    tsp = clustered_tsp(120, 9)
    for kick in ("double-bridge", "near-bridge", "shuffle"):
        batch = TSPILSBatch(tsp, "cpu", count=2, seed=11, params=ILSParams(kick=kick, temperature=1.0, window=20))
        previous = None
        for _ in range(60):
            result = batch.run(kicks=1)
            assert_exact(tsp, batch, result)
            if previous is not None:
                assert (result.best_costs <= previous).all()
            previous = result.best_costs.copy()


# ------------------------------------------------------------------------------ behaviour
def test_reproducible_with_a_kick_budget():
    tsp = uniform_tsp(300, 8)
    runs = []
    for _ in range(2):
        batch = TSPILSBatch(tsp, "cpu", count=2, seed=42)
        result = batch.run(kicks=500)
        runs.append((result.best.copy(), result.best_costs.copy(), result.iterations.copy()))
    assert np.array_equal(runs[0][0], runs[1][0])
    assert np.array_equal(runs[0][1], runs[1][1])
    assert np.array_equal(runs[0][2], runs[1][2])


def test_improves_on_the_greedy_start():
    tsp = uniform_tsp(400, 6)
    batch = TSPILSBatch(tsp, "cpu", count=1, seed=1)
    greedy = tsp.tour_length(greedy_tour(tsp, batch.neigh))
    descent = batch.run(kicks=0).best_costs[0]
    kicked = batch.run(kicks=2000).best_costs[0]
    assert kicked < descent < greedy


def random_starts(n: int, count: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.array([rng.permutation(n) for _ in range(count)])


def test_initial_descent_in_parts_equals_the_whole_descent(monkeypatch):
    """The initial descent makes at most INIT_MOVES improving moves per search and launch and
    resumes its queue in the next launch: in parts, it makes exactly the moves of one launch."""
    tsp = uniform_tsp(600, 4)
    starts = random_starts(600, 3, 5)
    whole = TSPILSBatch(tsp, "cpu", starts=starts, seed=1).run(kicks=50)
    monkeypatch.setattr(tsp_ils_module, "INIT_MOVES", 37)  # launches of 64 moves a search (the least)
    batch = TSPILSBatch(tsp, "cpu", starts=starts, seed=1)
    parts = batch.run(kicks=50)
    assert_exact(tsp, batch, parts)
    assert np.array_equal(parts.best, whole.best) and np.array_equal(parts.best_costs, whole.best_costs)
    assert np.array_equal(parts.extra["moves"], whole.extra["moves"])
    assert (parts.extra["moves"] > 64).all()


def test_a_time_limit_stops_the_initial_descent_between_its_parts(monkeypatch):
    tsp = uniform_tsp(2000, 6)
    starts = random_starts(2000, 2, 7)
    whole = TSPILSBatch(tsp, "cpu", starts=starts, seed=1).run(kicks=0)
    monkeypatch.setattr(tsp_ils_module, "INIT_MOVES", 10)
    batch = TSPILSBatch(tsp, "cpu", starts=starts, seed=1)
    cut = batch.run(kicks=1000, time_limit=1e-6)
    assert cut.stop_reason == "time_limit" and cut.launches == 0 and cut.iterations.sum() == 0
    assert_exact(tsp, batch, cut)
    assert (cut.extra["moves"] == 64).all()  # one part: INIT_MOVES shared by the two searches, at least 64
    assert (cut.best_costs > whole.best_costs).all()
    later = batch.run(kicks=10)  # the searches go on from valid tours; the rest of the queue is dropped
    assert_exact(tsp, batch, later)
    assert (to_host(batch.stats)[:, tsp_ils_module.PENDING] == 0).all()
    assert later.iterations.sum() == 20


def test_target_stops_early():
    tsp = uniform_tsp(200, 1)
    batch = TSPILSBatch(tsp, "cpu", count=1, seed=1)
    first = int(batch.run(kicks=0).best_costs[0])
    result = batch.run(kicks=10**6, target=first)
    assert result.stop_reason == "target" and result.iterations[0] == 0


def test_adopt_replaces_a_search():
    tsp = uniform_tsp(200, 2)
    batch = TSPILSBatch(tsp, "cpu", count=2, seed=3)
    result = batch.run(kicks=200)
    b = result.best_index
    batch.adopt(1 - b, result.best[b])
    after = batch.run(kicks=100)
    assert after.best_costs[1 - b] <= result.best_costs[b]
    assert_exact(tsp, batch, after)


def test_solve_ils_time_limit_and_exact_length():
    tsp = clustered_tsp(500, 3)
    t0 = time.perf_counter()
    tour, length, stats = solve_ils(tsp, 1.0, seed=2, searches=2)
    assert time.perf_counter() - t0 < 3.0
    assert tsp.tour_length(tour) == length and stats["searches"] == 2
    assert length <= min(stats["search_costs"])
    with pytest.raises(MetaheurError):
        solve_ils(tsp, 1.0, searches=0)


def test_quadrant_neighbours():
    """Every non-empty quadrant contributes its nearest cities; lists sorted by distance."""
    tsp = clustered_tsp(200, 5)
    k, q = 8, 2
    near = neighbours(tsp, k, quadrant=q)
    xy = tsp.coords
    for c in range(tsp.n):
        row = near[c]
        assert len(set(row.tolist())) == k and c not in row
        d = tsp.dist(np.full(k, c), row)
        assert (np.diff(d) >= 0).all()
        dx, dy = xy[:, 0] - xy[c, 0], xy[:, 1] - xy[c, 1]
        quads = [(dx > 0) & (dy >= 0), (dx <= 0) & (dy > 0), (dx < 0) & (dy <= 0), (dx >= 0) & (dy < 0)]
        d2 = dx * dx + dy * dy
        for mask in quads:
            mask[c] = False
            members = np.flatnonzero(mask)
            if len(members) == 0:
                continue
            order = members[np.lexsort((members, d2[members]))][:q]
            assert set(order.tolist()) <= set(row.tolist())
    with pytest.raises(MetaheurError):
        neighbours(tsp, 4, quadrant=2)


def test_parameter_validation():
    bad = [dict(neighbours=0), dict(neighbours=33), dict(window=0), dict(k5=-1), dict(lk_depth=65),
           dict(lk_move="4opt"), dict(kick="random"), dict(temperature=-0.1), dict(quadrant=3),
           dict(lk_breadth1=0), dict(temperature=float("nan"))]
    for kw in bad:
        with pytest.raises(MetaheurError):
            ILSParams(**kw)
    tsp = uniform_tsp(20, 1)
    with pytest.raises(MetaheurError):
        TSPILSBatch(tsp, "cpu")  # neither count nor starts
    with pytest.raises(MetaheurError):
        TSPILSBatch(uniform_tsp(4, 1), "cpu", count=1)
    batch = TSPILSBatch(tsp, "cpu", count=1)
    with pytest.raises(MetaheurError):
        batch.run()


# ------------------------------------------------------------------------------ TSPLIB
@pytest.mark.parametrize("name", list(OPTIMA))
def test_reaches_the_optimum_on_small_tsplib(name):
    root = instances_dir() / "tsplib"
    tsp = load_instance(root / f"{name}.tsp")
    batch = TSPILSBatch(tsp, "cpu", count=2, seed=1)
    result = batch.run(kicks=20000, target=OPTIMA[name])
    assert_exact(tsp, batch, result)
    assert result.best_costs.min() == OPTIMA[name]


def test_tsplib_geo_and_explicit_exact():
    root = instances_dir() / "tsplib"
    for name in ("gr96", "bays29", "gr202", "pr439", "fl417"):
        tsp = load_instance(root / f"{name}.tsp")
        for seed in (1, 2):
            batch = TSPILSBatch(tsp, "cpu", count=2, seed=seed, params=ILSParams(temperature=0.5))
            assert_exact(tsp, batch, batch.run(kicks=500))
