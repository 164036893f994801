"""Loading kernel modules and calling kernels the same way on every device.

``load_module("qap/qap_tabu.cu", device)`` (a kernel file by its path under ``kernels/``, another
by its own path) returns a :class:`KernelModule`; ``module.kernel(name)`` a :class:`Kernel` called
as CuPy's ``RawKernel``: ``kernel(grid, block, args)``. Before any launch
the arguments are checked against the kernel's C signature: arrays must be of the device's array
type, C-contiguous, of exactly the pointee's dtype (and writable where the pointer is not
const); scalars must be representable in the parameter's type and are converted to it (CuPy
alone would pass a Python ``float`` as ``double`` and an ``int`` as ``long long`` without checks).
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import threading
from dataclasses import dataclass, field

import numpy as np

from metaheur import live
from metaheur.devices import Device, cpu_count, parse_device
from metaheur.engine import cpu_build, gpu_build, shapes
from metaheur.engine.source import KernelSource, Param, load_source
from metaheur.errors import MetaheurError

_INT_RANGES = {name: (int(np.iinfo(name).min), int(np.iinfo(name).max))
               for name in ("int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64")}
_MODULES: dict[tuple, KernelModule] = {}
_LOCK = threading.Lock()
_COMPILE = {"seconds": 0.0}
_THREADS = threading.local()


def cpu_threads() -> int:
    """OpenMP threads a CPU launch from this thread uses by default: ``set_cpu_threads``, else
    ``$METAHEUR_CPU_THREADS``, else every core."""
    chosen = getattr(_THREADS, "cpu", 0)
    if chosen > 0:
        return chosen
    env = os.environ.get("METAHEUR_CPU_THREADS", "")
    return int(env) if env.isdigit() and int(env) > 0 else cpu_count()


def set_cpu_threads(threads: int) -> None:
    """Default OpenMP threads for CPU launches from this thread (a CPU island uses 1; 0 restores
    the default)."""
    _THREADS.cpu = max(0, int(threads))


def sim_order() -> int:
    """Thread order of the fiber simulation between two barriers, from ``$METAHEUR_SIM_ORDER``:
    ``forward`` (the default: thread 0 first), ``reverse``, or ``random:SEED`` (a permutation per
    block and barrier drawn from SEED >= 0). Results that differ between orders reveal a race."""
    value = os.environ.get("METAHEUR_SIM_ORDER", "").strip().lower() or "forward"
    if value in ("forward", "reverse"):
        return 0 if value == "forward" else 1
    seed = value.removeprefix("random:")
    if value.startswith("random:") and seed.isdigit() and int(seed) < 2**31 - 2:
        return 2 + int(seed)
    raise MetaheurError(f"METAHEUR_SIM_ORDER must be forward, reverse or random:SEED, got {value!r}")


def compile_seconds_total() -> float:
    """Time this process has spent compiling (or loading cached) kernel modules."""
    return _COMPILE["seconds"]


#: CUDA's limits of a launch (compute capability >= 3.0): grid x, y, z and block x, y, z.
_GRID_LIMITS = (2**31 - 1, 65535, 65535)
_BLOCK_LIMITS = (1024, 1024, 64)


def _dim3(value, what: str, limits: tuple[int, int, int]) -> tuple[int, int, int]:
    if isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)):
        dims = (value,)
    elif isinstance(value, (tuple, list)):
        dims = tuple(value)
    else:
        dims = ()
    if not 1 <= len(dims) <= 3 or any(isinstance(d, (bool, np.bool_)) or not isinstance(d, (int, np.integer))
                                      or d < 1 for d in dims):
        raise MetaheurError(f"{what} must be a positive int or a tuple of 1-3 positive ints, got {value!r}")
    full = tuple(int(d) for d in dims) + (1,) * (3 - len(dims))
    if any(d > lim for d, lim in zip(full, limits, strict=True)):
        raise MetaheurError(f"{what} {full} exceeds CUDA's limits {limits}")
    return full


def _check_scalar(kernel: str, p: Param, value):
    if p.dtype.startswith(("int", "uint")):
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
            raise TypeError(f"kernel {kernel}: argument {p.name} ({p.ctype}) needs an integer, got "
                            f"{type(value).__name__}")
        lo, hi = _INT_RANGES[p.dtype]
        if not lo <= int(value) <= hi:
            raise OverflowError(f"kernel {kernel}: argument {p.name} = {int(value)} does not fit {p.ctype}")
        return np.dtype(p.dtype).type(int(value))
    if not isinstance(value, (int, float, np.integer, np.floating)) or isinstance(value, (bool, np.bool_)):
        raise TypeError(f"kernel {kernel}: argument {p.name} ({p.ctype}) needs a number, got {type(value).__name__}")
    return np.dtype(p.dtype).type(value)


def _check_array(kernel: str, p: Param, value, device: Device):
    expected = device.xp.ndarray
    if not isinstance(value, expected):
        where = "a cupy array on " + device.name if device.is_gpu else "a numpy array"
        raise TypeError(f"kernel {kernel}: argument {p.name} ({p.ctype}*) needs {where}, got {type(value).__name__}")
    if p.dtype != "void" and value.dtype != np.dtype(p.dtype):
        raise TypeError(f"kernel {kernel}: argument {p.name} ({p.ctype}*) needs dtype {p.dtype}, got {value.dtype}")
    if not value.flags.c_contiguous:
        raise ValueError(f"kernel {kernel}: argument {p.name} must be C-contiguous")
    if device.is_gpu and value.device.id != device.index:
        raise ValueError(f"kernel {kernel}: argument {p.name} is on cuda:{value.device.id}, not {device.name}")
    if not p.const and not device.is_gpu and not value.flags.writeable:
        raise ValueError(f"kernel {kernel}: argument {p.name} is written by the kernel but is read-only")
    return value


@dataclass
class Kernel:
    """One kernel of a module, callable as ``kernel(grid, block, args)``."""

    name: str
    params: tuple[Param, ...]
    module: KernelModule
    _fn: object = field(repr=False, default=None)
    #: threads per block this kernel can launch with: on a GPU the driver's (registers and launch
    #: bounds), elsewhere its ``__launch_bounds__`` (else CUDA's 1024)
    max_threads: int = _BLOCK_LIMITS[0]

    def check(self, args) -> list:
        """``args`` validated against the signature (see the module docstring)."""
        if len(args) != len(self.params):
            raise TypeError(f"kernel {self.name} takes {len(self.params)} arguments "
                            f"({', '.join(p.describe() for p in self.params)}), got {len(args)}")
        dev = self.module.device
        return [_check_array(self.name, p, a, dev) if p.pointer else _check_scalar(self.name, p, a)
                for p, a in zip(self.params, args, strict=True)]

    def resident_blocks(self, block) -> int:
        """Blocks of shape ``block`` of this kernel that one multiprocessor runs at once: on a GPU
        the driver's occupancy query (its registers, shared memory and launch bounds; no dynamic
        shared memory), 1 on the CPU build (one block per core at a time)."""
        dev = self.module.device
        if not dev.is_gpu:
            return 1
        driver = dev.cupy.cuda.driver
        with dev.context():
            return int(driver.occupancyMaxActiveBlocksPerMultiprocessor(self._fn.kernel.ptr, shapes.threads(block), 0))

    def __call__(self, grid, block, args, *, stream=None, threads: int | None = None) -> None:
        """Launch over ``grid`` blocks of ``block`` threads.

        On the CPU the blocks are spread over ``threads`` OpenMP threads (default:
        :func:`cpu_threads`); on a GPU ``stream`` is a CuPy stream (default: the current one).
        """
        g, b = _dim3(grid, "grid", _GRID_LIMITS), _dim3(block, "block", _BLOCK_LIMITS)
        if b[0] * b[1] * b[2] > self.max_threads:
            bounds = self.module.max_threads.get(self.name, _BLOCK_LIMITS[0]) == self.max_threads
            why = " (its __launch_bounds__)" if bounds and self.max_threads < _BLOCK_LIMITS[0] else ""
            raise MetaheurError(f"kernel {self.name}: a block of {self.module.device.name} has at most "
                                f"{self.max_threads} threads for this kernel{why}, got {b}")
        checked = self.check(args)
        if self.module.device.is_gpu:
            with self.module.device.context():
                self._fn(g, b, tuple(checked), stream=stream)
            return
        deadline, stop = live.launch_controls()  # a search's steps stop at the island's deadline or Ctrl-C
        config = cpu_build.LaunchConfig((ctypes.c_uint * 3)(*g), (ctypes.c_uint * 3)(*b),
                                        int(threads or cpu_threads()), 0, sim_order() if self.module.sim else 0,
                                        deadline, stop)
        raw = [a.ctypes.data if p.pointer else a.item() for p, a in zip(self.params, checked, strict=True)]
        self._fn(ctypes.byref(config), *raw)
        if config.error:
            raise MetaheurError(f"kernel {self.name}: threads of a block diverged at a barrier (simulation)")


@dataclass
class KernelModule:
    """A compiled kernel source on one device."""

    source_name: str
    device: Device
    defines: tuple[str, ...]
    compile_seconds: float
    handle: object = field(repr=False)
    signatures: dict = field(repr=False, default_factory=dict)
    sim: bool = False
    max_threads: dict = field(repr=False, default_factory=dict)
    _kernels: dict = field(repr=False, default_factory=dict)

    def kernel(self, name: str) -> Kernel:
        if name not in self._kernels:
            if name not in self.signatures:
                raise MetaheurError(f"no kernel {name!r} in {self.source_name}")
            params = self.signatures[name]
            if self.device.is_gpu:
                with self.device.context():  # CuPy loads the module on the current device
                    fn = self.handle.get_function(name)  # a RawKernel: the driver's limit is its attribute
                    limit = int(fn.max_threads_per_block)
                self._kernels[name] = Kernel(name, params, self, fn, limit)
            else:
                self._kernels[name] = Kernel(name, params, self, cpu_build.bind(self.handle, name, params),
                                             self.max_threads.get(name, _BLOCK_LIMITS[0]))
        return self._kernels[name]

    __getitem__ = kernel


def _normalise_defines(defines) -> tuple[str, ...]:
    if not defines:
        return ()
    items = defines.items() if isinstance(defines, dict) else [(d, None) for d in defines]
    out = []
    for key, value in items:
        out.append(str(key) if value is None else f"{key}={value}")
    return tuple(sorted(out))


def load_module(source_name: str | KernelSource, device: str | Device = "cpu", defines=None, *,
                sim: bool = False) -> KernelModule:
    """The kernel file ``kernels/<source_name>`` compiled for ``device`` (cached per process), or a
    generated :class:`KernelSource` (a user problem's kernels, metaheur/engine/user_source.py:
    cached by the SHA-256 of its text).

    ``defines`` (dict or list of ``NAME``/``NAME=VALUE``) become ``-D`` options: instance-specific
    constants. ``sim=True`` (CPU or simulated GPU) builds the fiber simulation that honours
    ``block``; a simulated GPU also builds it when ``$METAHEUR_SIMULATED_THREADS`` is set.
    """
    dev = parse_device(device)
    if sim and dev.is_gpu and not dev.simulated:
        raise MetaheurError("the thread simulation is a CPU build")
    defs = _normalise_defines(defines)
    if dev.simulated:
        from metaheur.engine import simcuda

        sim = sim or simcuda.threads_simulated()
    generated = isinstance(source_name, KernelSource)
    name = hashlib.sha256(source_name.text.encode()).hexdigest() if generated else source_name
    key = (name, dev.name, dev.simulated, defs, sim)
    with _LOCK:
        module = _MODULES.get(key)
        if module is None:
            source = source_name if generated else load_source(source_name)
            if dev.is_gpu:
                built = gpu_build.build(source, defs, dev, sim)
                handle, seconds = built.module, built.compile_seconds
            else:
                built = cpu_build.build(source, defs, sim)
                handle, seconds = built.library, built.compile_seconds
            _COMPILE["seconds"] += seconds
            module = KernelModule(source.name, dev, defs, seconds, handle, source.signatures, sim, source.max_threads)
            _MODULES[key] = module
    return module
