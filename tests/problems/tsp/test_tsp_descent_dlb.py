"""The don't-look-bit pass of the TSP descent (``TSPDescentBatch(several_kernel="dlb")``:
``tsp_dlb_best_at``, ``tsp_dlb_apply`` of kernels/tsp/tsp_moves.cu; issue 62) bit for bit against
a numpy model of its rule (the best candidate move of each listed position, the greedy in order of
(delta, position) over disjoint ranges, the ends of the applied moves' edges and the two cities
before each as the next list, a
pass over every position after a list that gave no move), on the CPU build and in the fiber
simulation in several thread orders; against the ``classic`` pass only for what must hold: every
move improves, both end at a local optimum of the candidate neighbourhood, of the same quality."""

from __future__ import annotations

import numpy as np
import pytest
import tsp_reference as R
from test_tsp_descent import apply_move, best_delta, move_span, random_tours

from metaheur.engine import load_module
from metaheur.errors import MetaheurError
from metaheur.problems import clustered_tsp, uniform_tsp
from metaheur.problems.tsp.descent import TSPDescentBatch
from metaheur.problems.tsp.device_data import neighbours

ALL, DONE = -1, -2  # the work list's count for "every position" and "local optimum" (MH_DLB_*)


def best_move_at(tsp, tour: np.ndarray, neigh: np.ndarray, i: int) -> tuple[int, list[int]]:
    """(delta, move) of mh_best_move_at from the numpy references: the smallest delta below 0 of
    position i's candidate moves, ties to the 2-opt moves, then the smallest q and variant; the
    move in the form of mh_apply_move ((0, [-1] * 4) when none improves)."""
    n, k = len(tour), neigh.shape[1]
    deltas = np.concatenate([R.two_opt_cand(tsp.dist, tour, neigh)[i].ravel(),
                             R.or_opt_cand(tsp.dist, tour, neigh)[i].ravel()])
    idx = int(np.argmin(deltas))
    if deltas[idx] >= 0:
        return 0, [-1, -1, -1, -1]
    pos = np.argsort(tour)
    if idx < 2 * k:
        q, v = divmod(idx, 2)
        j = int(pos[neigh[tour[i], q]])
        x, y = (i, j) if v == 0 else ((i - 1) % n, (j - 1) % n)
        return int(deltas[idx]), [min(x, y), 0, max(x, y), 0]
    rest, v = divmod(idx - 2 * k, 4)
    seg, q = rest // k + 1, rest % k
    end_city = tour[i] if v < 2 else tour[(i + seg - 1) % n]
    pc = int(pos[neigh[end_city, q]])
    return int(deltas[idx]), [i, seg, pc if v in (0, 3) else (pc - 1) % n, int(v in (1, 3))]


def move_ends(tour: np.ndarray, move: list[int]) -> set[int]:
    """mh_move_ends: the cities at the ends of the edges the move removes (and adds)."""
    n, (a, seg, b, _) = len(tour), move
    at = [a, a + 1, b, b + 1] if seg == 0 else [a - 1, a, a + seg - 1, a + seg, b, b + 1]
    return {int(tour[p % n]) for p in at}


def model_pass(tsp, neigh, tour: np.ndarray, listed: set[int] | None):
    """One pass of the rule: (tour after it, the next list: a set of cities, None for every
    position or DONE, the deltas of the moves made)."""
    n = len(tour)
    pos = np.argsort(tour)
    anchors = range(n) if listed is None else sorted(int(pos[c]) for c in listed)
    moves = {i: best_move_at(tsp, tour, neigh, i) for i in anchors}
    taken = np.zeros(n, dtype=bool)
    winners = []
    for _, i in sorted((d, i) for i, (d, _) in moves.items() if d < 0):  # by (delta, position)
        first, length = move_span(n, *moves[i][1][:3])
        cells = (first + np.arange(min(length, n))) % n
        if not taken[cells].any():
            taken[cells] = True
            winners.append(i)
    out, ends = tour.copy(), set()
    for i in winners:  # disjoint ranges: any order
        ends |= move_ends(tour, moves[i][1])
        apply_move(out, *moves[i][1])
    if not winners:
        return out, DONE if listed is None else None, [], moves
    new_pos = np.argsort(out)  # the two cities before each end, in the new tour
    ends |= {int(out[(new_pos[c] - back) % n]) for c in ends for back in (1, 2)}
    return out, ends, [moves[i][0] for i in winners], moves


def listed_cities(buf, s: int):
    count = int(buf.count[s])
    return {ALL: None, DONE: DONE}.get(count, set(buf.list[s][:count].tolist()) if count >= 0 else None)


