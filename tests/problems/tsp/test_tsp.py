"""TSP: TSPLIB distance functions against scalar references, every EXPLICIT format, .tour files."""

from __future__ import annotations

import math

import numpy as np
import pytest
from testutil import explicit_tokens

from metaheur.errors import InputFormatError, MetaheurError
from metaheur.problems import uniform_tsp
from metaheur.problems.tsp import TSP, read_tour, read_tsplib, write_tour

# ---------------------------------------------------------- independent scalar references (TSPLIB95)

PI = 3.141592
RRR = 6378.388


def nint(x: float) -> int:
    return math.floor(x + 0.5)


def ref_euc_2d(a, b) -> int:
    return nint(math.sqrt((a[0] - b[0]) ** 2 + (a[1] - b[1]) ** 2))


def ref_ceil_2d(a, b) -> int:
    return math.ceil(math.sqrt((a[0] - b[0]) ** 2 + (a[1] - b[1]) ** 2))


def ref_att(a, b) -> int:
    xd, yd = a[0] - b[0], a[1] - b[1]
    rij = math.sqrt((xd * xd + yd * yd) / 10.0)
    tij = nint(rij)
    return tij + 1 if tij < rij else tij


def ref_man_2d(a, b) -> int:
    return nint(abs(a[0] - b[0]) + abs(a[1] - b[1]))


def ref_max_2d(a, b) -> int:
    return max(nint(abs(a[0] - b[0])), nint(abs(a[1] - b[1])))


def _geo_rad(x: float) -> float:
    deg = int(x)  # truncation toward zero, as TSPLIB's (int) cast
    minutes = x - deg
    return PI * (deg + 5.0 * minutes / 3.0) / 180.0


def ref_geo(a, b) -> int:
    lat_i, lon_i = _geo_rad(a[0]), _geo_rad(a[1])
    lat_j, lon_j = _geo_rad(b[0]), _geo_rad(b[1])
    q1 = math.cos(lon_i - lon_j)
    q2 = math.cos(lat_i - lat_j)
    q3 = math.cos(lat_i + lat_j)
    return int(RRR * math.acos(0.5 * ((1.0 + q1) * q2 - (1.0 - q1) * q3)) + 1.0)


REFERENCE = {
    "EUC_2D": ref_euc_2d, "CEIL_2D": ref_ceil_2d, "ATT": ref_att,
    "GEO": ref_geo, "MAN_2D": ref_man_2d, "MAX_2D": ref_max_2d,
}


def random_coords(rng, n: int, weight_type: str) -> np.ndarray:
    if weight_type == "GEO":  # DDD.MM: whole degrees plus minutes 0..59, both hemispheres
        deg = np.column_stack([rng.integers(-89, 90, n), rng.integers(-179, 180, n)])
        minutes = rng.integers(0, 60, size=(n, 2)) / 100.0
        return np.where(deg < 0, deg - minutes, deg + minutes)
    # integers and one-decimal values (x.5 differences exercise the rounding)
    return np.round(rng.uniform(-500, 500, size=(n, 2)) * 2) / 2


def coord_file_text(name: str, weight_type: str, coords, *, extra_header: str = "") -> str:
    lines = [f"NAME : {name}", "COMMENT : test instance", "TYPE : TSP", f"DIMENSION : {len(coords)}",
             f"EDGE_WEIGHT_TYPE : {weight_type}"]
    if extra_header:
        lines.append(extra_header)
    lines.append("NODE_COORD_SECTION")
    lines += [f"{k + 1} {x!r} {y!r}" for k, (x, y) in enumerate(np.asarray(coords).tolist())]
    lines.append("EOF")
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------------------- distance functions


