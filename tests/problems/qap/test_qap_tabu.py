"""Robust tabu search (kernels/qap/qap_tabu.cu through metaheur.problems.qap.tabu.QAPTabuBatch).

The strongest check is the first one: the kernel follows the independent C yardstick
``yardsticks/rots.c`` exactly. With the same random stream and start permutation both produce the
same best cost after the same number of iterations, at every checkpoint of a run of a few
thousand iterations, on symmetric (tai*a), asymmetric (tai*b, bur*) and generated instances with
negative entries and non-zero diagonals.

rots.c starts from the identity shuffled by Fisher-Yates with ``rnd() % (i + 1)`` where ``rnd()`` is
SplitMix64 on the state ``seed``: draw ``k`` is ``metaheur.engine.rng.rand64(seed, k)``. After the
shuffle (n - 1 draws) the tenures continue the same stream, so the batch gets ``keys=[seed]`` and
``counters=[n - 1]``.
"""

from __future__ import annotations

import itertools
import os
import pickle
import re
import shutil
import subprocess
import time
from pathlib import Path

import numpy as np
import pytest

from metaheur.engine import load_module
from metaheur.errors import MetaheurError
from metaheur.problems import QAP, random_qap, read_qaplib
from metaheur.problems.qap.device_data import DELTA32_LIMIT, delta_bound
from metaheur.problems.qap.params import KERNELS
from metaheur.problems.qap.tabu import (
    BASE,
    ENTRY_LIMIT,
    ITER,
    SAVED_SEARCH,
    QAPTabuBatch,
    TabuParams,
    fresh_searches,
    yardstick_start,
)

# the yardstick lives next to the repository (shared/yardsticks/rots.c), as experiments/lib/yardstick.py expects
YARDSTICK = Path(os.environ.get("METAHEUR_YARDSTICK",
                                Path(__file__).resolve().parents[4] / "shared" / "yardsticks" / "rots.c"))
CHECKPOINTS = (1, 2, 5, 10, 30, 100, 300, 1000, 2000, 4000)

# --------------------------------------------------------------------------------------- helpers


def write_dat(path: Path, qap: QAP) -> Path:
    rows = [str(qap.n), ""]
    for m in (qap.flow, qap.distance):
        rows += [" ".join(str(int(x)) for x in row) for row in m]
        rows.append("")
    path.write_text("\n".join(rows))
    return path


def random_instance(n: int, seed: int, *, low: int = -60, high: int = 60) -> QAP:
    """Asymmetric matrices with negative entries and a non-zero diagonal."""
    rng = np.random.default_rng(seed)
    return QAP(f"rand{n}-{seed}", rng.integers(low, high, (n, n)), rng.integers(low, high, (n, n)))


def brute_force(qap: QAP) -> int:
    return min(qap.cost(p) for p in itertools.permutations(range(qap.n)))


@pytest.fixture(scope="module")
def rots(tmp_path_factory) -> Path:
    """rots.c compiled as its header says (skip without gcc or the yardstick)."""
    gcc = shutil.which("gcc")
    if gcc is None:
        pytest.skip("gcc not found: cannot build the rots.c yardstick")
    if not YARDSTICK.is_file():
        pytest.skip(f"yardstick {YARDSTICK} not found (set METAHEUR_YARDSTICK)")
    exe = tmp_path_factory.mktemp("rots") / "rots"
    build = subprocess.run([gcc, "-O3", "-march=native", "-o", str(exe), str(YARDSTICK)],
                           capture_output=True, text=True)
    if build.returncode != 0:  # -march=native is not known to every gcc: the plain build is equivalent
        build = subprocess.run([gcc, "-O3", "-o", str(exe), str(YARDSTICK)], capture_output=True, text=True)
    assert build.returncode == 0, build.stderr
    return exe


def rots_best(exe: Path, dat: Path, iterations: int, seed: int) -> int:
    out = subprocess.run([str(exe), str(dat), str(iterations), str(seed)], capture_output=True, text=True,
                         timeout=60, env={**os.environ, "ROTS_CHECK": "0"})
    assert out.returncode == 0, out.stderr
    m = re.search(r"best=(-?\d+) iters=(\d+)", out.stdout)
    assert m, out.stdout
    assert int(m.group(2)) == iterations
    return int(m.group(1))


def trajectory(qap: QAP, seed: int, checkpoints=CHECKPOINTS) -> list[int]:
    """Best cost of our kernel at each checkpoint of one continued run from rots.c's start."""
    p0, draws = yardstick_start(qap.n, seed)
    batch = QAPTabuBatch(qap, "cpu", starts=p0[None], keys=[seed], counters=[draws])
    bests, done = [], 0
    for k in checkpoints:
        r = batch.run(k - done)
        done = k
        assert int(r.iterations[0]) == k
        assert qap.cost(r.best[0]) == int(r.best_costs[0])
        bests.append(int(r.best_costs[0]))
    return bests


