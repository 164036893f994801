"""The asymmetric TSP: the TSPLIB reader (every format, direction, the diagonal), directed tour
lengths and tour files, the generator, array validation, and the Jonker-Volgenant transformation
against exact optima (Held-Karp) and against full enumeration on tiny instances."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from testutil import explicit_tokens

from metaheur.errors import InputFormatError, MetaheurError
from metaheur.problem.arrays import INT32_MAX
from metaheur.problems import ATSP, TSP, asymmetric_tsp, load_instance, read_atsp, read_tour, read_tsplib, write_tour
from metaheur.problems.atsp import assignment_duals, jonker_volgenant, upper_bound

FORMATS = ["FULL_MATRIX", "UPPER_ROW", "LOWER_ROW", "UPPER_DIAG_ROW", "LOWER_DIAG_ROW",
           "UPPER_COL", "LOWER_COL", "UPPER_DIAG_COL", "LOWER_DIAG_COL"]


def atsp_text(m: np.ndarray, fmt: str = "FULL_MATRIX", *, name: str = "x", per_line: int = 7) -> str:
    tokens = [str(t) for t in explicit_tokens(m, fmt)]
    body = [" ".join(tokens[k:k + per_line]) for k in range(0, len(tokens), per_line)]
    head = [f"NAME: {name}", "TYPE: ATSP", "COMMENT: test", f"DIMENSION: {m.shape[0]}",
            "EDGE_WEIGHT_TYPE: EXPLICIT", f"EDGE_WEIGHT_FORMAT: {fmt}", "EDGE_WEIGHT_SECTION"]
    return "\n".join(head + body + ["EOF"]) + "\n"


def directed_length(m: np.ndarray, tour) -> int:
    return sum(int(m[tour[k], tour[(k + 1) % len(tour)]]) for k in range(len(tour)))


# ------------------------------------------------------------------------------------------ reader


def test_full_matrix_rows_are_the_arcs_out_of_a_city(tmp_path):
    m = np.array([[9999, 1, 20, 300], [4000, 9999, 2, 30], [5, 600, 9999, 3], [4, 70, 800, 9999]])
    path = tmp_path / "a.atsp"
    path.write_text(atsp_text(m, name="four"))
    atsp = read_atsp(path)
    assert atsp.name == "four" and atsp.n == 4 and atsp.kind == "atsp"
    assert np.array_equal(atsp.matrix, m)
    assert int(atsp.dist(0, 1)) == 1 and int(atsp.dist(1, 0)) == 4000
    assert atsp.tour_length([0, 1, 2, 3]) == 1 + 2 + 3 + 4
    assert atsp.tour_length([3, 2, 1, 0]) == 800 + 600 + 4000 + 300  # the other direction
    assert atsp.no_edge == 9999


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_edge_weight_format(tmp_path, fmt):
    """A triangle gives a symmetric ATSP; FULL_MATRIX keeps its asymmetry. Diagonals in the file
    land on the diagonal."""
    rng = np.random.default_rng(FORMATS.index(fmt))
    n = 6
    m = rng.integers(0, 100, size=(n, n))
    if fmt != "FULL_MATRIX":
        m = np.triu(m, 1) + np.triu(m, 1).T
    diag = 500 if ("DIAG" in fmt or fmt == "FULL_MATRIX") else 0
    np.fill_diagonal(m, diag)
    path = tmp_path / f"{fmt}.atsp"
    path.write_text(atsp_text(m, fmt, per_line=5))
    atsp = read_atsp(path)
    assert atsp.weight_format == fmt
    assert np.array_equal(atsp.matrix, m)
    assert atsp.no_edge == (500 if diag else None)
    tour = rng.permutation(n)
    assert atsp.tour_length(tour) == directed_length(m, tour)


def test_arcs_at_or_above_the_diagonal_value_are_forbidden(tmp_path):
    m = np.array([[100, 5, 100, 7], [3, 100, 150, 2], [1, 9, 100, 4], [6, 8, 2, 100]])
    path = tmp_path / "gaps.atsp"
    path.write_text(atsp_text(m))
    atsp = read_atsp(path)
    allowed = atsp.allowed()
    assert not allowed[0, 2] and not allowed[1, 2] and not allowed.diagonal().any()
    assert allowed.sum() == 12 - 2
    assert atsp.tour_length([0, 2, 1, 3]) == 100 + 9 + 2 + 6  # a forbidden arc still has its written cost


def test_zero_diagonal_forbids_nothing(tmp_path):
    m = np.array([[0, 0, 3], [2, 0, 0], [0, 1, 0]])
    path = tmp_path / "zero.atsp"
    path.write_text(atsp_text(m))
    atsp = read_atsp(path)
    assert atsp.no_edge is None and atsp.allowed().sum() == 6


@pytest.mark.parametrize(("old", "new", "message"), [
    (" 15", "", "truncated"),
    ("EXPLICIT", "EUC_2D", "EXPLICIT only"),
    ("TYPE: ATSP", "TYPE: TSP", "not ATSP"),
    ("FULL_MATRIX", "HALF_MATRIX", "unknown EDGE_WEIGHT_FORMAT"),
    ("DIMENSION: 4", "DIMENSION: 2", "at least 3 cities"),
])
def test_reader_errors(tmp_path, old, new, message):
    path = tmp_path / "bad.atsp"
    path.write_text(atsp_text(np.arange(16).reshape(4, 4)).replace(old, new))
    with pytest.raises(InputFormatError, match=message):
        read_atsp(path)


def test_symmetric_reader_points_an_asymmetric_matrix_to_atsp(tmp_path):
    m = np.array([[0, 1, 2], [3, 0, 4], [5, 6, 0]])
    path = tmp_path / "asym.tsp"
    path.write_text(atsp_text(m).replace("TYPE: ATSP", "TYPE: TSP"))
    with pytest.raises(InputFormatError, match="needs TYPE: ATSP"):
        read_tsplib(path)


def test_load_instance_reads_atsp_by_type_or_suffix(tmp_path):
    m = np.array([[0, 1, 2], [3, 0, 4], [5, 6, 0]])
    for name in ("a.atsp", "b.tsp", "c"):
        (tmp_path / name).write_text(atsp_text(m))
        inst = load_instance(tmp_path / name)
        assert isinstance(inst, ATSP) and np.array_equal(inst.matrix, m)


def test_shared_instances_load_by_name(instances_dir):
    ftv33 = load_instance("ftv33")
    assert isinstance(ftv33, ATSP) and ftv33.n == 34 and ftv33.no_edge == 100_000_000
    assert ftv33.allowed().sum() == 34 * 33


# ----------------------------------------------------------------------------------- tours, arrays


def test_tour_files_keep_the_direction(tmp_path):
    atsp = asymmetric_tsp(9, seed=3)
    tour = np.array([4, 0, 8, 2, 6, 1, 7, 3, 5])
    path = tmp_path / "t.tour"
    assert write_tour(path, atsp, tour) == atsp.tour_length(tour)
    back = read_tour(path, atsp)
    assert np.array_equal(back, tour)
    assert atsp.tour_length(back[::-1]) != atsp.tour_length(back)


def test_generator_is_seeded_asymmetric_and_named():
    a, b, c = asymmetric_tsp(30, seed=5), asymmetric_tsp(30, seed=5), asymmetric_tsp(30, seed=6)
    assert np.array_equal(a.matrix, b.matrix) and not np.array_equal(a.matrix, c.matrix)
    assert not np.array_equal(a.matrix, a.matrix.T) and not a.matrix.diagonal().any()
    euclid = np.hypot(*(a.display[:, None, :] - a.display[None, :, :]).transpose(2, 0, 1))
    off = ~np.eye(30, dtype=bool)
    ratio = a.matrix[off] / euclid[off]
    assert ratio.min() > 0.99 and ratio.max() < 1.51
    gen = load_instance("gen:atsp:30:5")
    assert isinstance(gen, ATSP) and gen.name == "gen-atsp-30-s5" and np.array_equal(gen.matrix, a.matrix)
    with pytest.raises(MetaheurError, match="at least 3"):
        asymmetric_tsp(2)


@pytest.mark.parametrize(("matrix", "message"), [
    (np.zeros((3, 4)), "square"),
    (np.zeros((2, 2)), "at least 3"),
    (np.array([[0, 1.5, 2], [1, 0, 1], [1, 1, 0]]), "fractional entries"),
    (np.array([[0, np.nan, 2], [1, 0, 1], [1, 1, 0]]), "NaN or infinite"),
    (np.array([[0, -1, 2], [1, 0, 1], [1, 1, 0]]), "0 .. "),
    (np.array([[0, 2**31, 2], [1, 0, 1], [1, 1, 0]]), "0 .. "),
])
def test_arrays_are_validated(matrix, message):
    with pytest.raises(MetaheurError, match=message):
        ATSP("bad", matrix)


def test_integral_floats_are_accepted():
    atsp = ATSP("f", np.array([[0.0, 1.0, 2.0], [3.0, 0.0, 4.0], [5.0, 6.0, 0.0]]))
    assert atsp.matrix.dtype == np.int64 and atsp.tour_length([0, 1, 2]) == 1 + 4 + 5


# ------------------------------------------------------------------------------- transformation


def held_karp(d: np.ndarray) -> int:
    """Exact optimum of the closed tour over matrix ``d`` (directed; symmetric works the same):
    best[mask, k] = shortest path from city 0 through the cities of ``mask``, ending at k."""
    n = d.shape[0]
    big = np.iinfo(np.int64).max // 4
    best = np.full((1 << n, n), big, dtype=np.int64)
    best[1, 0] = 0
    bits = 1 << np.arange(n)
    for mask in range(1, 1 << n, 2):
        reach = (best[mask][:, None] + d).min(axis=0)  # reach[k]: the path over mask, then one arc to k
        out = (mask & bits) == 0
        targets = mask | bits[out]
        best[targets, np.flatnonzero(out)] = np.minimum(best[targets, np.flatnonzero(out)], reach[out])
    full = (1 << n) - 1
    return int((best[full] + d[:, 0])[1:].min())


def tiny_atsp(n: int, seed: int, *, forbid: bool) -> ATSP:
    """A random ATSP; with ``forbid``, about a third of the arcs are forbidden (value 1000 = the
    diagonal), all but those of one random tour, so a feasible tour exists."""
    rng = np.random.default_rng(seed)
    m = rng.integers(0, 60, size=(n, n))
    if forbid:
        keep = rng.permutation(n)
        mask = rng.random((n, n)) < 0.35
        mask[keep, np.roll(keep, -1)] = False
        m[mask] = 1000
        np.fill_diagonal(m, 1000)
        return ATSP(f"tiny{n}", m, no_edge=1000)
    np.fill_diagonal(m, 0)
    return ATSP(f"tiny{n}", m)


def dense(tsp) -> np.ndarray:
    """The full 2n x 2n matrix of a transformation, read through its on-the-fly distances."""
    idx = np.arange(tsp.n)
    return tsp.dist(idx[:, None], idx[None, :])


def jv_matrix(atsp: ATSP, big_m: int, forbidden: int) -> np.ndarray:
    """The symmetric matrix of Jonker and Volgenant written out from its rules (JVTransform)."""
    n = atsp.n
    d = np.full((2 * n, 2 * n), forbidden, dtype=np.int64)
    for i in range(n):
        for j in range(n):
            if i == j:
                d[i, i + n] = d[i + n, i] = -big_m
            elif atsp.allowed()[i, j]:
                d[i + n, j] = d[j, i + n] = atsp.matrix[i, j] + big_m
    np.fill_diagonal(d, 0)
    return d


@pytest.mark.parametrize(("n", "forbid"), [(3, False), (5, True), (9, True), (12, False)])
def test_transformation_distances_follow_the_rules_without_a_stored_matrix(n, forbid):
    atsp = tiny_atsp(n, n, forbid=forbid)
    jv = jonker_volgenant(atsp)
    assert jv.tsp.block.shape == (n, n) and jv.tsp.matrix is None
    assert np.array_equal(dense(jv.tsp), jv_matrix(atsp, jv.big_m, jv.forbidden))
    rng = np.random.default_rng(n)
    i, j = rng.integers(0, 2 * n, size=(2, 50))
    assert np.array_equal(jv.tsp.dist(i, j), dense(jv.tsp)[i, j])  # broadcast pairs, as the islands ask


def feasible_optimum(atsp: ATSP) -> int:
    return held_karp(np.where(atsp.allowed(), atsp.matrix, 10**12))


@pytest.mark.parametrize("n", [3, 4, 5, 6, 7, 8])
@pytest.mark.parametrize("forbid", [False, True])
def test_transformed_optimum_is_the_directed_optimum(n, forbid):
    """Held-Karp on the 2n-city symmetric instance gives the ATSP's optimum over allowed arcs."""
    atsp = tiny_atsp(n, 10 * n + forbid, forbid=forbid)
    jv = jonker_volgenant(atsp)
    d = dense(jv.tsp)
    assert jv.tsp.n == 2 * n and np.array_equal(d, d.T)
    assert held_karp(d) == feasible_optimum(atsp)