@pytest.mark.parametrize("weight_type", sorted(REFERENCE))
@pytest.mark.parametrize("seed", range(3))
def test_coordinate_distances_match_reference(tmp_path, weight_type, seed):
    rng = np.random.default_rng(seed)
    n = 25
    coords = random_coords(rng, n, weight_type)
    path = tmp_path / "c.tsp"
    path.write_text(coord_file_text("c", weight_type, coords))
    tsp = read_tsplib(path)
    assert tsp.weight_type == weight_type and tsp.n == n
    assert np.array_equal(tsp.coords, coords)
    ref = REFERENCE[weight_type]
    pts = coords.tolist()
    expected = np.array([[ref(pts[i], pts[j]) if i != j else 0 for j in range(n)] for i in range(n)])
    got = tsp.dist(np.arange(n)[:, None], np.arange(n)[None, :])
    assert got.dtype == np.int64
    off = ~np.eye(n, dtype=bool)
    assert np.array_equal(got[off], expected[off])
    # scalar and broadcast calls agree
    assert int(tsp.dist(3, 7)) == expected[3, 7]
    assert tsp.dist([1, 2], 0).tolist() == [expected[1, 0], expected[2, 0]]
    # a random tour: tour_length is the sum of reference distances around the cycle
    tour = rng.permutation(n)
    length = sum(expected[tour[k], tour[(k + 1) % n]] for k in range(n))
    assert tsp.tour_length(tour) == length
    assert tsp.tour_length(np.roll(tour, 5)) == length
    assert tsp.tour_length(tour[::-1]) == length


@pytest.mark.parametrize(
    "weight_type, a, b, expected",
    [
        # distance exactly k + 0.5 rounds up (TSPLIB nint), never to even
        ("EUC_2D", (0, 0), (2.5, 0), 3),
        ("EUC_2D", (0, 0), (0.5, 0), 1),
        ("EUC_2D", (1, 1), (1, 5.5), 5),
        ("EUC_2D", (0, 0), (1.5, 2), 3),  # sqrt(6.25) = 2.5
        ("EUC_2D", (10, 10), (10, 14.4), 4),
        ("EUC_2D", (0, 0), (3, 4), 5),
        ("MAN_2D", (0, 0), (0.5, 2), 3),
        ("MAN_2D", (0, 0), (-1.25, 1.25), 3),
        ("MAN_2D", (0, 0), (1.2, 1.2), 2),
        ("MAX_2D", (0, 0), (2.5, 1), 3),
        ("MAX_2D", (0, 0), (-4.5, 0.25), 5),
        ("MAX_2D", (0, 0), (0.4, 1.4), 1),
        ("CEIL_2D", (0, 0), (3, 4), 5),
        ("CEIL_2D", (0, 0), (2.5, 0), 3),
        ("CEIL_2D", (0, 0), (2.01, 0), 3),
        ("CEIL_2D", (0, 0), (1, 1), 2),
        # ATT: r = sqrt(d^2 / 10); t = nint(r); t + 1 when t < r
        ("ATT", (0, 0), (10, 0), 4),  # r = 3.162 -> nint 3 < r -> 4
        ("ATT", (0, 0), (9, 3), 3),  # r = 3 exactly -> 3
        ("ATT", (0, 0), (7.5, 2.5), 3),  # r = 2.5 exactly -> nint 3 -> 3
        ("ATT", (0, 0), (20, 0), 7),  # r = 6.32 -> nint 6 < r -> 7
        ("ATT", (0, 0), (0, 0.5), 1),
    ],
)
def test_rounding_cases(weight_type, a, b, expected):
    tsp = TSP("r", weight_type, coords=np.array([a, b, (1000.0, 1000.0)], dtype=float))
    assert REFERENCE[weight_type](a, b) == expected  # the reference agrees with the hand value
    assert int(tsp.dist(0, 1)) == expected
    assert int(tsp.dist(1, 0)) == expected


def test_geo_truncates_degrees_and_uses_tsplib_constants():
    # 16.53 = 16 deg 53 min: truncation keeps 16; nint would make it 17 and change the distance.
    a, b = (16.53, 96.53), (22.00, 96.05)
    tsp = TSP("g", "GEO", coords=np.array([a, b, (0.0, 0.0)]))
    got = int(tsp.dist(0, 1))
    assert got == ref_geo(a, b)

    def nint_variant(p, q):
        def rad(x):
            d = nint(x)
            return PI * (d + 5.0 * (x - d) / 3.0) / 180.0
        la, lo, lb, lob = rad(p[0]), rad(p[1]), rad(q[0]), rad(q[1])
        q1, q2, q3 = math.cos(lo - lob), math.cos(la - lb), math.cos(la + lb)
        return int(RRR * math.acos(0.5 * ((1 + q1) * q2 - (1 - q1) * q3)) + 1.0)

    assert got != nint_variant(a, b)
    # negative coordinates: -12.30 is -(12 deg 30 min)
    c, d = (-12.30, -45.45), (10.15, 30.59)
    tsp2 = TSP("g2", "GEO", coords=np.array([c, d, (1.0, 1.0)]))
    assert int(tsp2.dist(0, 1)) == ref_geo(c, d)


