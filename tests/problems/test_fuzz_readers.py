"""Fuzzing the file readers: corrupted files give an exact result or an InputFormatError, nothing else.

Valid small files are generated here (a QAPLIB .dat and .sln, a TSPLIB EUC_2D .tsp, an EXPLICIT
LOWER_DIAG_ROW .tsp and a .tour) and corrupted at random: tokens and lines deleted, duplicated,
replaced or inserted (numbers, keywords, unicode, garbage), the file truncated, bytes inserted.
For the pure number formats (.dat, .sln) an independent oracle says exactly what the reader must
return; for TSPLIB files the result must be a consistent instance (or tour). Edits that do not
change the meaning (whitespace, line breaks, keyword case, order of nodes) must give back the
original exactly.
"""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from metaheur.errors import InputFormatError, MetaheurError
from metaheur.problem.instances import load_solution
from metaheur.problems.qap import QAP, read_qaplib, read_sln
from metaheur.problems.tsp import TSP, read_tour, read_tsplib

FUZZ = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
NEUTRAL = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])

# ------------------------------------------------------------------------------------ valid files

RNG = np.random.default_rng(2024)
N_QAP = 4
QAP_FLOW = RNG.integers(-9, 60, size=(N_QAP, N_QAP))
QAP_DIST = RNG.integers(0, 60, size=(N_QAP, N_QAP))
BASE_QAP = QAP("base", QAP_FLOW, QAP_DIST)
SLN_PERM = np.array([2, 0, 3, 1])
SLN_COST = BASE_QAP.cost(SLN_PERM)


def _rows(m) -> str:
    return "\n".join(" ".join(f"{int(v):3d}" for v in row) for row in m)


DAT_TEXT = f"{N_QAP}\n\n{_rows(QAP_FLOW)}\n\n{_rows(QAP_DIST)}\n"
SLN_TEXT = f"{N_QAP} {SLN_COST}\n" + " ".join(str(int(x) + 1) for x in SLN_PERM) + "\n"

N_TSP = 6
TSP_COORDS = np.array([(0, 0), (10, 0), (10.5, 10), (0, 10), (5, 15.25), (-3, 7)], dtype=float)
EUC_TEXT = (
    "NAME : fuzz6\nCOMMENT : six cities\nTYPE : TSP\nDIMENSION : 6\nEDGE_WEIGHT_TYPE : EUC_2D\n"
    "NODE_COORD_SECTION\n"
    + "".join(f"{k + 1} {x!r} {y!r}\n" for k, (x, y) in enumerate(TSP_COORDS.tolist()))
    + "EOF\n"
)
BASE_EUC = TSP("fuzz6", "EUC_2D", coords=TSP_COORDS)

N_EXP = 5
_upper = np.triu(RNG.integers(1, 100, size=(N_EXP, N_EXP)), 1)
EXP_MATRIX = _upper + _upper.T
EXP_TEXT = (
    "NAME: lower5\nTYPE: TSP\nCOMMENT: explicit\nDIMENSION: 5\nEDGE_WEIGHT_TYPE: EXPLICIT\n"
    "EDGE_WEIGHT_FORMAT: LOWER_DIAG_ROW\nDISPLAY_DATA_TYPE: NO_DISPLAY\nEDGE_WEIGHT_SECTION\n"
    + "".join(" ".join(str(int(EXP_MATRIX[i, j])) for j in range(i + 1)) + "\n" for i in range(N_EXP))
    + "EOF\n"
)

TOUR_LIST = [4, 1, 6, 2, 5, 3]  # 1-based
TOUR_TEXT = ("NAME : fuzz6.tour\nCOMMENT : a tour\nTYPE : TOUR\nDIMENSION : 6\nTOUR_SECTION\n"
             + "\n".join(map(str, TOUR_LIST)) + "\n-1\nEOF\n")


def test_base_files_are_valid(workdir):
    """The unmutated files read back exactly (the oracles below rely on this)."""
    assert np.array_equal(read_qaplib(write(workdir, "b.dat", DAT_TEXT.encode())).flow, QAP_FLOW)
    sol = read_sln(write(workdir, "b.sln", SLN_TEXT.encode()), BASE_QAP)
    assert sol.orientation == "direct" and np.array_equal(sol.permutation, SLN_PERM)
    assert np.array_equal(read_tsplib(write(workdir, "b.tsp", EUC_TEXT.encode())).coords, TSP_COORDS)
    assert np.array_equal(read_tsplib(write(workdir, "e.tsp", EXP_TEXT.encode())).matrix, EXP_MATRIX)
    tour = read_tour(write(workdir, "b.tour", TOUR_TEXT.encode()), BASE_EUC)
    assert tour.tolist() == [c - 1 for c in TOUR_LIST]