@pytest.mark.parametrize(("n", "seed"), [(3, 1), (3, 2), (4, 3), (4, 4)])
def test_every_optimal_symmetric_tour_maps_to_an_optimal_directed_tour(n, seed):
    """Full enumeration of the symmetric tours: the shortest keep every twin edge and read back as
    optimal directed tours; the length identity holds for every tour that keeps the twins."""
    atsp = tiny_atsp(n, seed, forbid=seed % 2 == 0)
    jv = jonker_volgenant(atsp)
    d = dense(jv.tsp)
    opt = feasible_optimum(atsp)
    lengths = {}
    for rest in itertools.permutations(range(1, 2 * n)):
        tour = (0, *rest)
        lengths[tour] = int(d[tour, np.roll(tour, -1)].sum())
    best = min(lengths.values())
    assert best == opt
    for tour, length in lengths.items():
        if length == best:
            directed = jv.to_directed(tour)
            assert atsp.tour_length(directed) == opt and atsp.allowed()[directed, np.roll(directed, -1)].all()


@pytest.mark.parametrize("seed", range(5))
def test_length_identity_and_round_trip(seed):
    atsp = asymmetric_tsp(40, seed=seed)
    jv = atsp.transformed()
    rng = np.random.default_rng(seed)
    for _ in range(5):
        tour = rng.permutation(40)
        sym = jv.to_symmetric(tour)
        assert jv.tsp.tour_length(sym) == atsp.tour_length(tour)
        assert np.array_equal(jv.to_directed(sym), tour)
        back = jv.to_directed(np.roll(sym[::-1], rng.integers(80)))  # either direction, any rotation
        assert np.array_equal(np.roll(back, -int(np.flatnonzero(back == tour[0])[0])), tour)
    broken = jv.to_symmetric(np.arange(40))
    broken[[1, 2]] = broken[[2, 1]]
    with pytest.raises(MetaheurError, match="twin edge"):
        jv.to_directed(broken)


