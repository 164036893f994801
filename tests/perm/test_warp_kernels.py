"""The generic engine's warp kernels (``PermSearchParams(kernel="warp")``: one warp a search,
MH_PS_WARP, NEH in one launch) against the classic kernels and the numpy references: the same
moves and results on the CPU build, in the thread simulation of a one-warp block in several thread
orders (the flow shop's heads and tails by warp shuffles), and the chains a GPU island runs."""

from __future__ import annotations

import numpy as np
import pytest
import search_reference as ref
from perm_problems import CachedQAP, random_qap_arrays, random_tardiness

from metaheur.devices import cpu_device, gpu_devices, parse_device
from metaheur.engine import simcuda, sm90
from metaheur.engine.rng import stream_key
from metaheur.engine.shapes import WARP
from metaheur.engine.user_source import upload
from metaheur.errors import MetaheurError
from metaheur.islands.perm_operators import neh, neh_sequences
from metaheur.problems.lop import random_lop
from metaheur.problems.pfsp import PFSP, makespans, random_pfsp
from metaheur.search.perm_search import PermSearchBatch, PermSearchParams, chains_per_sm

ORDERS = ["forward", "reverse", "random:5"]


def _flow_shop(n: int, m: int, high: int = 9) -> PFSP:
    """A flow shop of small times (many insertions tie); m > 32 takes two strips of the warp. Its
    ``partial_value`` is the numpy reference of partial_insert_row (search_reference.py's)."""
    shop = PFSP(np.random.default_rng(n * 100 + m).integers(1, high + 1, size=(m, n)))
    shop.partial_value = lambda seq: int(makespans(shop.times, np.asarray([seq]))[0])
    return shop


def _run(pb, params, count=2, iters=3, seed=1, **kw):
    rng = np.random.default_rng(seed)
    starts = np.array([rng.permutation(pb.n) for _ in range(count)])
    keys = stream_key(np.uint64(seed), np.arange(count, dtype=np.uint64))
    return starts, keys, PermSearchBatch(pb, "cpu", count, params, **kw).run(starts, keys, iters)


def _same_run(a, b) -> None:
    assert np.array_equal(a.best, b.best) and np.array_equal(a.best_costs, b.best_costs)
    assert np.array_equal(a.iterations, b.iterations) and np.array_equal(a.current, b.current)


def test_the_kernel_switch_is_checked_and_classic_by_default():
    assert PermSearchParams().kernel == "classic"
    with pytest.raises(MetaheurError, match="perm kernel must be one of classic, warp"):
        PermSearchParams(kernel="wide")


@pytest.mark.parametrize(("method", "make"), [("ig", lambda: _flow_shop(14, 6)), ("ig", lambda: _flow_shop(12, 37)),
                                              ("ig", lambda: _flow_shop(12, 6, 10**8)),
                                              ("ig", lambda: random_tardiness(13, 4)),
                                              ("ils", lambda: random_tardiness(11, 5)),
                                              ("tabu", lambda: CachedQAP(*random_qap_arrays(10, 4)))])
def test_warp_kernels_follow_the_classic_kernels_and_the_reference(method, make):
    """CPU build: the same trajectories (bests, iterations, where each search stands), and the
    iterated greedy's the numpy reference's."""
    pb = make()
    params = PermSearchParams(method=method, destruct=3, kick_moves=2)
    starts, keys, classic = _run(pb, params)
    warp = _run(pb, PermSearchParams(method=method, destruct=3, kick_moves=2, kernel="warp"))[2]
    _same_run(warp, classic)
    assert np.array_equal(pb.engine_sign * pb.values(warp.best), warp.best_costs)
    if method == "ig":
        temp = params.temperature * pb.temperature_scale()
        for k, (s, key) in enumerate(zip(starts, keys, strict=True)):
            r = ref.iterated_greedy(pb, s, key, 3, True, 3, temp)
            assert warp.best_costs[k] == r.best and np.array_equal(warp.best[k], r.bp)
            assert np.array_equal(warp.current[k], r.p)


