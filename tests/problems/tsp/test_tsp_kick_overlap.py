"""A GPU island's kick rounds (TSPOperators._improve_parallel) queue each round behind the last
without waiting for its descent to end (issue 62): the same tours bit for bit as the rounds
waited for one by one (as before), on the CPU build and on simulated GPUs (fast and with every
thread of a block run in several orders), and the host waits on the device in a round only at
the descent's looks at its deltas."""

from __future__ import annotations

import numpy as np
import pytest

from metaheur.devices import cpu_device, to_host
from metaheur.engine import simcuda
from metaheur.ga.order_ga import OrderGA
from metaheur.islands.params import GAParams, IslandParams
from metaheur.problems import clustered_tsp, uniform_tsp
from metaheur.problems.tsp import canonical_tours, descent
from metaheur.problems.tsp.descent import TSPDescentBatch
from metaheur.problems.tsp.operators import KICK_REVERSALS, KICK_WINDOW, TSPOperators

pytestmark = pytest.mark.gpusim

PARAMS = IslandParams(ga=GAParams(population=6, offspring=4, crossover="ox", ls_budget=3))
# the full neighbourhoods (best move only, two deltas read a look) and the candidate lists
# (several disjoint moves a pass, one delta read a look)
INSTANCES = [clustered_tsp(40, seed=3), uniform_tsp(230, seed=7)]


def rounds_waited_for(tsp, device, starts: np.ndarray, keys: np.ndarray, rounds: int):
    """The kick rounds as they ran before: every descent waited for and its lengths and moves
    read back at its end. Returns the tours (canonical) and their exact lengths."""
    ga, batch = OrderGA(device, tsp.n), TSPDescentBatch(tsp, device)
    best = device.asarray(starts, np.int32)
    best_len = batch.lengths(best)
    batch.descend(best, best_len)
    d_keys, counters = device.asarray(np.asarray(keys, dtype=np.uint64)), device.zeros(len(keys), np.int64)
    for _ in range(rounds):
        with device.context():
            kicked = best.copy()
        ga.reverse_segments(kicked, d_keys, KICK_REVERSALS, KICK_WINDOW, counters)
        kicked_len = batch.lengths(kicked)
        batch.descend(kicked, kicked_len)
        batch.keep_better(best, best_len, kicked, kicked_len)
    tours = to_host(best).astype(np.int64)
    return canonical_tours(tours), np.array([tsp.tour_length(t) for t in tours])


def starts_for(tsp, count: int = 6) -> np.ndarray:
    return np.array([np.random.default_rng(k).permutation(tsp.n) for k in range(count)])


@pytest.mark.parametrize("tsp", INSTANCES, ids=lambda t: t.name)
def test_kick_rounds_give_the_tours_of_rounds_waited_for(simulated, tsp):
    gpu = simulated.devices[0]
    starts, keys = starts_for(tsp), np.arange(11, 17, dtype=np.uint64)
    tours, costs, _ = TSPOperators(tsp, gpu, PARAMS).improve(starts, keys)
    for device in (cpu_device(), gpu):
        expected, lengths = rounds_waited_for(tsp, device, starts, keys, PARAMS.ga.ls_budget)
        assert np.array_equal(tours, expected), device
        assert np.array_equal(costs, lengths), device
    assert (costs < [tsp.tour_length(t) for t in starts]).all()  # the rounds did improve the starts


@pytest.mark.parametrize("order", ["reverse", "random:1"])
def test_kick_rounds_in_the_thread_simulation_give_the_cpu_builds_tours(simulated, monkeypatch, order):
    """Every thread of a block run as a fiber, in two orders: the rounds queued on the simulated
    GPU give the tours of the rounds waited for on the CPU build."""
    monkeypatch.setenv("METAHEUR_SIMULATED_THREADS", "1")
    monkeypatch.setenv("METAHEUR_SIM_ORDER", order)
    tsp, rounds = INSTANCES[0], 2
    starts, keys = starts_for(tsp, 3), np.arange(3, dtype=np.uint64)
    ops = TSPOperators(tsp, simulated.devices[0], PARAMS)
    assert ops._descent.module.sim and ops.ga.module.sim  # the fiber builds
    tours, costs, _ = ops.improve(starts, keys, kicks=rounds)
    expected, lengths = rounds_waited_for(tsp, cpu_device(), starts, keys, rounds)
    assert np.array_equal(tours, expected) and np.array_equal(costs, lengths)


class WaitCounter:
    """Counts the host's waits on simulated devices (stream synchronisations and read-backs),
    and those made while the descent looks at its deltas."""

    def __init__(self, monkeypatch):
        self.waits = self.at_looks = 0
        self.looking = False
        get, synchronize, improving = simcuda.ndarray.get, simcuda.Stream.synchronize, descent._Buffers.improving

        def count(real):
            def counted(*args, **kwargs):
                self.waits += 1
                self.at_looks += self.looking
                return real(*args, **kwargs)
            return counted

        def look(buf) -> bool:
            self.looking = True
            try:
                return improving(buf)
            finally:
                self.looking = False

        monkeypatch.setattr(simcuda.ndarray, "get", count(get))
        monkeypatch.setattr(simcuda.Stream, "synchronize", count(synchronize))
        monkeypatch.setattr(descent._Buffers, "improving", look)

    def outside_looks(self, run) -> int:
        """Waits of ``run()`` other than at the descent's looks at its deltas."""
        self.waits = self.at_looks = 0
        run()
        assert self.at_looks > 0  # the looks themselves read the deltas back
        return self.waits - self.at_looks


@pytest.mark.parametrize("tsp", INSTANCES, ids=lambda t: t.name)
def test_a_kick_round_waits_only_where_the_descent_looks_at_its_deltas(simulated, monkeypatch, tsp):
    gpu = simulated.devices[0]
    starts, keys = starts_for(tsp), np.arange(6, dtype=np.uint64)
    ops = TSPOperators(tsp, gpu, PARAMS)
    ops.improve(starts, keys, kicks=1)  # the buffers and kernels of this batch size
    counter = WaitCounter(monkeypatch)
    now = [counter.outside_looks(lambda r=r: ops.improve(starts, keys, kicks=r)) for r in (1, 4)]
    before = [counter.outside_looks(lambda r=r: rounds_waited_for(tsp, gpu, starts, keys, r)) for r in (1, 4)]
    assert now[1] == now[0]  # no wait a round outside the looks
    assert before[1] - before[0] == 3 * 3  # before: a synchronisation and two read-backs a round