def test_geo_identical_points_do_not_crash():
    tsp = TSP("same", "GEO", coords=np.array([(10.5, 20.5), (10.5, 20.5), (0.0, 0.0)]))
    assert int(tsp.dist(0, 0)) == 0
    assert int(tsp.dist(0, 1)) in (0, 1)


def test_canonical_tour_of_small_euc_instance(tmp_path):
    # the unit square with one extra point: 1..n order
    coords = np.array([(0, 0), (0, 10), (10, 10), (10, 0), (5, -5)], dtype=float)
    tsp = TSP("sq", "EUC_2D", coords=coords)
    # 10 + 10 + 10 + nint(7.07) + nint(7.07)
    assert tsp.tour_length(np.arange(5)) == 44


# ---------------------------------------------------------------------------------- EXPLICIT formats


def test_explicit_tokens_helper_orders():
    m = np.array([[0, 1, 2], [1, 0, 3], [2, 3, 0]]) + np.diag([7, 8, 9])
    assert explicit_tokens(m, "UPPER_ROW") == [1, 2, 3]
    assert explicit_tokens(m, "LOWER_ROW") == [1, 2, 3]
    assert explicit_tokens(m, "UPPER_DIAG_ROW") == [7, 1, 2, 8, 3, 9]
    assert explicit_tokens(m, "LOWER_DIAG_ROW") == [7, 1, 8, 2, 3, 9]
    assert explicit_tokens(m, "UPPER_COL") == [1, 2, 3]
    assert explicit_tokens(m, "LOWER_COL") == [1, 2, 3]
    assert explicit_tokens(m, "UPPER_DIAG_COL") == [7, 1, 8, 2, 3, 9]
    assert explicit_tokens(m, "LOWER_DIAG_COL") == [7, 1, 2, 8, 3, 9]
    a = np.array([[0, 1, 2, 4], [1, 0, 3, 5], [2, 3, 0, 6], [4, 5, 6, 0]])
    assert explicit_tokens(a, "UPPER_ROW") == [1, 2, 4, 3, 5, 6]
    assert explicit_tokens(a, "LOWER_ROW") == [1, 2, 3, 4, 5, 6]
    assert explicit_tokens(a, "UPPER_COL") == [1, 2, 3, 4, 5, 6]
    assert explicit_tokens(a, "LOWER_COL") == [1, 2, 4, 3, 5, 6]


ALL_FORMATS = ["FULL_MATRIX", "UPPER_ROW", "LOWER_ROW", "UPPER_DIAG_ROW", "LOWER_DIAG_ROW",
               "UPPER_COL", "LOWER_COL", "UPPER_DIAG_COL", "LOWER_DIAG_COL"]


def write_explicit(path, m: np.ndarray, fmt: str, rng, *, name="x") -> None:
    tokens = explicit_tokens(m, fmt)
    body, line = [], []
    for tok in tokens:
        line.append(str(tok))
        if rng.random() < 0.2:
            body.append(" ".join(line))
            line = []
    if line:
        body.append(" ".join(line))
    head = [f"NAME: {name}", "TYPE: TSP", "COMMENT: random symmetric", f"DIMENSION: {m.shape[0]}",
            "EDGE_WEIGHT_TYPE: EXPLICIT", f"EDGE_WEIGHT_FORMAT: {fmt}", "EDGE_WEIGHT_SECTION"]
    path.write_text("\n".join(head + body + ["EOF"]) + "\n")


