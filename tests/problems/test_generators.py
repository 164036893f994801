"""The built-in ``gen:`` names (the seeded generators: qap/test_qap_generators.py,
tsp/test_tsp_generators.py)."""

from __future__ import annotations

import numpy as np
import pytest

from metaheur.errors import MetaheurError
from metaheur.problem.generators import parse_generated
from metaheur.problems import QAP, TSP, clustered_tsp, load_instance, random_qap, uniform_tsp

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
