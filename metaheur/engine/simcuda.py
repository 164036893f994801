"""Simulated CUDA devices: the subset of CuPy that metaheur uses, over numpy and the CPU build.

``METAHEUR_SIMULATED_GPUS=N`` makes :mod:`metaheur.devices` report ``cuda:0`` .. ``cuda:N-1``
backed by this module instead of CuPy, so that every host-code branch taken on a GPU (device
arrays, transfers, streams, device contexts, memory limits, islands on several GPUs) runs on a
machine without one. ``METAHEUR_SIMULATED_GPU_MEMORY`` (bytes, or with a ``K``/``M``/``G``
suffix) is each device's memory, 141 GB by default, ``METAHEUR_SIMULATED_GPU_SMS`` its
multiprocessors, 132 by default; ``METAHEUR_SIMULATED_THREADS=1`` builds
every simulated module as the CPU build's fiber thread simulation (kernels/mh_cpu_shim.h), which
honours the launch's block shape; by default the fast CPU build runs each block with one thread.

The layer is strict where CuPy is, or it would prove nothing (docs/gpu.md):

- :class:`ndarray` is its own type; ``numpy.asarray`` of one raises ``TypeError`` as
  ``cupy.ndarray.__array__`` does: host reads go through ``.get()`` or :func:`asnumpy`;
- element access, arithmetic and copies need the array's device to be the current one (CuPy
  without peer access); a kernel takes only arrays of its own device, never numpy arrays;
- a function taken from a :class:`RawModule` belongs to the device that was current when it was
  taken (CuPy loads a module per device), and launching it under another device's context, on a
  stream of another device, or with more threads than its limit fails as the driver does;
- allocations count against a per-device memory pool whose limit
  (``get_default_memory_pool().set_limit``) raises :class:`OutOfMemoryError`; freed blocks stay
  cached with the stream that freed them, as in CuPy's pool, until an allocation needs them;
- device arrays are not pickled (a checkpoint or a worker's state must hold host arrays).
"""

from __future__ import annotations

import itertools
import operator
import os
import re
import threading
import time
import weakref
from dataclasses import dataclass, field

import numpy as np

__version__ = "simulated"
DEFAULT_MEMORY = 141 * 10**9  # an H200's HBM3e
MULTIPROCESSORS = 132  # an H200's SMs
DEFAULT_MAX_THREADS = 1024  # CUDA's block limit, for a kernel without __launch_bounds__
_ALIGN = 512  # CuPy's pool rounds allocations up to 512 bytes
_SUFFIX = {"": 1, "K": 2**10, "M": 2**20, "G": 2**30}


class CUDARuntimeError(RuntimeError):
    """A CUDA runtime error (as ``cupy.cuda.runtime.CUDARuntimeError``)."""


class CUDADriverError(RuntimeError):
    """A CUDA driver error (as ``cupy.cuda.driver.CUDADriverError``)."""


class OutOfMemoryError(MemoryError):
    """The memory pool cannot allocate (as ``cupy.cuda.memory.OutOfMemoryError``)."""

    def __init__(self, size: int, total: int, limit: int):
        super().__init__(f"Out of memory allocating {size:,} bytes (allocated so far: {total:,} bytes, "
                         f"limit set to: {limit:,} bytes).")


class CompileException(Exception):
    """A kernel that does not compile (as ``cupy.cuda.compiler.CompileException``)."""


# ---------------------------------------------------------------------------------- configuration
def parse_bytes(text: str, what: str) -> int:
    """``12345``, ``512M``, ``2G`` -> bytes (ValueError with ``what`` in the message otherwise)."""
    m = re.fullmatch(r"\s*(\d+)\s*([KMG]?)i?B?\s*", text, re.I)
    if not m or int(m.group(1)) < 1:
        raise ValueError(f"{what} must be a positive number of bytes (e.g. 512M or 2G), got {text!r}")
    return int(m.group(1)) * _SUFFIX[m.group(2).upper()]


def configured_count() -> int:
    """Simulated devices asked for by ``METAHEUR_SIMULATED_GPUS`` (0 when unset)."""
    text = os.environ.get("METAHEUR_SIMULATED_GPUS", "").strip()
    if not text:
        return 0
    if not text.isdigit() or int(text) < 1:
        raise ValueError(f"METAHEUR_SIMULATED_GPUS must be a whole number >= 1, got {text!r}")
    return int(text)