@pytest.mark.parametrize("n", [9, 40, 150])
def test_every_dlb_pass_makes_the_moves_of_the_model(n):
    tsp = uniform_tsp(n, seed=n + 1)
    k = min(8, n - 1)
    neigh = neighbours(tsp, k)
    search = TSPDescentBatch(tsp, k=k, full=False, several_kernel="dlb")
    tours = random_tours(n, 3, 5).astype(np.int32)
    cost = np.array([tsp.tour_length(t) for t in tours], dtype=np.int64)
    listed = [None] * len(tours)
    looked, passes, several = 0, 0, False
    search.descend(tours.copy(), cost.copy(), max_passes=0)  # allocates and starts the lists: every position
    buf = search._buffers
    while any(lst is not DONE for lst in listed):
        before = tours.copy()
        moves_before = buf.moves.copy()
        search._pass(tours, cost, buf)
        passes += 1
        for s in range(len(tours)):
            if listed[s] is DONE:
                assert np.array_equal(tours[s], before[s]) and buf.best[s] == 0
                continue
            expected, nxt, deltas, moves = model_pass(tsp, neigh, before[s], listed[s])
            looked += len(moves)
            for i, (delta, move) in moves.items():  # every listed position's move, bit for bit
                assert buf.delta_at[s][i] == delta and buf.move_at[s][i].tolist() == move, (s, i)
            assert np.array_equal(tours[s], expected)
            assert cost[s] == tsp.tour_length(tours[s]) == tsp.tour_length(before[s]) + sum(deltas)
            assert all(d < 0 for d in deltas) and buf.moves[s] - moves_before[s] == len(deltas)
            assert listed_cities(buf, s) == nxt
            assert buf.best[s] == (0 if nxt is DONE else -1)
            several |= len(deltas) > 1
            listed[s] = nxt
        assert passes < 6 * n
    assert all(best_delta(tsp, t, neigh) == 0 for t in tours)
    assert several or n < 20  # some pass made more than one move (9 cities leave no room for two)
    if n >= 100:  # the lists: far fewer positions looked at than a pass over all of them each time
        assert looked < 0.5 * passes * n * len(tours)


@pytest.mark.parametrize("instance", [uniform_tsp(300, seed=7), clustered_tsp(250, seed=8)])
def test_dlb_and_classic_end_at_local_optima_of_the_same_quality(instance):
    neigh = neighbours(instance, 8)
    start = random_tours(instance.n, 6, 9)
    out = {kernel: TSPDescentBatch(instance, k=8, several_kernel=kernel).run(start) for kernel in ("classic", "dlb")}
    for kernel, res in out.items():
        assert res.stop_reason == "local optimum", kernel
        for s in range(len(start)):
            assert res.best_costs[s] == instance.tour_length(res.best[s]), kernel
            assert best_delta(instance, res.best[s], neigh) == 0, kernel
    assert not np.array_equal(out["dlb"].best, out["classic"].best)  # other moves, not the same rule
    mean = {kernel: res.best_costs.mean() for kernel, res in out.items()}
    assert abs(mean["dlb"] - mean["classic"]) < 0.03 * mean["classic"]


def test_dlb_reproduces_and_gpu_launch_shapes_give_the_same_tours():
    tsp = uniform_tsp(150, seed=3)
    start = random_tours(150, 3, 4)
    one = TSPDescentBatch(tsp, k=8, full=False, several_kernel="dlb").run(start)
    again = TSPDescentBatch(tsp, k=8, full=False, several_kernel="dlb").run(start)
    assert np.array_equal(one.best, again.best) and np.array_equal(one.iterations, again.iterations)
    sim = TSPDescentBatch(tsp, k=8, full=False, block=32, several_kernel="dlb")
    sim.module = load_module("tsp/tsp_moves.cu", "cpu", sim.data.defines, sim=True)
    shaped = sim.run(start)
    assert (shaped.best == one.best).all() and (shaped.best_costs == one.best_costs).all()
    assert (shaped.iterations == one.iterations).all() and shaped.extra == one.extra


def test_a_cut_descent_starts_the_next_one_afresh():
    """A descent stopped after a few passes leaves cities listed; the next one from the same
    tours does what a new searcher does."""
    tsp = uniform_tsp(120, seed=6)
    start = random_tours(120, 2, 8)
    search = TSPDescentBatch(tsp, k=6, several_kernel="dlb")
    assert search.run(start, max_passes=3).stop_reason == "passes"
    again, fresh = search.run(start), TSPDescentBatch(tsp, k=6, several_kernel="dlb").run(start)
    assert np.array_equal(again.best, fresh.best) and again.extra == fresh.extra


def test_unknown_several_kernel_is_refused():
    with pytest.raises(MetaheurError, match="several_kernel must be one of classic, dlb"):
        TSPDescentBatch(uniform_tsp(20, seed=1), several_kernel="fast")
