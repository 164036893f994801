"""The generic searches of kernels/engine/perm_search.cu against their numpy references
(tests/perm/search_reference.py): same trajectories, best values recomputed, on the CPU build, on
sizes past a block's width, and in the thread simulation for several block shapes and thread
orders (races), like tests/engine/test_races.py."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
import search_reference as ref
from perm_problems import (
    CachedQAP,
    LatencyCostOnly,
    MaxQAP,
    SymmetricTaillardQAP,
    TaillardQAP,
    Tardiness,
    UserQAP,
    random_latency,
    random_qap_arrays,
    random_symmetric_qap_arrays,
    random_tardiness,
)

from metaheur.engine.rng import stream_key
from metaheur.errors import MetaheurError
from metaheur.search.perm_search import PermSearchBatch, PermSearchParams


class UnboundedQAP(CachedQAP):
    """The cached QAP declaring no bound: its searches scan moves in 64-bit ints."""

    kind = "ubqap"

    def value_bound(self):
        return None

    def delta_bound(self):
        return None


def test_a_declared_delta_bound_picks_the_32_bit_scan():
    a, b = random_qap_arrays(8, 1)
    assert "#define MH_USER_DELTA32 1" in CachedQAP(a, b).user_code().header
    assert "MH_USER_DELTA32" not in UnboundedQAP(a, b).user_code().header
    assert "MH_USER_DELTA32" not in CachedQAP(a * 2**12, b * 2**12).user_code().header


def _starts(pb, count, seed):
    rng = np.random.default_rng(seed)
    return np.array([rng.permutation(pb.n) for _ in range(count)]), stream_key(np.uint64(seed),
                                                                                np.arange(count, dtype=np.uint64))


def _run(pb, params, count=3, iters=6, seed=1, **kw):
    starts, keys = _starts(pb, count, seed)
    batch = PermSearchBatch(pb, "cpu", count, params, **kw)
    return starts, keys, batch.run(starts, keys, iters)


def _same(result, refs, pb):
    for k, r in enumerate(refs):
        assert result.best_costs[k] == r.best, k
        assert np.array_equal(result.best[k], r.bp), k
        assert result.iterations[k] == r.iters + r.moves, k
        assert np.array_equal(result.current[k], r.p), k
    assert np.array_equal(pb.engine_sign * pb.values(result.best), result.best_costs)


@pytest.mark.parametrize("make", [lambda: UserQAP(*random_qap_arrays(9, 3)),
                                  lambda: CachedQAP(*random_qap_arrays(10, 4)),
                                  lambda: MaxQAP(*random_qap_arrays(8, 5)), lambda: random_tardiness(11, 6),
                                  lambda: TaillardQAP(*random_qap_arrays(10, 7), cache_dtype="int32"),
                                  lambda: SymmetricTaillardQAP(*random_symmetric_qap_arrays(11, 8),
                                                               cache_dtype="int32"),
                                  lambda: UnboundedQAP(*random_qap_arrays(10, 9))])
def test_tabu_follows_its_reference(make):
    pb = make()
    move = pb.moves[0]
    starts, keys, res = _run(pb, PermSearchParams(method="tabu", move=move, tenure_scale=2.0), iters=12)
    _same(res, [ref.tabu(pb, s, k, 12, move, 2.0) for s, k in zip(starts, keys, strict=True)], pb)


@pytest.mark.parametrize("make", [lambda: CachedQAP(*random_qap_arrays(5, 12)), lambda: random_tardiness(5, 13),
                                  lambda: UnboundedQAP(*random_qap_arrays(5, 14))])
def test_tabu_with_every_move_tabu_follows_its_reference(make):
    """Long tenures on a small neighbourhood, over many moves: the swap QAP meets iterations
    where every move is tabu and none aspired (the scan redone without the tabu test) and keeps
    its pair table of tabu times; the insertions read the memory's rows."""
    pb = make()
    move = pb.moves[0]
    starts, keys, res = _run(pb, PermSearchParams(method="tabu", move=move, tenure_scale=40.0), iters=60)
    refs = [ref.tabu(pb, s, k, 60, move, 40.0) for s, k in zip(starts, keys, strict=True)]
    _same(res, refs, pb)


@pytest.mark.parametrize("first", [True, False])
@pytest.mark.parametrize("make", [lambda: CachedQAP(*random_qap_arrays(9, 7)), lambda: random_tardiness(10, 8)])
def test_ils_follows_its_reference(make, first):
    pb = make()
    move = pb.moves[0]
    params = PermSearchParams(method="ils", move=move, first_improvement=first, kick_move="swap", kick_moves=2)
    starts, keys, res = _run(pb, params, iters=4)
    _same(res, [ref.ils(pb, s, k, 4, move, first, "swap", 2) for s, k in zip(starts, keys, strict=True)], pb)


ROUTES = [lambda: random_latency(11, 21), lambda: random_latency(10, 22, cls=LatencyCostOnly),
          lambda: random_latency(9, 23, neighbours=0)]


