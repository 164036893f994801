"""Devices: ``cpu`` and ``cuda:0`` .. ``cuda:k-1`` (whatever CuPy sees).

No CuPy, no driver or no GPU means CPU only, without errors. Each device gives the array module
its kernels take (numpy, cupy, or for a simulated GPU :mod:`metaheur.engine.simcuda`) and moves
arrays to and from it. ``METAHEUR_SIMULATED_GPUS=N`` replaces the GPUs by N simulated ones
(docs/gpu.md); without it the simulation is never used. Nothing here initialises CUDA until a GPU
is actually asked for, so worker processes can be started safely.
"""

from __future__ import annotations

import contextlib
import os
import platform
import sys
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from metaheur.errors import MetaheurError


@dataclass(frozen=True)
class Device:
    """A processor kernels can run on."""

    name: str  # "cpu" or "cuda:<index>"
    kind: str  # "cpu" or "cuda"
    index: int
    label: str
    cores: int  # CPU cores, or GPU multiprocessors
    memory_bytes: int | None
    simulated: bool = False  # a GPU of metaheur.engine.simcuda (METAHEUR_SIMULATED_GPUS)

    @property
    def is_gpu(self) -> bool:
        return self.kind == "cuda"

    @property
    def cupy(self):
        """The CUDA array module of this GPU: cupy, or :mod:`metaheur.engine.simcuda` when simulated."""
        if not self.is_gpu:
            raise MetaheurError(f"{self.name} is not a GPU")
        if self.simulated:
            from metaheur.engine import simcuda

            return simcuda
        import cupy

        return cupy

    @property
    def xp(self):
        """The array module of this device: numpy, or the GPU's (:attr:`cupy`)."""
        return self.cupy if self.is_gpu else np

    def context(self):
        """A context manager that makes this GPU current in the calling thread (nothing on the CPU)."""
        return self.cupy.cuda.Device(self.index) if self.is_gpu else contextlib.nullcontext()

    def asarray(self, array, dtype=None):
        """``array`` on this device (a copy only when needed)."""
        if self.is_gpu:
            cp = self.cupy
            with cp.cuda.Device(self.index):
                return cp.ascontiguousarray(cp.asarray(array, dtype=dtype))
        return np.ascontiguousarray(np.asarray(array, dtype=dtype))

    def zeros(self, shape, dtype):
        if self.is_gpu:
            cp = self.cupy
            with cp.cuda.Device(self.index):
                return cp.zeros(shape, dtype=dtype)
        return np.zeros(shape, dtype=dtype)

    def synchronize(self) -> None:
        """Wait for the work queued on this thread's current stream (a no-op on the CPU)."""
        if self.is_gpu:
            cp = self.cupy
            with cp.cuda.Device(self.index):
                cp.cuda.get_current_stream().synchronize()

    def __str__(self) -> str:
        return self.name


def to_host(array) -> np.ndarray:
    """A numpy copy (or view) of a numpy or cupy array."""
    if isinstance(array, np.ndarray):
        return array
    return array.get()


