"""TSP move kernels (kernels/tsp/tsp_moves.cu) for every weight type against the numpy reference
(tests/problems/tsp/tsp_reference.py), the reference against literally applied moves, and the neighbour
lists (kernels/tsp/tsp_knn.cu through metaheur.problems.tsp.device_data.neighbours) against brute force."""

from __future__ import annotations

import numpy as np
import pytest
import tsp_reference as R
from kernel_helpers import SIM_BLOCKS, TSP_WEIGHTS, explicit_tsp, make_tsp, random_perms

from metaheur.engine import load_module
from metaheur.errors import MetaheurError
from metaheur.problems import TSP, clustered_tsp, uniform_tsp
from metaheur.problems.tsp.device_data import neighbours, tsp_data
from metaheur.problems.tsp.kernels import WEIGHT_CODES

SIZES = [5, 6, 7, 33, 65]
INVALID = R.INVALID
KERNELS = ["tsp_2opt_full", "tsp_oropt_full", "tsp_2opt_cand", "tsp_oropt_cand"]


def shape_of(kernel: str, n: int, k: int) -> tuple:
    return {"tsp_2opt_full": (n, n), "tsp_oropt_full": (n, 3, n, 2), "tsp_2opt_cand": (n, k, 2),
            "tsp_oropt_cand": (n, 3, k, 4)}[kernel]


def reference(kernel: str, tsp: TSP, tour: np.ndarray, neigh: np.ndarray) -> np.ndarray:
    if kernel == "tsp_2opt_full":
        return R.two_opt_full(tsp.dist, tour)
    if kernel == "tsp_oropt_full":
        return R.or_opt_full(tsp.dist, tour)
    if kernel == "tsp_2opt_cand":
        return R.two_opt_cand(tsp.dist, tour, neigh)
    return R.or_opt_cand(tsp.dist, tour, neigh)


def positions(tours: np.ndarray) -> np.ndarray:
    pos = np.empty_like(tours)
    for sol, t in enumerate(tours):
        pos[sol, t] = np.arange(tours.shape[1])
    return pos


def run(module, kernel, data, tours, neigh, *, write_all=1, block=1, threads=None):
    """``(all_out, move_out, delta_out)`` of one launch over every tour."""
    s, n = tours.shape
    k = neigh.shape[1]
    all_out = np.full((s, *shape_of(kernel, n, k)) if write_all else 1, -3, np.int64)
    move = np.full((s, 4), -9, np.int32)
    delta = np.full(s, -9, np.int64)
    if kernel.endswith("_full"):
        args = (data.xy, data.mat, tours, n, write_all, all_out, move, delta)
    else:
        args = (data.xy, data.mat, tours, positions(tours), neigh, n, k, write_all, all_out, move, delta)
    module.kernel(kernel)(s, block, args, threads=threads)
    return all_out, move, delta


def decode(kernel: str, tour: np.ndarray, neigh: np.ndarray, flat: int) -> tuple:
    """The move a flat move index stands for, derived independently of the kernels: (i, j) for
    2-opt, (i, L, j, rev) for Or-opt."""
    n, k = len(tour), neigh.shape[1]
    pos = np.empty(n, np.int64)
    pos[tour] = np.arange(n)
    if kernel == "tsp_2opt_full":
        return divmod(flat, n)
    if kernel == "tsp_oropt_full":
        i, seg, j, rev = np.unravel_index(flat, (n, 3, n, 2))
        return int(i), int(seg) + 1, int(j), int(rev)
    if kernel == "tsp_2opt_cand":
        i, q, v = np.unravel_index(flat, (n, k, 2))
        j = pos[neigh[tour[i], q]]
        x, y = (i, j) if v == 0 else ((i - 1) % n, (j - 1) % n)  # new edges a-c and succ/pred(a)-succ/pred(c)
        return int(min(x, y)), int(max(x, y))
    i, seg, q, v = np.unravel_index(flat, (n, 3, k, 4))
    seg = int(seg) + 1
    end = tour[i] if v < 2 else tour[(i + seg - 1) % n]
    pc = int(pos[neigh[end, q]])
    j = pc if v in (0, 3) else (pc - 1) % n
    return int(i), seg, int(j), int(v in (1, 3))


def apply(kernel: str, tour: np.ndarray, move: tuple) -> np.ndarray:
    return R.apply_2opt(tour, *move) if kernel.startswith("tsp_2opt") else R.apply_oropt(tour, *move)