@pytest.mark.parametrize("first", [True, False])
@pytest.mark.parametrize("move", ["segment", "reverse", "swap", "insert"])
@pytest.mark.parametrize("make", ROUTES)
def test_route_moves_granular_or_whole_follow_the_reference(make, move, first):
    """Segment moves (rows and pair deltas, or cost after the move; reversed blocks or not),
    reversals (reverse_row), and the granular scans of candidate lists, in both descents."""
    pb = make()
    params = PermSearchParams(method="ils", move=move, first_improvement=first, kick_move="reverse", kick_moves=2)
    starts, keys, res = _run(pb, params, iters=3)
    _same(res, [ref.ils(pb, s, k, 3, move, first, "reverse", 2) for s, k in zip(starts, keys, strict=True)], pb)


@pytest.mark.parametrize(("move", "granular", "sample"), [("segment", True, 0), ("segment", False, 0),
                                                          ("swap", True, 0), ("insert", False, 40),
                                                          ("segment", True, 25), ("swap", True, 7)])
def test_tabu_over_segments_candidates_and_samples_follows_the_reference(move, granular, sample):
    pb = random_latency(10, 24)
    params = PermSearchParams(method="tabu", move=move, tenure_scale=3.0, granular=granular, sample=sample)
    starts, keys, res = _run(pb, params, iters=15)
    refs = [ref.tabu(pb, s, k, 15, move, 3.0, sample, granular) for s, k in zip(starts, keys, strict=True)]
    _same(res, refs, pb)


@pytest.mark.parametrize("first", [True, False])
def test_sampled_descents_follow_the_reference(first):
    pb = random_latency(12, 25, cls=LatencyCostOnly)
    params = PermSearchParams(method="ils", move="segment", first_improvement=first, sample=30, kick_moves=2)
    starts, keys, res = _run(pb, params, iters=4)
    refs = [ref.ils(pb, s, k, 4, "segment", first, "insert", 2, sample=30) for s, k in zip(starts, keys, strict=True)]
    _same(res, refs, pb)


def test_candidate_scans_take_fewer_moves_than_whole_ones():
    """The granular descent's local optimum is reached with fewer evaluations: it is a descent
    over a sub-neighbourhood, so a whole scan from its optimum may still improve."""
    pb = random_latency(30, 26, neighbours=3)
    whole = ref.Ref(pb, np.arange(30), 1, granular=False)
    gran = ref.Ref(pb, np.arange(30), 1)
    assert len(gran.scan("segment")) < len(whole.scan("segment")) / 3
    assert set(gran.scan("segment")) <= set(whole.scan("segment"))


@pytest.mark.parametrize("temperature", [0.0, 0.4])
def test_iterated_greedy_follows_its_reference(temperature):
    pb = random_tardiness(12, 9)
    params = PermSearchParams(method="ig", destruct=3, temperature=temperature)
    starts, keys, res = _run(pb, params, iters=5)
    temp = temperature * pb.temperature_scale()
    _same(res, [ref.iterated_greedy(pb, s, k, 5, True, 3, temp) for s, k in zip(starts, keys, strict=True)], pb)


def test_a_search_stops_at_its_target_and_auto_picks_the_greedy():
    pb = random_tardiness(10, 2)
    starts, keys = _starts(pb, 2, 3)
    batch = PermSearchBatch(pb, "cpu", 2, PermSearchParams())
    assert batch.method == "ig"
    first = batch.run(starts, keys, 30)
    target = int(first.best_costs.max())
    again = batch.run(starts, keys, 10**6, target=target)
    assert again.stop_reason == "target" and (again.best_costs <= target).all()


def test_wrong_parameters_are_refused_in_one_line():
    with pytest.raises(MetaheurError, match="method must be one of"):
        PermSearchParams(method="sa")
    with pytest.raises(MetaheurError, match="needs partial_insert_row"):
        PermSearchParams(method="ig").resolved(UserQAP(*random_qap_arrays(5, 1)))
    with pytest.raises(MetaheurError, match="offers the moves swap, not 'insert'"):
        PermSearchParams(move="insert").resolved(UserQAP(*random_qap_arrays(5, 1)))
    with pytest.raises(MetaheurError, match="kick_move must be swap, insert or reverse"):
        PermSearchParams(kick_move="segment")
    with pytest.raises(MetaheurError, match="sample must be 0"):
        PermSearchParams(sample=-1)


ORDERS = ["forward", "reverse", "random:5"]
BLOCKS = [(31,), (33,), (7, 3)]


@pytest.mark.gpusim
@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize(("method", "make"), [("tabu", lambda: CachedQAP(*random_qap_arrays(34, 2))),
                                              ("ils", lambda: Tardiness(*_wt_arrays(33))),
                                              ("ig", lambda: Tardiness(*_wt_arrays(33))),
                                              ("ig", lambda: _tied_flow_shop(33)),
                                              ("ils-segment", lambda: random_latency(34, 27)),
                                              ("tabu-sample", lambda: random_latency(33, 28, cls=LatencyCostOnly))])
