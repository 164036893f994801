"""The GPU build: kernel sources compiled by NVRTC through ``cupy.RawModule``, per device (on a
simulated GPU, :class:`metaheur.engine.simcuda.RawModule`: the CPU build behind CuPy's interface).

Options: C++14, no fused multiply-add (``--fmad=false``, so coordinate distances round exactly
as on the CPU and in numpy), ``-DMH_GPU=1`` and the caller's ``-D`` defines. CuPy caches the
compiled module on disk keyed by the (self-contained, headers inlined) source and options.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from metaheur.devices import Device
from metaheur.engine.source import KernelSource
from metaheur.errors import MetaheurError

BASE_OPTIONS = ("--std=c++14", "--fmad=false", "-DMH_GPU=1")


def nvrtc_options(defines: tuple[str, ...]) -> tuple[str, ...]:
    """The NVRTC options the GPU build uses (also used by the compile check in the tests)."""
    return (*BASE_OPTIONS, *(f"-D{d}" for d in defines))


@dataclass
class GpuModule:
    module: object  # cupy.RawModule
    compile_seconds: float


def build(source: KernelSource, defines: tuple[str, ...], device: Device, sim: bool = False) -> GpuModule:
    """Compile ``source`` for GPU ``device`` (CuPy's on-disk cache makes repeats cheap). ``sim``: a
    simulated GPU's module is the fiber thread simulation."""
    cupy = device.cupy
    start = time.perf_counter()
    with cupy.cuda.Device(device.index):
        extra = {"threads": sim} if device.simulated else {}
        module = cupy.RawModule(code=source.text, options=nvrtc_options(defines), **extra)
        try:
            module.compile()
        except cupy.cuda.compiler.CompileException as exc:
            first = next((ln for ln in str(exc).splitlines() if "error" in ln), str(exc).splitlines()[0])
            raise MetaheurError(f"kernel compile failed ({source.name}, GPU build): {first.strip()}") from None
    return GpuModule(module, time.perf_counter() - start)