@pytest.mark.parametrize("fmt", ALL_FORMATS)
@pytest.mark.parametrize("n", [1, 2, 5, 13])
def test_explicit_formats_round_trip(tmp_path, fmt, n):
    rng = np.random.default_rng(100 * ALL_FORMATS.index(fmt) + n)
    upper = np.triu(rng.integers(0, 1000, size=(n, n)), 1)
    m = upper + upper.T
    if "DIAG" in fmt or fmt == "FULL_MATRIX":
        m = m + np.diag(rng.integers(0, 5, n))  # a diagonal in the file must land on the diagonal
    path = tmp_path / f"{fmt}.tsp"
    write_explicit(path, m, fmt, rng)
    tsp = read_tsplib(path)
    assert tsp.weight_type == "EXPLICIT"
    assert tsp.weight_format == fmt
    assert tsp.n == n
    assert np.array_equal(tsp.matrix, m)
    if n > 1:
        assert int(tsp.dist(0, n - 1)) == m[0, n - 1]
        tour = rng.permutation(n)
        assert tsp.tour_length(tour) == sum(int(m[tour[k], tour[(k + 1) % n]]) for k in range(n))


@pytest.mark.parametrize("fmt", ALL_FORMATS)
def test_explicit_formats_count_errors(tmp_path, fmt):
    rng = np.random.default_rng(0)
    m = np.zeros((6, 6), dtype=int)
    path = tmp_path / "e.tsp"
    write_explicit(path, m, fmt, rng)
    text = path.read_text()
    path.write_text(text.replace("EOF", "7\nEOF"))
    with pytest.raises(InputFormatError, match="too many"):
        read_tsplib(path)
    path.write_text(text.replace("DIMENSION: 6", "DIMENSION: 7"))
    with pytest.raises(InputFormatError, match="truncated"):
        read_tsplib(path)


def test_full_matrix_must_be_symmetric(tmp_path):
    path = tmp_path / "asym.tsp"
    path.write_text("NAME: a\nTYPE: TSP\nDIMENSION: 3\nEDGE_WEIGHT_TYPE: EXPLICIT\n"
                    "EDGE_WEIGHT_FORMAT: FULL_MATRIX\nEDGE_WEIGHT_SECTION\n0 1 2\n1 0 3\n2 4 0\nEOF\n")
    with pytest.raises(InputFormatError, match="not symmetric"):
        read_tsplib(path)


def test_explicit_with_display_data(tmp_path):
    path = tmp_path / "d.tsp"
    path.write_text("NAME: d\nTYPE: TSP\nDIMENSION: 3\nEDGE_WEIGHT_TYPE: EXPLICIT\n"
                    "EDGE_WEIGHT_FORMAT: UPPER_ROW\nDISPLAY_DATA_TYPE: TWOD_DISPLAY\n"
                    "EDGE_WEIGHT_SECTION\n 5 7\n 9\nDISPLAY_DATA_SECTION\n3 1.5 2\n1 0 0\n2 10 0\nEOF\n")
    tsp = read_tsplib(path)
    assert tsp.matrix.tolist() == [[0, 5, 7], [5, 0, 9], [7, 9, 0]]
    assert tsp.display.tolist() == [[0, 0], [10, 0], [1.5, 2]]
    assert tsp.coords is None
    assert tsp.tour_length([0, 1, 2]) == 21


# ------------------------------------------------------------------------------------ header quirks


def test_header_quirks(tmp_path):
    coords = np.array([(0, 0), (3, 4), (6, 8)], dtype=float)
    text = coord_file_text("quirk.tsp", "euc_2d", coords,
                           extra_header="COMMENT : second comment\nSOME_EXTENSION : 42")
    text = text.replace("TYPE : TSP", "TYPE : TSP (M.~Hofmeister)")
    path = tmp_path / "q.tsp"
    path.write_text(text)
    tsp = read_tsplib(path)
    assert tsp.name == "quirk"  # the ".tsp" some files put in NAME is dropped
    assert tsp.comment == "test instance second comment"
    assert tsp.weight_type == "EUC_2D"
    assert tsp.tour_length([0, 1, 2]) == 20
    # node ids in any order
    path.write_text(text.replace("1 0.0 0.0\n2 3.0 4.0\n", "2 3.0 4.0\n1 0.0 0.0\n"))
    assert np.array_equal(read_tsplib(path).coords, coords)
    path.write_text(text.replace("DIMENSION : 3", "DIMENSION : 3\nDIMENSION : 3"))
    with pytest.raises(InputFormatError, match="twice"):
        read_tsplib(path)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"weight_type": "EXPLICIT"},
        {"weight_type": "EXPLICIT", "matrix": np.zeros((2, 3))},
        {"weight_type": "EUC_2D", "coords": np.zeros((3, 3))},
        {"weight_type": "EUC_3D", "coords": np.zeros((3, 2))},
    ],
)
def test_constructor_errors(kwargs):
    with pytest.raises(MetaheurError):
        TSP("bad", **kwargs)


