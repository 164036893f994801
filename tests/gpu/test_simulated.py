"""Simulated CUDA devices (metaheur.engine.simcuda): the device layer reports them, they are as
strict as CuPy about host/device mistakes, and their kernels are the CPU build's."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from metaheur.cli import cli
from metaheur.devices import cpu_device, gpu_devices, parse_device, system_report
from metaheur.engine import load_module, simcuda
from metaheur.errors import MetaheurError
from metaheur.problems import clustered_tsp, random_qap
from metaheur.problems.qap.tabu import QAPTabuBatch
from metaheur.problems.tsp.descent import TSPDescentBatch
from metaheur.problems.tsp.device_data import neighbours, tsp_data
from metaheur.problems.tsp.eax import EAXBatch, EdgeFrequency
from metaheur.problems.tsp.ils import TSPILSBatch

pytestmark = pytest.mark.gpusim

BOUNDED = """
extern "C" __global__ void __launch_bounds__(64) scale(const int *x, int n, int *y) {
  for (int i = threadIdx.x; i < n; i += blockDim.x) y[blockIdx.x * n + i] = 2 * x[blockIdx.x * n + i];
}
"""


def test_no_variable_no_simulated_device(monkeypatch):
    monkeypatch.delenv("METAHEUR_SIMULATED_GPUS", raising=False)
    gpu_devices.cache_clear()
    try:
        assert not any(d.simulated for d in gpu_devices())
    finally:
        gpu_devices.cache_clear()


def test_info_marks_simulated_devices_in_text_and_json(simulated):
    assert [d.name for d in simulated.devices] == ["cuda:0", "cuda:1"]
    assert all(d.is_gpu and d.simulated and d.xp is simcuda for d in simulated.devices)
    text = CliRunner().invoke(cli, ["info"]).output
    assert "cuda:1" in text and "[simulated]" in text and "2 simulated GPU(s)" in text
    report = json.loads(CliRunner().invoke(cli, ["info", "--json"]).output)
    assert report["simulated_gpus"] == 2
    assert [d["simulated"] for d in report["devices"]] == [False, True, True]


def test_a_bad_count_or_memory_is_one_clear_error(simulated, monkeypatch):
    monkeypatch.setenv("METAHEUR_SIMULATED_GPUS", "two")
    gpu_devices.cache_clear()
    with pytest.raises(MetaheurError, match="METAHEUR_SIMULATED_GPUS must be a whole number"):
        gpu_devices()
    with pytest.raises(MetaheurError, match="METAHEUR_SIMULATED_GPU_MEMORY must be a positive number"):
        simulated(1, memory="lots")
    with pytest.raises(MetaheurError, match="METAHEUR_SIMULATED_GPU_MEMORY must be a positive number"):
        system_report()


def test_device_arrays_refuse_implicit_conversion_as_cupy_does(simulated):
    dev = parse_device("cuda:0")
    a = dev.asarray(np.arange(6, dtype=np.int32))
    with pytest.raises(TypeError, match="Implicit conversion to a NumPy array is not allowed"):
        np.asarray(a)
    with pytest.raises(TypeError, match="Unsupported type"):
        a + np.ones(6, dtype=np.int32)
    with pytest.raises(TypeError, match="not pickled"):
        __import__("pickle").dumps(a)
    assert np.array_equal(a.get(), np.arange(6)) and np.array_equal(simcuda.asnumpy(a), np.arange(6))
    with dev.context():
        assert int(a.max()) == 5 and np.array_equal((a * 2).get(), 2 * np.arange(6))


def test_a_device_array_in_a_cpu_launch_and_a_host_array_in_a_gpu_launch_fail(simulated):
    x = np.arange(8, dtype=np.int32)
    cpu = load_module("tsp/tsp_moves.cu", "cpu", {"MH_TSP_WEIGHT": 1}).kernel("tsp_positions")
    gpu = load_module("tsp/tsp_moves.cu", "cuda:0", {"MH_TSP_WEIGHT": 1}).kernel("tsp_positions")
    dev = parse_device("cuda:0")
    with pytest.raises(TypeError, match="needs a numpy array, got ndarray"):
        cpu(1, 1, (dev.asarray(x), np.zeros(8, np.int32), 8))
    with pytest.raises(TypeError, match="needs a cupy array on cuda:0"):
        gpu(1, 32, (x, dev.zeros(8, np.int32), 8))
    with pytest.raises(TypeError, match="Unsupported type"):  # CuPy's own refusal, below our checks
        gpu._fn((1, 1, 1), (32, 1, 1), (x, dev.zeros(8, np.int32), np.int32(8)))
    out = dev.zeros(8, np.int32)
    gpu(1, 32, (dev.asarray(x[::-1].copy()), out, 8))
    assert np.array_equal(out.get(), np.arange(8)[::-1])


def test_arrays_and_launches_on_another_device_fail_as_on_cupy(simulated):
    zero, one = simulated.devices
    a = one.asarray(np.arange(4))
    with zero.context():
        with pytest.raises(ValueError, match="not on the current device 0"):
            a[0] = 7
        with pytest.raises(ValueError, match="not on the current device 0"):
            a.max()
    with pytest.raises(ValueError, match="argument tours is on cuda:1, not cuda:0"):
        load_module("tsp/tsp_moves.cu", zero, {"MH_TSP_WEIGHT": 1}).kernel("tsp_positions")(
            1, 1, (one.zeros(4, np.int32), zero.zeros(4, np.int32), 4))
    raw = simcuda.RawModule(code=BOUNDED)
    with simcuda.cuda.Device(1):
        fn = raw.get_function("scale").kernel  # the cupy.cuda.Function loaded on device 1
    with simcuda.cuda.Device(0), pytest.raises(simcuda.CUDADriverError, match="INVALID_HANDLE"):
        fn((1,), (32,), (zero.zeros(4, np.int32), np.int32(4), zero.zeros(4, np.int32)))
    with simcuda.cuda.Device(0):
        other = simcuda.cuda.Stream(non_blocking=True)
    with simcuda.cuda.Device(1), pytest.raises(simcuda.CUDADriverError, match="on a stream of device 0"):
        fn((1,), (32,), (one.zeros(4, np.int32), np.int32(4), one.zeros(4, np.int32)), stream=other)
    with simcuda.cuda.Device(1), pytest.raises(simcuda.CUDARuntimeError, match="stream of device 0"), other:
        pass


def test_kernels_are_taken_and_launched_on_their_own_device_from_any_thread_context(simulated):
    """KernelModule.kernel takes a function on its module's device whichever device is current
    (CuPy loads a module on the current one); a later launch then works from any context."""
    zero, one = simulated.devices
    module = load_module("tsp/tsp_moves.cu", one, {"MH_TSP_WEIGHT": 5})
    with zero.context():
        kernel = module.kernel("tsp_positions")
    assert [f.device_id for f in kernel._fn._kernel_cache.values()] == [1]
    tours, pos = one.asarray(np.array([[2, 0, 1, 3]], np.int32)), one.zeros((1, 4), np.int32)
    with zero.context():
        kernel(1, 32, (tours, pos, 4))
    assert pos.get().tolist() == [[1, 2, 0, 3]]
    assert [f.device_id for f in kernel._fn._kernel_cache.values()] == [1]  # launched on its own device


def test_a_block_larger_than_the_kernels_limit_is_refused_before_the_launch(simulated, tmp_path):
    path = tmp_path / "bounded.cu"
    path.write_text(BOUNDED)
    dev = parse_device("cuda:0")
    kernel = load_module(str(path), dev).kernel("scale")
    assert isinstance(kernel._fn, simcuda.RawKernel) and not hasattr(kernel._fn, "ptr")  # CuPy 14's shape
    assert kernel.max_threads == 64 == kernel._fn.max_threads_per_block
    x, y = dev.asarray(np.arange(6, dtype=np.int32).reshape(2, 3)), dev.zeros((2, 3), np.int32)
    with pytest.raises(MetaheurError, match="at most 64 threads for this kernel"):
        kernel(2, 128, (x, 3, y))
    kernel(2, 64, (x, 3, y))
    assert np.array_equal(y.get(), 2 * np.arange(6).reshape(2, 3))
    with dev.context(), pytest.raises(simcuda.CUDADriverError, match="too many resources requested"):
        kernel._fn((2,), (128,), (x, np.int32(3), y))
    assert load_module("tsp/tsp_moves.cu", dev, {"MH_TSP_WEIGHT": 1}).kernel("tsp_positions").max_threads == 1024
    with pytest.raises(simcuda.CUDADriverError, match=r"simulated occupancy of scale .*no row in"):
        kernel.resident_blocks(64)  # a kernel the resource table does not list has no simulated occupancy


def test_memory_pool_limit_raises_out_of_memory_and_frees_what_is_released(simulated):
    dev = simulated(1, memory="64K")[0]
    pool = simcuda.get_default_memory_pool()
    a = dev.zeros(6000, np.int64)  # 48,000 bytes
    with dev.context():
        assert pool.used_bytes() == 48128
    with pytest.raises(simcuda.OutOfMemoryError, match="Out of memory allocating 24,064 bytes"):
        dev.zeros(3000, np.int64)
    del a
    dev.zeros(3000, np.int64)  # the freed block is reused


@pytest.mark.parametrize("threads", [False, True], ids=["fast", "thread-simulation"])
def test_searches_on_a_simulated_gpu_equal_the_cpu_build(simulated, monkeypatch, threads):
    """The GPU paths (GPU launch shapes, device arrays, transfers) give the CPU build's results
    bit for bit, in fast mode and in the fiber simulation that runs every thread of a block."""
    if threads:
        monkeypatch.setenv("METAHEUR_SIMULATED_THREADS", "1")
    qap = random_qap(13, seed=3)
    starts = np.array([np.random.default_rng(s).permutation(13) for s in range(3)])
    tabu = [QAPTabuBatch(qap, dev, starts=starts, seed=2).run(150) for dev in ("cpu", "cuda:1")]
    assert np.array_equal(tabu[0].best, tabu[1].best) and np.array_equal(tabu[0].best_costs, tabu[1].best_costs)
    tsp = clustered_tsp(40, seed=1)
    tours = np.array([np.random.default_rng(s).permutation(40) for s in range(3)])
    descent = [TSPDescentBatch(tsp, dev).run(tours) for dev in ("cpu", "cuda:0")]
    assert np.array_equal(descent[0].best, descent[1].best)
    assert all(tsp.tour_length(t) == c for t, c in zip(descent[1].best, descent[1].best_costs, strict=True))


def test_ils_adopt_writes_on_its_own_device(simulated):
    zero, one = simulated.devices
    tsp = clustered_tsp(30, seed=2)
    batch = TSPILSBatch(tsp, one, count=2, seed=1)
    result = batch.run(3)
    with zero.context():  # another GPU's island thread: adopt must switch to the batch's device
        batch.adopt(0, result.best[1], int(result.best_costs[1]))
    assert batch.run(0).best_costs[0] == result.best_costs[1]


def test_eax_entropy_changes_are_indexed_on_the_device(simulated):
    """EdgeFrequency.replace_children reads only the accepted blocks' rows of the changes, and the
    table it keeps on a simulated GPU is the one the CPU build keeps."""
    tsp = clustered_tsp(30, seed=4)
    rng = np.random.default_rng(0)
    pop = np.array([rng.permutation(30) for _ in range(6)])
    lengths = np.array([tsp.tour_length(t) for t in pop])
    tables = []
    for dev in (cpu_device(), parse_device("cuda:1")):
        data = tsp_data(tsp, dev)
        freq = EdgeFrequency(pop, dev, data.defines)
        batch = EAXBatch(tsp, data, neighbours(tsp, 8, dev), 6)
        keys = np.arange(1, 7, dtype=np.uint64)
        batch(pop, np.roll(pop, -1, axis=0), lengths, keys, np.zeros(6, np.int64), "single", 4,
              select="entropy", freq=freq)
        freq.replace_children(batch, [0, 2, 5])
        tables.append(freq.frequencies())
    assert tables[0] == tables[1]


def test_eax_takes_device_tours_and_device_counters_as_host_ones(simulated):
    tsp = clustered_tsp(30, seed=6)
    dev = parse_device("cuda:1")
    rng = np.random.default_rng(1)
    a, b = (np.array([rng.permutation(30) for _ in range(4)]) for _ in range(2))
    lengths = np.array([tsp.tour_length(t) for t in a])
    data = tsp_data(tsp, dev)
    batch = EAXBatch(tsp, data, neighbours(tsp, 8, dev), 4)
    keys = np.arange(4, dtype=np.uint64)
    host_counters = np.zeros(4, np.int64)
    host = [x.get() for x in batch(a, b, lengths, keys, host_counters, "rand", 3)]
    device_counters = dev.zeros(4, np.int64)
    with parse_device("cuda:0").context():  # another device current: the batch switches to its own
        out = batch(dev.asarray(a), dev.asarray(b), lengths, keys, device_counters, "rand", 3)
    assert all(np.array_equal(h, d.get()) for h, d in zip(host, out, strict=True))
    assert np.array_equal(device_counters.get(), host_counters) and host_counters.min() > 0