def test_transformation_constants_and_neighbours():
    atsp = asymmetric_tsp(50, seed=2)
    jv = atsp.transformed()
    ub = upper_bound(atsp)
    assert 2 * jv.big_m > ub and jv.forbidden - jv.big_m > ub and jv.forbidden <= INT32_MAX
    from metaheur.problems.tsp.device_data import neighbours

    near = neighbours(jv.tsp, 8)
    assert np.array_equal(near[:, 0], np.r_[np.arange(50, 100), np.arange(50)])  # the twin comes first


def test_costs_too_large_for_the_transformation_are_refused():
    m = np.full((4, 4), 2**30)
    np.fill_diagonal(m, 0)
    with pytest.raises(MetaheurError, match="too large for the transformation"):
        ATSP("huge", m).transformed()


def test_a_city_without_outgoing_arcs_is_refused():
    m = np.array([[9, 9, 9], [1, 9, 2], [3, 4, 9]])
    with pytest.raises(MetaheurError, match="city 1 has no allowed outgoing arc"):
        ATSP("stuck", m, no_edge=9).transformed()


def test_tsp_and_atsp_are_different_kinds():
    assert not isinstance(asymmetric_tsp(5), TSP)


@pytest.mark.parametrize("n", range(1, 7))
def test_assignment_duals_against_enumeration(n):
    rng = np.random.default_rng(n)
    for _ in range(10):
        cost = rng.integers(0, 40, size=(n, n))
        u, v = assignment_duals(cost)
        best = min(sum(int(cost[i, p[i]]) for i in range(n)) for p in itertools.permutations(range(n)))
        assert (cost - u[:, None] - v[None, :]).min() >= 0 and int(u.sum() + v.sum()) == best


def test_candidates_are_the_twin_and_the_arcs_of_least_reduced_cost():
    atsp = asymmetric_tsp(30, seed=3)
    tsp = atsp.transformed().tsp
    near = tsp.candidates(6)
    u, v = assignment_duals(np.where(np.eye(30, dtype=bool), 10**9, atsp.matrix))
    reduced = atsp.matrix - u[:, None] - v[None, :]
    np.fill_diagonal(reduced, 10**9)
    dist = tsp.dist(np.arange(60)[:, None], near)
    assert np.all(np.diff(dist, axis=1) >= 0)  # sorted by distance, as the kernels expect
    for i in range(30):
        assert near[30 + i, 0] == i and near[i, 0] == 30 + i  # the twin first (distance -M)
        out = set(near[30 + i, 1:].tolist())  # twin 30 + i meets city j over arc i -> j
        assert max(reduced[i, j] for j in out) <= min(reduced[i, j] for j in set(range(30)) - out - {i})
        inc = {c - 30 for c in near[i, 1:].tolist()}  # city i meets twin 30 + j over arc j -> i
        assert max(reduced[j, i] for j in inc) <= min(reduced[j, i] for j in set(range(30)) - inc - {i})
