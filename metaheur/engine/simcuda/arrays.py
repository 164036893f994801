"""Simulated device arrays (``cupy.ndarray`` and the functions that make and copy them): numpy
buffers that refuse implicit conversion and work only on their device."""

from __future__ import annotations

import operator
import weakref
from dataclasses import dataclass

import numpy as np

from metaheur.engine.simcuda.runtime import Device, Stream, _current_index, _State, _state, get_current_stream


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
        if not np.may_share_memory(host, self._host):
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
        if isinstance(host, np.ndarray) and np.may_share_memory(host, self._host):
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
for _name in ("min", "max", "sum", "any", "all", "argmin"):  # reductions to a 0-d (or smaller) device array
    setattr(ndarray, _name, lambda self, axis=None, _name=_name: self._reduce(_name, axis))
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
