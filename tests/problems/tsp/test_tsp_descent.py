"""Best-improvement 2-opt + Or-opt descent (metaheur.problems.tsp.descent; ``tsp_apply_best``,
``tsp_best_at``, ``tsp_apply_disjoint`` of kernels/tsp/tsp_moves.cu) against the numpy references of
the move neighbourhoods: a one-move pass makes the best move the reference finds, a several-move
pass makes the moves a numpy version of its rule picks and applies, lengths are exact, the
result is a local optimum, and GPU launch shapes (the fiber simulation with 32 threads per tour)
give the same tours."""

from __future__ import annotations

import numpy as np
import pytest
import tsp_reference as R

from metaheur.engine import load_module
from metaheur.errors import MetaheurError
from metaheur.problems import clustered_tsp, uniform_tsp
from metaheur.problems.tsp.descent import TSPDescentBatch
from metaheur.problems.tsp.device_data import neighbours
from metaheur.problems.tsp.starts import curve_tours


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
    search = TSPDescentBatch(tsp, full=full, k=min(8, n - 1), several=False)
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
    assert out.extra["passes"] < out.iterations.min()  # several moves a pass


def move_span(n: int, a: int, seg: int, b: int) -> tuple[int, int]:
    """(first, length) of the cyclic positions a move reads or writes (mh_move_span)."""
    if seg == 0:
        inner = b - a
        return (a, inner + 2) if inner <= n - inner else (b, n - inner + 2)
    after = (b - (a + seg - 1)) % n
    before = n - seg - after
    return ((a - 1) % n, seg + after + 2) if after <= before else (b, before + seg + 2)


def reverse(t: np.ndarray, a: int, m: int) -> None:
    idx = (a + np.arange(m)) % len(t)
    t[idx] = t[idx[::-1]]


def apply_move(t: np.ndarray, a: int, seg: int, b: int, rev: int) -> None:
    """mh_apply_move: the move as reversals of cyclic position ranges."""
    n = len(t)
    if seg == 0:
        inner = b - a
        if inner <= n - inner:
            reverse(t, a + 1, inner)
        else:
            reverse(t, (b + 1) % n, n - inner)
        return
    after = (b - (a + seg - 1)) % n
    before = n - seg - after
    if after <= before:
        steps = [(a, seg)] * int(rev == 0) + [((a + seg) % n, after), (a, seg + after)]
    else:
        steps = [((b + 1) % n, before)] + [(a, seg)] * int(rev == 0) + [((b + 1) % n, before + seg)]
    for start, m in steps:
        reverse(t, start, m)


def reference_pass(tsp, tour: np.ndarray, neigh: np.ndarray, move_at: np.ndarray, delta_at: np.ndarray):
    """Checks the moves of each position against the numpy references, picks the moves of one
    several-move pass by its rule (the best, then by position every one whose range meets no
    range taken) and applies them: (tour, chosen positions)."""
    n = len(tour)
    two, oro = R.two_opt_cand(tsp.dist, tour, neigh), R.or_opt_cand(tsp.dist, tour, neigh)
    for i in range(n):
        assert delta_at[i] == min(0, int(two[i].min()), int(oro[i].min()))
        if delta_at[i] < 0:  # the move's delta is the change of length it makes
            t = tour.copy()
            apply_move(t, *move_at[i])
            assert tsp.tour_length(t) - tsp.tour_length(tour) == delta_at[i]
    improving = np.flatnonzero(delta_at < 0)
    if improving.size == 0:
        return tour, []
    best = int(improving[np.argmin(delta_at[improving])])
    taken = np.zeros(n, dtype=bool)
    chosen = []
    for i in [best, *[int(i) for i in improving if i != best]]:
        first, length = move_span(n, *move_at[i][:3])
        cells = (first + np.arange(min(length, n))) % n
        if i != best and taken[cells].any():
            continue
        taken[cells] = True
        chosen.append(i)
    out = tour.copy()
    for i in chosen:
        apply_move(out, *move_at[i])
    return out, chosen[1:]