def assert_follows_rots(exe: Path, dat: Path, qap: QAP, seed: int) -> list[int]:
    ours = trajectory(qap, seed)
    theirs = [rots_best(exe, dat, k, seed) for k in CHECKPOINTS]
    assert ours == theirs, f"{qap.name} seed {seed}: kernel {ours} vs rots.c {theirs} at {CHECKPOINTS}"
    return ours


# ------------------------------------------------------------------------- trajectory vs rots.c


@pytest.mark.parametrize(("name", "seed"), [
    ("tai20a", 1), ("tai25a", 12345),  # symmetric
    ("tai20b", 7), ("tai25b", 99),  # symmetric flow, asymmetric distance
    ("bur26a", 3), ("bur26d", 2024),  # both asymmetric, non-zero diagonals
])
def test_trajectory_equals_rots_on_qaplib(rots, instances_dir, name, seed):
    dat = instances_dir / "qaplib" / f"{name}.dat"
    if not dat.is_file():
        pytest.skip(f"{dat} not found")
    qap = read_qaplib(dat)
    bests = assert_follows_rots(rots, dat, qap, seed)
    assert bests[0] > bests[-1], "the run should improve: otherwise the comparison proves little"


@pytest.mark.parametrize(("n", "seed"), [(13, 1), (31, 2), (40, 3)])
def test_trajectory_equals_rots_on_generated_asymmetric_negative(rots, tmp_path, n, seed):
    qap = random_instance(n, seed)
    assert not np.array_equal(qap.flow, qap.flow.T) and np.diagonal(qap.flow).any() and qap.flow.min() < 0
    dat = write_dat(tmp_path / f"{qap.name}.dat", qap)
    assert_follows_rots(rots, dat, qap, seed)


def test_trajectory_equals_rots_on_generated_symmetric(rots, tmp_path):
    qap = random_qap(33, seed=8)
    dat = write_dat(tmp_path / "sym33.dat", qap)
    assert_follows_rots(rots, dat, qap, 8)


def test_continued_run_equals_one_long_run():
    qap = random_instance(24, 5)
    p0, draws = yardstick_start(qap.n, 5)
    one = QAPTabuBatch(qap, "cpu", starts=p0[None], keys=[5], counters=[draws]).run(3000)
    assert trajectory(qap, 5, (7, 500, 1234, 3000))[-1] == int(one.best_costs[0])


# ------------------------------------------------------------------- tracked costs are exact


@pytest.mark.parametrize("tenure", ["cubic", "uniform"])
@pytest.mark.parametrize(("n", "seed"), [(2, 1), (3, 2), (7, 3), (16, 4), (29, 5)])
def test_tracked_costs_equal_exact_costs(n, seed, tenure):
    qap = random_instance(n, seed)
    batch = QAPTabuBatch(qap, "cpu", count=4, seed=seed, params=TabuParams(tenure=tenure))
    for budget in (1, 50, 400):
        r = batch.run(budget)
        assert r.best.shape == (4, n)
        for k in range(4):
            assert sorted(r.best[k]) == list(range(n))
            assert qap.cost(r.best[k]) == int(r.best_costs[k])
        current, costs = batch.current()
        for k in range(4):
            assert qap.cost(current[k]) == int(costs[k])
            assert int(costs[k]) >= int(r.best_costs[k])


@pytest.mark.parametrize("tenure", ["cubic", "uniform"])
def test_tracked_costs_exact_with_large_entries(tenure):
    """Flows just below the 2^29 limit (int32 differences of entries, int64 products and sums)."""
    rng = np.random.default_rng(11)
    big = ENTRY_LIMIT - 1
    qap = QAP("big", rng.integers(-big, big + 1, (12, 12)), rng.integers(-1000, 1001, (12, 12)))
    r = QAPTabuBatch(qap, "cpu", count=3, seed=2, params=TabuParams(tenure=tenure)).run(300)
    for k in range(3):
        assert qap.cost(r.best[k]) == int(r.best_costs[k])


def int64_delta_batch(monkeypatch, qap: QAP, **kwargs) -> QAPTabuBatch:
    """A batch forced onto the int64-delta build (as if the int32 bound did not hold)."""
    with monkeypatch.context() as m:
        m.setattr("metaheur.problems.qap.device_data.DELTA32_LIMIT", 0)
        batch = QAPTabuBatch(qap, "cpu", **kwargs)
    assert not batch.data.delta32 and batch.delta.dtype == np.int64
    return batch


