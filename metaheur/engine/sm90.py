"""Compiling a kernel variant for sm_90 without a GPU, and what ptxas reports about it.

The GPU build's options (:func:`metaheur.engine.gpu_build.nvrtc_options`) plus ``-arch=sm_90`` and
ptxas's verbose report, through CuPy's NVRTC when it loads, else ``nvcc``. A compile that
succeeded is remembered on disk (``<METAHEUR cache>/compile_check/``) with its log, keyed by the
SHA-256 of the self-contained source, the options and the compiler's version, so a variant is
compiled again only when one of those changed. :func:`resources` reads registers per thread,
spills, stack and static shared memory of each kernel from that log; :func:`occupancy` applies
the H200's per-SM limits to a launch (CUDA C Programming Guide, compute capability 9.0 table;
register allocation per warp in units of 256).
"""

from __future__ import annotations

import csv
import functools
import hashlib
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from metaheur.engine import compile_run, cpu_build
from metaheur.engine.gpu_build import nvrtc_options
from metaheur.engine.shapes import threads
from metaheur.engine.source import load_source

ARCH = "sm_90"
PTXAS_VERBOSE = "--ptxas-options=-v"


@dataclass(frozen=True)
class H200:
    """Per-SM and per-block limits of compute capability 9.0, and the H200 SXM's SM count."""

    sms: int = 132
    registers_per_sm: int = 65536
    registers_per_block: int = 65536
    max_registers_per_thread: int = 255
    register_unit: int = 256  # registers are given to a warp in multiples of this
    threads_per_block: int = 1024
    threads_per_sm: int = 2048
    blocks_per_sm: int = 32
    static_shared_per_block: int = 48 * 1024
    shared_per_sm: int = 228 * 1024
    shared_reserved_per_block: int = 1024  # the runtime's own shared memory per resident block


LIMITS = H200()


@dataclass(frozen=True)
class KernelResources:
    """What ptxas reports for one kernel: registers per thread, spill stores and loads (bytes),
    stack frame (bytes per thread), static shared memory (bytes per block)."""

    registers: int
    spill_stores: int
    spill_loads: int
    stack: int
    shared: int


#: The resource table (package data: experiments/kernel_resources.py writes it), what simulated
#: devices answer occupancy queries from, in a checkout and in an installed package alike.
RESOURCE_TABLE = Path(str(resources.files("metaheur.engine").joinpath("kernel_resources.csv")))


@functools.lru_cache(maxsize=4)
def table_resources(path: Path = RESOURCE_TABLE) -> dict[tuple[str, str, str], KernelResources]:
    """``{(kernel file, kernel, variant): KernelResources}`` from the resource table (variant: the
    sorted ``NAME=VALUE`` defines joined by spaces, ``-`` for none; spill bytes counted as stores);
    empty when the table is absent. What simulated devices answer occupancy queries from."""
    if not path.is_file():
        return {}
    out = {}
    with path.open(newline="") as f:
        for row in csv.DictReader(f):
            if row["registers"]:
                numbers = [int(row[k]) for k in ("registers", "spill_bytes", "stack_bytes", "shared_bytes")]
                out[(row["file"], row["kernel"], row["variant"])] = KernelResources(numbers[0], numbers[1], 0,
                                                                                    *numbers[2:])
    return out


@functools.lru_cache(maxsize=1)
def gpu_compiler() -> tuple[str, str, str]:
    """``(kind, path or reason, version)``: kind ``nvrtc``, ``nvcc`` or ``""`` when neither is there."""
    try:
        from cupy.cuda import nvrtc

        return "nvrtc", "", "nvrtc " + ".".join(map(str, nvrtc.getVersion()))
    except Exception as exc:  # no CuPy, or CuPy without a loadable NVRTC
        why = f"CuPy's NVRTC unavailable ({type(exc).__name__}: {exc})"
    nvcc = shutil.which("nvcc") or ("/usr/local/cuda/bin/nvcc" if os.access("/usr/local/cuda/bin/nvcc", os.X_OK)
                                    else None)
    if nvcc:
        version = subprocess.run([nvcc, "--version"], capture_output=True, text=True, timeout=60).stdout
        return "nvcc", nvcc, version.strip().splitlines()[-1] if version.strip() else "nvcc"
    return "", f"no GPU compiler: {why}, and no nvcc on the PATH or in /usr/local/cuda/bin", ""


def _marker(text: str, options: list[str], version: str) -> Path:
    key = hashlib.sha256("\0".join([text, *options, version]).encode()).hexdigest()[:32]
    return cpu_build.cache_dir().parent / "compile_check" / f"{key}.ok"


def _nvrtc(text: str, name: str, options: list[str]) -> tuple[bool, str]:
    from cupy.cuda import nvrtc

    prog = nvrtc.createProgram(text, name, [], [])
    try:
        try:
            nvrtc.compileProgram(prog, options)
        except nvrtc.NVRTCError:
            return False, f"NVRTC {' '.join(options)}:\n{nvrtc.getProgramLog(prog)}"
        return True, nvrtc.getProgramLog(prog)
    finally:
        nvrtc.destroyProgram(prog)