def literal_delta(tsp: TSP, kernel: str, tour: np.ndarray, move: tuple) -> int:
    after = apply(kernel, tour, move)
    assert np.array_equal(np.sort(after), np.arange(len(tour))), "the move must give a tour"
    return tsp.tour_length(after) - tsp.tour_length(tour)


def neighbour_lists(tsp: TSP, n: int) -> np.ndarray:
    return neighbours(tsp, min(6, n - 1))


@pytest.fixture(scope="module")
def moves_modules():
    return {code: (load_module("tsp/tsp_moves.cu", "cpu", {"MH_TSP_WEIGHT": code}),
                   load_module("tsp/tsp_moves.cu", "cpu", {"MH_TSP_WEIGHT": code}, sim=True))
            for code in set(WEIGHT_CODES.values())}


# ----------------------------------------------------------------------------------- the reference


@pytest.mark.parametrize("n", [5, 6, 7, 9])
@pytest.mark.parametrize("weight", ["EUC_2D", "GEO", "EXPLICIT"])
@pytest.mark.parametrize("kernel", KERNELS)
def test_reference_equals_literal_moves(tmp_path, kernel, weight, n):
    """Every valid move of the reference, applied literally, changes the length by its delta; the
    invalid ones are exactly the moves that are no-ops or not moves at all."""
    tsp, _ = make_tsp(weight, n, seed=n, tmp_path=tmp_path)
    neigh = neighbour_lists(tsp, n)
    for tour in random_perms(np.random.default_rng(n), 3, n):
        ref = reference(kernel, tsp, tour, neigh)
        valid = np.flatnonzero(ref.ravel() != INVALID)
        assert valid.size > 0 or (kernel == "tsp_oropt_full" and n < 4)
        for flat in valid:
            move = decode(kernel, tour, neigh, int(flat))
            assert literal_delta(tsp, kernel, tour, move) == ref.ravel()[flat], (move, kernel)
        if kernel == "tsp_2opt_full":  # the n(n-3)/2 moves, and nothing else
            assert valid.size == n * (n - 3) // 2


# -------------------------------------------------------------------------- kernels vs reference


@pytest.mark.parametrize(("weight", "n"), [(w, n) for w in TSP_WEIGHTS for n in SIZES if w != "TWIN" or n % 2 == 0]
                         + [("TWIN", 34), ("TWIN", 66)])
def test_kernels_equal_reference(moves_modules, tmp_path, weight, n):
    tsp, data = make_tsp(weight, n, seed=n + 7, tmp_path=tmp_path)
    fast = moves_modules[data.weight_code][0]
    neigh = neighbour_lists(tsp, n)
    rng = np.random.default_rng(n)
    tours = random_perms(rng, 3, n)
    for kernel in KERNELS:
        all_out, move, delta = run(fast, kernel, data, tours, neigh, threads=2)
        for sol, tour in enumerate(tours):
            ref = reference(kernel, tsp, tour, neigh)
            np.testing.assert_array_equal(all_out[sol], ref, err_msg=f"{kernel} {weight} n={n}")
            # the best move: smallest delta, ties to the smallest move index; applied literally
            # it changes the tour length by exactly the returned delta
            flat = int(np.argmin(ref.ravel()))
            expected = decode(kernel, tour, neigh, flat)
            got = tuple(int(x) for x in move[sol][: len(expected)])
            assert got == expected, (kernel, weight, n, sol)
            assert delta[sol] == ref.ravel()[flat]
            assert literal_delta(tsp, kernel, tour, got) == delta[sol]
            if kernel.startswith("tsp_2opt"):
                assert tuple(move[sol][2:]) == (0, 0)
        # write_all = 0: the same best moves, and all_out is not touched
        placeholder, move0, delta0 = run(fast, kernel, data, tours, neigh, write_all=0)
        assert np.array_equal(move0, move) and np.array_equal(delta0, delta)
        assert placeholder.tolist() == [-3]


@pytest.mark.parametrize("n", [33, 65])
@pytest.mark.parametrize("weight", ["EUC_2D", "ATT", "GEO", "EXPLICIT"])
def test_sampled_kernel_deltas_are_literal(moves_modules, tmp_path, weight, n):
    """At larger n, a sample of the kernels' deltas against literally applied moves."""
    tsp, data = make_tsp(weight, n, seed=3 * n, tmp_path=tmp_path)
    fast = moves_modules[data.weight_code][0]
    neigh = neighbour_lists(tsp, n)
    rng = np.random.default_rng(n)
    tours = random_perms(rng, 1, n)
    for kernel in KERNELS:
        all_out, _, _ = run(fast, kernel, data, tours, neigh)
        flat_all = all_out[0].ravel()
        valid = np.flatnonzero(flat_all != INVALID)
        for flat in rng.choice(valid, size=min(25, valid.size), replace=False):
            move = decode(kernel, tours[0], neigh, int(flat))
            assert literal_delta(tsp, kernel, tours[0], move) == flat_all[flat], (kernel, move)