@pytest.mark.gpusim
@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize("make", [lambda: _flow_shop(21, 5, 4), lambda: _flow_shop(9, 40), lambda: _flow_shop(33, 32),
                                  lambda: random_tardiness(17, 3)], ids=["5-machines", "40-machines", "32-machines",
                                                                         "tardiness"])
def test_one_warp_a_search_gives_the_cpu_trajectory_in_every_thread_order(make, order, monkeypatch):
    """The thread simulation of a 32-thread block with MH_PS_WARP (the flow shop's heads and tails
    by warp shuffles; one strip, two strips, exactly 32 machines; ties broken by idle time) gives
    the classic kernels' CPU trajectory, whatever order the threads run in between barriers."""
    pb = make()
    base = _run(pb, PermSearchParams(method="ig", destruct=3, ties=True), iters=2)[2]
    monkeypatch.setenv("METAHEUR_SIM_ORDER", order)
    got = _run(pb, PermSearchParams(method="ig", destruct=3, ties=True, kernel="warp"), iters=2, block=WARP,
               sim=True)[2]
    _same_run(got, base)


@pytest.mark.gpusim
@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize("make", [lambda: random_lop(33, 2), lambda: random_tardiness(19, 6)], ids=["lop", "tardiness"])
def test_kicks_by_the_whole_warp_give_the_cpu_trajectory_in_every_thread_order(make, order, monkeypatch):
    """The ILS's kicks of the warp kernels on a block of threads take each insertion's delta from
    the problem's insert_row instead of thread 0's cost of the kicked permutation: the same
    trajectory as the classic kernels' CPU build (descents, kicks, acceptances)."""
    pb = make()
    params = dict(method="ils", move="insert", kick_move="insert", kick_moves=3)
    base = _run(pb, PermSearchParams(**params), iters=3)[2]
    monkeypatch.setenv("METAHEUR_SIM_ORDER", order)
    got = _run(pb, PermSearchParams(**params, kernel="warp"), iters=3, block=WARP, sim=True)[2]
    _same_run(got, base)


@pytest.mark.gpusim
@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize("m", [1, 6, 32, 40])
@pytest.mark.parametrize("high", [99, 10**9])
def test_warp_partial_insertions_equal_numpy_at_every_length(m, high, order, monkeypatch):
    """partial_insert_row of the warp kernels (perm_partial with MH_PS_WARP, one 32-thread block in
    the thread simulation): out[k] = the makespan of seq[0..len) with elem at k, from scratch, for
    len = 0..n-1 (NEH's steps); int32 tables (small times) and int64 ones (makespans past 2^31)."""
    monkeypatch.setenv("METAHEUR_SIM_ORDER", order)
    dev, rng = parse_device("cpu"), np.random.default_rng(7 + m)
    problem = PFSP(rng.integers(1, high, size=(m, 11)))
    assert ("#define MH_USER_DELTA32" in problem.user_code().header) == (high == 99)
    n, k, ws = problem.n, problem.n, problem.work_entries()
    mod = problem.user_code().module("engine/perm_eval.cu", dev, {"MH_PS_WARP": 1}, sim=True)
    seqs = np.array([rng.permutation(n) for _ in range(k)], dtype=np.int32)
    lens = np.arange(k, dtype=np.int32)
    elems = seqs[np.arange(k), lens].copy()
    out = np.zeros((k, n + 1), np.int64)
    fields, arrays = problem.device_data()
    mod.kernel("perm_partial")(k, WARP, (seqs, lens, elems, k, n, np.zeros((k, ws), np.int64), ws, out,
                                         *upload(fields, arrays, dev)))
    for b in range(k):
        ln, seq = int(lens[b]), seqs[b]
        cands = np.array([[*seq[:q], elems[b], *seq[q:ln]] for q in range(ln + 1)])
        assert out[b, :ln + 1].tolist() == makespans(problem.times, cands).tolist(), b