@pytest.mark.parametrize("tenure", ["cubic", "uniform"])
@pytest.mark.parametrize(("kind", "n"), [("asym", 23), ("sym", 40)])
def test_int32_deltas_follow_the_int64_build(monkeypatch, tenure, kind, n):
    """The int32-delta build (chosen when the bound fits) makes the very same moves."""
    qap = random_instance(n, n) if kind == "asym" else random_qap(n, seed=n)
    params = TabuParams(tenure=tenure)
    fast = QAPTabuBatch(qap, "cpu", count=3, seed=4, params=params)
    assert fast.data.delta32 and fast.delta.dtype == np.int32
    slow = int64_delta_batch(monkeypatch, qap, count=3, seed=4, params=params)
    for budget in (1, 300, 2000):
        a, b = fast.run(budget), slow.run(budget)
        assert np.array_equal(a.best, b.best) and np.array_equal(a.best_costs, b.best_costs)
        assert np.array_equal(fast.current()[0], slow.current()[0])


@pytest.mark.parametrize("delta32", [True, False])
@pytest.mark.parametrize(("kind", "n"), [("asym", 21), ("sym", 30)])
def test_gpu_block_shape_makes_the_cpu_builds_moves(monkeypatch, delta32, kind, n):
    """The kernel's GPU code paths (many threads a block, barriers, the block-wide argmin, the
    per-thread sums of the pairs a move touches) run in the CPU simulation of a block of 8 x 4
    threads and make the very moves of the one-thread CPU build."""
    qap = random_instance(n, n) if kind == "asym" else random_qap(n, seed=n)
    def make() -> QAPTabuBatch:
        return QAPTabuBatch(qap, "cpu", count=2, seed=3) if delta32 else int64_delta_batch(monkeypatch, qap, count=2,
                                                                                           seed=3)
    fast, sim = make(), make()
    assert fast.data.delta32 == delta32
    sim.kernel = load_module("qap/qap_tabu.cu", "cpu", sim.data.tabu_defines, sim=True).kernel("qap_tabu_run")
    sim.block = (8, 4)
    starts = np.array([np.random.default_rng(k).permutation(n) for k in range(2)])
    for batch in (fast, sim):
        batch.restart(starts, [11, 12])
    for budget in (1, 400):
        a, b = fast.run(budget), sim.run(budget)
        assert np.array_equal(a.best, b.best) and np.array_equal(a.best_costs, b.best_costs)
        assert np.array_equal(fast.current()[0], sim.current()[0])
        assert np.array_equal(a.iterations, b.iterations)


def test_int32_deltas_at_their_bound(monkeypatch):
    """Dense entries of both signs as large as the int32-delta bound allows: still exact, still
    the int64 build's moves; twice the distances select the int64 build."""
    n, amax = 20, 1000
    bmax = (DELTA32_LIMIT - 1) // ((8 * n + 64) * amax)
    rng = np.random.default_rng(5)
    qap = QAP("edge", rng.choice([-amax, amax], (n, n)), rng.choice([-bmax, bmax], (n, n)))
    assert delta_bound(qap) == (8 * n + 64) * amax * bmax < DELTA32_LIMIT
    fast = QAPTabuBatch(qap, "cpu", count=2, seed=1)
    assert fast.data.delta32
    slow = int64_delta_batch(monkeypatch, qap, count=2, seed=1)
    a, b = fast.run(1500), slow.run(1500)
    assert np.array_equal(a.best, b.best)
    for k in range(2):
        assert qap.cost(a.best[k]) == int(a.best_costs[k])
        assert qap.cost(fast.current()[0][k]) == int(fast.current()[1][k])
    wider = QAP("wider", qap.flow, qap.distance * 2)
    assert not QAPTabuBatch(wider, "cpu", count=1, seed=1).data.delta32


def test_delta_bound_holds_and_uses_row_sums():
    """Every swap delta is within the bound; sparse flows (row sums far below n max|a|) get a
    bound far below (8n + 64) max|a| max|b|."""
    rng = np.random.default_rng(8)
    n = 30
    flow = rng.integers(-500, 501, (n, n)) * (rng.random((n, n)) < 0.1)
    qap = QAP("sparse", flow, rng.integers(-900, 901, (n, n)))
    bound = delta_bound(qap)
    assert bound < (8 * n + 64) * 500 * 900 / 2
    for _ in range(20):
        p = rng.permutation(n)
        base = qap.cost(p)
        for r, s in itertools.combinations(range(n), 2):
            q = p.copy()
            q[[r, s]] = q[[s, r]]
            assert abs(qap.cost(q) - base) <= bound


@pytest.mark.parametrize("tenure", ["cubic", "uniform"])
@pytest.mark.parametrize("n", [4, 6, 7])
def test_tiny_instances_reach_the_brute_force_optimum(n, tenure):
    qap = random_instance(n, 100 + n)
    r = QAPTabuBatch(qap, "cpu", count=2, seed=n, params=TabuParams(tenure=tenure)).run(2000)
    assert int(r.best_costs.min()) == brute_force(qap)


