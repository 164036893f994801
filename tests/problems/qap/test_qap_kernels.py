"""QAP swap-neighbourhood kernels (experiments/kernels/qap/qap_moves.cu) against the numpy reference
(tests/problems/qap/qap_reference.py), and the reference against the exact cost difference."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import qap_reference as R
from kernel_helpers import SIM_BLOCKS, random_perms

from metaheur.engine import load_module
from metaheur.errors import MetaheurError
from metaheur.problems import QAP, random_qap
from metaheur.problems.qap.device_data import qap_data

SIZES = [2, 3, 5, 31, 32, 33, 63, 65, 129]
UNSET = -7  # what the kernels must leave in the entries i >= j


def asymmetric_qap(n: int, seed: int) -> QAP:
    """Asymmetric flow and distance with negative entries and a non-zero diagonal."""
    rng = np.random.default_rng(seed)
    return QAP(f"asym{n}", rng.integers(-60, 100, size=(n, n)), rng.integers(-40, 90, size=(n, n)))


def symmetric_qap(n: int, seed: int) -> QAP:
    """Symmetric matrices with negative entries and a non-zero diagonal."""
    rng = np.random.default_rng(seed)
    mats = []
    for _ in range(2):
        m = rng.integers(-50, 100, size=(n, n))
        mats.append(np.triu(m) + np.triu(m, 1).T)
    return QAP(f"sym{n}", *mats)


def instance(kind: str, n: int, seed: int) -> QAP:
    return {"asym": asymmetric_qap, "sym": symmetric_qap}[kind](n, seed)


def modules(q: QAP):
    data = qap_data(q)
    return (data, load_module(R.QAP_MOVES, "cpu", data.defines),
            load_module(R.QAP_MOVES, "cpu", data.defines, sim=True))


def full(module, data, perms, block=1, threads=None):
    s, n = perms.shape
    delta = np.full((s, n, n), UNSET, np.int64)
    module.kernel("qap_delta_full")(s, block, (data.a, data.b, perms, delta, n), threads=threads)
    return delta


def apply_moves(perms: np.ndarray, moves: np.ndarray) -> np.ndarray:
    after = perms.copy()
    for sol, (r, s) in enumerate(moves):
        after[sol, [r, s]] = after[sol, [s, r]]
    return after


def update(module, data, after, moves, delta, block=1):
    s, n = after.shape
    work = np.zeros((s, 4 * n), np.int32)
    module.kernel("qap_delta_update")(s, block, (data.a, data.b, after, moves, delta, work, n))


def check_layout(delta: np.ndarray, reference: np.ndarray):
    n = delta.shape[-1]
    upper = np.triu(np.ones((n, n), bool), 1)
    assert np.array_equal(delta[upper], reference[upper])
    assert (delta[~upper] == UNSET).all(), "entries i >= j must not be written"


# ------------------------------------------------------------------------------------- reference


@pytest.mark.parametrize("n", [2, 3, 4, 5, 7, 8])
@pytest.mark.parametrize("kind", ["asym", "sym"])
def test_reference_delta_matrix_is_the_cost_difference(kind, n):
    q = instance(kind, n, seed=100 + n)
    rng = np.random.default_rng(n)
    for p in random_perms(rng, 4, n):
        matrix = R.delta_matrix(q.flow, q.distance, p)
        assert np.array_equal(matrix, np.triu(matrix, 1))
        for r, s in itertools.combinations(range(n), 2):
            exact = q.swap_delta(p, r, s)
            assert R.delta_pair(q.flow, q.distance, p, r, s) == exact
            assert matrix[r, s] == exact, (r, s)


def test_reference_update_equals_a_fresh_matrix():
    q = asymmetric_qap(23, 1)
    rng = np.random.default_rng(2)
    p = rng.permutation(23)
    delta = R.delta_matrix(q.flow, q.distance, p)
    for r, s in [(0, 22), (5, 3), (11, 12), (7, 7)]:
        p[[r, s]] = p[[s, r]]
        R.delta_update(q.flow, q.distance, p, delta, r, s)
        assert np.array_equal(delta, R.delta_matrix(q.flow, q.distance, p))


# ---------------------------------------------------------------------------------- delta_full


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("kind", ["asym", "sym"])
def test_delta_full_equals_reference(kind, n):
    q = instance(kind, n, seed=n)
    data, fast, _ = modules(q)
    assert data.symmetric == (kind == "sym")
    assert data.defines == ({"MH_QAP_SYMMETRIC": 1} if kind == "sym" else {})
    rng = np.random.default_rng(n)
    perms = random_perms(rng, 5 if n < 100 else 2, n)
    delta = full(fast, data, perms, threads=2)
    for sol, p in enumerate(perms):
        check_layout(delta[sol], R.delta_matrix(q.flow, q.distance, p))


@pytest.mark.parametrize("n", [5, 33])
def test_general_kernel_is_exact_on_symmetric_instances(n):
    """The asymmetric formula (no define) is also right for symmetric data."""
    q = symmetric_qap(n, seed=3)
    data = qap_data(q)
    general = load_module(R.QAP_MOVES, "cpu")
    perms = random_perms(np.random.default_rng(4), 3, n)
    delta = full(general, data, perms)
    for sol, p in enumerate(perms):
        check_layout(delta[sol], R.delta_matrix(q.flow, q.distance, p))


def test_random_qap_generator_instances():
    for sym in (False, True):
        q = random_qap(40, seed=9, symmetric=sym, zero_diagonal=sym)
        data, fast, _ = modules(q)
        perms = random_perms(np.random.default_rng(9), 3, 40)
        delta = full(fast, data, perms)
        for sol, p in enumerate(perms):
            check_layout(delta[sol], R.delta_matrix(q.flow, q.distance, p))


def test_large_entries_of_both_signs():
    """Entries near the int32 limits, of both signs: differences of entries do not fit int32.

    qap_data accepts the instance (its bound on deltas holds), so the kernels must be exact."""
    n = 6
    rng = np.random.default_rng(11)
    big = 2**31 - 1
    a = rng.choice([-big, -(2**30), 0, 3, 2**30, big], size=(n, n))
    b = rng.integers(-2, 3, size=(n, n))
    for q in (QAP("big-asym", a, b), QAP("big-sym", np.triu(a) + np.triu(a, 1).T, np.triu(b) + np.triu(b, 1).T)):
        try:
            data = qap_data(q)
        except MetaheurError:
            continue  # refusing such an instance is an acceptable fix too
        module = load_module(R.QAP_MOVES, "cpu", data.defines)
        perms = random_perms(rng, 3, n)
        delta = full(module, data, perms)
        for sol, p in enumerate(perms):
            reference = R.delta_matrix(q.flow, q.distance, p)
            assert reference[0, 5] == q.swap_delta(p, 0, 5) and reference[1, 2] == q.swap_delta(p, 1, 2)
            check_layout(delta[sol], reference)
        moves = np.array([[0, 5], [2, 1], [3, 4]], np.int32)
        after = apply_moves(perms, moves)
        update(module, data, after, moves, delta)
        for sol, p in enumerate(after):
            check_layout(delta[sol], R.delta_matrix(q.flow, q.distance, p))


# -------------------------------------------------------------------------------- delta_update


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("kind", ["asym", "sym"])
def test_delta_update_equals_reference(kind, n):
    q = instance(kind, n, seed=1000 + n)
    data, fast, _ = modules(q)
    rng = np.random.default_rng(n + 1)
    count = 6
    perms = random_perms(rng, count, n)
    delta = full(fast, data, perms)
    # random moves in both orders, the first and last unit, and one solution without a move
    moves = np.array([rng.choice(n, 2, replace=False) for _ in range(count)], np.int32)
    moves[0] = (0, n - 1)
    moves[1] = (n - 1, 0)
    moves[2] = (1, 1)
    after = apply_moves(perms, moves)
    expected = delta.copy()
    update(fast, data, after, moves, delta)
    for sol in range(count):
        if moves[sol, 0] == moves[sol, 1]:
            assert np.array_equal(delta[sol], expected[sol]), "no move: nothing changes"
            continue
        R.delta_update(q.flow, q.distance, after[sol], expected[sol], *moves[sol])
        check_layout(delta[sol], R.delta_matrix(q.flow, q.distance, after[sol]))
        assert np.array_equal(delta[sol], expected[sol])


@pytest.mark.parametrize("kind", ["asym", "sym"])
def test_twenty_incremental_updates_stay_exact(kind):
    n, count = 33, 3
    q = instance(kind, n, seed=77)
    data, fast, _ = modules(q)
    rng = np.random.default_rng(77)
    perms = random_perms(rng, count, n)
    delta = full(fast, data, perms)
    for _ in range(20):
        moves = np.array([rng.choice(n, 2, replace=False) for _ in range(count)], np.int32)
        perms = apply_moves(perms, moves)
        update(fast, data, perms, moves, delta)
        np.testing.assert_array_equal(delta, full(fast, data, perms))
    for sol, p in enumerate(perms):
        check_layout(delta[sol], R.delta_matrix(q.flow, q.distance, p))


# -------------------------------------------------------------------------------------- best_move


def best_moves(module, delta, perms, tabu, now, cost, best, block=1):
    s, n = perms.shape
    move = np.full((s, 2), -1, np.int32)
    value = np.zeros(s, np.int64)
    module.kernel("qap_best_move")(s, block, (delta, perms, tabu, now, cost, best, n, move, value))
    return move, value


def tabu_scenarios(q: QAP, perms: np.ndarray, delta: np.ndarray, rng):
    """(tabu, iter, cost, best) for each solution: several mixes of aspired / tabu / free moves."""
    s, n = perms.shape
    tabu = rng.integers(0, 40, size=(s, n, n)).astype(np.int32)
    now = np.full(s, 20, np.int64)
    cost = np.array([q.cost(p) for p in perms], np.int64)
    iu, ju = np.triu_indices(n, 1)
    upper = delta[:, iu, ju]
    best = cost.copy()  # no aspiration below the best delta
    best[0] = cost[0] + upper[0].min() - 1
    tabu[1] = 1000  # everything tabu: the least bad move
    best[1] = cost[1] + upper[1].min() - 1
    tabu[2] = 0  # nothing tabu
    if s > 3:
        best[3] = cost[3] + int(np.median(upper[3])) + 1  # some moves aspired, some not
        tabu[3] = 1000  # ... and all tabu: aspiration overrides it
    if s > 4:
        best[4] = cost[4] + upper[4].max() + 1  # every move aspired: the smallest delta
    return tabu, now, cost, best


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("kind", ["asym", "sym"])
def test_best_move_equals_reference(kind, n):
    q = instance(kind, n, seed=n + 5)
    data, fast, _ = modules(q)
    rng = np.random.default_rng(n + 5)
    perms = random_perms(rng, 6, n)
    delta = full(fast, data, perms)
    tabu, now, cost, best = tabu_scenarios(q, perms, delta, rng)
    move, value = best_moves(fast, delta, perms, tabu, now, cost, best)
    for sol in range(len(perms)):
        i, j, d = R.best_move(delta[sol], perms[sol], tabu[sol], int(now[sol]), int(cost[sol]), int(best[sol]))
        assert (move[sol, 0], move[sol, 1], value[sol]) == (i, j, d), sol
        assert i < j and d == q.swap_delta(perms[sol], i, j)


def test_best_move_ties_go_to_the_smallest_pair():
    n = 9
    q = QAP("ties", np.ones((n, n), np.int64), np.ones((n, n), np.int64))  # every delta is 0
    data, fast, sim = modules(q)
    perms = random_perms(np.random.default_rng(1), 3, n)
    delta = full(fast, data, perms)
    assert not np.triu(delta[0], 1).any()
    tabu = np.zeros((3, n, n), np.int32)
    tabu[1] = 50  # all tabu
    tabu[2, 0, :] = 50  # unit 0 tabu everywhere, but a move is tabu only when BOTH units are
    tabu[2, :, perms[2, 0]] = 50  # ... and every unit is tabu at unit 0's location: (0, j) is tabu
    now = np.full(3, 10, np.int64)
    cost = np.zeros(3, np.int64)
    best = np.zeros(3, np.int64)
    for module, block in ((fast, 1), (sim, (4, 2)), (sim, (3, 3))):
        move, value = best_moves(module, delta, perms, tabu, now, cost, best, block)
        assert move.tolist() == [[0, 1], [0, 1], [1, 2]]
        assert not value.any()


# ------------------------------------------------------------------------------ sim mode vs fast


@pytest.mark.parametrize("n", [2, 5, 33])
@pytest.mark.parametrize("kind", ["asym", "sym"])
def test_sim_mode_equals_fast_mode(kind, n):
    q = instance(kind, n, seed=n + 50)
    data, fast, sim = modules(q)
    rng = np.random.default_rng(n + 50)
    perms = random_perms(rng, 3, n)
    base = full(fast, data, perms)
    moves = np.array([rng.choice(n, 2, replace=False) for _ in range(3)], np.int32)
    after = apply_moves(perms, moves)
    updated = base.copy()
    update(fast, data, after, moves, updated)
    tabu, now, cost, best = tabu_scenarios(q, perms, base, rng)
    move, value = best_moves(fast, base, perms, tabu, now, cost, best)
    for block in SIM_BLOCKS:
        np.testing.assert_array_equal(full(sim, data, perms, block), base, err_msg=str(block))
        d = base.copy()
        update(sim, data, after, moves, d, block)
        np.testing.assert_array_equal(d, updated, err_msg=str(block))
        m2, v2 = best_moves(sim, base, perms, tabu, now, cost, best, block)
        np.testing.assert_array_equal(m2, move, err_msg=str(block))
        np.testing.assert_array_equal(v2, value, err_msg=str(block))


def test_openmp_threads_do_not_change_results():
    q = asymmetric_qap(40, 8)
    data, fast, _ = modules(q)
    perms = random_perms(np.random.default_rng(8), 16, 40)
    np.testing.assert_array_equal(full(fast, data, perms, threads=1), full(fast, data, perms, threads=2))
