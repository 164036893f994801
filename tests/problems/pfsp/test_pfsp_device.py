"""The flow shop's device code against the numpy makespan: check_problem on random instances and
shapes (CPU build and the simulated GPUs' block of threads), and NEH's partial insertions at every
partial length."""

from __future__ import annotations

import numpy as np
import pytest

from metaheur.devices import gpu_devices, parse_device, to_host
from metaheur.engine import simcuda
from metaheur.engine.user_source import upload
from metaheur.errors import MetaheurError
from metaheur.problem.permutation_check import check_problem
from metaheur.problems.pfsp import PFSP, makespans, taillard


@pytest.fixture
def simulated_gpu(monkeypatch):
    """One simulated GPU (the CPU build run with a GPU's block of threads), device caches cleared."""

    def forget() -> None:
        gpu_devices.cache_clear()
        simcuda.reset()

    monkeypatch.setenv("METAHEUR_SIMULATED_GPUS", "1")
    monkeypatch.delenv("METAHEUR_NO_GPU", raising=False)
    forget()
    yield
    monkeypatch.undo()
    forget()


@pytest.mark.parametrize("n, m, high", [(2, 1, 9), (5, 2, 99), (9, 7, 99), (23, 20, 99), (40, 3, 5),
                                        (17, 60, 1000)])
def test_check_problem_on_random_shapes(n, m, high, simulated_gpu):
    times = np.random.default_rng(n * 1000 + m).integers(0, high, size=(m, n))
    report = check_problem(PFSP(times, name=f"r{n}x{m}"), devices=["cpu", "cuda:0"], trials=6, seed=n)
    for device in ("cpu", "cuda:0"):
        for function in ("cost", "swap_delta", "insert_delta", "insert_row", "partial_insert_row",
                         "partial_insert_tie"):
            assert any(line.startswith(f"{device}: {function} (") for line in report.checks), (device, function)


def test_check_problem_on_a_taillard_instance():
    check_problem(taillard("ta011"), devices=["cpu"], trials=4)


@pytest.mark.parametrize("device, block, sim", [("cpu", 1, False), ("cuda:0", 64, False), ("cpu", 64, True),
                                                ("cpu", 5, True), ("cpu", 2, True)])
@pytest.mark.parametrize("m", [1, 6, 40])
def test_partial_insertions_at_every_length(device, block, sim, m, simulated_gpu):
    """out[k] = makespan of seq[0..len) with elem inserted at k, for len = 0..n-1 (NEH's steps): one
    thread's rows and a block's wavefronts (the thread simulation, fewer threads than machines too)."""
    dev = parse_device(device)
    rng = np.random.default_rng(7 + m)
    problem = PFSP(rng.integers(1, 99, size=(m, 11)))
    n = problem.n
    mod = problem.user_code().module("engine/perm_eval.cu", dev, sim=sim)
    fields, arrays = problem.device_data()
    data = upload(fields, arrays, dev)
    k = n
    seqs = np.array([np.append(rng.permutation(n)[: n - 1], 0) for _ in range(k)], dtype=np.int32)
    lens = np.arange(k, dtype=np.int32) % n
    elems = np.array([np.setdiff1d(np.arange(n), s[:ln])[0] for s, ln in zip(seqs, lens, strict=True)],
                     dtype=np.int32)
    out = dev.zeros((k, n + 1), np.int64)
    ws = problem.work_entries()
    args = (dev.asarray(seqs), dev.asarray(lens), dev.asarray(elems), k, n, dev.zeros((k, ws), np.int64), ws, out)
    mod.kernel("perm_partial")(k, block, (*args, *data))
    got = to_host(out)
    for b in range(k):
        ln = int(lens[b])
        partial = PFSP(problem.times[:, np.append(seqs[b][:ln], elems[b])]) if ln else None
        for pos in range(ln + 1):
            order = np.insert(np.arange(ln), pos, ln)
            want = int(makespans(partial.times, order[None, :])[0]) if ln else int(problem.times[:, elems[b]].sum())
            assert got[b, pos] == want, (b, ln, pos)