# -------------------------------------------------------------------------- reproducibility


@pytest.mark.parametrize("tenure", ["cubic", "uniform"])
def test_same_seed_same_result(tenure):
    qap = random_instance(20, 9)
    runs = [QAPTabuBatch(qap, "cpu", count=3, seed=42, params=TabuParams(tenure=tenure)).run(700) for _ in range(2)]
    a, b = runs
    assert np.array_equal(a.best, b.best)
    assert np.array_equal(a.best_costs, b.best_costs)
    assert np.array_equal(a.iterations, b.iterations)
    assert np.array_equal(a.extra["current_costs"], b.extra["current_costs"])
    assert np.array_equal(a.extra["best_iteration"], b.extra["best_iteration"])


def test_searches_are_independent_of_their_batch():
    """Search k of a batch gives what the same search gives alone (same start, key and counter)."""
    qap = random_instance(18, 4)
    rng = np.random.default_rng(0)
    starts = np.array([rng.permutation(qap.n) for _ in range(3)])
    keys = np.array([11, 22, 33], dtype=np.uint64)
    together = QAPTabuBatch(qap, "cpu", starts=starts, keys=keys).run(600)
    for k in range(3):
        alone = QAPTabuBatch(qap, "cpu", starts=starts[k:k + 1], keys=keys[k:k + 1]).run(600)
        assert np.array_equal(alone.best[0], together.best[k])
        assert int(alone.best_costs[0]) == int(together.best_costs[k])


def test_different_keys_give_different_searches():
    qap = random_instance(25, 6)
    start = np.tile(np.arange(qap.n), (2, 1))
    r = QAPTabuBatch(qap, "cpu", starts=start, keys=[1, 2]).run(500)
    assert not np.array_equal(r.extra["best_iteration"][0], r.extra["best_iteration"][1]) or \
        not np.array_equal(r.best[0], r.best[1])


def test_tenure_rules_differ():
    qap = random_instance(25, 7)
    a = QAPTabuBatch(qap, "cpu", count=2, seed=3, params=TabuParams(tenure="cubic")).run(800)
    b = QAPTabuBatch(qap, "cpu", count=2, seed=3, params=TabuParams(tenure="uniform")).run(800)
    assert not (np.array_equal(a.best, b.best) and np.array_equal(a.extra["best_iteration"],
                                                                  b.extra["best_iteration"]))


@pytest.mark.parametrize("scale", [2, 5])
def test_cubic_tenures_are_at_most_scale_times_n(scale):
    """Rule 0 draws floor(u^3 * scale * n): no tabu time reaches past the iteration plus scale * n,
    while Taillard's scale 8 goes past it within a few hundred iterations."""
    qap = random_instance(20, 4)
    n, iters = qap.n, 400

    def furthest(params):
        batch = QAPTabuBatch(qap, "cpu", count=3, seed=9, params=params)
        batch.run(iters)
        saved = batch.snapshot()
        now = saved["stats"][:, ITER] - saved["stats"][:, BASE]  # tabu times count from the base
        return int((saved["tabu"] - now[:, None, None]).max())

    assert 0 < furthest(TabuParams(scale=scale)) <= scale * n
    assert furthest(TabuParams()) > scale * n


def test_tenure_scale_eight_is_taillards_default():
    qap = random_instance(20, 5)
    a = QAPTabuBatch(qap, "cpu", count=2, seed=4).run(500)
    b = QAPTabuBatch(qap, "cpu", count=2, seed=4, params=TabuParams(scale=8)).run(500)
    c = QAPTabuBatch(qap, "cpu", count=2, seed=4, params=TabuParams(scale=3)).run(500)
    assert np.array_equal(a.best, b.best) and np.array_equal(a.extra["best_iteration"], b.extra["best_iteration"])
    assert not (np.array_equal(a.best, c.best) and np.array_equal(a.extra["best_iteration"],
                                                                  c.extra["best_iteration"]))


def test_tenure_scale_out_of_range_is_refused():
    with pytest.raises(MetaheurError, match="tenure scale"):
        TabuParams(scale=0)
    with pytest.raises(MetaheurError, match="tenure scale must be from 1 to 1048575, got 1048576"):
        TabuParams(scale=2**20)
    qap = random_instance(1100, 5)  # scale x n of the largest scale passes 2^30 from n = 1025
    with pytest.raises(MetaheurError, match=r"tenure scale x n must be below 2\^30, got 1048575 x 1100"):
        QAPTabuBatch(qap, "cpu", count=1, params=TabuParams(scale=2**20 - 1))
    QAPTabuBatch(random_instance(20, 5), "cpu", count=1, params=TabuParams(scale=2**20 - 1)).run(50)