def test_no_valid_move(moves_modules):
    n = 3
    tsp = TSP("tiny", "EUC_2D", coords=np.array([[0.0, 0.0], [3.0, 0.0], [0.0, 4.0]]))
    data = tsp_data(tsp, "cpu")
    fast = moves_modules[1][0]
    tours = random_perms(np.random.default_rng(0), 2, n)
    neigh = neighbours(tsp, n - 1)
    for kernel in KERNELS:
        all_out, move, delta = run(fast, kernel, data, tours, neigh)
        assert (all_out == INVALID).all(), kernel
        assert (move == -1).all() and (delta == 0).all(), kernel


def test_tsp_positions(moves_modules):
    fast, sim = moves_modules[1]
    tours = random_perms(np.random.default_rng(5), 4, 77)
    for module, block in ((fast, 1), (sim, (32,)), (sim, (7, 3))):
        pos = np.full_like(tours, -1)
        module.kernel("tsp_positions")(4, block, (tours, pos, 77))
        assert np.array_equal(pos, positions(tours))
        assert np.array_equal(np.take_along_axis(tours, pos, axis=1), np.tile(np.arange(77), (4, 1)))


# --------------------------------------------------------------------------- sim mode vs fast mode


@pytest.mark.parametrize(("weight", "n"), [("EUC_2D", 33), ("MATRIX", 33), ("GEO", 7), ("CEIL_2D", 6), ("TWIN", 12)])
def test_sim_mode_equals_fast_mode(moves_modules, tmp_path, weight, n):
    tsp, data = make_tsp(weight, n, seed=11, tmp_path=tmp_path)
    fast, sim = moves_modules[data.weight_code]
    neigh = neighbour_lists(tsp, n)
    tours = random_perms(np.random.default_rng(11), 2, n)
    for kernel in KERNELS:
        expected = run(fast, kernel, data, tours, neigh)
        for block in SIM_BLOCKS:
            got = run(sim, kernel, data, tours, neigh, block=block)
            for a, b in zip(expected, got, strict=True):
                np.testing.assert_array_equal(a, b, err_msg=f"{kernel} {block}")
            got0 = run(sim, kernel, data, tours, neigh, write_all=0, block=block)
            np.testing.assert_array_equal(got0[1], expected[1])
            np.testing.assert_array_equal(got0[2], expected[2])


# ------------------------------------------------------------------------------------- distances


def test_half_integer_distances_round_as_tsplib():
    """Distances of exactly x.5 round up (nint = floor(x + 0.5)), in the kernels and in numpy."""
    # (0,0)-(1.5,2) = 2.5; (0,0)-(0.5,0) = 0.5; (0,0)-(3.5,0) = 3.5; (0,0)-(2.5,6) = 6.5
    xy = np.array([[0.0, 0.0], [1.5, 2.0], [0.5, 0.0], [3.5, 0.0], [2.5, 6.0], [-0.5, -0.5]])
    expected = {
        "EUC_2D": [3, 1, 4, 7, 1], "CEIL_2D": [3, 1, 4, 7, 1], "MAN_2D": [4, 1, 4, 9, 1], "MAX_2D": [2, 1, 4, 6, 1],
    }
    for weight, want in expected.items():
        tsp = TSP("half", weight, coords=xy)
        assert tsp.dist(0, np.arange(1, 6)).tolist() == want, weight
        data = tsp_data(tsp, "cpu")
        module = load_module("tsp/tsp_moves.cu", "cpu", data.defines)
        tour = np.arange(6, dtype=np.int32)[None]
        out, _, _ = run(module, "tsp_2opt_full", data, tour, np.zeros((6, 1), np.int32))
        np.testing.assert_array_equal(out[0], R.two_opt_full(tsp.dist, tour[0]), err_msg=weight)
    att = TSP("att", "ATT", coords=np.array([[0.0, 0.0], [10.0, 0.0], [0.0, 0.0], [3.0, 4.0]]))
    assert att.dist(0, [1, 3]).tolist() == [4, 2]  # sqrt(100/10) = 3.16 -> 3 < 3.16 -> 4; sqrt(2.5) = 1.58 -> 2


