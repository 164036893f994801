"""Race checks: every kernel that meets at barriers or uses shared memory gives the CPU build's
results in the fiber simulation whatever order the threads of a block run in between two
barriers (forward, reverse, seeded random orders: ``$METAHEUR_SIM_ORDER``), for a sweep of block
shapes (not multiples of 32, one past a warp) and of problem sizes just past a block's width. A
race planted in a small kernel is caught: its outputs differ between orders."""

from __future__ import annotations

import re

import numpy as np
import pytest
from test_gpu import Target, compare_qap, compare_rng_and_reductions, compare_tsp

from metaheur.devices import parse_device
from metaheur.engine import load_module
from metaheur.engine.source import kernel_dir, load_source
from metaheur.problems import QAP, uniform_tsp
from metaheur.problems.qap.params import KERNELS
from metaheur.problems.qap.tabu import QAPTabuBatch
from metaheur.problems.tsp.descent import TSPDescentBatch

pytestmark = pytest.mark.gpusim

ORDERS = ["forward", "reverse", "random:1", "random:77"]
#: Block shapes of the sweep: one thread, one short of and one past a warp, 2-D shapes that are
#: not multiples of 32, the tabu search's GPU shapes, two warps and one thread. (The pair kernels
#: take rows from threadIdx.y and columns from threadIdx.x: their blocks are 1-D or 2-D.)
SWEEP = [(1,), (31,), (33,), (7, 3), (32, 4), (65,), (32, 8)]
SIM = Target(parse_device("cpu"), True, SWEEP, SWEEP)

#: The kernels each file's barriers or shared memory serve, all run by the checks below. (The
#: experiments' QAP move kernels, experiments/kernels/qap/qap_moves.cu, no kernel file of the
#: package, are race-checked too: test_qap_move_kernels_in_every_order.)
RACE_CHECKED = {
    "qap/qap_tabu.cu": {"qap_tabu_run", "qap_tabu_stream"},
    "tsp/tsp_moves.cu": {"tsp_2opt_full", "tsp_oropt_full", "tsp_2opt_cand", "tsp_oropt_cand", "tsp_positions",
                         "tsp_apply_best", "tsp_best_at", "tsp_apply_disjoint", "tsp_lengths", "tsp_keep_better",
                         # the cached variants: in every order in tests/problems/tsp/test_tsp_cached_kernels.py
                         "tsp_cache_tour", "tsp_2opt_cached", "tsp_oropt_cached", "tsp_best_of_parts",
                         "tsp_dlb_best_at", "tsp_dlb_apply"},
    # the EAX kernels: tsp_eax_block meets at barriers, race-checked in tests/problems/tsp/test_tsp_eax_block.py
    # (every shape and order against tsp_eax); the others are one thread a block or a city
    "tsp/tsp_eax.cu": {"tsp_eax", "tsp_eax_freq", "tsp_eax_freq_accept", "tsp_eax_block"},
    # a user problem's generic kernels: race-checked in tests/perm (test_perm_search.py, test_check_problem.py)
    "engine/perm_eval.cu": {"perm_cost", "perm_pair", "perm_row", "perm_prepare", "perm_update", "perm_partial",
                            "perm_insert_best", "perm_neh"},
    "engine/perm_search.cu": {"perm_tabu", "perm_ils", "perm_ig", "perm_best_values"},
}
_BARRIER_USE = re.compile(r"__syncthreads|__shared__|mh_block_argmin|mh_block_sum")


def test_every_kernel_file_with_barriers_is_race_checked():
    """A kernel file (or a header of its own) that uses barriers, shared memory or the block
    reductions has every kernel in the race checks."""
    for path in sorted(kernel_dir().glob("*/*.cu")):
        name = path.relative_to(kernel_dir()).as_posix()
        own = path.read_text() + "".join(
            (path.parent / h).read_text() for h in re.findall(r'#include "(\w+\.cuh)"', path.read_text())
            if h != "mh_common.cuh" and (path.parent / h).is_file())  # not the generated mh_user_problem.cuh
        if _BARRIER_USE.search(own):
            assert set(load_source(name).signatures) == RACE_CHECKED.get(name), name
        else:
            assert name not in RACE_CHECKED, name


@pytest.fixture(params=ORDERS)
def order(request, monkeypatch):
    monkeypatch.setenv("METAHEUR_SIM_ORDER", request.param)
    return request.param


@pytest.mark.parametrize(("n", "symmetric"), [(33, False), (34, True), (8, False)])
def test_qap_move_kernels_in_every_order(order, n, symmetric):
    compare_qap(SIM, n, 2, symmetric, seed=n)


def test_tsp_move_kernels_in_every_order(order, tmp_path):
    compare_tsp(SIM, "EUC_2D", n_full=34, n_cand=66, tmp_path=tmp_path, batch=2)


def test_block_reductions_in_every_order(order, tmp_path):
    compare_rng_and_reductions(Target(SIM.device, True, [*SWEEP, (5, 3, 2)], SWEEP), tmp_path)


def _qap(n: int, seed: int, symmetric: bool) -> QAP:
    rng = np.random.default_rng(seed)
    mats = [rng.integers(0, 30, size=(n, n)) for _ in range(2)]
    if symmetric:
        mats = [np.triu(m, 1) + np.triu(m, 1).T for m in mats]
    return QAP(f"race{n}", *mats)


