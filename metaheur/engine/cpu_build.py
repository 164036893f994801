"""The CPU build: kernel sources compiled by the host C compiler into a cached shared library.

The source (the CPU shim, then the kernel file with its headers inlined, then one generated
launcher per kernel) is compiled as C++ with ``-O3 -march=native -fopenmp`` and without
floating-point contraction (``-ffp-contract=off``), so that distances computed from coordinates
agree bit for bit with numpy and with the GPU build (compiled with ``--fmad=false``). The
library is cached under ``$METAHEUR_CACHE_DIR`` (default ``~/.cache/metaheur``) keyed by the
SHA-256 of the source, the flags, the compiler's version and the host CPU, and written by
atomic rename of a file of its own so concurrent builds can share it (:func:`_publish`). The
compiler runs in a private temporary folder, in a process group of its own that an interruption
kills (:mod:`metaheur.engine.compile_run`).
"""

from __future__ import annotations

import contextlib
import ctypes
import hashlib
import os
import platform
import re
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from metaheur import scratch
from metaheur.engine import compile_run
from metaheur.engine.source import KernelSource, Param, shim_text
from metaheur.errors import MetaheurError

BASE_FLAGS = (
    "-x", "c++", "-std=c++14", "-O3", "-march=native", "-fPIC", "-shared", "-fopenmp",
    "-fno-exceptions", "-fno-rtti", "-ffp-contract=off", "-fno-math-errno", "-w",
)

_CTYPES = {
    "int8": ctypes.c_int8, "uint8": ctypes.c_uint8, "int16": ctypes.c_int16, "uint16": ctypes.c_uint16,
    "int32": ctypes.c_int32, "uint32": ctypes.c_uint32, "int64": ctypes.c_int64, "uint64": ctypes.c_uint64,
    "float32": ctypes.c_float, "float64": ctypes.c_double,
}


class LaunchConfig(ctypes.Structure):
    """``mh_launch_t`` of kernels/engine/mh_cpu_shim.h."""

    _fields_ = [
        ("grid", ctypes.c_uint * 3),
        ("block", ctypes.c_uint * 3),
        ("threads", ctypes.c_int),
        ("error", ctypes.c_int),
        ("order", ctypes.c_int),
        ("deadline", ctypes.c_double),
        ("stop", ctypes.c_void_p),
    ]


@dataclass(frozen=True)
class Compiler:
    path: str
    version: str


@lru_cache(maxsize=1)
def find_compiler() -> Compiler | None:
    """The host C/C++ compiler: ``$CC`` if set, else gcc, cc or clang on the PATH."""
    names = [os.environ["CC"]] if os.environ.get("CC") else ["gcc", "cc", "clang"]
    for name in names:
        path = shutil.which(name)
        if path:
            try:
                out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30)
            except (OSError, subprocess.SubprocessError):
                continue
            if out.returncode == 0:
                return Compiler(path, out.stdout.splitlines()[0].strip() if out.stdout else name)
    return None


def require_compiler() -> Compiler:
    compiler = find_compiler()
    if compiler is None:
        raise MetaheurError(
            "no C compiler found (looked for $CC, gcc, cc, clang): the CPU build of the kernels needs one "
            "(e.g. apt-get install gcc)"
        )
    return compiler


