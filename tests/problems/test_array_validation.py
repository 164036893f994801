"""Arrays handed to QAP(name, flow, distance) and TSP(name, weight_type, coords=, matrix=) are
checked at the door (property-based): fractional weights, NaN and infinities, asymmetric and
negative TSP matrices are refused with a MetaheurError that says what is wrong; integral floats
are taken exactly."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from metaheur import QAP, TSP, InputFormatError, MetaheurError, read_tsplib

sizes = st.integers(min_value=2, max_value=7)
weights = st.integers(min_value=0, max_value=10**6)


@st.composite
def int_matrix(draw, symmetric=False, n=None):
    n = n or draw(sizes)
    m = draw(arrays(np.int64, (n, n), elements=weights))
    if symmetric:
        m = np.triu(m, 1) + np.triu(m, 1).T
    return m


@st.composite
def cell(draw, n):
    i = draw(st.integers(0, n - 1))
    j = draw(st.integers(0, n - 1).filter(lambda x: x != i))
    return i, j


@given(int_matrix(), st.data())
def test_integral_floats_are_taken_exactly(flow, data):
    distance = data.draw(int_matrix(n=len(flow)))
    exact = QAP("x", flow, distance)
    as_floats = QAP("x", flow.astype(np.float64), distance.astype(np.float64))
    assert np.array_equal(exact.flow, as_floats.flow) and np.array_equal(exact.distance, as_floats.distance)
    perm = data.draw(st.permutations(range(len(flow))))
    assert exact.cost(perm) == as_floats.cost(perm)


@given(int_matrix(), st.data(), st.floats(0.01, 0.99), st.sampled_from(["flow", "distance"]))
def test_fractional_qap_weights_are_refused_with_how_to_scale(base, data, fraction, which):
    i, j = data.draw(cell(len(base)))
    bad = base.astype(np.float64)
    bad[i, j] += fraction
    assume(bad[i, j] != round(bad[i, j]))
    args = (bad, base) if which == "flow" else (base, bad)
    with pytest.raises(MetaheurError, match=rf"{which} matrix has fractional entries .*scale the weights to integers"):
        QAP("x", *args)


@given(int_matrix(symmetric=True), st.data(), st.sampled_from([np.nan, np.inf, -np.inf]))
def test_nan_and_infinite_weights_are_refused_as_such(base, data, value):
    i, j = data.draw(cell(len(base)))
    bad = base.astype(np.float64)
    bad[i, j] = value
    with pytest.raises(MetaheurError, match="NaN or infinite"):
        QAP("x", bad, base)
    with pytest.raises(MetaheurError, match="NaN or infinite"):
        TSP("t", "EXPLICIT", matrix=bad)


@given(arrays(np.float64, st.tuples(st.integers(2, 8), st.just(2)), elements=st.floats(-1e6, 1e6)), st.data(),
       st.sampled_from([np.nan, np.inf, -np.inf]))
def test_nan_and_infinite_coordinates_are_refused_as_such(coords, data, value):
    TSP("t", "EUC_2D", coords=coords)
    bad = coords.copy()
    bad[data.draw(st.integers(0, len(coords) - 1)), data.draw(st.integers(0, 1))] = value
    with pytest.raises(MetaheurError, match="coordinates have NaN or infinite entries"):
        TSP("t", "EUC_2D", coords=bad)


@given(int_matrix(symmetric=True), st.data(), st.floats(0.01, 0.99))
def test_fractional_tsp_distances_are_refused(base, data, fraction):
    i, j = data.draw(cell(len(base)))
    bad = base.astype(np.float64)
    bad[i, j] += fraction
    bad[j, i] += fraction
    assume(bad[i, j] != round(bad[i, j]))
    with pytest.raises(MetaheurError, match="fractional entries"):
        TSP("t", "EXPLICIT", matrix=bad)


@given(int_matrix(symmetric=True), st.data(), st.integers(1, 1000))
def test_asymmetric_tsp_matrices_are_refused(base, data, shift):
    i, j = data.draw(cell(len(base)))
    bad = base.copy()
    bad[i, j] += shift
    with pytest.raises(MetaheurError, match=r"not symmetric.*use metaheur.ATSP for the asymmetric TSP"):
        TSP("t", "EXPLICIT", matrix=bad)


@given(int_matrix(symmetric=True), st.data(), st.integers(1, 1000))
def test_negative_tsp_distances_are_refused(base, data, below):
    i, j = data.draw(cell(len(base)))
    bad = base.copy()
    bad[i, j] = bad[j, i] = -below
    with pytest.raises(MetaheurError, match="negative distance"):
        TSP("t", "EXPLICIT", matrix=bad)


def test_the_issue_examples():
    with pytest.raises(MetaheurError, match=r"fractional entries \(first 1.7 at \[0, 1\]\)"):
        QAP("x", np.array([[0, 1.7], [1.7, 0]]), np.array([[0, 1], [1, 0]]))
    three = np.array([[0, 1, 2], [3, 0, 1], [10, 8, 0]])  # tour 0-1-2: 1 + 1 + 10 = 12, the other way 2 + 8 + 3 = 13
    with pytest.raises(MetaheurError, match="not symmetric"):
        TSP("t", "EXPLICIT", matrix=three)
    with pytest.raises(MetaheurError, match="coordinates have NaN"):
        TSP("t", "EUC_2D", coords=np.array([[0.0, np.nan], [1.0, 1.0]]))


def test_weights_beyond_int64_and_non_numbers_are_refused():
    with pytest.raises(MetaheurError, match="beyond the 64-bit integer range"):
        QAP("x", np.full((2, 2), 1e19), np.eye(2))
    with pytest.raises(MetaheurError, match="beyond the 64-bit integer range"):
        QAP("x", np.full((2, 2), 2**63, dtype=np.uint64), np.eye(2))
    with pytest.raises(MetaheurError, match="not an array of real numbers"):
        QAP("x", np.array([["a", "b"], ["c", "d"]]), np.eye(2))
    with pytest.raises(MetaheurError, match="coordinates are not an array of numbers"):
        TSP("t", "EUC_2D", coords=[["a", "b"], ["c", "d"]])


def test_a_tsplib_file_with_a_negative_weight_is_an_error_of_the_file(tmp_path):
    path = tmp_path / "neg.tsp"
    path.write_text("NAME: neg\nTYPE: TSP\nDIMENSION: 3\nEDGE_WEIGHT_TYPE: EXPLICIT\n"
                    "EDGE_WEIGHT_FORMAT: LOWER_DIAG_ROW\nEDGE_WEIGHT_SECTION\n0\n-4 0\n6 5 0\nEOF\n")
    with pytest.raises(InputFormatError, match=r"neg.tsp:7: negative distance d\(1,2\) = -4"):
        read_tsplib(path)