@pytest.mark.parametrize("kernel", ["classic", "stream"])
@pytest.mark.parametrize(("n", "symmetric"), [(33, False), (12, True)])
def test_tabu_search_in_every_order(order, kernel, n, symmetric):
    """Every iteration of either tabu kernel (scan, block argmin, apply, delta update; the stream
    kernel's fused update and scan, split sums and block-summed pair) makes the one-thread CPU
    build's moves of the classic kernel for every block shape of the sweep."""
    qap = _qap(n, n, symmetric)
    starts = np.array([np.random.default_rng(k).permutation(n) for k in range(2)])
    fast = QAPTabuBatch(qap, "cpu", starts=starts, seed=5)
    expected = fast.run(25)
    for block in SWEEP:
        sim = QAPTabuBatch(qap, "cpu", starts=starts, seed=5)
        sim.kernel = load_module("qap/qap_tabu.cu", "cpu", sim.data.tabu_defines, sim=True).kernel(KERNELS[kernel])
        sim.block = block
        sim.restart(starts, sim.snapshot()["keys"])  # the initialisation runs in the simulation too
        got = sim.run(25)
        assert np.array_equal(got.best, expected.best), block
        assert np.array_equal(got.best_costs, expected.best_costs), block
        assert np.array_equal(sim.current()[0], fast.current()[0]), block


@pytest.mark.parametrize(("several", "kernel"), [(True, "classic"), (False, "classic"), (True, "dlb")])
def test_descent_in_every_order(order, several, kernel):
    """The descent's passes (several disjoint moves a pass: the best one by the whole block, the
    others by one thread each; the don't-look-bit pass whose moves all threads select by claims;
    or the best move only) make the CPU build's tours."""
    tsp = uniform_tsp(70, seed=4)
    start = np.array([np.random.default_rng(k).permutation(70) for k in range(2)])
    expected = TSPDescentBatch(tsp, k=6, full=False, several=several, several_kernel=kernel).run(start, max_passes=12)
    for block in SWEEP[1:4]:
        sim = TSPDescentBatch(tsp, k=6, full=False, block=int(np.prod(block)), several=several, several_kernel=kernel)
        sim.module = load_module("tsp/tsp_moves.cu", "cpu", sim.data.defines, sim=True)
        got = sim.run(start, max_passes=12)
        assert np.array_equal(got.best, expected.best) and np.array_equal(got.best_costs, expected.best_costs), block
        assert np.array_equal(got.iterations, expected.iterations), block


def test_tour_lengths_and_keeping_the_better_tours_in_every_order(order):
    tsp = uniform_tsp(70, seed=5)
    tours = [np.array([np.random.default_rng(k + s).permutation(70) for k in range(3)], np.int32) for s in (0, 9)]
    lengths = [np.array([tsp.tour_length(t) for t in ts]) for ts in tours]
    lengths[1][1] = lengths[0][1]  # a tie
    for block in SWEEP[1:4]:
        sim = TSPDescentBatch(tsp, k=6, full=False, block=int(np.prod(block)))
        sim.module = load_module("tsp/tsp_moves.cu", "cpu", sim.data.defines, sim=True)
        assert sim.lengths(tours[0]).tolist() == lengths[0].tolist(), block
        best, best_len = tours[0].copy(), lengths[0].copy()
        sim.keep_better(best, best_len, tours[1], lengths[1])
        take = lengths[1] <= lengths[0]
        assert np.array_equal(best, np.where(take[:, None], tours[1], tours[0])), block
        assert best_len.tolist() == np.where(take, lengths[1], lengths[0]).tolist(), block


PLANTED = r"""
#include "mh_common.cuh"
/* Each thread publishes a value and reads its neighbour's. Without the barrier the read races
 * with the neighbour's write. */
extern "C" __global__ void publish(const long long *in, long long *out, int with_barrier) {
  __shared__ long long s[MH_MAX_BLOCK];
  const int t = mh_tid(), nt = mh_nthreads();
  const long long b = mh_block();
  s[t] = -1;
  __syncthreads();
  s[t] = in[b * nt + t];
  if (with_barrier) __syncthreads();
  out[b * nt + t] = s[(t + 1) % nt];
}
"""


@pytest.mark.parametrize("block", [(32,), (7, 3)])
def test_a_planted_race_is_caught(write_kernel, monkeypatch, block):
    kernel = load_module(write_kernel("planted_race.cu", PLANTED), "cpu", sim=True).kernel("publish")
    nt = int(np.prod(block))
    values = np.arange(3 * nt, dtype=np.int64) * 5 + 2

    def outputs(order: str, with_barrier: int) -> np.ndarray:
        monkeypatch.setenv("METAHEUR_SIM_ORDER", order)
        out = np.zeros(3 * nt, np.int64)
        kernel(3, block, (values, out, with_barrier))
        return out

    safe = [outputs(o, 1) for o in ORDERS]
    assert all(np.array_equal(s, safe[0]) for s in safe)
    assert np.array_equal(safe[0], np.roll(values.reshape(3, nt), -1, axis=1).ravel())
    racy = [outputs(o, 0) for o in ORDERS]
    assert any(not np.array_equal(r, racy[0]) for r in racy[1:]), "the race went unnoticed"
    assert not np.array_equal(racy[0], racy[1])  # forward and reverse each see the other side
    assert np.array_equal(outputs("random:1", 0), racy[2])  # a seeded order is reproducible


def test_bad_order_is_one_clear_error(write_kernel, monkeypatch):
    from metaheur.errors import MetaheurError

    kernel = load_module(write_kernel("planted_race.cu", PLANTED), "cpu", sim=True).kernel("publish")
    monkeypatch.setenv("METAHEUR_SIM_ORDER", "sideways")
    with pytest.raises(MetaheurError, match="METAHEUR_SIM_ORDER"):
        kernel(1, 4, (np.zeros(4, np.int64), np.zeros(4, np.int64), 1))