# ------------------------------------------------------------------------------------ restart


def test_restart_equals_a_fresh_batch():
    qap = random_instance(21, 3)
    rng = np.random.default_rng(5)
    first = np.array([rng.permutation(qap.n) for _ in range(3)])
    second = np.array([rng.permutation(qap.n) for _ in range(3)])
    keys2 = np.array([7, 8, 9], dtype=np.uint64)
    batch = QAPTabuBatch(qap, "cpu", starts=first, keys=[1, 2, 3])
    batch.run(900)  # leaves tabu memory, deltas and bests behind
    batch.restart(second, keys2, counters=[4, 5, 6])
    after_restart = batch.run(600)
    fresh = QAPTabuBatch(qap, "cpu", starts=second, keys=keys2, counters=[4, 5, 6]).run(600)
    assert np.array_equal(after_restart.best, fresh.best)
    assert np.array_equal(after_restart.best_costs, fresh.best_costs)
    assert np.array_equal(after_restart.iterations, fresh.iterations)  # counted from the restart
    assert np.array_equal(after_restart.extra["best_iteration"], fresh.extra["best_iteration"])
    for k in range(3):
        assert qap.cost(after_restart.best[k]) == int(after_restart.best_costs[k])


def test_restart_forgets_the_previous_best():
    """The best of a restarted search is its own, even when the previous search found better."""
    qap = random_instance(15, 8)
    batch = QAPTabuBatch(qap, "cpu", count=1, seed=1)
    good = batch.run(3000)
    worst_start = max((np.random.default_rng(s).permutation(qap.n) for s in range(30)), key=qap.cost)
    batch.restart(worst_start[None], [5])
    r = batch.run(1)
    assert int(r.iterations[0]) == 1
    assert int(r.best_costs[0]) >= int(good.best_costs[0])
    assert qap.cost(r.best[0]) == int(r.best_costs[0])
    assert int(r.best_costs[0]) <= qap.cost(worst_start)


# ----------------------------------------------------------------------------- saved searches


@pytest.mark.parametrize("tenure", ["cubic", "uniform"])
@pytest.mark.parametrize(("kind", "n"), [("asym", 19), ("sym", 26)])
def test_resumed_searches_follow_one_uninterrupted_search(tenure, kind, n):
    """A search saved, pickled and resumed in another batch (with the aspiration horizon short
    enough to fire) makes the moves the uninterrupted search makes."""
    qap = random_instance(n, 6) if kind == "asym" else random_qap(n, seed=6, symmetric=True)
    params = TabuParams(tenure=tenure, aspiration=3 * n)
    rng = np.random.default_rng(2)
    starts = np.array([rng.permutation(n) for _ in range(3)])
    whole = QAPTabuBatch(qap, "cpu", starts=starts, keys=[4, 5, 6], params=params)
    whole.run(2500)
    pieces = QAPTabuBatch(qap, "cpu", starts=starts, keys=[4, 5, 6], params=params)
    for budget in (1, 700, 1, 1798):
        pieces.run(budget)
        saved = pickle.loads(pickle.dumps(pieces.snapshot()))
        pieces = QAPTabuBatch(qap, "cpu", count=3, seed=99, params=params)
        pieces.resume(saved)
    a, b = whole.snapshot(), pieces.snapshot()
    assert tuple(a) == SAVED_SEARCH
    for name in SAVED_SEARCH:
        assert np.array_equal(a[name], b[name]), name
    assert int(b["stats"][0, 2]) == 2500


def test_fresh_searches_resume_as_new_searches():
    qap = random_instance(17, 4)
    rng = np.random.default_rng(3)
    starts = np.array([rng.permutation(qap.n) for _ in range(2)])
    new = QAPTabuBatch(qap, "cpu", starts=starts, keys=[8, 9], counters=[3, 0]).run(400)
    batch = QAPTabuBatch(qap, "cpu", count=2, seed=1)
    batch.run(50)
    batch.resume(fresh_searches(qap, starts, [8, 9], counters=[3, 0]))
    resumed = batch.run(400)
    assert np.array_equal(new.best, resumed.best)
    assert np.array_equal(new.best_costs, resumed.best_costs)
    assert np.array_equal(new.iterations, resumed.iterations)


def test_resume_leaves_the_saved_state_alone():
    qap = random_instance(12, 2)
    batch = QAPTabuBatch(qap, "cpu", count=2, seed=3)
    batch.run(100)
    saved = batch.snapshot()
    kept = {k: v.copy() for k, v in saved.items()}
    batch.resume(saved)
    batch.run(300)
    for name, value in kept.items():
        assert np.array_equal(saved[name], value), name


