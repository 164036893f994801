"""The seeded QAP generator (random_qap; split from tests/problems/test_generators.py)."""

from __future__ import annotations

import numpy as np
import pytest

from metaheur.errors import MetaheurError
from metaheur.problems import QAP, random_qap

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