def test_too_many_machines_for_the_device_code_is_one_line():
    problem = PFSP(np.ones((300, 3), dtype=np.int64))
    assert problem.value([0, 1, 2]) == 302
    with pytest.raises(MetaheurError, match="at most 256 machines"):
        problem.device_data()


def test_neh_gives_the_published_neh_makespans():
    """NEH with Taillard's acceleration, jobs by decreasing total time, first position on ties: 1286 on
    ta001 and 1365 on ta002, the NEH makespans reported for them in the literature."""
    from metaheur.islands.perm_operators import neh

    for name, expected in (("ta001", 1286), ("ta002", 1365)):
        problem = taillard(name)
        order = neh(problem)
        assert sorted(order.tolist()) == list(range(problem.n))
        assert problem.value(order) == expected


def test_iterated_greedy_reaches_ta001_optimum():
    """The engine's iterated greedy on the flow shop's device code finds ta001's optimum 1278."""
    from metaheur.search.perm_search import PermSearchBatch, PermSearchParams

    problem = taillard("ta001")
    batch = PermSearchBatch(problem, "cpu", 2, PermSearchParams(method="ig"))
    rng = np.random.default_rng(0)
    starts = np.array([rng.permutation(problem.n) for _ in range(2)])
    result = batch.run(starts, np.array([1, 2], dtype=np.uint64), budget=4000, target=1278)
    assert result.best_costs.min() == 1278
    assert [problem.value(p) for p in result.best] == result.best_costs.tolist()


def _neh_reference(problem: PFSP) -> list[int]:
    """NEH with ties broken by the least idle time (Fernandez-Viagas and Framinan 2014), then the
    first position, every candidate scored from scratch."""
    order = np.argsort(-problem.times.sum(axis=0), kind="stable")
    seq = [int(order[0])]
    for elem in order[1:].tolist():
        cands = [[*seq[:k], elem, *seq[k:]] for k in range(len(seq) + 1)]
        values = makespans(problem.times, np.array(cands))
        best = values.min()
        ties = [(problem.insertion_tie(seq, elem, k), k) for k in range(len(seq) + 1) if values[k] == best]
        seq = cands[min(ties)[1]]
    return seq


@pytest.mark.parametrize("n, m, high", [(2, 1, 9), (7, 3, 4), (12, 5, 9), (15, 20, 99), (30, 4, 3)])
@pytest.mark.parametrize("device", ["cpu", "cuda:0"])
def test_neh_with_idle_time_ties_matches_the_reference(n, m, high, device, simulated_gpu):
    """NEH's insertions with partial_insert_tie equal the reference on instances with many ties
    (small times), on the CPU build and on a simulated GPU's block of threads."""
    from metaheur.islands.perm_operators import neh

    problem = PFSP(np.random.default_rng(n + m).integers(1, high + 1, size=(m, n)))
    assert neh(problem, device, ties=True).tolist() == _neh_reference(problem)


def test_idle_time_ties_change_neh_where_positions_tie():
    """ta011's NEH with the tie-breaking is not the first-position NEH (1651 against 1680)."""
    from metaheur.islands.perm_operators import neh

    problem = taillard("ta011")
    assert problem.value(neh(problem)) == 1680
    assert problem.value(neh(problem, ties=True)) == 1651 == problem.value(_neh_reference(problem))


def test_insertion_tie_by_hand():
    """Two machines, job 0 (3, 1) scheduled, job 1 (1, 4) inserted. Last: job 1 starts on machine 2
    at 4, when job 0 leaves it: no idle time, key 0. First: job 1 waits 1 on machine 2, and job 0,
    which waited 3 there, now waits 0: key 1 - 3 = -2."""
    problem = PFSP(np.array([[3, 1], [1, 4]]))
    assert problem.insertion_tie([0], 1, 1) == 0
    assert problem.insertion_tie([0], 1, 0) == -2