def test_resume_rejects_another_shape():
    qap = random_instance(10, 1)
    saved = QAPTabuBatch(qap, "cpu", count=3, seed=1).snapshot()
    with pytest.raises(MetaheurError, match="holds 1 to 2 searches, not 3"):
        QAPTabuBatch(qap, "cpu", count=2, seed=1).resume(saved)
    saved["tabu"] = saved["tabu"][:, :9]
    with pytest.raises(MetaheurError, match="resume needs the state of 3 searches of size 10"):
        QAPTabuBatch(qap, "cpu", count=3, seed=1).resume(saved)


def test_restart_rejects_a_wrong_shape():
    qap = random_instance(10, 1)
    batch = QAPTabuBatch(qap, "cpu", count=2, seed=1)
    with pytest.raises(MetaheurError, match="holds 1 to 2 searches, not 3"):
        batch.restart(np.tile(np.arange(10), (3, 1)), [1, 2, 3])
    with pytest.raises(MetaheurError, match="restart needs permutations of size 10"):
        batch.restart(np.tile(np.arange(9), (2, 1)), [1, 2])


def test_fewer_searches_in_a_larger_batch_run_as_in_their_own():
    """A batch reused for fewer searches than its capacity (an island's one batch after the
    balancer shrinks it, or a halved batch after running out of memory) gives each search the
    same walk as a batch of exactly that many."""
    qap = random_instance(11, 4)
    rng = np.random.default_rng(5)
    starts = np.array([rng.permutation(11) for _ in range(4)])
    keys = np.array([7, 8, 9, 10], dtype=np.uint64)
    own = QAPTabuBatch(qap, "cpu", starts=starts[:2], keys=keys[:2]).run(300)
    large = QAPTabuBatch(qap, "cpu", starts=starts, keys=keys)
    large.run(50)
    large.restart(starts[:2], keys[:2])
    reused = large.run(300)
    assert np.array_equal(own.best, reused.best) and np.array_equal(own.best_costs, reused.best_costs)
    walks = fresh_searches(qap, starts[2:], keys[2:])
    large.resume(walks)
    resumed = large.run(300)
    again = QAPTabuBatch(qap, "cpu", starts=starts[2:], keys=keys[2:]).run(300)
    assert np.array_equal(resumed.best, again.best) and large.snapshot()["tabu"].shape == (2, 11, 11)


# ------------------------------------------------------------------------------- stop rules


def test_target_stops_early():
    qap = random_instance(30, 2)
    loose = QAPTabuBatch(qap, "cpu", count=2, seed=4).run(5000)
    # a target every search passes early: the cost reached after a few hundred iterations
    target = int(QAPTabuBatch(qap, "cpu", count=2, seed=4).run(300).best_costs.min())
    r = QAPTabuBatch(qap, "cpu", count=2, seed=4).run(5000, target=target)
    assert r.stop_reason == "target"
    assert int(r.best_costs.min()) <= target
    assert int(r.iterations.max()) < 5000
    assert int(loose.iterations.max()) == 5000 and loose.stop_reason == "iterations"
    k = r.best_index
    assert qap.cost(r.best[k]) == int(r.best_costs[k])


def test_target_already_met_stops_at_once():
    qap = random_instance(12, 2)
    r = QAPTabuBatch(qap, "cpu", count=2, seed=1).run(100_000, target=10**12)
    assert r.stop_reason == "target"
    assert int(r.iterations.max()) < 100_000


def test_unreachable_target_runs_the_budget():
    qap = random_instance(12, 2)
    r = QAPTabuBatch(qap, "cpu", count=2, seed=1).run(700, target=-(10**12))
    assert r.stop_reason == "iterations"
    assert list(r.iterations) == [700, 700]


def test_time_limit_is_respected_roughly():
    qap = random_qap(120, seed=3)
    batch = QAPTabuBatch(qap, "cpu", count=2, seed=1)
    t0 = time.perf_counter()
    r = batch.run(time_limit=0.3)
    wall = time.perf_counter() - t0
    assert r.stop_reason == "time_limit"
    assert wall < 5.0  # generous: the machine is shared; the pacer aims at a few percent
    assert int(r.iterations.min()) > 0
    assert qap.cost(r.best[0]) == int(r.best_costs[0])


def test_iteration_budget_with_a_generous_time_limit_runs_the_budget():
    qap = random_instance(14, 1)
    r = QAPTabuBatch(qap, "cpu", count=1, seed=1).run(500, time_limit=60.0)
    assert r.stop_reason == "iterations"
    assert int(r.iterations[0]) == 500


def test_run_needs_a_budget():
    batch = QAPTabuBatch(random_instance(6, 1), "cpu", count=1, seed=1)
    with pytest.raises(MetaheurError, match="iteration budget or a time limit"):
        batch.run()


