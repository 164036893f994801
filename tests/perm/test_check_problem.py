"""check_problem: a user problem's device functions against its numpy reference, on the CPU build
and on simulated GPUs (also in the thread simulation, whose thread orders reveal races in the
block functions); planted mistakes are caught and reported with their move in words."""

from __future__ import annotations

import numpy as np
import pytest
from perm_problems import (
    LATENCY_MOVES,
    QAP_CACHED,
    QAP_PAIR,
    QAP_TAILLARD_SYM,
    WT_CODE,
    CachedQAP,
    Latency,
    LatencyCostOnly,
    MaxQAP,
    SymmetricTaillardQAP,
    TaillardQAP,
    UserQAP,
    random_latency,
    random_qap_arrays,
    random_symmetric_qap_arrays,
    random_tardiness,
)

from metaheur.errors import MetaheurError
from metaheur.problem.permutation_check import apply_move, check_problem, segment_code

GOOD = [lambda: UserQAP(*random_qap_arrays(9, 1)), lambda: CachedQAP(*random_qap_arrays(10, 2)),
        lambda: MaxQAP(*random_qap_arrays(7, 3)), lambda: random_tardiness(12, 4),
        lambda: TaillardQAP(*random_qap_arrays(11, 5)),
        lambda: SymmetricTaillardQAP(*random_symmetric_qap_arrays(12, 6)),
        lambda: TaillardQAP(*random_qap_arrays(11, 5), cache_dtype="int32"),
        lambda: SymmetricTaillardQAP(*random_symmetric_qap_arrays(12, 6), cache_dtype="int32")]


@pytest.mark.parametrize("make", GOOD)
def test_the_test_problems_agree_with_their_references(make):
    pb = make()
    report = check_problem(pb, devices=["cpu"], trials=8)
    done = {line.split(": ", 1)[1].split(" (")[0] for line in report.checks}
    assert "cost" in done
    assert done >= {f for f in ("swap_delta", "insert_row", "update_swap", "partial_insert_row")
                    if pb.user_code().has(f)}


def test_apply_move_is_the_kernels_rule():
    p = np.arange(6)
    assert apply_move(p, "insert", 1, 4).tolist() == [0, 2, 3, 4, 1, 5]
    assert apply_move(p, "insert", 4, 1).tolist() == [0, 4, 1, 2, 3, 5]
    assert apply_move(p, "swap", 4, 1).tolist() == [0, 4, 2, 3, 1, 5]
    assert apply_move(p, "reverse", 1, 4).tolist() == [0, 4, 3, 2, 1, 5]
    assert apply_move(p, "segment", segment_code(1, 2, 0, 3), 3).tolist() == [0, 3, 4, 1, 2, 5]
    assert apply_move(p, "segment", segment_code(3, 3, 1, 3), 0).tolist() == [5, 4, 3, 0, 1, 2]
    assert apply_move(p, "segment", segment_code(2, 1, 0, 3), 5).tolist() == apply_move(p, "insert", 2, 5).tolist()


def test_route_moves_scratch_and_the_cost_only_case_are_checked():
    report = check_problem(random_latency(9, 1), devices=["cpu"], trials=6)
    done = {line.split(": ", 1)[1].split(" (")[0] for line in report.checks}
    assert done >= {"cost", "reverse_delta", "reverse_row", "segment_delta", "segment_row",
                    "cost after swap moves", "cost after insert moves"}
    report = check_problem(random_latency(8, 2, cls=LatencyCostOnly), devices=["cpu"], trials=6)
    done = {line.split(": ", 1)[1].split(" (")[0] for line in report.checks}
    assert done == {"cost", *(f"cost after {m} moves" for m in ("swap", "insert", "reverse", "segment"))}


class WrongSegment(Latency):
    """A planted mistake: a reversed segment's delta is taken as the unreversed one's."""

    kind = "wrongsegment"
    device_code = LATENCY_MOVES.replace("return lat_moved(d, perm, i, len, j, rev) - cost(d, perm);",
                                        "return lat_moved(d, perm, i, len, j, 0) - cost(d, perm);")


class WrongReverseRow(Latency):
    """A planted mistake: the reversal row skips the moves towards the front."""

    kind = "wrongreverserow"
    device_code = LATENCY_MOVES.replace("out[j] = j == i ? 0 : reverse_delta(", "out[j] = j <= i ? 0 : reverse_delta(")


def test_planted_route_move_mistakes_are_caught_in_words():
    with pytest.raises(MetaheurError, match=r"segment_delta disagrees .*segment of positions \d+\.\.\d+ moved to "
                                            r"position \d+ reversed: delta"):
        check_problem(random_latency(9, 3, cls=WrongSegment), devices=["cpu"])
    with pytest.raises(MetaheurError, match=r"reverse_row disagrees .*reversal of positions \d+\.\.\d+: out\["):
        check_problem(random_latency(9, 4, cls=WrongReverseRow), devices=["cpu"])