def configured_memory() -> int:
    text = os.environ.get("METAHEUR_SIMULATED_GPU_MEMORY", "").strip()
    return parse_bytes(text, "METAHEUR_SIMULATED_GPU_MEMORY") if text else DEFAULT_MEMORY


def configured_multiprocessors() -> int:
    """Multiprocessors of each simulated device (``METAHEUR_SIMULATED_GPU_SMS``, an H200's 132 by
    default): what the balancer's waves are counted in, so tests and simulated checks can make
    them small."""
    text = os.environ.get("METAHEUR_SIMULATED_GPU_SMS", "").strip()
    if not text:
        return MULTIPROCESSORS
    if not text.isdigit() or int(text) < 1:
        raise ValueError(f"METAHEUR_SIMULATED_GPU_SMS must be a whole number >= 1, got {text!r}")
    return int(text)


def threads_simulated() -> bool:
    """Whether simulated modules are built as the fiber thread simulation."""
    return os.environ.get("METAHEUR_SIMULATED_THREADS", "") not in ("", "0")


# ---------------------------------------------------------------------------------- devices, pools
@dataclass
class _State:
    """One simulated device: its memory pool and the streams created on it."""

    index: int
    total: int
    limit: int
    used: int = 0
    cached: dict = field(default_factory=dict)  # stream id -> freed bytes kept for that stream
    streams_created: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def allocate(self, nbytes: int, stream: Stream) -> None:
        size = -(-max(nbytes, 1) // _ALIGN) * _ALIGN
        with self.lock:
            reuse = min(size, self.cached.get(stream.id, 0))
            if reuse:
                self.cached[stream.id] -= reuse
            need = size - reuse
            if self.used + sum(self.cached.values()) + need > self.limit:
                self.cached.clear()  # CuPy frees every cached block and tries again
            if self.used + reuse + need > self.limit:
                if reuse:
                    self.cached[stream.id] = self.cached.get(stream.id, 0) + reuse
                raise OutOfMemoryError(size, self.used, self.limit)
            self.used += size
        return size

    def release(self, size: int, stream_id: int) -> None:
        with self.lock:
            self.used -= size
            self.cached[stream_id] = self.cached.get(stream_id, 0) + size


_STATES: dict[int, _State] = {}
_STATES_LOCK = threading.Lock()
_LOCAL = threading.local()


def _state(index: int) -> _State:
    count = configured_count()
    if not 0 <= index < count:
        raise CUDARuntimeError(f"cudaErrorInvalidDevice: invalid device ordinal {index} ({count} simulated)")
    with _STATES_LOCK:
        state = _STATES.get(index)
        if state is None:
            total = configured_memory()
            state = _STATES[index] = _State(index, total, total)
        return state


def reset() -> None:
    """Forget every simulated device's pool and counters (tests that change the configuration)."""
    with _STATES_LOCK:
        _STATES.clear()


def streams_created(index: int) -> int:
    """Streams created on simulated device ``index`` so far (the null stream excluded)."""
    return _state(index).streams_created


def _current_index() -> int:
    return getattr(_LOCAL, "device", 0)


class _DeviceNamespace:
    pass


class Device:
    """``cupy.cuda.Device``: a context manager that makes device ``index`` current in this thread."""

    def __init__(self, device: int | None = None):
        self.id = _current_index() if device is None else int(device)
        self._previous: list[int] = []

    def __enter__(self) -> Device:
        _state(self.id)
        self._previous.append(_current_index())
        _LOCAL.device = self.id
        return self

    def __exit__(self, *exc) -> None:
        _LOCAL.device = self._previous.pop()

    def use(self) -> None:
        _state(self.id)
        _LOCAL.device = self.id

    def synchronize(self) -> None:
        """Launches run to completion when they are made: nothing to wait for."""

    def __eq__(self, other) -> bool:
        return isinstance(other, Device) and other.id == self.id

    def __hash__(self) -> int:
        return hash(self.id)

    def __repr__(self) -> str:
        return f"<CUDA Device {self.id} (simulated)>"


_STREAM_IDS = itertools.count(1)


class Stream:
    """``cupy.cuda.Stream``: created on the current device; ``with stream:`` makes it current."""

    def __init__(self, null: bool = False, non_blocking: bool = False, ptds: bool = False, *, _device=None):
        self.device_id = _current_index() if _device is None else _device
        self.id = 0 if null else next(_STREAM_IDS)
        self.non_blocking = non_blocking
        self._previous: list = []
        if not null:
            _state(self.device_id).streams_created += 1

    def __enter__(self) -> Stream:
        if self.device_id != _current_index():
            raise CUDARuntimeError(f"cudaErrorInvalidResourceHandle: stream of device {self.device_id} made "
                                   f"current while device {_current_index()} is current")
        streams = _current_streams()
        self._previous.append(streams.get(self.device_id))
        streams[self.device_id] = self
        return self

    def __exit__(self, *exc) -> None:
        previous = self._previous.pop()
        streams = _current_streams()
        if previous is None:
            streams.pop(self.device_id, None)
        else:
            streams[self.device_id] = previous

    def use(self) -> Stream:
        _current_streams()[self.device_id] = self
        return self

    def synchronize(self) -> None:
        """Launches run to completion when they are made: nothing to wait for."""

    def record(self, event: Event | None = None) -> Event:
        event = event or Event()
        event.record(self)
        return event

    def __repr__(self) -> str:
        return f"<Stream {self.id} of device {self.device_id} (simulated)>"


def _current_streams() -> dict:
    if not hasattr(_LOCAL, "streams"):
        _LOCAL.streams = {}
    return _LOCAL.streams


_NULL_STREAMS: dict[int, Stream] = {}


def get_current_stream(device_id: int | None = None) -> Stream:
    """The stream current in this thread for the current (or the given) device."""
    index = _current_index() if device_id is None else device_id
    stream = _current_streams().get(index)
    if stream is None:
        stream = _NULL_STREAMS.setdefault(index, Stream(null=True, _device=index))
    return stream


class Event:
    """``cupy.cuda.Event``: the host time at which it was recorded."""

    def __init__(self, block: bool = False, disable_timing: bool = False, interprocess: bool = False):
        self.time: float | None = None

    def record(self, stream: Stream | None = None) -> None:
        self.time = time.perf_counter()

    def synchronize(self) -> None:
        if self.time is None:
            raise CUDARuntimeError("cudaErrorInvalidResourceHandle: event not recorded")

    @property
    def done(self) -> bool:
        return self.time is not None


def get_elapsed_time(start: Event, end: Event) -> float:
    """Milliseconds between two recorded events."""
    start.synchronize()
    end.synchronize()
    return 1000.0 * (end.time - start.time)


class MemoryPool:
    """``cupy.cuda.MemoryPool`` of the current device: limit and statistics."""

    def _state(self) -> _State:
        return _state(_current_index())

    def set_limit(self, size: int | None = None, fraction: float | None = None) -> None:
        state = self._state()
        if fraction is not None:
            size = int(state.total * fraction)
        state.limit = state.total if not size else min(int(size), state.total)

    def get_limit(self) -> int:
        return self._state().limit

    def used_bytes(self) -> int:
        return self._state().used

    def free_bytes(self) -> int:
        return sum(self._state().cached.values())

    def total_bytes(self) -> int:
        return self.used_bytes() + self.free_bytes()

    def free_all_blocks(self, stream: Stream | None = None) -> None:
        state = self._state()
        with state.lock:
            if stream is None:
                state.cached.clear()
            else:
                state.cached.pop(stream.id, None)


_POOL = MemoryPool()


def get_default_memory_pool() -> MemoryPool:
    return _POOL


# ---------------------------------------------------------------------------------- arrays
class _Allocation:
    """Device memory behind one or more arrays; returned to its pool when the last one goes."""

    __slots__ = ("__weakref__", "state")

    def __init__(self, state: _State, nbytes: int):
        self.state = state
        stream = get_current_stream(state.index)
        size = state.allocate(nbytes, stream)
        weakref.finalize(self, state.release, size, stream.id)


class _ArrayDevice:
    """``ndarray.device``: its ``id``, and a context manager like :class:`Device`."""

    def __init__(self, index: int):
        self.id = index

    def __enter__(self):
        self._ctx = Device(self.id)
        return self._ctx.__enter__()

    def __exit__(self, *exc) -> None:
        self._ctx.__exit__(*exc)

    def __eq__(self, other) -> bool:
        return getattr(other, "id", None) == self.id

    def __hash__(self) -> int:
        return hash(self.id)


def _require_current(index: int, what: str) -> None:
    current = _current_index()
    if index != current:
        raise ValueError(f"{what}: the array is on device {index}, not on the current device {current} "
                         "(simulated CUDA: use `with cupy.cuda.Device(...)`)")


class ndarray:
    """A device array: a numpy buffer that only this module's functions and kernels touch."""

    __array_priority__ = 100.0

    def __init__(self, *args, **kwargs):
        raise TypeError("simulated device arrays are made by asarray, zeros, empty (not ndarray(...))")

    @classmethod
    def _wrap(cls, host: np.ndarray, index: int, memory: _Allocation) -> ndarray:
        out = object.__new__(cls)
        out._host, out._index, out._memory = host, index, memory
        return out

    @classmethod
    def _new(cls, host: np.ndarray) -> ndarray:
        """A copy of ``host`` in new memory of the current device."""
        index = _current_index()
        memory = _Allocation(_state(index), host.nbytes)
        return cls._wrap(np.array(host, order="C", copy=True), index, memory)

    # ------------------------------------------------------------------ attributes
    shape = property(lambda self: self._host.shape)
    dtype = property(lambda self: self._host.dtype)
    ndim = property(lambda self: self._host.ndim)
    size = property(lambda self: self._host.size)
    nbytes = property(lambda self: self._host.nbytes)
    itemsize = property(lambda self: self._host.itemsize)
    strides = property(lambda self: self._host.strides)
    flags = property(lambda self: self._host.flags)
    device = property(lambda self: _ArrayDevice(self._index))

    @property
    def data(self):
        """The buffer's address, as ``ndarray.data.ptr``."""
        return _Pointer(self._host.ctypes.data)

    def __len__(self) -> int:
        return len(self._host)

    def __repr__(self) -> str:
        return f"simulated cuda:{self._index} array({self._host!r})"

    # ------------------------------------------------------------------ strictness
    def __array__(self, *args, **kwargs):
        raise TypeError("Implicit conversion to a NumPy array is not allowed. Please use `.get()` to construct a "
                        "NumPy array explicitly.")

    def __reduce__(self):
        raise TypeError("a simulated device array is not pickled: take a host copy with .get() first")

    def _host_operand(self, other, what: str):
        if isinstance(other, ndarray):
            _require_current(other._index, what)
            return other._host
        if isinstance(other, np.ndarray) and other.ndim > 0:
            raise TypeError(f"Unsupported type {type(other)}")
        return other

    # ------------------------------------------------------------------ transfers
    def get(self, stream: Stream | None = None, order: str = "C", out: np.ndarray | None = None) -> np.ndarray:
        """A host copy (any current device: CuPy switches to the array's)."""
        if out is not None:
            out[...] = self._host
            return out
        return np.array(self._host, order=order, copy=True)

    def set(self, arr: np.ndarray, stream: Stream | None = None) -> None:
        """Copy host ``arr`` into this array."""
        if isinstance(arr, ndarray):
            raise TypeError("Only numpy.ndarray can be set to cupy.ndarray")
        if np.shape(arr) != self.shape:
            raise ValueError(f"Shape mismatch. Old shape: {self.shape}, new shape: {np.shape(arr)}")
        self._host[...] = arr

    def copy(self, order: str = "C") -> ndarray:
        _require_current(self._index, "copy")
        return ndarray._new(self._host)

    def astype(self, dtype, order: str = "K", casting=None, subok=None, copy: bool = True) -> ndarray:
        _require_current(self._index, "astype")
        if not copy and self._host.dtype == np.dtype(dtype):
            return self
        return ndarray._new(self._host.astype(dtype))

    def view(self, dtype=None) -> ndarray:
        return ndarray._wrap(self._host.view(dtype) if dtype is not None else self._host.view(), self._index,
                             self._memory)

    def reshape(self, *shape, order: str = "C") -> ndarray:
        host = self._host.reshape(*shape, order=order)
        if not np.shares_memory(host, self._host):
            return ndarray._new(host)
        return ndarray._wrap(host, self._index, self._memory)

    def ravel(self, order: str = "C") -> ndarray:
        return self.reshape(-1, order=order)

    def fill(self, value) -> None:
        _require_current(self._index, "fill")
        self._host.fill(value)

    # ------------------------------------------------------------------ indexing
    def _key(self, key):
        if isinstance(key, tuple):
            return tuple(self._host_operand(k, "indexing") if isinstance(k, (ndarray, np.ndarray)) else k
                         for k in key)
        if isinstance(key, ndarray):
            return self._host_operand(key, "indexing")
        return key

    def __getitem__(self, key) -> ndarray:
        _require_current(self._index, "indexing")
        host = self._host[self._key(key)]
        if isinstance(host, np.ndarray) and np.shares_memory(host, self._host):
            return ndarray._wrap(host, self._index, self._memory)
        return ndarray._new(np.asarray(host))

    def __setitem__(self, key, value) -> None:
        _require_current(self._index, "assignment")
        if isinstance(value, ndarray):
            _require_current(value._index, "assignment")
            value = value._host
        self._host[self._key(key)] = value

    # ------------------------------------------------------------------ scalars and reductions
    def _scalar(self):
        if self.size != 1:
            raise TypeError("only size-1 arrays can be converted to Python scalars")
        return self._host.reshape(()).item()

    def __int__(self) -> int:
        return int(self._scalar())

    def __float__(self) -> float:
        return float(self._scalar())

    def __bool__(self) -> bool:
        return bool(self._scalar())

    def _reduce(self, name: str, axis=None) -> ndarray:
        _require_current(self._index, name)
        return ndarray._new(np.asarray(getattr(self._host, name)(axis=axis)))

    def min(self, axis=None) -> ndarray:
        return self._reduce("min", axis)

    def max(self, axis=None) -> ndarray:
        return self._reduce("max", axis)

    def sum(self, axis=None) -> ndarray:
        return self._reduce("sum", axis)

    def any(self, axis=None) -> ndarray:
        return self._reduce("any", axis)

    def all(self, axis=None) -> ndarray:
        return self._reduce("all", axis)

    def argmin(self, axis=None) -> ndarray:
        return self._reduce("argmin", axis)

    def _binary(self, other, op, reflected: bool = False) -> ndarray:
        _require_current(self._index, op.__name__)
        value = self._host_operand(other, op.__name__)
        out = op(value, self._host) if reflected else op(self._host, value)
        return ndarray._new(np.asarray(out))


def _binary_method(op, reflected=False):
    def method(self, other):
        return self._binary(other, op, reflected)

    method.__name__ = f"__{'r' if reflected else ''}{op.__name__.strip('_')}__"
    return method


for _op in (operator.eq, operator.ne, operator.lt, operator.le, operator.gt, operator.ge, operator.add,
            operator.sub, operator.mul, operator.floordiv, operator.mod, operator.and_, operator.or_):
    setattr(ndarray, f"__{_op.__name__.strip('_')}__", _binary_method(_op))
for _op in (operator.add, operator.sub, operator.mul):
    setattr(ndarray, f"__r{_op.__name__.strip('_')}__", _binary_method(_op, reflected=True))
ndarray.__hash__ = None  # arrays compare elementwise


@dataclass(frozen=True)
class _Pointer:
    ptr: int


def asarray(a, dtype=None, order=None) -> ndarray:
    """``a`` on the current device: the same array when it is already there with that dtype,
    else a copy (a host-to-device transfer, or a copy from another device)."""
    if isinstance(a, ndarray):
        if a._index == _current_index() and (dtype is None or a.dtype == np.dtype(dtype)):
            return a
        return ndarray._new(a._host if dtype is None else a._host.astype(dtype))
    return ndarray._new(np.asarray(a, dtype=dtype))


def ascontiguousarray(a, dtype=None) -> ndarray:
    out = asarray(a, dtype)
    return out if out.flags.c_contiguous else ndarray._new(out._host)


def array(a, dtype=None, copy: bool = True) -> ndarray:
    out = asarray(a, dtype)
    return ndarray._new(out._host) if copy and out is a else out


def zeros(shape, dtype=float) -> ndarray:
    return ndarray._new(np.zeros(shape, dtype=dtype))


def empty(shape, dtype=float) -> ndarray:
    return ndarray._new(np.empty(shape, dtype=dtype))


def full(shape, fill_value, dtype=None) -> ndarray:
    return ndarray._new(np.full(shape, fill_value, dtype=dtype))


def asnumpy(a, stream: Stream | None = None) -> np.ndarray:
    """A host copy of a device array (numpy input passes through)."""
    return a.get() if isinstance(a, ndarray) else np.asarray(a)


# ---------------------------------------------------------------------------------- kernels
_FUNCTIONS: dict[int, Function] = {}
_FUNCTION_IDS = itertools.count(1)
#: A kernel that numbers its threads across the grid (one thread per item, as kernels/tsp_knn.cu)
#: depends on the block shape, which the fast CPU build ignores: its module is the thread simulation.
_GRID_THREADS = re.compile(r"mh_block\(\)\s*\*\s*mh_nthreads\(\)|blockIdx\.[xyz]\s*\*\s*blockDim\.[xyz]")
_LAUNCH_BOUNDS = re.compile(r"__launch_bounds__\s*\(\s*(\d+)[^)]*\)\s*(?:void\s+)?(\w+)\s*\(")


def _launch_bounds(text: str) -> dict[str, int]:
    """``{kernel: max threads per block}`` from the ``__launch_bounds__`` of each kernel."""
    return {m.group(2): int(m.group(1)) for m in _LAUNCH_BOUNDS.finditer(text)}


class RawModule:
    """``cupy.RawModule`` whose kernels are the CPU build of ``code`` (see the module docstring).

    ``options``: the NVRTC options; the ``-D`` defines but ``MH_GPU`` reach the CPU build.
    ``max_threads``: a per-kernel limit on threads per block (a kernel's ``__launch_bounds__``
    or :data:`DEFAULT_MAX_THREADS` otherwise). ``threads``: build the fiber thread simulation
    (default: ``$METAHEUR_SIMULATED_THREADS``; always for kernels that number threads across
    the grid)."""

    def __init__(self, code: str | None = None, *, options: tuple = (), name: str = "rawmodule",
                 max_threads: dict[str, int] | None = None, threads: bool | None = None, **unused):
        from metaheur.engine.source import KernelSource, parse_signatures

        if code is None:
            raise TypeError("a simulated RawModule needs its source code")
        label = re.match(r'#line 1 "(?:kernels/)?([^"]+)"', code)
        self.source = KernelSource(label.group(1) if label else name, code, parse_signatures(code))
        self.defines = tuple(o[2:] for o in options if o.startswith("-D") and not o.startswith("-DMH_GPU"))
        self.max_threads = _launch_bounds(code) | (max_threads or {})
        self.sim = (threads_simulated() if threads is None else threads) or bool(_GRID_THREADS.search(code))
        self._library = None

    def compile(self, log_stream=None) -> None:
        from metaheur.engine import cpu_build
        from metaheur.errors import MetaheurError

        if self._library is None:
            try:
                self._library = cpu_build.build(self.source, self.defines, self.sim).library
            except MetaheurError as exc:
                raise CompileException(str(exc)) from None

    def get_function(self, name: str) -> Function:
        """The kernel ``name`` loaded on the current device."""
        from metaheur.engine import cpu_build

        if name not in self.source.signatures:
            raise CUDADriverError(f"CUDA_ERROR_NOT_FOUND: named symbol not found: {name}")
        self.compile()
        params = self.source.signatures[name]
        limit = self.max_threads.get(name, DEFAULT_MAX_THREADS)
        return Function(name, params, cpu_build.bind(self._library, name, params), _current_index(), limit)


class Function:
    """A kernel loaded on one simulated device (``cupy.cuda.Function``)."""

    def __init__(self, name: str, params: tuple, launcher, device: int, max_threads_per_block: int):
        self.name, self.params, self._launcher = name, params, launcher
        self.device_id = device
        self.max_threads_per_block = max_threads_per_block
        self.ptr = next(_FUNCTION_IDS)
        _FUNCTIONS[self.ptr] = self

    def __call__(self, grid, block, args, shared_mem: int = 0, stream: Stream | None = None) -> None:
        from metaheur.engine import cpu_build

        if _current_index() != self.device_id:
            raise CUDADriverError(f"CUDA_ERROR_INVALID_HANDLE: kernel {self.name} was loaded on device "
                                  f"{self.device_id}, launched with device {_current_index()} current")
        if stream is not None and stream.device_id != self.device_id:
            raise CUDADriverError(f"CUDA_ERROR_INVALID_HANDLE: kernel {self.name} on device {self.device_id} "
                                  f"launched on a stream of device {stream.device_id}")
        g = tuple(grid) if isinstance(grid, tuple) else (grid,)
        b = tuple(block) if isinstance(block, tuple) else (block,)
        g, b = g + (1,) * (3 - len(g)), b + (1,) * (3 - len(b))
        if b[0] * b[1] * b[2] > self.max_threads_per_block:
            raise CUDADriverError(f"CUDA_ERROR_INVALID_VALUE: too many resources requested for launch "
                                  f"({self.name}: {b[0] * b[1] * b[2]} threads, at most "
                                  f"{self.max_threads_per_block})")
        if len(args) != len(self.params):
            raise CUDADriverError(f"kernel {self.name} takes {len(self.params)} arguments, got {len(args)}")
        raw = []
        for p, a in zip(self.params, args, strict=True):
            if isinstance(a, ndarray):
                if a._index != self.device_id:
                    raise ValueError(f"kernel {self.name}: argument {p.name} is on device {a._index}, the kernel "
                                     f"on device {self.device_id}")
                raw.append(a._host.ctypes.data)
            elif isinstance(a, np.ndarray) and a.ndim > 0:
                raise TypeError(f"Unsupported type {type(a)}")
            elif p.pointer:
                raise TypeError(f"kernel {self.name}: argument {p.name} needs a device array, got {type(a)}")
            else:
                raw.append(a.item() if isinstance(a, np.generic) else a)
        config = cpu_build.LaunchConfig((cpu_build.ctypes.c_uint * 3)(*g), (cpu_build.ctypes.c_uint * 3)(*b), 1, 0)
        self._launcher(cpu_build.ctypes.byref(config), *raw)
        if config.error:
            raise CUDADriverError(f"kernel {self.name}: threads of a block diverged at a barrier (simulation)")


# ---------------------------------------------------------------------------------- cupy.cuda
def _device_count() -> int:
    return configured_count()


def _properties(index: int) -> dict:
    state = _state(index)
    return {"name": f"Simulated GPU {index}".encode(), "multiProcessorCount": configured_multiprocessors(),
            "totalGlobalMem": state.total, "maxThreadsPerBlock": DEFAULT_MAX_THREADS}


def _mem_get_info() -> tuple[int, int]:
    state = _state(_current_index())
    return state.limit - state.used, state.total


def _func_get_attribute(attribute: int, ptr: int) -> int:
    if attribute != 0:
        raise CUDADriverError(f"CUDA_ERROR_INVALID_VALUE: attribute {attribute} is not simulated")
    return _FUNCTIONS[ptr].max_threads_per_block


cuda = _DeviceNamespace()
cuda.Device, cuda.Stream, cuda.Event = Device, Stream, Event
cuda.get_current_stream, cuda.get_elapsed_time = get_current_stream, get_elapsed_time
cuda.MemoryPool = MemoryPool
cuda.runtime = _DeviceNamespace()
cuda.runtime.getDeviceCount = _device_count
cuda.runtime.getDeviceProperties = _properties
cuda.runtime.memGetInfo = _mem_get_info
cuda.runtime.CUDARuntimeError = CUDARuntimeError
cuda.driver = _DeviceNamespace()
cuda.driver.CUDADriverError = CUDADriverError
cuda.driver.CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 0
cuda.driver.funcGetAttribute = _func_get_attribute
cuda.memory = _DeviceNamespace()
cuda.memory.OutOfMemoryError = OutOfMemoryError
cuda.compiler = _DeviceNamespace()
cuda.compiler.CompileException = CompileException
