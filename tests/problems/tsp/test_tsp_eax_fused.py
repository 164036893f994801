"""The fused edge-frequency update of EAX generations (``ILSParams.eax_kernel = "fused"``,
kernel tsp_eax_freq_accept of kernels/tsp/tsp_eax.cu, EdgeFrequency.accept_shorter) against the
classic one (tsp_eax_freq, rows grouped by the host) and a numpy count of the population's edges:
the same table entry for entry, the same children generation after generation, on the CPU build,
on simulated GPUs and in the fiber simulation in several thread orders and block shapes."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from test_tsp_eax import keys_for, optima_with_lengths, population_counts

from metaheur.devices import gpu_devices, parse_device, to_host
from metaheur.engine import load_module, simcuda
from metaheur.errors import MetaheurError
from metaheur.islands import operators
from metaheur.islands.island import IslandSpec, IslandState, run_epoch
from metaheur.islands.params import GAParams, IslandParams
from metaheur.problems import clustered_tsp, uniform_tsp
from metaheur.problems.tsp.device_data import neighbours, tsp_data
from metaheur.problems.tsp.eax import EAXBatch, EAXGenerations, EdgeFrequency
from metaheur.problems.tsp.params import EAX_KERNELS, EAXParams, ILSParams

ORDERS = ["forward", "reverse", "random:1", "random:77"]


def table(freq: EdgeFrequency) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The table as stored: every row's neighbours and counts in their slots, and the row lengths."""
    return to_host(freq.nb).copy(), to_host(freq.cnt).copy(), to_host(freq.length).copy()


def same_table(x: EdgeFrequency, y: EdgeFrequency) -> bool:
    return all(np.array_equal(a, b) for a, b in zip(table(x), table(y), strict=True))


def test_fused_update_is_the_classic_one_entry_for_entry():
    """Two GAs side by side from the same population, entropy and greedy generations: the classic
    one updates its table by replace_children (greedy: replace), the fused one by accept_shorter;
    children, lengths and counters agree every generation, both tables are the population's edge
    counts, and after entropy generations the stored rows are identical slot for slot."""
    tsp = clustered_tsp(260, 5)
    pop, lengths = optima_with_lengths(tsp, 12, 6)
    data, neigh = tsp_data(tsp), neighbours(tsp, 8)
    runs = {}
    for kind in ("classic", "fused"):
        runs[kind] = (pop.copy(), lengths.copy(), EAXBatch(tsp, data, neigh, 12), EdgeFrequency(pop, "cpu",
                                                                                                  data.defines))
    accepted = 0
    for gen in range(6):
        order = np.random.default_rng(gen).permutation(12)
        select = "greedy" if gen in (2, 4) else "entropy"
        out = {}
        for kind, (p, ln, batch, freq) in runs.items():
            counters = np.zeros(12, dtype=np.int64)
            use = freq if (select == "entropy" or kind == "fused") else None
            children, child_len = batch(p[order], p[np.roll(order, -1)], ln[order], keys_for(12, gen), counters,
                                        "single", 8, select=select, freq=use)
            children, child_len = to_host(children).copy(), to_host(child_len).copy()
            better = child_len < ln[order]
            if kind == "fused":
                freq.accept_shorter(batch)
                freq.check_overflow()
            elif select == "entropy":
                freq.replace_children(batch, np.flatnonzero(better))
            else:
                freq.replace(p[order[better]], children[better])
            p[order[better]] = children[better]
            ln[order[better]] = child_len[better]
            out[kind] = (children, child_len, counters)
            assert freq.frequencies() == population_counts(p)
            accepted += int(better.sum())
        assert all(np.array_equal(x, y) for x, y in zip(out["classic"], out["fused"], strict=True))
        if select == "entropy" and gen < 2:  # both tables took the same rows in the same order
            assert same_table(runs["classic"][3], runs["fused"][3])
    assert accepted > 0 and np.array_equal(runs["classic"][0], runs["fused"][0])


def test_fused_update_takes_only_the_shorter_children():
    """Children no shorter than A (here: A crossed with itself, A again) leave the table alone."""
    tsp = uniform_tsp(120, 3)
    pop, lengths = optima_with_lengths(tsp, 6, 2)
    data, neigh = tsp_data(tsp), neighbours(tsp, 8)
    freq = EdgeFrequency(pop, "cpu", data.defines)
    before = table(freq)
    batch = EAXBatch(tsp, data, neigh, 6)
    batch(pop, pop, lengths, keys_for(6), np.zeros(6, dtype=np.int64), "single", 4, select="greedy", freq=freq)
    freq.accept_shorter(batch)
    assert all(np.array_equal(a, b) for a, b in zip(before, table(freq), strict=True))
    other = EAXBatch(tsp, data, neigh, 6)
    with pytest.raises(MetaheurError, match="accept_shorter needs a preceding EAXBatch call with this table"):
        EdgeFrequency(pop, "cpu", data.defines).accept_shorter(batch)  # recorded for another table
    with pytest.raises(MetaheurError, match="accept_shorter needs"):
        freq.accept_shorter(other)  # nothing recorded


def recorded_launch(tsp, pop, lengths, seed):
    """A recorded EAX launch of the population's pairs and its table before the update."""
    data, neigh = tsp_data(tsp), neighbours(tsp, 8)
    freq = EdgeFrequency(pop, "cpu", data.defines)
    batch = EAXBatch(tsp, data, neigh, len(pop))
    batch(pop, np.roll(pop, -1, axis=0), lengths, keys_for(len(pop), seed), np.zeros(len(pop), dtype=np.int64),
          "single", 10, select="entropy", freq=freq)
    return batch, freq