# ------------------------------------------------------------------------------- validation


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"tenure": "quadratic"}, "tenure rule must be one of cubic, uniform"),
    ({"tenure": ""}, "tenure rule"),
    ({"aspiration": 0}, "aspiration horizon must be at least 1"),
    ({"aspiration": -5}, "aspiration horizon must be at least 1"),
])
def test_tabu_params_validation(kwargs, message):
    with pytest.raises(MetaheurError, match=message):
        TabuParams(**kwargs)


def test_tabu_params_valid():
    assert TabuParams().tenure == "cubic" and TabuParams().aspiration is None
    assert TabuParams(tenure="uniform", aspiration=1).aspiration == 1


@pytest.mark.parametrize("entry", [ENTRY_LIMIT, -ENTRY_LIMIT, ENTRY_LIMIT + 1, 2**31 - 1, 2**40])
@pytest.mark.parametrize("matrix", ["flow", "distance"])
def test_entries_at_or_above_2_pow_29_are_rejected(entry, matrix):
    a = np.ones((5, 5), dtype=np.int64)
    b = np.ones((5, 5), dtype=np.int64)
    (a if matrix == "flow" else b)[1, 3] = entry
    qap = QAP("huge", a, b)
    with pytest.raises(MetaheurError, match="2\\^29"):
        QAPTabuBatch(qap, "cpu", count=1, seed=1)


def test_entries_just_below_2_pow_29_are_accepted():
    a = np.array([[ENTRY_LIMIT - 1, -(ENTRY_LIMIT - 1)], [3, ENTRY_LIMIT - 1]]).repeat(2, 0).repeat(2, 1)
    b = np.arange(16).reshape(4, 4) - 8
    qap = QAP("edge", a, b)
    r = QAPTabuBatch(qap, "cpu", count=1, seed=1).run(10)
    assert int(r.best_costs[0]) == qap.cost(r.best[0])


def test_costs_beyond_the_exact_64_bit_range_are_rejected():
    big = ENTRY_LIMIT - 1
    qap = QAP("wide", np.full((40, 40), big), np.full((40, 40), big))
    with pytest.raises(MetaheurError, match="2\\^60"):
        QAPTabuBatch(qap, "cpu", count=1, seed=1)


def test_bad_starts_and_counts_are_rejected():
    qap = random_instance(6, 1)
    with pytest.raises(MetaheurError):
        QAPTabuBatch(qap, "cpu")  # neither count nor starts
    with pytest.raises(MetaheurError):
        QAPTabuBatch(qap, "cpu", count=0)
    with pytest.raises(MetaheurError):
        QAPTabuBatch(qap, "cpu", starts=np.array([[0, 1, 2, 3, 4, 4]]))
    with pytest.raises(MetaheurError):
        QAPTabuBatch(qap, "cpu", starts=np.arange(5)[None])


# ------------------------------------------------------------- time limits on a simulated clock


class SimulatedClock:
    """A clock that only moves when a kernel launch "runs": ``cost`` seconds per iteration of one
    search. With it the pacing of launches is tested exactly, whatever the machine's load."""

    def __init__(self, cost: float):
        self.cost = cost
        self.now = 1000.0
        self.launches: list[int] = []

    def perf_counter(self) -> float:
        return self.now

    def install(self, monkeypatch):
        import metaheur.search.batch as batch_module

        monkeypatch.setattr(batch_module, "time", self)  # the launch pacing times every launch there
        launch = QAPTabuBatch._launch
        clock = self

        def timed(batch, iterations, target, init=0):
            launch(batch, iterations, target, init)
            clock.launches.append(int(iterations))
            clock.now += iterations * batch.count * clock.cost

        monkeypatch.setattr(QAPTabuBatch, "_launch", timed)


def test_time_limit_is_honoured_within_a_few_percent_on_a_simulated_clock(monkeypatch):
    clock = SimulatedClock(cost=2e-5)  # 1,000 iterations of 2 searches: 0.04 s
    clock.install(monkeypatch)
    qap = random_instance(30, 3)
    batch = QAPTabuBatch(qap, "cpu", count=2, seed=1)
    start = clock.now
    r = batch.run(time_limit=2.0)
    spent = clock.now - start
    assert r.stop_reason == "time_limit"
    assert 2.0 <= spent <= 2.0 * 1.03, (spent, clock.launches)
    assert len(clock.launches) > 10  # launches of about 0.1 s each
    assert qap.cost(r.best[0]) == int(r.best_costs[0])