def test_distances_beyond_int32_are_refused_or_exact():
    """Coordinates the problem layer accepts (|x| <= COORD_LIMIT) but whose MAN_2D distances exceed
    the kernels' int range (2 * 1.4e9 > 2^31): the instance must be refused (by TSP or tsp_data) or
    the kernels must be exact."""
    lim = 7.0e8
    xy = np.array([[-lim, -lim], [lim, lim], [lim, -lim], [-lim, lim], [0.0, 0.0]])
    try:
        tsp = TSP("huge", "MAN_2D", coords=xy)
        data = tsp_data(tsp, "cpu")
    except MetaheurError:
        return
    assert tsp.dist(0, 1) == 2_800_000_000
    module = load_module("tsp/tsp_moves.cu", "cpu", data.defines)
    tour = np.arange(5, dtype=np.int32)[None]
    out, _, _ = run(module, "tsp_2opt_full", data, tour, np.zeros((5, 1), np.int32))
    np.testing.assert_array_equal(out[0], R.two_opt_full(tsp.dist, tour[0]))


def test_coordinates_at_the_limit_are_exact():
    """EUC_2D, CEIL_2D, ATT and MAX_2D distances stay below 2^31 within the coordinate limit."""
    lim = 7.0e8
    xy = np.array([[-lim, -lim], [lim, lim], [lim, -lim], [-lim, lim], [0.5, 0.0], [-lim, 3.0]])
    for weight in ("EUC_2D", "CEIL_2D", "ATT", "MAX_2D"):
        tsp = TSP("far", weight, coords=xy)
        data = tsp_data(tsp, "cpu")
        module = load_module("tsp/tsp_moves.cu", "cpu", data.defines)
        tour = np.arange(6, dtype=np.int32)[None]
        out, _, _ = run(module, "tsp_2opt_full", data, tour, np.zeros((6, 1), np.int32))
        np.testing.assert_array_equal(out[0], R.two_opt_full(tsp.dist, tour[0]), err_msg=weight)


# --------------------------------------------------------------------------------- neighbour lists


def brute_force_neighbours(tsp: TSP, k: int) -> np.ndarray:
    """The k Euclidean-nearest cities (squared distance, ties to the smaller index), then ordered by
    exact TSPLIB distance, ties by index; EXPLICIT: by matrix distance, ties by index."""
    n = tsp.n
    idx = np.broadcast_to(np.arange(n), (n, n))
    if tsp.weight_type == "EXPLICIT":
        d = tsp.matrix.astype(np.float64).copy()
        np.fill_diagonal(d, np.inf)
        return np.lexsort((idx, d), axis=1)[:, :k].astype(np.int32)
    diff = tsp.coords[:, None, :] - tsp.coords[None, :, :]
    d2 = (diff**2).sum(-1)
    np.fill_diagonal(d2, np.inf)
    near = np.lexsort((idx, d2), axis=1)[:, :k]
    exact = tsp.dist(np.arange(n)[:, None], near)
    order = np.lexsort((near, exact), axis=1)
    return np.take_along_axis(near, order, axis=1).astype(np.int32)


def grid_ties_tsp(n: int, seed: int) -> TSP:
    """Cities on a small integer grid: many duplicates and equal distances."""
    coords = np.random.default_rng(seed).integers(0, 12, size=(n, 2)).astype(np.float64)
    return TSP("ties", "EUC_2D", coords=coords)


@pytest.mark.parametrize(("tsp", "k"), [
    (uniform_tsp(600, 3), 10),
    (clustered_tsp(700, 4), 10),
    (clustered_tsp(300, 5), 32),
    (grid_ties_tsp(400, 6), 8),
    (TSP("line", "CEIL_2D", coords=np.stack([np.arange(50.0) * 1.5, np.zeros(50)], axis=1)), 5),
    (TSP("att", "ATT", coords=np.random.default_rng(1).integers(0, 9000, size=(300, 2)).astype(float)), 7),
    (TSP("man", "MAN_2D", coords=np.random.default_rng(2).integers(0, 500, size=(300, 2)) + 0.5), 6),
    (TSP("five", "EUC_2D", coords=np.array([[0.0, 0], [1, 0], [0, 1], [1, 1], [9, 9]])), 4),
], ids=["uniform", "clustered", "clustered-k32", "grid-ties", "line", "att", "man", "five"])
def test_neighbours_equal_brute_force(tsp, k):
    got = neighbours(tsp, k)
    assert got.dtype == np.int32 and got.shape == (tsp.n, k)
    np.testing.assert_array_equal(got, brute_force_neighbours(tsp, k))