def cache_dir() -> Path:
    """Where compiled kernel libraries are kept."""
    root = os.environ.get("METAHEUR_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "metaheur")
    return Path(root) / "kernels"


@lru_cache(maxsize=1)
def _host_cpu() -> str:
    """What -march=native depends on: machine type, CPU model and feature flags."""
    ident = platform.machine()
    try:
        with open("/proc/cpuinfo") as handle:
            for line in handle:
                if line.startswith(("model name", "flags", "Features")):
                    ident += line
                if line.strip() == "":
                    break
    except OSError:
        ident += platform.processor()
    return ident


def launcher_code(source: KernelSource) -> str:
    """One ``mh_launch_<kernel>(const mh_launch_t*, args...)`` per kernel, running its grid."""
    out = ['#line 1 "<generated launchers>"']
    for name, params in source.signatures.items():
        decl = ", ".join(p.describe() for p in params)
        call = ", ".join(p.name for p in params)
        sep = ", " if decl else ""
        out.append(
            f'extern "C" void mh_launch_{name}(mh_launch_t *mh_L{sep}{decl}) {{ MH_RUN_GRID(mh_L, {name}({call})); }}'
        )
    return "\n".join(out) + "\n"


_ERROR = re.compile(r"^(.*?):(\d+):(?:\d+:)?\s*(?:fatal )?error:\s*(.*)$")


_CONTEXT = re.compile(r"^\s+\d*\s*\|")


def _compile_error(source: KernelSource, log: str) -> MetaheurError:
    """The first error of the compiler's ``log`` (file and line as the ``#line`` directives say:
    a user problem's snippet has its own numbers), with the source line gcc shows under it."""
    lines = log.splitlines()
    for k, line in enumerate(lines):
        m = _ERROR.match(line)
        if m:
            shown = [ln for ln in lines[k + 1:k + 3] if _CONTEXT.match(ln)]
            return MetaheurError("\n".join([f"kernel compile failed ({source.name}, CPU build): {m.group(1)}:"
                                             f"{m.group(2)}: {m.group(3)}", *shown]))
    first = next((ln for ln in log.splitlines() if ln.strip()), "no output")
    return MetaheurError(f"kernel compile failed ({source.name}, CPU build): {first}")


@dataclass
class CpuLibrary:
    """A compiled kernel library and what it cost to get it."""

    library: ctypes.CDLL
    path: Path
    compile_seconds: float
    cached: bool


def build(source: KernelSource, defines: tuple[str, ...], sim: bool) -> CpuLibrary:
    """Compile (or fetch from the cache) the CPU build of ``source`` with ``-D`` ``defines``."""
    compiler = require_compiler()
    flags = [*BASE_FLAGS, *(f"-D{d}" for d in defines)]
    if sim:
        flags.append("-DMH_SIM_THREADS=1")
    text = shim_text() + source.text + launcher_code(source)
    key = hashlib.sha256("\0".join([text, *flags, compiler.version, _host_cpu()]).encode()).hexdigest()[:32]
    folder = cache_dir()
    target = folder / f"{Path(source.name).stem}-{key}.so"
    start = time.perf_counter()
    cached = target.is_file()
    if not cached:
        folder.mkdir(parents=True, exist_ok=True)
        tmp = Path(scratch.folder("build"))
        try:
            src = tmp / "kernel.cpp"
            src.write_text(text)
            out = tmp / "kernel.so"
            proc = compile_run.run([compiler.path, *flags, "-pipe", "-o", str(out), str(src)], str(tmp))
            if proc.returncode != 0:
                raise _compile_error(source, proc.stderr + proc.stdout)
            _publish(out, target)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    library = ctypes.CDLL(str(target))
    return CpuLibrary(library, target, time.perf_counter() - start, cached)


def _publish(built: Path, target: Path) -> None:
    """Put the library ``built`` in the cache as ``target`` whole or not at all: copied to a
    file of its own in the cache's folder (unique to this call: processes and threads may build
    the same kernel at once), flushed, then renamed over ``target``, which a loader only ever
    opens by that name, so it never sees a half-written library."""
    fd, partial = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as dst, open(built, "rb") as src:
            shutil.copyfileobj(src, dst)
            dst.flush()
            os.fsync(dst.fileno())
        os.chmod(partial, 0o644)
        os.replace(partial, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(partial)
        raise


def bind(library: ctypes.CDLL, name: str, params: tuple[Param, ...]):
    """The ctypes launcher of kernel ``name`` with argument types set."""
    fn = getattr(library, f"mh_launch_{name}")
    fn.argtypes = [ctypes.POINTER(LaunchConfig)] + [
        ctypes.c_void_p if p.pointer else _CTYPES[p.dtype] for p in params
    ]
    fn.restype = None
    return fn
