"""The kernel engine: one CUDA-C source, a GPU build (CuPy/NVRTC) and a CPU build (host compiler).

``load_module(source, device)`` compiles ``kernels/<source>`` for a device and returns a module
whose kernels are called as ``kernel(grid, block, args)`` on either build.
"""

from metaheur.engine.module import (
    Kernel,
    KernelModule,
    compile_seconds_total,
    cpu_threads,
    load_module,
    set_cpu_threads,
)

__all__ = ["Kernel", "KernelModule", "compile_seconds_total", "cpu_threads", "load_module", "set_cpu_threads"]