def test_neighbours_of_explicit_and_geo_instances(tmp_path):
    tsp = explicit_tsp(tmp_path, 60, seed=4)
    np.testing.assert_array_equal(neighbours(tsp, 9), brute_force_neighbours(tsp, 9))
    geo, _ = make_tsp("GEO", 40, seed=2, tmp_path=tmp_path)
    d = geo.distance_matrix().astype(np.float64)
    np.fill_diagonal(d, np.inf)
    expected = np.lexsort((np.broadcast_to(np.arange(40), (40, 40)), d), axis=1)[:, :5]
    np.testing.assert_array_equal(neighbours(geo, 5), expected)


def test_neighbours_k_is_capped_at_n_minus_1():
    tsp = uniform_tsp(6, 1)
    got = neighbours(tsp, 10)
    assert got.shape == (6, 5)
    assert all(set(row) == set(range(6)) - {c} for c, row in enumerate(got))


def test_knn_kernel_gives_the_same_lists_for_any_block_shape():
    """tsp_knn_grid is one thread per city: the simulation with GPU-like blocks (whose last block
    is partly idle) equals the one-city-per-block launch that the CPU build uses."""
    from metaheur.problems.tsp.device_data import _grid

    tsp = clustered_tsp(300, 9)
    n, k = tsp.n, 8
    cell_of, cell_start, cell_items, gx, gy, side = _grid(tsp.coords)
    args = (tsp.coords, cell_of, cell_start, cell_items, gx, gy, side, n, k)
    fast = np.full((n, k), -5, np.int32)
    load_module("tsp/tsp_knn.cu", "cpu").kernel("tsp_knn_grid")(n, 1, (*args, fast))
    sim = load_module("tsp/tsp_knn.cu", "cpu", sim=True)
    for block in [(128,), (32, 4), (7,)]:
        threads = int(np.prod(block))
        out = np.full((n, k), -5, np.int32)
        sim.kernel("tsp_knn_grid")((n + threads - 1) // threads, block, (*args, out))
        np.testing.assert_array_equal(out, fast, err_msg=str(block))
    # the kernel's Euclidean order (before neighbours() re-ranks by TSPLIB distance)
    d2 = ((tsp.coords[:, None, :] - tsp.coords[None, :, :]) ** 2).sum(-1)
    np.fill_diagonal(d2, np.inf)
    np.testing.assert_array_equal(fast, np.lexsort((np.broadcast_to(np.arange(n), (n, n)), d2), axis=1)[:, :k])


def brute_force_quadrant(tsp: TSP, k: int, q: int) -> np.ndarray:
    """Helsgaun's quadrant candidates by brute force: the q nearest (squared distance, then index)
    cities of each quadrant around a city (x > 0, y >= 0; x <= 0, y > 0; x < 0, y <= 0; x >= 0,
    y < 0; a duplicate of the city is in none), then the nearest others up to k; ordered by exact
    distance, ties by index."""
    n = tsp.n
    out = np.empty((n, k), np.int64)
    for c in range(n):
        others = np.array([o for o in range(n) if o != c])
        dx, dy = tsp.coords[others, 0] - tsp.coords[c, 0], tsp.coords[others, 1] - tsp.coords[c, 1]
        d2 = dx * dx + dy * dy
        quads = [(dx > 0) & (dy >= 0), (dx <= 0) & (dy > 0), (dx < 0) & (dy <= 0), (dx >= 0) & (dy < 0)]
        chosen: list[int] = []
        for mask in quads:
            members = others[mask]
            order = np.lexsort((members, d2[mask]))
            chosen += [int(o) for o in members[order][:q]]
        for o in others[np.lexsort((others, d2))]:
            if len(chosen) == k:
                break
            if int(o) not in chosen:
                chosen.append(int(o))
        near = np.array(chosen)
        exact = tsp.dist(c, near)
        out[c] = near[np.lexsort((near, exact))]
    return out.astype(np.int32)


@pytest.mark.parametrize(("tsp", "k", "q"), [
    (uniform_tsp(300, 7), 10, 2),
    (clustered_tsp(400, 8), 12, 3),
    (grid_ties_tsp(250, 9), 8, 2),
    (clustered_tsp(200, 10), 5, 1),
], ids=["uniform", "clustered", "grid-ties", "clustered-q1"])
def test_quadrant_neighbours_equal_brute_force(tsp, k, q):
    import inspect

    if "quadrant" not in inspect.signature(neighbours).parameters:
        pytest.skip("neighbours() has no quadrant candidates in this version")
    np.testing.assert_array_equal(neighbours(tsp, k, quadrant=q), brute_force_quadrant(tsp, k, q))