def test_every_block_shape_and_thread_order_gives_the_cpu_trajectory(method, make, order, monkeypatch):
    """Sizes past a warp (33, 34), blocks not multiples of 32, thread orders of the simulation."""
    pb = make()
    method, _, scan = method.partition("-")
    extra = {"segment": {"move": "segment"}, "sample": {"move": "segment", "sample": 40}}.get(scan, {})
    params = PermSearchParams(method=method, kick_moves=2, destruct=3, ties=True, **extra)
    base = _run(pb, params, count=2, iters=2)[2]
    monkeypatch.setenv("METAHEUR_SIM_ORDER", order)
    for block in BLOCKS:
        got = _run(pb, params, count=2, iters=2, block=block, sim=True)[2]
        assert np.array_equal(got.best, base.best) and np.array_equal(got.iterations, base.iterations), block


def _wt_arrays(n):
    pb = random_tardiness(n, 11)
    return pb.p, pb.w, pb.due


def _tied_flow_shop(n):
    """A flow shop of small times: many insertions tie, so partial_insert_tie decides."""
    from metaheur.problems.pfsp import PFSP

    return PFSP(np.random.default_rng(n).integers(1, 5, size=(5, n)))


def test_the_scan_switch_is_checked_and_row_by_row_by_default():
    assert PermSearchParams().scan == "row"
    with pytest.raises(MetaheurError, match="perm scan must be one of row, warps"):
        PermSearchParams(scan="rows")
    with pytest.raises(MetaheurError, match="the warp layout's block is one warp"):
        PermSearchParams(kernel="warp", scan="warps")


#: The scans PermSearchParams(scan="warps") splits between warps: (label, problem, search, iterations):
#: pair deltas in a tabu search (one with every move tabu at times), first- and best-improvement
#: descents, granular segment moves, the cost after a move (no delta), samples.
WARPS = [("tabu", lambda: CachedQAP(*random_qap_arrays(34, 2)), {"method": "tabu", "tenure_scale": 2.0}, 3),
         ("tabu-all-tabu", lambda: CachedQAP(*random_qap_arrays(5, 12)), {"method": "tabu", "tenure_scale": 40.0}, 30),
         ("ils-first", lambda: CachedQAP(*random_qap_arrays(34, 3)), {"method": "ils", "kick_move": "swap"}, 2),
         ("ils-best", lambda: CachedQAP(*random_qap_arrays(33, 4)),
          {"method": "ils", "kick_move": "swap", "first_improvement": False}, 2),
         ("ils-granular-segment", lambda: random_latency(34, 27), {"method": "ils", "move": "segment"}, 2),
         ("ils-cost", lambda: random_latency(33, 29, neighbours=0), {"method": "ils", "move": "insert"}, 1),
         ("tabu-sample", lambda: random_latency(33, 28, cls=LatencyCostOnly),
          {"method": "tabu", "move": "segment", "sample": 40}, 2)]


def _reference(pb, params, starts, keys, iters):
    """The numpy reference's searches of ``params`` from ``starts``."""
    method, move = params.resolved(pb)
    if method == "tabu":
        return [ref.tabu(pb, s, k, iters, move, params.tenure_scale, params.sample, params.granular)
                for s, k in zip(starts, keys, strict=True)]
    return [ref.ils(pb, s, k, iters, move, params.first_improvement, params.kick_move, params.kick_moves,
                    sample=params.sample, granular=params.granular) for s, k in zip(starts, keys, strict=True)]


def _same_run(a, b) -> None:
    assert np.array_equal(a.best, b.best) and np.array_equal(a.best_costs, b.best_costs)
    assert np.array_equal(a.iterations, b.iterations) and np.array_equal(a.current, b.current)


@pytest.mark.parametrize(("label", "make", "search", "iters"), WARPS, ids=[w[0] for w in WARPS])
def test_scans_by_warps_follow_the_row_scans_and_the_reference_on_the_cpu(label, make, search, iters):
    """The CPU build's one thread is one part of one lane: the same loop and trajectory either way."""
    pb = make()
    params = PermSearchParams(kick_moves=2, **search)
    starts, keys, rows = _run(pb, params, count=2, iters=iters)
    _same(rows, _reference(pb, params, starts, keys, iters), pb)
    _same_run(_run(pb, replace(params, scan="warps"), count=2, iters=iters)[2], rows)


#: Blocks of one partial warp, one warp and one lane, two full warps, three warps the last partial.
WARP_BLOCKS = [(7, 3), (33,), (64,), (40, 2)]


@pytest.mark.gpusim
@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize(("label", "make", "search", "iters"), WARPS, ids=[w[0] for w in WARPS])
def test_scans_by_warps_give_the_row_scans_trajectory_in_every_block_and_order(label, make, search, iters, order,
                                                                               monkeypatch):
    """Each warp on rows of its own, in the thread simulation: bit for bit the old scan's moves."""
    pb = make()
    params = PermSearchParams(kick_moves=2, **search)
    base = _run(pb, params, count=2, iters=iters)[2]
    monkeypatch.setenv("METAHEUR_SIM_ORDER", order)
    for block in WARP_BLOCKS:
        got = _run(pb, replace(params, scan="warps"), count=2, iters=iters, block=block, sim=True)[2]
        _same_run(got, base)