# -------------------------------------------------------------------------------------- mutations

POOL = [
    "0", "1", "-1", "2", "6", "7", "99", "-5", "+3", "1_0", "0x10", "3.5", "1e3", "5.0", "1e400", "nan",
    "inf",
    "-inf", "9223372036854775807", "9223372036854775808", "-9223372036854775809", "123456789012345678901234",
    "x", "é", "\u0663", "\xa0", "\x85", "\u2028", "\x0c", "\t", "", ":", "::", "EOF", "NAME", "NAME :",
    "DIMENSION", "DIMENSION : 3", "DIMENSION : 1000000000000", "DIMENSION: -2", "DIMENSION: 0",
    "DIMENSION: x",
    "TYPE: ATSP", "TYPE : TOUR", "TYPE : TSP", "EDGE_WEIGHT_TYPE: GEO", "EDGE_WEIGHT_TYPE : EXPLICIT",
    "EDGE_WEIGHT_TYPE: EUC_3D", "EDGE_WEIGHT_TYPE: FOO", "EDGE_WEIGHT_TYPE: ATT",
    "EDGE_WEIGHT_FORMAT: FULL_MATRIX",
    "EDGE_WEIGHT_FORMAT: UPPER_COL", "EDGE_WEIGHT_FORMAT: BOGUS", "NODE_COORD_SECTION", "EDGE_WEIGHT_SECTION",
    "DISPLAY_DATA_SECTION", "TOUR_SECTION", "FIXED_EDGES_SECTION", "DEPOT_SECTION", "DEMAND_SECTION",
    "COMMENT : hi", "NODE_COORD_SECTION : 1 2 3", "UNKNOWN_KEY : 5",
]

IDX = st.integers(0, 10_000)
TOKEN = st.one_of(
    st.sampled_from(POOL),
    st.text(max_size=6),
    st.integers(-(10**20), 10**20).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
)
MUTATION = st.one_of(
    st.tuples(st.just("del_token"), IDX, IDX),
    st.tuples(st.just("dup_token"), IDX, IDX),
    st.tuples(st.just("replace_token"), IDX, IDX, TOKEN),
    st.tuples(st.just("insert_token"), IDX, IDX, TOKEN),
    st.tuples(st.just("del_line"), IDX),
    st.tuples(st.just("dup_line"), IDX),
    st.tuples(st.just("insert_line"), IDX, TOKEN),
    st.tuples(st.just("swap_lines"), IDX, IDX),
    st.tuples(st.just("truncate"), IDX),
    st.tuples(st.just("insert_bytes"), IDX, st.binary(min_size=1, max_size=8)),
)
MUTATIONS = st.lists(MUTATION, min_size=1, max_size=4)


def mutate(content: bytes, mutations) -> bytes:
    for op in mutations:
        kind = op[0]
        if kind == "truncate":
            content = content[: op[1] % (len(content) + 1)]
            continue
        if kind == "insert_bytes":
            pos = op[1] % (len(content) + 1)
            content = content[:pos] + op[2] + content[pos:]
            continue
        lines = content.split(b"\n")
        li = op[1] % len(lines)
        if kind == "del_line":
            del lines[li]
        elif kind == "dup_line":
            lines.insert(li, lines[li])
        elif kind == "insert_line":
            lines.insert(li, op[2].encode("utf-8", "surrogatepass"))
        elif kind == "swap_lines":
            lj = op[2] % len(lines)
            lines[li], lines[lj] = lines[lj], lines[li]
        else:
            parts = re.split(rb"(\s+)", lines[li])  # tokens at even positions, separators between
            tokens = [k for k in range(0, len(parts), 2) if parts[k]]
            if not tokens:
                if kind in ("replace_token", "insert_token"):
                    lines[li] = op[3].encode("utf-8", "surrogatepass")
            else:
                k = tokens[op[2] % len(tokens)]
                if kind == "del_token":
                    parts[k] = b""
                elif kind == "dup_token":
                    parts[k] = parts[k] + b" " + parts[k]
                elif kind == "replace_token":
                    parts[k] = op[3].encode("utf-8", "surrogatepass")
                else:
                    parts[k] = op[3].encode("utf-8", "surrogatepass") + b" " + parts[k]
                lines[li] = b"".join(parts)
        content = b"\n".join(lines)
    return content


