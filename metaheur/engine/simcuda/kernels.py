"""Simulated ``cupy.RawModule``: kernels of the CPU build, launched as CuPy launches them."""

from __future__ import annotations

import itertools
import re

import numpy as np

from metaheur.engine.simcuda.arrays import ndarray
from metaheur.engine.simcuda.runtime import (
    DEFAULT_MAX_THREADS,
    CompileException,
    CUDADriverError,
    Stream,
    _current_index,
    threads_simulated,
)

_FUNCTIONS: dict[int, Function] = {}
CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 0  # CUfunction_attribute's value
_FUNCTION_IDS = itertools.count(1)
#: A kernel that numbers its threads across the grid (one thread per item, as kernels/tsp/tsp_knn.cu)
#: depends on the block shape, which the fast CPU build ignores: its module is the thread simulation.
_GRID_THREADS = re.compile(r"mh_block\(\)\s*\*\s*mh_nthreads\(\)|blockIdx\.[xyz]\s*\*\s*blockDim\.[xyz]")
class RawModule:
    """``cupy.RawModule`` whose kernels are the CPU build of ``code`` (see the module docstring).

    ``options``: the NVRTC options; the ``-D`` defines but ``MH_GPU`` reach the CPU build.
    ``max_threads``: a per-kernel limit on threads per block (a kernel's ``__launch_bounds__``
    or :data:`DEFAULT_MAX_THREADS` otherwise). ``threads``: build the fiber thread simulation
    (default: ``$METAHEUR_SIMULATED_THREADS``; always for kernels that number threads across
    the grid)."""

    def __init__(self, code: str | None = None, *, options: tuple = (), name: str = "rawmodule",
                 max_threads: dict[str, int] | None = None, threads: bool | None = None, **unused):
        from metaheur.engine.source import KernelSource, launch_bounds, parse_signatures

        if code is None:
            raise TypeError("a simulated RawModule needs its source code")
        label = re.match(r'#line 1 "(?:kernels/)?([^"]+)"', code)
        self.max_threads = launch_bounds(code) | (max_threads or {})
        signatures = parse_signatures(code)
        self.source = KernelSource(label.group(1) if label else name, code, signatures,
                                   {k: self.max_threads.get(k, DEFAULT_MAX_THREADS) for k in signatures})
        self.defines = tuple(o[2:] for o in options if o.startswith("-D") and not o.startswith("-DMH_GPU"))
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

    def get_function(self, name: str) -> RawKernel:
        """The kernel ``name`` as CuPy 14 gives it: a :class:`RawKernel`, loaded on the current
        device."""
        if name not in self.source.signatures:
            raise CUDADriverError(f"CUDA_ERROR_NOT_FOUND: named symbol not found: {name}")
        self.compile()
        kernel = RawKernel(self, name)
        kernel.kernel  # noqa: B018  (CuPy's get_function loads it on the current device)
        return kernel

    def _load(self, name: str) -> Function:
        from metaheur.engine import cpu_build

        params = self.source.signatures[name]
        limit = self.max_threads.get(name, DEFAULT_MAX_THREADS)
        return Function(name, params, cpu_build.bind(self._library, name, params), _current_index(), limit,
                        (self.source.name, " ".join(sorted(self.defines)) or "-"))


class RawKernel:
    """``cupy.RawKernel`` as ``RawModule.get_function`` returns it in CuPy 14: no ``ptr`` of its
    own; ``kernel`` is the :class:`Function` loaded on the current device (loaded there on first
    use, as CuPy does), and the attributes are the driver's answers about that function."""

    def __init__(self, module: RawModule, name: str):
        self.name = self.__name__ = name
        self._module = module
        self._kernel_cache: dict[int, Function] = {}

    @property
    def kernel(self) -> Function:
        index = _current_index()
        if index not in self._kernel_cache:
            self._kernel_cache[index] = self._module._load(self.name)
        return self._kernel_cache[index]

    @property
    def max_threads_per_block(self) -> int:
        """The most threads per block the function launches with (the driver's attribute)."""
        return _func_get_attribute(CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, self.kernel.ptr)

    def __call__(self, grid, block, args, **kwargs) -> None:
        self.kernel(grid, block, args, enable_cooperative_groups=False, **kwargs)


class Function:
    """A kernel loaded on one simulated device (``cupy.cuda.Function``). ``variant``: its kernel
    file and defines, as the resource table (metaheur/engine/kernel_resources.csv) names them."""

    def __init__(self, name: str, params: tuple, launcher, device: int, max_threads_per_block: int,
                 variant: tuple[str, str] = ("", "-")):
        self.name, self.params, self._launcher = name, params, launcher
        self.device_id = device
        self.max_threads_per_block = max_threads_per_block
        self.variant = variant
        self.ptr = next(_FUNCTION_IDS)
        _FUNCTIONS[self.ptr] = self

    def __call__(self, grid, block, args, shared_mem: int = 0, stream: Stream | None = None,
                 enable_cooperative_groups: bool = False) -> None:
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


def _func_get_attribute(attribute: int, ptr: int) -> int:
    if attribute != CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK:
        raise CUDADriverError(f"CUDA_ERROR_INVALID_VALUE: attribute {attribute} is not simulated")
    return _FUNCTIONS[ptr].max_threads_per_block


def _occupancy(func: int, block_size: int, dynamic_shared: int) -> int:
    """``cuOccupancyMaxActiveBlocksPerMultiprocessor`` of a simulated function: the H200's limits
    (:func:`metaheur.engine.sm90.blocks_per_sm`) applied to the registers and shared memory the
    resource table (:func:`metaheur.engine.sm90.table_resources`) lists for its kernel variant."""
    from dataclasses import replace

    from metaheur.engine import sm90

    fn = _FUNCTIONS[func]
    res = sm90.table_resources().get((fn.variant[0], fn.name, fn.variant[1]))
    if res is None:
        raise CUDADriverError(f"simulated occupancy of {fn.name} ({fn.variant[0]}, {fn.variant[1]}): no row in "
                              f"{sm90.RESOURCE_TABLE} (python experiments/kernel_resources.py writes it)")
    return sm90.blocks_per_sm(replace(res, shared=res.shared + int(dynamic_shared)), int(block_size))