@pytest.mark.gpusim
@pytest.mark.parametrize("order", ORDERS)
def test_fused_kernel_in_the_thread_simulation_any_order_and_shape(monkeypatch, order):
    """The fiber simulation of tsp_eax_freq_accept, threads run in ``order``, grids with fewer
    threads than cities (a thread owns several rows) and more: the CPU build's table."""
    monkeypatch.setenv("METAHEUR_SIM_ORDER", order)
    tsp = clustered_tsp(150, 9)
    pop, lengths = optima_with_lengths(tsp, 10, 3)
    batch, expected = recorded_launch(tsp, pop, lengths, 4)
    start = table(expected)
    assert (to_host(batch.lengths) < lengths).sum() >= 2
    expected.accept_shorter(batch)
    kernel = load_module("tsp/tsp_eax.cu", "cpu", tsp_data(tsp).defines, sim=True).kernel("tsp_eax_freq_accept")
    for grid, block in ((1, 1), (3, 7), (2, 33), (5, 32), (1, 128)):
        nb, cnt, ln = (a.copy() for a in start)
        overflow = np.zeros(1, np.int64)
        kernel(grid, block, (batch.changes, batch.info_device, batch.lengths, batch.len_a, batch.count, tsp.n,
                             expected.m, nb, cnt, ln, overflow))
        assert np.array_equal(nb, to_host(expected.nb)) and np.array_equal(cnt, to_host(expected.cnt))
        assert np.array_equal(ln, to_host(expected.length)) and overflow[0] == 0


def _forget_devices() -> None:
    gpu_devices.cache_clear()
    simcuda.reset()
    operators._CACHE.clear()


@pytest.fixture(name="sim_gpu")
def _sim_gpu(monkeypatch):
    """One simulated GPU of 2 multiprocessors for the test, every device cache cleared around it."""
    monkeypatch.setenv("METAHEUR_SIMULATED_GPUS", "1")
    monkeypatch.setenv("METAHEUR_SIMULATED_GPU_SMS", "2")
    monkeypatch.delenv("METAHEUR_NO_GPU", raising=False)
    _forget_devices()
    yield parse_device("cuda:0")
    monkeypatch.undo()
    _forget_devices()


@pytest.mark.gpusim
def test_fused_update_on_a_simulated_gpu_keeps_the_cpu_table(sim_gpu):
    """On a simulated GPU (the thread simulation: one thread a city, blocks of 128) the fused
    update keeps the CPU build's table, slot for slot."""
    tsp = clustered_tsp(300, 2)
    pop, lengths = optima_with_lengths(tsp, 6, 8)
    tables = []
    for dev in (parse_device("cpu"), sim_gpu):
        data = tsp_data(tsp, dev)
        freq = EdgeFrequency(pop, dev, data.defines)
        batch = EAXBatch(tsp, data, neighbours(tsp, 8, dev), 6)
        batch(pop, np.roll(pop, -1, axis=0), lengths, keys_for(6, 1), np.zeros(6, np.int64), "single", 6,
              select="entropy", freq=freq)
        assert (to_host(batch.lengths) < lengths).any()
        freq.accept_shorter(batch)
        tables.append(table(freq))
    assert all(np.array_equal(a, b) for a, b in zip(*tables, strict=True))


@pytest.mark.gpusim
def test_island_epochs_on_a_simulated_gpu_are_the_same_with_either_kernel(sim_gpu):
    """A GPU island's host paths (device counters, only the accepted children read back, the
    update left running, the crossover on blocks of threads): the classic island's populations on
    the same simulated GPU."""
    out = {}
    for kernel in EAX_KERNELS:
        st, _ = run_epoch(eax_spec(kernel, sim_gpu.name), IslandState(0), generations=4, generation_limit=5)
        out[kernel] = (st.population, st.costs)
    for kernel in EAX_KERNELS[1:]:
        assert np.array_equal(out["classic"][0], out[kernel][0]) and np.array_equal(out["classic"][1], out[kernel][1])


def eax_spec(kernel: str, device: str = "cpu", seed: int = 7) -> IslandSpec:
    ga = GAParams(population=12, offspring=1, crossover="eax", restart_after=0)
    return IslandSpec(0, clustered_tsp(150, seed=3), "eax-test", device,
                      IslandParams(ga=ga, ils=ILSParams(eax_kernel=kernel), eax=EAXParams(tries=5)), seed)


def test_island_epochs_are_the_same_with_every_kernel():
    """EAX island epochs, entropy then greedy generations (a generation horizon), give the same
    populations and costs with every ``eax_kernel`` (classic, fused, block)."""
    out = {}
    for kernel in EAX_KERNELS:
        st, _ = run_epoch(eax_spec(kernel), IslandState(0), generations=3, generation_limit=5)
        st, stats = run_epoch(eax_spec(kernel), st, generations=3, generation_limit=5)  # the last two greedy
        tsp = eax_spec(kernel).problem
        assert all(tsp.tour_length(t) == c for t, c in zip(st.population, st.costs, strict=True))
        out[kernel] = (st.population, st.costs, stats.ls_iterations)
    for kernel in EAX_KERNELS[1:]:
        assert np.array_equal(out["classic"][0], out[kernel][0]) and np.array_equal(out["classic"][1], out[kernel][1])
        assert out["classic"][2] == out[kernel][2]


def test_eax_kernel_switch_is_checked():
    with pytest.raises(MetaheurError, match="eax_kernel must be one of classic, fused, block"):
        ILSParams(eax_kernel="warp")
    tsp = uniform_tsp(50, 1)
    with pytest.raises(MetaheurError, match="eax_kernel"):
        EAXGenerations(tsp, tsp_data(tsp), neighbours(tsp, 5), parse_device("cpu"), 4, "warp")
    assert replace(ILSParams(), eax_kernel="fused").eax_kernel == "fused" and ILSParams().eax_kernel == "classic"