@pytest.fixture(scope="module")
def workdir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("fuzz")


def write(folder: Path, name: str, content: bytes) -> Path:
    path = folder / name
    path.write_bytes(content)
    return path


def expect_input_error(exc: BaseException, path: Path) -> None:
    """The only acceptable failure: an InputFormatError naming the file."""
    assert isinstance(exc, InputFormatError), f"{type(exc).__name__}: {exc}"
    assert exc.path == str(path)
    assert str(exc).startswith(str(path))
    assert "\n" not in str(exc)


# ---------------------------------------------------------------- oracle for whitespace number files


class Invalid(Exception):
    pass


def oracle_ints(content: bytes) -> list[int]:
    """What a QAPLIB number file means: the whitespace-separated int64 tokens, or Invalid."""
    if b"\x00" in content:
        raise Invalid("binary")
    try:
        text = content.decode("utf-8")
    except UnicodeDecodeError:
        text = content.decode("latin-1")
    return int_tokens(text)


def int_tokens(text: str) -> list[int]:
    """The whitespace-separated int64 tokens of ``text``, or Invalid."""
    out = []
    for tok in text.split():
        try:
            value = int(tok)
        except ValueError:
            raise Invalid(tok) from None
        if not -(2**63) <= value < 2**63:
            raise Invalid(tok)
        out.append(value)
    return out


def oracle_dat(content: bytes):
    values = oracle_ints(content)
    if not values or not 1 <= values[0] <= 100_000:
        raise Invalid("n")
    n = values[0]
    if len(values) != 1 + 2 * n * n:
        raise Invalid("count")
    return np.array(values[1 : 1 + n * n]).reshape(n, n), np.array(values[1 + n * n :]).reshape(n, n)


def oracle_sln(content: bytes, qap: QAP):
    """(permutation, stated cost, orientation) that read_sln(path, qap) must return, or Invalid."""
    values = oracle_ints(content)
    if len(values) < 2 or values[0] != qap.n:
        raise Invalid("header")
    n, stated, body = values[0], values[1], values[2:]
    if len(body) != n:
        raise Invalid("length")
    offset = 0 if (min(body) == 0 and max(body) == n - 1) else 1
    p = [v - offset for v in body]
    if sorted(p) != list(range(n)):
        raise Invalid("permutation")
    p = np.array(p)
    if qap.cost(p) == stated:
        return p, stated, "direct"
    inverse = np.argsort(p)
    if qap.cost(inverse) == stated:
        return inverse, stated, "inverse"
    return p, stated, "direct"


def _outcome(fn):
    try:
        return fn(), None
    except Invalid as exc:
        return None, exc


# -------------------------------------------------------------------------------------- QAP fuzz


@FUZZ
@given(mutations=MUTATIONS)
def test_fuzz_qaplib_dat(workdir, mutations):
    content = mutate(DAT_TEXT.encode(), mutations)
    path = write(workdir, "fuzz.dat", content)
    expected, invalid = _outcome(lambda: oracle_dat(content))
    try:
        qap = read_qaplib(path)
    except Exception as exc:
        expect_input_error(exc, path)
        assert invalid is not None, f"valid file rejected: {exc}"
        return
    assert invalid is None, f"invalid file ({invalid}) accepted"
    assert np.array_equal(qap.flow, expected[0])
    assert np.array_equal(qap.distance, expected[1])
    assert isinstance(qap.cost(np.arange(qap.n)), int)