# ------------------------------------------------------------------------------------------- .tour


@pytest.fixture
def small_tsp():
    rng = np.random.default_rng(42)
    return TSP("t8", "EUC_2D", coords=rng.integers(0, 100, size=(8, 2)).astype(float))


TOUR = [3, 1, 7, 2, 6, 5, 4, 8]  # 1-based as in files


@pytest.mark.parametrize(
    "body",
    [
        "TOUR_SECTION\n3\n1\n7\n2\n6\n5\n4\n8\n-1\nEOF\n",  # canonical
        "TOUR_SECTION\n3 1 7 2\n6 5 4 8\n-1\nEOF\n",  # several ids per line
        "TOUR_SECTION\n3 1 7 2 6 5 4 8 -1\n",  # -1 on the same line, no EOF
        "TOUR_SECTION\n3 1 7 2\n6 5 4 8\nEOF\n",  # no -1
        "TOUR_SECTION\n3 1 7\n2 6 5 4 8",  # neither, no final newline
        "TOUR_SECTION\n3 1 7 2 6 5 4 8\n-1\n-1\nEOF\n",  # TSPLIB's optional second -1
        "TOUR_SECTION\r\n3 1 7 2\r\n6 5 4 8\r\n-1\r\nEOF\r\n",  # CRLF
    ],
)
def test_read_tour_variants(tmp_path, small_tsp, body):
    path = tmp_path / "t.tour"
    path.write_text("NAME : t8.tour\nCOMMENT : x\nTYPE : TOUR\nDIMENSION : 8\n" + body, newline="")
    expected = [c - 1 for c in TOUR]
    assert read_tour(path, small_tsp).tolist() == expected
    assert read_tour(path).tolist() == expected


def test_read_tour_without_dimension(tmp_path):
    path = tmp_path / "t.tour"
    path.write_text("TOUR_SECTION\n2 3 1\n-1\n")
    assert read_tour(path).tolist() == [1, 2, 0]


def test_read_tour_errors(tmp_path, small_tsp):
    path = tmp_path / "bad.tour"
    path.write_text("DIMENSION : 7\nTOUR_SECTION\n1 2 3 4 5 6 7\n-1\n")
    with pytest.raises(InputFormatError, match="DIMENSION 7"):
        read_tour(path, small_tsp)
    path.write_text("TOUR_SECTION\n1 2 3 4 5 6 7\n-1\n")
    with pytest.raises(InputFormatError, match="7 cities, expected 8"):
        read_tour(path, small_tsp)
    path.write_text("TOUR_SECTION\n1 2 3 4 5 6 7 7\n-1\n")
    with pytest.raises(InputFormatError, match="not a permutation"):
        read_tour(path, small_tsp)
    path.write_text("TOUR_SECTION\n0 1 2 3 4 5 6 7\n-1\n")
    with pytest.raises(InputFormatError, match="not a permutation"):
        read_tour(path, small_tsp)
    path.write_text("TOUR_SECTION\n1 2 3\n4 five 6 7 8\n-1\n")
    with pytest.raises(InputFormatError) as info:
        read_tour(path, small_tsp)
    assert info.value.line == 3
    path.write_text("NAME : x\nTYPE : TOUR\n")
    with pytest.raises(InputFormatError, match="no TOUR_SECTION"):
        read_tour(path, small_tsp)
    path.write_text("NAME : x\nTYPE : TOUR\nTOUR_SECTION\n-1\nEOF\n")
    with pytest.raises(InputFormatError, match="no cities"):
        read_tour(path)  # neither an instance nor a DIMENSION: an empty section is still an error
    with pytest.raises(InputFormatError, match="0 cities, expected 8"):
        read_tour(path, small_tsp)