@pytest.mark.parametrize("n", [9, 40, 150])
def test_every_several_move_pass_makes_the_moves_of_the_reference(n):
    tsp = uniform_tsp(n, seed=n)
    k = min(8, n - 1)
    neigh = neighbours(tsp, k)
    search = TSPDescentBatch(tsp, k=k, full=False)
    assert search.several
    tours = random_tours(n, 2, 3)
    several = False
    for _ in range(3 * n):
        out = search.run(tours, max_passes=1)
        buf = search._buffers
        for s in range(len(tours)):
            expected, chosen = reference_pass(tsp, tours[s], neigh, buf.move_at[s], buf.delta_at[s])
            assert np.array_equal(out.best[s], expected)
            assert buf.chosen[s][: len(chosen)].tolist() == chosen
            assert out.iterations[s] == (len(chosen) + 1 if (buf.delta_at[s] < 0).any() else 0)
            assert tsp.tour_length(out.best[s]) == out.best_costs[s]
            several |= len(chosen) > 0
        if (out.iterations == 0).all():
            break
        tours = out.best
    assert several or n < 20  # some pass made more than one move (9 cities leave no room for two)
    assert all(best_delta(tsp, t, neigh) == 0 for t in tours)


def test_the_device_helpers_give_lengths_and_keep_the_better_tours():
    tsp = uniform_tsp(60, seed=2)
    search = TSPDescentBatch(tsp, k=6)
    best, cand = random_tours(60, 4, 1).astype(np.int32), random_tours(60, 4, 2).astype(np.int32)
    best_len, cand_len = search.lengths(best), search.lengths(cand)
    assert best_len.tolist() == [tsp.tour_length(t) for t in best]
    cand_len[0] = best_len[0]  # a tie: the candidate is taken
    keep = cand_len <= best_len
    expected = np.where(keep[:, None], cand, best)
    search.keep_better(best, best_len, cand, cand_len)
    assert np.array_equal(best, expected) and best_len.tolist() == np.minimum(best_len, cand_len).tolist()


@pytest.mark.parametrize("several", [True, False])
def test_gpu_launch_shapes_give_the_same_tours(several):
    tsp = uniform_tsp(150, seed=3)
    start = random_tours(150, 3, 4)
    one = TSPDescentBatch(tsp, k=8, full=False, several=several).run(start)
    sim = TSPDescentBatch(tsp, k=8, full=False, block=32, several=several)
    sim.module = load_module("tsp/tsp_moves.cu", "cpu", sim.data.defines, sim=True)
    shaped = sim.run(start)
    assert (shaped.best == one.best).all() and (shaped.best_costs == one.best_costs).all()
    assert (shaped.iterations == one.iterations).all()


def test_several_moves_a_pass_need_fewer_passes_from_curve_tours():
    """The several-move passes reach a local optimum in fewer passes than one move a pass, and
    from Hilbert-curve tours in fewer than from random tours."""
    tsp = uniform_tsp(600, seed=5)
    rng = np.random.default_rng(3)
    curve, rand = curve_tours(tsp.coords, 2, rng), random_tours(600, 2, 3)
    passes = {(s, name): TSPDescentBatch(tsp, k=8, several=s).run(t).extra["passes"]
              for s in (True, False) for name, t in (("curve", curve), ("random", rand))}
    assert passes[True, "curve"] < passes[True, "random"] < passes[False, "random"]
    assert passes[True, "curve"] < passes[False, "curve"] < passes[False, "random"]


def test_pass_and_time_limits():
    tsp = uniform_tsp(400, seed=2)
    search = TSPDescentBatch(tsp, k=6)
    out = search.run(random_tours(400, 2, 1), max_passes=5)
    assert out.stop_reason == "passes" and out.extra["passes"] == 5 and out.iterations.max() >= 5
    out = search.run(random_tours(400, 2, 1), time_limit=1e-9)
    assert out.stop_reason == "time" and out.extra["passes"] == 1  # a limit is first checked after one pass
    out = search.run(random_tours(400, 2, 1), time_limit=60)
    assert out.stop_reason == "local optimum" and out.extra["passes"] > 8


def test_tiny_instances_are_refused():
    with pytest.raises(MetaheurError, match="at least 5 cities"):
        TSPDescentBatch(uniform_tsp(4, seed=1))