@FUZZ
@given(mutations=MUTATIONS)
def test_fuzz_qaplib_sln(workdir, mutations):
    content = mutate(SLN_TEXT.encode(), mutations)
    path = write(workdir, "fuzz.sln", content)
    expected, invalid = _outcome(lambda: oracle_sln(content, BASE_QAP))
    try:
        sol = read_sln(path, BASE_QAP)
    except Exception as exc:
        expect_input_error(exc, path)
        assert invalid is not None, f"valid file rejected: {exc}"
    else:
        assert invalid is None, f"invalid file ({invalid}) accepted"
        assert np.array_equal(sol.permutation, expected[0])
        assert (sol.stated_cost, sol.orientation) == expected[1:]
    # without an instance: a permutation of range(n) for the n the file states, or an error
    try:
        free = read_sln(path)
    except Exception as exc:
        expect_input_error(exc, path)
    else:
        n = oracle_ints(content)[0]
        assert sorted(free.permutation.tolist()) == list(range(n))
        assert free.orientation == "unverified"


# -------------------------------------------------------------------------------------- TSP fuzz


def check_tsp(tsp) -> None:
    """Whatever the reader returns must be a consistent, scorable symmetric TSP."""
    assert isinstance(tsp, TSP)
    n = tsp.n
    assert n >= 1
    if tsp.weight_type == "EXPLICIT":
        assert tsp.matrix.shape == (n, n) and tsp.matrix.dtype == np.int64
        assert np.array_equal(tsp.matrix, tsp.matrix.T)
    else:
        assert tsp.coords.shape == (n, 2)
        assert np.all(np.isfinite(tsp.coords))
    if tsp.display is not None:
        assert tsp.display.shape == (n, 2) and np.all(np.isfinite(tsp.display))
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        length = tsp.tour_length(np.arange(n))
    assert isinstance(length, int)
    if tsp.weight_type != "EXPLICIT" and np.abs(tsp.coords).max() <= 1e9:
        assert length >= 0  # coordinate distances are never negative (no overflow at sane sizes)


@FUZZ
@pytest.mark.parametrize("name, text", [("fuzz_euc.tsp", EUC_TEXT), ("fuzz_exp.tsp", EXP_TEXT)],
                         ids=["euc2d", "explicit"])
@given(mutations=MUTATIONS)
def test_fuzz_tsplib(workdir, name, text, mutations):
    path = write(workdir, name, mutate(text.encode(), mutations))
    try:
        tsp = read_tsplib(path)
    except Exception as exc:
        expect_input_error(exc, path)
        return
    check_tsp(tsp)


@FUZZ
@given(mutations=MUTATIONS)
def test_fuzz_tour(workdir, mutations):
    path = write(workdir, "fuzz.tour", mutate(TOUR_TEXT.encode(), mutations))
    try:
        tour = read_tour(path, BASE_EUC)
    except Exception as exc:
        expect_input_error(exc, path)
    else:
        assert sorted(tour.tolist()) == list(range(N_TSP))
    try:
        free = read_tour(path)
    except Exception as exc:
        expect_input_error(exc, path)
    else:
        assert free.size >= 1
        assert sorted(free.tolist()) == list(range(free.size))


RESULT_JSON = '{"instance": "fuzz6", "cost": 123, "permutation": [3, 0, 5, 1, 4, 2]}\n'


@FUZZ
@given(mutations=MUTATIONS)
def test_fuzz_result_json(workdir, mutations):
    path = write(workdir, "fuzz.json", mutate(RESULT_JSON.encode(), mutations))
    try:
        sol = load_solution(BASE_EUC, path)
    except Exception as exc:
        expect_input_error(exc, path)
        return
    assert sorted(sol.permutation.tolist()) == list(range(N_TSP))
    assert sol.stated_cost is None or isinstance(sol.stated_cost, int)


@pytest.mark.parametrize("name", ["fuzz 6", "fu\\nzz6", "pr2392"])
def test_result_json_of_another_instance_is_one_line_input_error(workdir, name):
    """A result naming another instance (any characters) is refused as a one-line error naming the file."""
    path = write(workdir, "other.json", RESULT_JSON.replace('"fuzz6"', f'"{name}"').encode())
    with pytest.raises(InputFormatError) as info:
        load_solution(BASE_EUC, path)
    expect_input_error(info.value, path)
    assert "not of fuzz6" in str(info.value)


def test_errors_are_metaheur_errors():
    """InputFormatError is a MetaheurError (what the CLI turns into exit status 2)."""
    assert issubclass(InputFormatError, MetaheurError)


# ------------------------------------------------------------------------ meaning-preserving edits