@pytest.mark.parametrize(("n", "m", "high"), [(2, 1, 9), (12, 5, 3), (15, 20, 99), (9, 37, 4)])
@pytest.mark.parametrize("ties", [False, True])
def test_neh_in_one_launch_is_the_classic_neh(n, m, high, ties):
    """NEH whole in one launch (perm_neh) inserts as the classic NEH, one launch an element, does."""
    problem = _flow_shop(n, m, high)
    assert neh(problem, ties=ties, kernel="warp").tolist() == neh(problem, ties=ties).tolist()


@pytest.mark.gpusim
@pytest.mark.parametrize("order", ORDERS)
def test_neh_batched_over_orders_in_one_warp_launch_in_every_thread_order(order, simulated_gpus, monkeypatch):
    """Several orders in one launch on a simulated GPU (a warp a sequence, the thread simulation),
    each sequence the classic NEH of its order, every construction whole."""
    problem = _flow_shop(14, 35, 5)
    rng = np.random.default_rng(3)
    orders = np.array([rng.permutation(problem.n) for _ in range(3)])
    monkeypatch.setenv("METAHEUR_SIMULATED_THREADS", "1")
    monkeypatch.setenv("METAHEUR_SIM_ORDER", order)
    seqs, done = neh_sequences(problem, orders, "cuda:0", ties=True)
    assert done.tolist() == [problem.n] * 3
    for seq, o in zip(seqs, orders, strict=True):
        problem.construction_key = lambda o=o: -np.argsort(o).astype(np.float64)  # NEH's order: o itself
        assert seq.tolist() == neh(problem, cpu_device(), ties=True).tolist()


@pytest.mark.gpusim
def test_a_warp_island_runs_as_many_chains_a_multiprocessor_as_the_occupancy_query_allows(monkeypatch):
    """The classic kernels: one chain a multiprocessor; the warp kernels: the resident one-warp
    blocks of perm_ig that the (simulated) driver reports from the resource table."""
    monkeypatch.setenv("METAHEUR_SIMULATED_GPUS", "1")
    monkeypatch.setenv("METAHEUR_SIMULATED_GPU_SMS", "3")
    gpu_devices.cache_clear()
    simcuda.reset()
    try:
        gpu, shop = parse_device("cuda:0"), random_pfsp(20, 5, seed=1)
        params = shop.default_params()
        warp = params.with_search(PermSearchParams(method="ig", kernel="warp"))
        res = sm90.table_resources()[("engine/perm_search.cu", "perm_ig", "MH_PS_WARP=1")]
        per_sm = sm90.blocks_per_sm(res, 32)
        assert per_sm > 1
        assert shop.gpu_chains(params, gpu) == 3
        assert chains_per_sm(shop, warp.search(PermSearchParams), gpu) == per_sm
        assert shop.gpu_chains(warp, gpu) == 3 * per_sm
        assert shop.gpu_chains(warp, cpu_device()) == 1
    finally:
        monkeypatch.undo()
        gpu_devices.cache_clear()
        simcuda.reset()


@pytest.mark.gpusim
def test_a_gpu_flow_shop_island_of_warp_chains_fills_the_multiprocessor(simulated_gpus, monkeypatch):
    """solve() on a simulated GPU of one multiprocessor with the warp kernels: its island of
    iterated-greedy chains runs the resident one-warp blocks side by side (one chain with the
    classic kernels: test_gpu_search.py), and the result's value is its permutation's."""
    from metaheur import SolveParams, solve

    monkeypatch.setenv("METAHEUR_SIMULATED_GPU_SMS", "1")
    gpu_devices.cache_clear()
    shop = random_pfsp(12, 4, seed=2)
    per_sm = sm90.blocks_per_sm(sm90.table_resources()[("engine/perm_search.cu", "perm_ig", "MH_PS_WARP=1")], 32)
    params = SolveParams(strategy="gpu", devices=("cuda:0",), searches=[PermSearchParams(method="ig", kernel="warp")])
    result = solve(shop, seed=1, params=params, generations=1)
    assert [(r.device, r.population, r.offspring) for r in result.islands] == [("cuda:0", per_sm, per_sm)]
    assert result.cost == shop.value(result.permutation)