def cpu_count() -> int:
    """Cores this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def _cpu_label() -> str:
    try:
        with open("/proc/cpuinfo") as handle:
            for line in handle:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


@lru_cache(maxsize=1)
def cpu_device() -> Device:
    mem = None
    with contextlib.suppress(ValueError, OSError, AttributeError):
        mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    return Device("cpu", "cpu", 0, _cpu_label(), cpu_count(), mem)


@lru_cache(maxsize=1)
def gpu_devices() -> tuple[Device, ...]:
    """The CUDA devices CuPy can use (empty without CuPy, driver or GPU), or the simulated ones
    that ``METAHEUR_SIMULATED_GPUS`` asks for."""
    if os.environ.get("METAHEUR_NO_GPU"):
        return ()
    simulated = simulated_gpu_count()
    if simulated:
        from metaheur.engine import simcuda

        memory, sms = simcuda.configured_memory(), simcuda.configured_multiprocessors()
        return tuple(Device(f"cuda:{i}", "cuda", i, "simulated GPU (the CPU build)", sms, memory, simulated=True)
                     for i in range(simulated))
    try:
        import cupy
        from cupy.cuda import runtime

        count = runtime.getDeviceCount()
    except Exception:  # no CuPy, no driver, no device: CPU only
        return ()
    out = []
    for index in range(count):
        try:
            props = runtime.getDeviceProperties(index)
            name = props["name"].decode() if isinstance(props["name"], bytes) else str(props["name"])
            with cupy.cuda.Device(index):
                total = cupy.cuda.runtime.memGetInfo()[1]
            out.append(Device(f"cuda:{index}", "cuda", index, name, int(props["multiProcessorCount"]), int(total)))
        except Exception:
            continue
    return tuple(out)


def simulated_gpu_count() -> int:
    """GPUs to simulate (``METAHEUR_SIMULATED_GPUS``; 0 when unset); a bad value is a user error."""
    from metaheur.engine import simcuda

    try:
        count = simcuda.configured_count()
        if count:
            simcuda.configured_memory()
            simcuda.configured_multiprocessors()
    except ValueError as exc:
        raise MetaheurError(str(exc)) from None
    return count


def available_devices() -> list[Device]:
    """``cpu`` first, then every GPU."""
    return [cpu_device(), *gpu_devices()]


def parse_device(spec: str | Device) -> Device:
    """A device from ``cpu``, ``cuda``/``gpu`` (the first GPU) or ``cuda:N``."""
    if isinstance(spec, Device):
        return spec
    text = str(spec).strip().lower()
    if text == "cpu":
        return cpu_device()
    gpus = gpu_devices()
    if text in ("cuda", "gpu"):
        text = "cuda:0"
    if text.startswith(("cuda:", "gpu:")):
        try:
            index = int(text.split(":", 1)[1])
        except ValueError:
            raise MetaheurError(f"bad device {spec!r}: use cpu, cuda or cuda:N") from None
        if not gpus:
            raise MetaheurError(f"device {spec!r} requested but no GPU is available ({_why_no_gpu()})")
        if not 0 <= index < len(gpus):
            raise MetaheurError(f"device {spec!r} does not exist (found {', '.join(g.name for g in gpus)})")
        return gpus[index]
    raise MetaheurError(f"bad device {spec!r}: use cpu, cuda or cuda:N")


def _why_no_gpu() -> str:
    if os.environ.get("METAHEUR_NO_GPU"):
        return "METAHEUR_NO_GPU is set"
    try:
        import cupy  # noqa: F401
    except Exception:
        return "CuPy is not installed: pip install 'metaheur[cuda13]' or '[cuda12]'"
    return "CuPy sees no CUDA device"


def system_report() -> dict:
    """Devices and the versions of everything the kernels depend on (``metaheur info``)."""
    from metaheur import __version__
    from metaheur.engine.cpu_build import find_compiler

    compiler = find_compiler()
    report = {
        "metaheur": __version__,
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "numpy": np.__version__,
        "c_compiler": compiler.version if compiler else None,
        "cupy": None,
        "cuda_runtime": None,
        "cuda_driver": None,
        "nvrtc": None,
        "devices": [
            {"name": d.name, "label": d.label, "cores": d.cores, "memory_gib": None if d.memory_bytes is None
             else round(d.memory_bytes / 2**30, 1), "simulated": d.simulated}
            for d in available_devices()
        ],
        "simulated_gpus": simulated_gpu_count(),
        "gpu_note": None if gpu_devices() else _why_no_gpu(),
    }
    try:
        import cupy

        report["cupy"] = cupy.__version__
        report["cuda_runtime"] = _cuda_version(cupy.cuda.runtime.runtimeGetVersion)
        report["cuda_driver"] = _cuda_version(cupy.cuda.runtime.driverGetVersion)
        report["nvrtc"] = ".".join(map(str, cupy.cuda.nvrtc.getVersion()))
    except Exception:
        pass
    return report


def _cuda_version(getter) -> str | None:
    try:
        v = int(getter())
    except Exception:
        return None
    return f"{v // 1000}.{(v % 1000) // 10}"


def format_system_report(report: dict) -> str:
    """Human-readable lines for :func:`system_report`."""
    lines = [f"metaheur    {report['metaheur']} (Python {report['python']}, numpy {report['numpy']})",
             f"platform    {report['platform']}",
             f"C compiler  {report['c_compiler'] or 'none found (the CPU build needs gcc or clang)'}"]
    if report["cupy"]:
        lines.append(f"CuPy        {report['cupy']} (CUDA runtime {report['cuda_runtime']}, driver "
                     f"{report['cuda_driver']}, NVRTC {report['nvrtc']})")
    else:
        lines.append("CuPy        not installed")
    lines.append("devices")
    for d in report["devices"]:
        unit = "cores" if d["name"] == "cpu" else "multiprocessors"
        mem = f", {d['memory_gib']} GiB" if d["memory_gib"] is not None else ""
        sim = " [simulated]" if d.get("simulated") else ""
        lines.append(f"  {d['name']:<8} {d['label']} ({d['cores']} {unit}{mem}){sim}")
    if report["gpu_note"]:
        lines.append(f"  (no GPU: {report['gpu_note']})")
    if report.get("simulated_gpus"):
        lines.append(f"  ({report['simulated_gpus']} simulated GPU(s): METAHEUR_SIMULATED_GPUS is set; timings "
                     "are those of the CPU build)")
    return "\n".join(lines)