WHITESPACE = st.lists(st.sampled_from([" ", "  ", "\t", "\n", "\r\n", "\n\n", " \n\t"]),
                      min_size=1, max_size=200)


def respace(tokens: list[str], seps: list[str]) -> str:
    return "".join(tok + seps[k % len(seps)] for k, tok in enumerate(tokens))


@NEUTRAL
@given(seps=WHITESPACE, lead=st.sampled_from(["", "\n", "  \n\t"]))
def test_neutral_whitespace_qaplib(workdir, seps, lead):
    dat = write(workdir, "n.dat", (lead + respace(DAT_TEXT.split(), seps)).encode())
    qap = read_qaplib(dat)
    assert np.array_equal(qap.flow, QAP_FLOW) and np.array_equal(qap.distance, QAP_DIST)
    sln = write(workdir, "n.sln", (lead + respace(SLN_TEXT.split(), seps)).encode())
    sol = read_sln(sln, BASE_QAP)
    assert np.array_equal(sol.permutation, SLN_PERM) and sol.stated_cost == SLN_COST


def tsp_lines_variants(draw, text: str, *, data_split: bool) -> str:
    """Blank lines, spacing around ':', keyword case, CRLF, optional EOF; data re-wrapped or respaced."""
    out = []
    in_data = False
    for line in text.splitlines():
        if draw(st.booleans()):
            out.append(draw(st.sampled_from(["", "   ", "\t"])))
        if ":" in line:
            key, value = (s.strip() for s in line.split(":", 1))
            key = key.lower() if draw(st.booleans()) else key
            line = key + draw(st.sampled_from([":", " : ", "  :", ":   ", "\t:\t"])) + value
        elif line.strip() == "EOF":
            if draw(st.booleans()):
                continue
        elif line.endswith("SECTION"):
            in_data = True
        elif in_data and data_split:
            tokens = line.split()
            cut = draw(st.integers(0, len(tokens)))
            line = " ".join(tokens[:cut]) + "\n" + "  ".join(tokens[cut:])
        elif in_data:
            line = draw(st.sampled_from([" ", "\t", "   "])).join(line.split())
        out.append(draw(st.sampled_from(["", "  ", "\t"])) + line + draw(st.sampled_from(["", " ", "\t "])))
    newline = draw(st.sampled_from(["\n", "\r\n"]))
    return newline.join(out) + newline


@NEUTRAL
@given(data=st.data())
def test_neutral_edits_tsplib_euc2d(workdir, data):
    text = tsp_lines_variants(data.draw, EUC_TEXT, data_split=False)
    head, _, rest = text.partition("NODE_COORD_SECTION")
    body_lines = [ln for ln in rest.splitlines() if ln.strip()]
    has_eof = body_lines[-1].strip() == "EOF"
    nodes = body_lines[:-1] if has_eof else body_lines
    nodes = data.draw(st.permutations(nodes))  # node order is free: the ids say which is which
    text = head + "NODE_COORD_SECTION\n" + "\n".join(nodes) + ("\nEOF\n" if has_eof else "\n")
    tsp = read_tsplib(write(workdir, "n.tsp", text.encode()))
    assert tsp.name == "fuzz6" and tsp.weight_type == "EUC_2D"
    assert np.array_equal(tsp.coords, TSP_COORDS)


@NEUTRAL
@given(data=st.data())
def test_neutral_edits_tsplib_explicit(workdir, data):
    text = tsp_lines_variants(data.draw, EXP_TEXT, data_split=True)
    tsp = read_tsplib(write(workdir, "n.tsp", text.encode()))
    assert tsp.weight_format == "LOWER_DIAG_ROW"
    assert np.array_equal(tsp.matrix, EXP_MATRIX)


@NEUTRAL
@given(data=st.data(), seps=WHITESPACE, terminator=st.sampled_from(["", "-1", "-1\n-1", "-1\nEOF", "EOF"]))
def test_neutral_edits_tour(workdir, data, seps, terminator):
    head = tsp_lines_variants(data.draw, TOUR_TEXT.split("TOUR_SECTION")[0], data_split=False)
    text = head + "TOUR_SECTION\n" + respace([str(c) for c in TOUR_LIST], seps) + "\n" + terminator + "\n"
    path = write(workdir, "n.tour", text.encode())
    assert read_tour(path, BASE_EUC).tolist() == [c - 1 for c in TOUR_LIST]
