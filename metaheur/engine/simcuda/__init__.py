"""Simulated CUDA devices: the subset of CuPy that metaheur uses, over numpy and the CPU build.

``METAHEUR_SIMULATED_GPUS=N`` makes :mod:`metaheur.devices` report ``cuda:0`` .. ``cuda:N-1``
backed by this module instead of CuPy, so that every host-code branch taken on a GPU (device
arrays, transfers, streams, device contexts, memory limits, islands on several GPUs) runs on a
machine without one. ``METAHEUR_SIMULATED_GPU_MEMORY`` (bytes, or with a ``K``/``M``/``G``
suffix) is each device's memory, 141 GB by default, ``METAHEUR_SIMULATED_GPU_SMS`` its
multiprocessors, 132 by default; ``METAHEUR_SIMULATED_THREADS=1`` builds
every simulated module as the CPU build's fiber thread simulation (kernels/engine/mh_cpu_shim.h), which
honours the launch's block shape; by default the fast CPU build runs each block with one thread.

The layer is strict where CuPy is, or it would prove nothing (docs/gpu.md):

- :class:`ndarray` is its own type; ``numpy.asarray`` of one raises ``TypeError`` as
  ``cupy.ndarray.__array__`` does: host reads go through ``.get()`` or :func:`asnumpy`;
- element access, arithmetic and copies need the array's device to be the current one (CuPy
  without peer access); a kernel takes only arrays of its own device, never numpy arrays;
- ``RawModule.get_function`` gives a :class:`RawKernel` shaped as CuPy 14's (no ``ptr``; its
  ``kernel``, the :class:`Function` of the current device, has one; ``max_threads_per_block``
  asks the driver, whose occupancy query answers from the resource table,
  metaheur/engine/kernel_resources.csv, which experiments/kernel_resources.py writes); a
  :class:`Function` belongs to the device that was current when it was loaded, and launching it
  under another device's context, on a stream of another device, or with more threads
  than its limit fails as the driver does;
- allocations count against a per-device memory pool whose limit
  (``get_default_memory_pool().set_limit``) raises :class:`OutOfMemoryError`; freed blocks stay
  cached with the stream that freed them, as in CuPy's pool, until an allocation needs them;
- device arrays are not pickled (a checkpoint or a worker's state must hold host arrays).
"""

from __future__ import annotations

from types import SimpleNamespace

from metaheur.engine.simcuda.arrays import array, asarray, ascontiguousarray, asnumpy, empty, full, ndarray, zeros
from metaheur.engine.simcuda.kernels import Function, RawKernel, RawModule, _func_get_attribute, _occupancy
from metaheur.engine.simcuda.runtime import (
    DEFAULT_MAX_THREADS,
    DEFAULT_MEMORY,
    MULTIPROCESSORS,
    CompileException,
    CUDADriverError,
    CUDARuntimeError,
    Device,
    Event,
    MemoryPool,
    OutOfMemoryError,
    Stream,
    _device_count,
    _mem_get_info,
    _properties,
    configured_count,
    configured_memory,
    configured_multiprocessors,
    get_current_stream,
    get_default_memory_pool,
    get_elapsed_time,
    parse_bytes,
    reset,
    streams_created,
    threads_simulated,
)

__version__ = "simulated"

#: ``cupy.cuda``: the names of it that metaheur uses.
cuda = SimpleNamespace(
    Device=Device, Stream=Stream, Event=Event, MemoryPool=MemoryPool, get_current_stream=get_current_stream,
    get_elapsed_time=get_elapsed_time,
    runtime=SimpleNamespace(getDeviceCount=_device_count, getDeviceProperties=_properties, memGetInfo=_mem_get_info,
                            CUDARuntimeError=CUDARuntimeError),
    driver=SimpleNamespace(CUDADriverError=CUDADriverError, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK=0,
                           funcGetAttribute=_func_get_attribute,
                           occupancyMaxActiveBlocksPerMultiprocessor=_occupancy),
    memory=SimpleNamespace(OutOfMemoryError=OutOfMemoryError),
    compiler=SimpleNamespace(CompileException=CompileException),
)

__all__ = [
    "DEFAULT_MAX_THREADS", "DEFAULT_MEMORY", "MULTIPROCESSORS", "CUDADriverError", "CUDARuntimeError",
    "CompileException", "Device", "Event", "Function", "MemoryPool", "OutOfMemoryError", "RawKernel", "RawModule",
    "Stream",
    "array", "asarray", "ascontiguousarray", "asnumpy", "configured_count", "configured_memory",
    "configured_multiprocessors", "cuda", "empty", "full", "get_current_stream", "get_default_memory_pool",
    "get_elapsed_time", "ndarray", "parse_bytes", "reset", "streams_created", "threads_simulated", "zeros",
]
