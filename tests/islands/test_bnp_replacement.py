"""The best-non-penalised (BNP) replacement of memetic islands (Lugo, Segura and Miranda 2022)
and the permutation problems' distances it uses."""

import itertools

import numpy as np
import pytest

import metaheur
from metaheur.errors import MetaheurError
from metaheur.islands.island import IslandSpec, IslandState, run_epoch
from metaheur.islands.memetic import keep_non_penalised, mean_distance
from metaheur.islands.params import GAParams, IslandParams
from metaheur.problems.lop import random_lop


class _HammingOps:
    n = 10

    @staticmethod
    def distances(solution, population):
        return (population != solution[None, :]).sum(axis=1)


def _swapped(p, *pairs):
    q = p.copy()
    for i, j in pairs:
        q[[i, j]] = q[[j, i]]
    return q


A = np.arange(10)
B = _swapped(A, (0, 1))  # 2 from A
C = A[::-1].copy()  # 10 from A
D = np.roll(A, 1)  # 10 from A and from C
E = _swapped(A, (2, 3), (4, 5))  # 4 from A, 6 from B


def _state():
    return IslandState(0, population=np.array([A, B, C, D]), costs=np.array([10, 12, 30, 40], dtype=np.int64))


def test_bnp_keeps_the_best_then_the_best_of_those_far_enough():
    state = _state()
    keep_non_penalised(_HammingOps(), state, np.array([E, A.copy()]), np.array([11, 10]), threshold=3)
    # A (best, first of the tie with its copy), E (best at >= 3 from A), C, D; B (2 from A) and the
    # copy of A (0 from A) are penalised although better than C and D
    assert state.costs.tolist() == [10, 11, 30, 40]
    assert [p.tolist() for p in state.population] == [A.tolist(), E.tolist(), C.tolist(), D.tolist()]


def test_bnp_without_threshold_keeps_the_best():
    state = _state()
    keep_non_penalised(_HammingOps(), state, np.array([E, A.copy()]), np.array([11, 10]), threshold=0)
    assert state.costs.tolist() == [10, 10, 11, 12]


def test_bnp_above_every_distance_keeps_the_farthest():
    state = _state()
    keep_non_penalised(_HammingOps(), state, np.array([E]), np.array([11]), threshold=100)
    # after A: C and D both 10 away (C better); then D (10 from A and C) before E and B
    assert state.costs.tolist()[:3] == [10, 30, 40]


def test_mean_distance():
    assert mean_distance(_HammingOps(), np.array([A, B, C])) == pytest.approx((2 + 10 + 10) / 3)
    assert mean_distance(_HammingOps(), A[None]) == 0.0


def test_displacement_distance_is_spearmans_footrule():
    lop = random_lop(7, seed=2)
    lop.distance = "displacement"
    rng = np.random.default_rng(4)
    x, pop = rng.permutation(7), np.array([rng.permutation(7) for _ in range(5)])
    expected = [sum(abs(list(x).index(e) - list(p).index(e)) for e in range(7)) for p in pop]
    assert lop.distances(x, pop).tolist() == expected
    lop.distance = "positions"
    assert lop.distances(x, pop).tolist() == [int((p != x).sum()) for p in pop]
    lop.distance = "kendall"
    with pytest.raises(MetaheurError, match="distance must be"):
        lop.distances(x, pop)


def test_unknown_replacement_is_refused():
    with pytest.raises(MetaheurError, match="unknown replacement"):
        GAParams(replacement="generational")


def test_bnp_island_epochs_are_exact_and_seeded():
    lop = random_lop(30, seed=5)
    params = IslandParams(ga=GAParams(population=8, offspring=8, crossover="cx", ls_budget=0, restart_after=0,
                                      replacement="bnp"), perm=lop.default_params().perm)
    spec = IslandSpec(0, lop, lop.fingerprint(), "cpu", params, 777)

    def epochs():
        state = IslandState(0)
        for _ in range(3):
            state, _stats = run_epoch(spec, state, generations=4, limit=None, elapsed=0.0)
        return state

    one, two = epochs(), epochs()
    assert one.spread is not None and one.spread > 0
    assert one.population.shape == (8, 30)
    assert np.array_equal(one.population, two.population) and one.costs.tolist() == two.costs.tolist()
    assert one.costs.tolist() == (-lop.evaluate(one.population)).tolist()  # engine costs: minus the value
    assert len({tuple(p) for p in one.population}) > 1  # the threshold keeps distinct members
    assert one.best_cost == one.costs.min()


def test_solve_with_bnp_is_reproducible():
    lop = random_lop(25, seed=9)
    ga = GAParams(population=6, offspring=6, crossover="cx", ls_budget=0, restart_after=0, replacement="bnp")
    params = metaheur.SolveParams(ga=ga, strategy="cpu-islands", islands=2, sync=True)
    runs = [metaheur.solve(lop, generations=6, seed=3, params=params) for _ in range(2)]
    assert runs[0].value == runs[1].value == lop.value(runs[0].permutation)
    assert list(runs[0].permutation) == list(runs[1].permutation)


def test_footrule_of_all_orders_of_four():
    lop = random_lop(4, seed=1)
    lop.distance = "displacement"
    perms = np.array(list(itertools.permutations(range(4))))
    d = lop.distances(perms[0], perms)
    assert d.max() == 8 and d.min() == 0 and (d % 2 == 0).all()  # footrule is even, at most n^2 / 2