def _nvcc(nvcc: str, text: str, name: str, options: list[str]) -> tuple[bool, str]:
    with tempfile.TemporaryDirectory(prefix="metaheur-compile-check-") as tmp:
        src = Path(tmp) / (Path(name).stem + ".cu")
        src.write_text(text)
        cmd = [nvcc, "-cubin", "-x", "cu", *options, "-o", str(Path(tmp) / "out.cubin"), str(src)]
        proc = compile_run.run(cmd, tmp, timeout=900)
        if proc.returncode != 0 or not (Path(tmp) / "out.cubin").is_file():
            return False, f"{' '.join(cmd)}\n{proc.stderr}{proc.stdout}"
        return True, proc.stderr + proc.stdout


def compile_for_gpu(source_name: str, defines: tuple[str, ...]) -> tuple[bool, str]:
    """``(ok, log)`` of compiling one variant (``defines`` as ``NAME=VALUE`` strings) for
    :data:`ARCH` with ptxas's verbose report; a variant compiled before comes from the disk cache
    with the log it had."""
    kind, detail, version = gpu_compiler()
    if not kind:
        return False, detail
    source = load_source(source_name)
    options = [*nvrtc_options(defines), f"-arch={ARCH}", PTXAS_VERBOSE]
    marker = _marker(source.text, [kind, *options], version)
    if marker.is_file():
        return True, marker.read_text().split("\n", 2)[2]
    if kind == "nvrtc":
        ok, log = _nvrtc(source.text, source.name, options)
    else:
        ok, log = _nvcc(detail, source.text, source.name, options)
    if ok:
        marker.parent.mkdir(parents=True, exist_ok=True)
        partial = marker.with_suffix(f".{os.getpid()}.tmp")
        partial.write_text(f"{source_name} {' '.join(options)}\n{version}\n{log}")
        os.replace(partial, marker)
    return ok, log


_ENTRY = re.compile(r"Compiling entry function '(\w+)' for '(\w+)'")
_FRAME = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
_USED = re.compile(r"Used (\d+) registers(?:.*?(\d+) bytes smem)?")


def resources(log: str) -> dict[str, KernelResources]:
    """``{kernel: KernelResources}`` from ptxas's verbose report in a compile log (empty when the
    log has none)."""
    out: dict[str, KernelResources] = {}
    name, frame = None, (0, 0, 0)
    for line in log.splitlines():
        if m := _ENTRY.search(line):
            name, frame = m.group(1), (0, 0, 0)
        elif name and (m := _FRAME.search(line)):
            frame = tuple(int(g) for g in m.groups())
        elif name and (m := _USED.search(line)):
            out[name] = KernelResources(int(m.group(1)), frame[1], frame[2], frame[0], int(m.group(2) or 0))
            name = None
    return out


def _round_up(value: int, unit: int) -> int:
    return -(-value // unit) * unit


def blocks_per_sm(res: KernelResources, threads: int, limits: H200 = LIMITS) -> int:
    """Resident blocks of ``threads`` threads per SM (0: the launch cannot run)."""
    if threads > limits.threads_per_block or res.shared > limits.static_shared_per_block:
        return 0
    warps = -(-threads // 32)
    per_warp = _round_up(max(res.registers, 1) * 32, limits.register_unit)
    if per_warp * warps > limits.registers_per_block:
        return 0
    by_regs = (limits.registers_per_sm // per_warp) // warps
    by_threads = limits.threads_per_sm // (warps * 32)
    by_shared = limits.shared_per_sm // (res.shared + limits.shared_reserved_per_block)
    return min(by_regs, by_threads, by_shared, limits.blocks_per_sm)


def launch_problems(kernel: str, res: KernelResources, max_threads: int, blocks) -> list[str]:
    """Why each of ``blocks`` (block shapes) cannot launch ``kernel`` on an H200: more threads than
    its launch bounds, registers x threads beyond the register file, or too much shared memory."""
    out = []
    for block in blocks:
        nt = threads(block)
        if nt > max_threads:
            out.append(f"{kernel}: block {block} exceeds its launch bounds ({max_threads} threads)")
        elif res.shared > LIMITS.static_shared_per_block:
            out.append(f"{kernel}: {res.shared} bytes of static shared memory exceed "
                       f"{LIMITS.static_shared_per_block} per block")
        elif blocks_per_sm(res, nt) == 0:
            out.append(f"{kernel}: block {block} needs {res.registers} registers x {nt} threads, more than the "
                       f"{LIMITS.registers_per_block} a block may have")
    return out


def occupancy(res: KernelResources, threads: int, limits: H200 = LIMITS) -> float:
    """Resident warps per SM over the most an SM holds (64), for blocks of ``threads``."""
    warps = -(-threads // 32)
    return blocks_per_sm(res, threads, limits) * warps / (limits.threads_per_sm // 32)