def test_first_launch_of_a_large_batch_respects_the_time_limit(monkeypatch):
    clock = SimulatedClock(cost=5e-5)  # 40 searches: 500 iterations take 1 s
    clock.install(monkeypatch)
    qap = random_instance(40, 4)
    batch = QAPTabuBatch(qap, "cpu", count=40, seed=1)
    start = clock.now
    r = batch.run(800, time_limit=0.5)
    spent = clock.now - start
    assert spent <= 0.5 * 1.1, (spent, clock.launches)
    assert r.stop_reason == "time_limit"


def _kernel_pair(qap, kernel_sim: bool, block, monkeypatch=None, delta32: bool = True, count: int = 2):
    """A classic and a stream batch of the same searches (in the CPU simulation of ``block`` when
    ``kernel_sim``; int64 deltas unless ``delta32``)."""
    def make(kernel: str) -> QAPTabuBatch:
        params = TabuParams(kernel=kernel)
        batch = (QAPTabuBatch(qap, "cpu", count=count, seed=3, params=params) if delta32
                 else int64_delta_batch(monkeypatch, qap, count=count, seed=3, params=params))
        if kernel_sim:
            module = load_module("qap/qap_tabu.cu", "cpu", batch.data.tabu_defines, sim=True)
            batch.kernel, batch.block = module.kernel(KERNELS[kernel]), block
        return batch
    pair = make("classic"), make("stream")
    starts = np.array([np.random.default_rng(k).permutation(qap.n) for k in range(count)])
    for batch in pair:
        batch.restart(starts, [11 + k for k in range(count)])
    return pair


def _same_searches(x: QAPTabuBatch, y: QAPTabuBatch, budget: int) -> None:
    a, b = x.run(budget), y.run(budget)
    assert np.array_equal(a.best, b.best) and np.array_equal(a.best_costs, b.best_costs)
    assert np.array_equal(a.iterations, b.iterations)
    sx, sy = x.snapshot(), y.snapshot()
    assert all(np.array_equal(sx[k], sy[k]) for k in sx)  # tabu and departure times included
    assert all(y.qap.cost(p) == c for p, c in zip(*y.current(), strict=True))


@pytest.mark.parametrize("delta32", [True, False])
@pytest.mark.parametrize(("kind", "n"), [("asym", 2), ("asym", 21), ("sym", 30), ("sym", 7), ("asym", 70)])
def test_the_stream_kernel_makes_the_classic_kernels_moves(monkeypatch, delta32, kind, n):
    """qap_tabu_stream (pairs owned by threads, the update fused with the next scan; the flow
    tables in shared memory up to n = 64) is the same search as qap_tabu_run: the same moves,
    bests, tabu memory, in the one-thread CPU build."""
    qap = random_instance(n, n) if kind == "asym" else random_qap(n, seed=n)
    classic, stream = _kernel_pair(qap, False, None, monkeypatch, delta32)
    for budget in (1, 5, 400):
        _same_searches(classic, stream, budget)


@pytest.mark.parametrize("order", ["forward", "reverse", "random:5"])
@pytest.mark.parametrize(("block", "n"), [((8, 4), 21), ((32, 1), 30), ((128, 1), 13), ((32, 2), 66)])
def test_the_stream_kernel_in_gpu_shaped_blocks_and_thread_orders(monkeypatch, order, block, n):
    """The stream kernel's GPU paths (threads owning pairs, the sums split between groups of
    threads and added atomically, the block-summed pair, barriers) in the CPU simulation of GPU
    blocks, with the threads between barriers in forward, reverse and random orders: a race would
    show as moves that differ from the classic kernel's."""
    monkeypatch.setenv("METAHEUR_SIM_ORDER", order)
    qap = random_instance(n, n)
    classic, stream = _kernel_pair(qap, True, block)
    for budget in (1, 60):
        _same_searches(classic, stream, budget)


def test_the_stream_kernel_beyond_shared_memory():
    """Above MH_TSS_SHARED_N units u, v and the sums live in the batch's work buffer."""
    n = 520
    rng = np.random.default_rng(3)
    qap = QAP("big", rng.integers(0, 10, (n, n)), rng.integers(0, 10, (n, n)))
    classic, stream = _kernel_pair(qap, False, None, count=1)
    _same_searches(classic, stream, 8)


def test_either_kernel_continues_the_others_searches():
    qap = random_instance(25, 25)
    one = QAPTabuBatch(qap, "cpu", count=2, seed=5, params=TabuParams(kernel="classic"))
    one.run(40)
    other = QAPTabuBatch(qap, "cpu", count=2, seed=5, params=TabuParams(kernel="stream"))
    other.resume(one.snapshot())
    _same_searches(one, other, 60)


def test_an_unknown_tabu_kernel_is_refused():
    with pytest.raises(MetaheurError, match="tabu kernel must be one of classic, stream"):
        TabuParams(kernel="fast")
