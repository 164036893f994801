"""Simulated devices: their configuration, device contexts, streams, events and memory pools
(the ``cupy.cuda`` part of :mod:`metaheur.engine.simcuda`)."""

from __future__ import annotations

import itertools
import os
import re
import threading
import time
from dataclasses import dataclass, field

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

    def allocate(self, nbytes: int, stream: Stream) -> int:
        """Take ``nbytes`` (rounded up as CuPy does) from the pool for ``stream``; the size taken."""
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


def _device_count() -> int:
    return configured_count()


def _properties(index: int) -> dict:
    state = _state(index)
    return {"name": f"Simulated GPU {index}".encode(), "multiProcessorCount": configured_multiprocessors(),
            "totalGlobalMem": state.total, "maxThreadsPerBlock": DEFAULT_MAX_THREADS}


def _mem_get_info() -> tuple[int, int]:
    state = _state(_current_index())
    return state.limit - state.used, state.total
