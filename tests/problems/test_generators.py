"""Seeded instance generators and the built-in ``gen:`` names."""

from __future__ import annotations

import numpy as np
import pytest

from metaheur.errors import MetaheurError
from metaheur.problem.generators import parse_generated
from metaheur.problems import QAP, TSP, clustered_tsp, load_instance, random_qap, uniform_tsp
from metaheur.problems.tsp.generators import SQUARE

# --------------------------------------------------------------------------------------------- QAP


def test_random_qap_is_reproducible():
    a, b = random_qap(30, seed=5), random_qap(30, seed=5)
    assert np.array_equal(a.flow, b.flow) and np.array_equal(a.distance, b.distance)
    c = random_qap(30, seed=6)
    assert not np.array_equal(a.flow, c.flow)
    assert not np.array_equal(a.distance, c.distance)
    assert not np.array_equal(a.flow, a.distance)  # the two matrices are drawn independently


@pytest.mark.parametrize("seed", [1, 2, 77])
def test_random_qap_has_taillard_a_properties(seed):
    qap = random_qap(50, seed=seed)
    assert isinstance(qap, QAP) and qap.n == 50
    off = ~np.eye(50, dtype=bool)
    for m in (qap.flow, qap.distance):
        assert m.dtype == np.int64
        assert np.array_equal(m, m.T)
        assert not np.diagonal(m).any()
        assert m.min() == 0 and m.max() == 99
        values = m[off]
        assert np.unique(values).size == 100  # 2450 draws cover all of 0..99
        assert 45 < values.mean() < 54  # uniform: mean 49.5
    props = qap.properties()
    assert props["flow_symmetric"] and props["distance_zero_diagonal"]
    assert qap.name == f"gen-qap-50-s{seed}"
    assert qap.source == f"gen:qap:50:{seed}"


def test_random_qap_options():
    qap = random_qap(20, seed=3, high=10, symmetric=False, zero_diagonal=False)
    assert qap.flow.max() <= 9 and qap.flow.min() >= 0
    assert not np.array_equal(qap.flow, qap.flow.T)
    assert np.diagonal(qap.flow).any()
    assert random_qap(1).n == 1
    with pytest.raises(MetaheurError):
        random_qap(0)


# --------------------------------------------------------------------------------------------- TSP


@pytest.mark.parametrize("gen", [uniform_tsp, clustered_tsp])
def test_tsp_generators_are_reproducible(gen):
    a, b = gen(400, seed=9), gen(400, seed=9)
    assert np.array_equal(a.coords, b.coords)
    assert not np.array_equal(a.coords, gen(400, seed=10).coords)
    assert isinstance(a, TSP) and a.weight_type == "EUC_2D" and a.n == 400
    assert a.coords.shape == (400, 2)
    assert np.array_equal(a.coords, np.round(a.coords))  # integer coordinates
    assert np.unique(a.coords, axis=0).shape[0] > 390  # (almost) no duplicate cities
    assert a.tour_length(np.arange(400)) > 0
    with pytest.raises(MetaheurError):
        gen(2)


def test_uniform_tsp_fills_the_square():
    tsp = uniform_tsp(5000, seed=1)
    assert tsp.coords.min() >= 0 and tsp.coords.max() < SQUARE
    hist, _, _ = np.histogram2d(tsp.coords[:, 0], tsp.coords[:, 1], bins=4, range=[[0, SQUARE], [0, SQUARE]])
    assert hist.min() > 5000 / 16 * 0.8  # every quarter-of-a-quarter holds its share


def _empty_cells(tsp: TSP, bins: int = 20) -> float:
    square = [[0, SQUARE], [0, SQUARE]]
    hist, _, _ = np.histogram2d(tsp.coords[:, 0], tsp.coords[:, 1], bins=bins, range=square)
    return float((hist == 0).mean())


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_clustered_tsp_is_clustered(seed):
    # n/10 normal clusters leave many more empty cells on a 20 x 20 grid than uniform cities do
    assert _empty_cells(clustered_tsp(1000, seed)) > 2 * _empty_cells(uniform_tsp(1000, seed))


# ------------------------------------------------------------------------------------ gen: names


def test_parse_generated_names():
    qap = parse_generated("gen:qap:50")
    ref = random_qap(50, 1)
    assert isinstance(qap, QAP) and qap.name == "gen-qap-50-s1"
    assert np.array_equal(qap.flow, ref.flow) and np.array_equal(qap.distance, ref.distance)

    tsp = parse_generated("gen:tsp:1000:7")
    assert isinstance(tsp, TSP) and tsp.n == 1000 and tsp.name == "gen-tsp-1000-s7"
    assert np.array_equal(tsp.coords, uniform_tsp(1000, 7).coords)

    cl = parse_generated("gen:tsp-clustered:100")
    assert cl.name == "gen-tsp-clustered-100-s1" and cl.n == 100
    assert np.array_equal(cl.coords, clustered_tsp(100, 1).coords)

    un = parse_generated("gen:tsp-uniform:50:3")
    assert np.array_equal(un.coords, uniform_tsp(50, 3).coords)

    assert parse_generated("gen:qap:5:0").n == 5  # seed 0 is allowed


@pytest.mark.parametrize("spec", ["tai30a", "pr2392.tsp", "/tmp/gen:qap:5", "generic", "GEN:qap:5"])
def test_parse_generated_ignores_other_names(spec):
    assert parse_generated(spec) is None


@pytest.mark.parametrize(
    "spec, pattern",
    [
        ("gen:", "unknown built-in"),
        ("gen:qap", "unknown built-in"),
        ("gen:vrp:10", "unknown built-in"),
        ("gen:qap:10:1:2", "unknown built-in"),
        ("gen:qap:x", "bad built-in"),
        ("gen:qap:10:y", "bad built-in"),
        ("gen:tsp:1.5", "bad built-in"),
        ("gen:qap:10:-1", "seed must be >= 0"),
        ("gen:qap:5001", "too large"),
        ("gen:tsp:1000001", "too large"),
        ("gen:qap:0", "at least 1"),
        ("gen:tsp:2", "at least 3 cities"),
        ("gen:tsp-clustered:-4", "at least 3 cities"),
    ],
)
def test_parse_generated_errors(spec, pattern):
    with pytest.raises(MetaheurError, match=pattern):
        parse_generated(spec)


def test_load_instance_accepts_generated_names_and_objects():
    qap = load_instance("gen:qap:8:4")
    assert np.array_equal(qap.flow, random_qap(8, 4).flow)
    assert load_instance(qap) is qap