def test_scratch_and_candidates_are_checked_in_one_line():
    with pytest.raises(MetaheurError, match=r"scratch_size is 9000; it must be 0\.\.8192"):
        random_latency(5, 1, cls=type("Big", (LatencyCostOnly,), {"kind": "big", "scratch_size": 9000})).user_code()
    bad = {"own element": lambda n: np.arange(n)[:, None],
           "twice": lambda n: np.stack([(np.arange(n) + 1) % n] * 2, axis=1),
           "n x k": lambda n: np.zeros((n, n), int)}
    for message, table in bad.items():
        cls = type("Bad", (LatencyCostOnly,), {"kind": "bad", "candidates": lambda self, t=table: t(self.n)})
        with pytest.raises(MetaheurError, match=rf"candidates\(\).*{message}"):
            random_latency(6, 1, cls=cls).kernel_data()
    with pytest.raises(MetaheurError, match="data field 'scratch' is the engine's"):
        named = type("S", (LatencyCostOnly,), {"kind": "s", "data": lambda self: {"scratch": 1}})
        named(np.zeros((4, 4))).device_data()


class WrongDelta(UserQAP):
    """A planted mistake: the swap delta forgets the pair's own term."""

    kind = "wrongdelta"
    device_code = QAP_PAIR.replace("return qap_pair(d, p, i, j);",
                                   "return qap_pair(d, p, i, j) - (ll)(d.a[i * d.n + j] - d.a[j * d.n + i]) "
                                   "* (d.b[p[j] * d.n + p[i]] - d.b[p[i] * d.n + p[j]]);")


class WrongUpdate(CachedQAP):
    """A planted mistake: the cache update skips the pairs that touch the moved units."""

    kind = "wrongupdate"
    device_code = QAP_CACHED.replace("{ cache[i * n + j] = qap_pair(d, p, i, j); continue; }", "continue;")


class WrongUpdate32(SymmetricTaillardQAP):
    """A planted mistake in an int32 cache: the O(1) update of the pairs away from the move is
    tripled instead of doubled."""

    kind = "wrongupdate32"
    device_code = QAP_TAILLARD_SYM.replace("row[j] += 2 *", "row[j] += 3 *")


class WrongRow(type(random_tardiness(3, 0))):
    """A planted mistake: the insertion row is off by one for moves to the last position."""

    kind = "wrongrow"
    device_code = WT_CODE.replace("out[j] = j == i ? 0 : c - base;", "out[j] = j == i ? 0 : c - base + (j == n - 1);")


def test_a_planted_wrong_delta_is_caught_with_its_move():
    with pytest.raises(MetaheurError, match=r"on cpu: swap_delta disagrees with evaluate on permutation .*swap of "
                                            r"positions \d+ and \d+: delta -?\d+, evaluate says -?\d+"):
        check_problem(WrongDelta(*random_qap_arrays(8, 5)), devices=["cpu"])


def test_a_planted_wrong_cache_update_is_caught():
    with pytest.raises(MetaheurError, match=r"update_swap disagrees .*after the swap of positions \d+ and \d+, "
                                            r"cache\[\d+\] = -?\d+, prepare of the new permutation gives -?\d+"):
        check_problem(WrongUpdate(*random_qap_arrays(8, 6)), devices=["cpu"])
    with pytest.raises(MetaheurError, match=r"update_swap disagrees .*cache\[\d+\] = -?\d+, prepare"):
        check_problem(WrongUpdate32(*random_symmetric_qap_arrays(9, 6), cache_dtype="int32"), devices=["cpu"])


def test_a_planted_wrong_row_is_caught():
    pb = random_tardiness(9, 7)
    with pytest.raises(MetaheurError, match=r"insert_row disagrees .*insertion of the element at position \d+ at "
                                            r"position 8: out\[8\]"):
        check_problem(WrongRow(pb.p, pb.w, pb.due), devices=["cpu"])


def test_check_problem_needs_device_code():
    class NoCode(UserQAP):
        kind = "nocode"
        device_code = None

    with pytest.raises(MetaheurError, match="has no device_code"):
        check_problem(NoCode(*random_qap_arrays(4, 1)))


@pytest.mark.gpusim
@pytest.mark.parametrize("order", ["reverse", "random:3"])
def test_every_device_and_thread_order_agrees(simulated_gpus, monkeypatch, order):
    """check_problem's default devices: the CPU build and each simulated GPU; with the thread
    simulation (64 threads a block) the block functions meet at their barriers in any order."""
    monkeypatch.setenv("METAHEUR_SIMULATED_THREADS", "1")
    monkeypatch.setenv("METAHEUR_SIM_ORDER", order)
    pb = TaillardQAP(*random_qap_arrays(33, 8))
    report = check_problem(pb, trials=3)
    assert {line.split(": ")[0] for line in report.checks} == {"cpu", "cuda:0", "cuda:1"}
    check_problem(random_tardiness(33, 9), devices=["cuda:1"], trials=3)
    check_problem(random_latency(34, 12), devices=["cuda:0"], trials=3)
    check_problem(SymmetricTaillardQAP(*random_symmetric_qap_arrays(33, 10)), devices=["cuda:0"], trials=3)
    pb32 = SymmetricTaillardQAP(*random_symmetric_qap_arrays(33, 11), cache_dtype="int32")
    assert {line.split(": ")[0] for line in check_problem(pb32, trials=3).checks} == {"cpu", "cuda:0", "cuda:1"}


@pytest.mark.gpusim
def test_a_wrong_delta_is_caught_on_a_simulated_gpu(simulated_gpus):
    with pytest.raises(MetaheurError, match="on cuda:1: swap_delta disagrees"):
        check_problem(WrongDelta(*random_qap_arrays(8, 5)), devices=["cuda:1"])