def test_write_tour_round_trip(tmp_path, small_tsp):
    tour = np.array([c - 1 for c in TOUR])
    path = tmp_path / "out.tour"
    length = write_tour(path, small_tsp, tour)
    pts = small_tsp.coords.tolist()
    assert length == sum(ref_euc_2d(pts[tour[k]], pts[tour[(k + 1) % 8]]) for k in range(8))
    lines = path.read_text().splitlines()
    assert "TYPE : TOUR" in lines
    assert "DIMENSION : 8" in lines
    assert f"COMMENT : Length = {length} (metaheur)" in lines
    assert lines[-2:] == ["-1", "EOF"]
    section = lines.index("TOUR_SECTION")
    assert [int(x) for x in lines[section + 1 : -2]] == TOUR
    assert np.array_equal(read_tour(path, small_tsp), tour)
    with pytest.raises(MetaheurError):
        write_tour(tmp_path / "bad.tour", small_tsp, [0, 1, 2])


# ------------------------------------------------------------------------------- distance matrices


@pytest.mark.parametrize("weight_type", sorted(REFERENCE))
def test_distance_matrix_equals_pairwise(weight_type):
    rng = np.random.default_rng(9)
    n = 40
    tsp = TSP("m", weight_type, coords=random_coords(rng, n, weight_type))
    m = tsp.distance_matrix()
    assert m.dtype == np.int32 and m.shape == (n, n)
    assert not m.flags.writeable
    ii, jj = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
    assert np.array_equal(m, tsp.dist(ii, jj))
    assert tsp.distance_matrix() is m  # cached


def test_distance_matrix_chunks_rows_for_large_n():
    tsp = uniform_tsp(2100, seed=4)  # (1 << 22) // 2100 = 1997 rows per chunk: two chunks
    m = tsp.distance_matrix()
    rows = np.array([0, 1996, 1997, 1998, 2099])
    assert np.array_equal(m[rows], tsp.dist(rows[:, None], np.arange(2100)[None, :]))


def test_distance_matrix_over_budget_is_none():
    tsp = uniform_tsp(500, seed=1)
    assert tsp.matrix_bytes() == 500 * 500 * 4
    assert tsp.distance_matrix(budget_bytes=500 * 500 * 4 - 1) is None
    assert "matrix" not in tsp._cache
    assert tsp.distance_matrix(budget_bytes=500 * 500 * 4) is not None


def test_distance_matrix_explicit_ignores_budget():
    m = np.array([[0, 2, 3], [2, 0, 4], [3, 4, 0]])
    tsp = TSP("e", "EXPLICIT", matrix=m, weight_format="FULL_MATRIX")
    assert np.array_equal(tsp.distance_matrix(budget_bytes=0), m)


def test_coordinates_beyond_int32_distances_are_rejected():
    with pytest.raises(MetaheurError, match="32-bit"):
        TSP("far", "EUC_2D", coords=np.array([(0.0, 0.0), (3e9, 0.0), (0.0, 1.0)]))
    tsp = TSP("near", "EUC_2D", coords=np.array([(0.0, 0.0), (7e8, 0.0), (0.0, 1.0)]))
    assert int(tsp.dist(0, 1)) == 700_000_000


def test_explicit_distances_beyond_int32_are_rejected_for_the_kernels():
    m = np.array([[0, 3_000_000_000, 1], [3_000_000_000, 0, 1], [1, 1, 0]])
    tsp = TSP("far", "EXPLICIT", matrix=m, weight_format="FULL_MATRIX")
    assert tsp.tour_length([0, 1, 2]) == 3_000_000_002  # exact on the host
    with pytest.raises(MetaheurError, match="32-bit"):
        tsp.distance_matrix()


def test_coordinate_instance_never_builds_a_matrix(tmp_path):
    rng = np.random.default_rng(1)
    coords = rng.integers(0, 10_000, size=(300, 2)).astype(float)
    path = tmp_path / "big.tsp"
    path.write_text(coord_file_text("big", "EUC_2D", coords))
    tsp = read_tsplib(path)
    assert tsp.matrix is None
    tour = rng.permutation(300)
    assert tsp.tour_length(tour) > 0
    assert "matrix" not in tsp._cache
    gen = uniform_tsp(2000, seed=3)
    gen.tour_length(np.arange(2000))
    assert "matrix" not in gen._cache
