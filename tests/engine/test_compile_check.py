"""Every kernel variant the project can ask for compiles for a GPU (sm_90) with exactly the GPU
build's options, and for the CPU.

The GPU compile needs no GPU: NVRTC through CuPy when ``cupy.cuda.nvrtc`` imports, else ``nvcc``
(on the PATH or in /usr/local/cuda/bin) with the same options, else the test is skipped with the
reason. Every ``kernels/*.cu`` file must be listed in ``metaheur.device_data.COMPILE_VARIANTS``.

Large kernels take tens of seconds each to compile for sm_90, so (1) all compiles of a session
start at once on a thread pool (one job a core) and each test waits for its own, and (2) a GPU
compile that succeeded is remembered on disk (``<METAHEUR cache>/compile_check/``), keyed by the
SHA-256 of the self-contained source, the options and the compiler's version: a variant is
compiled again only when one of those changed. The CPU builds use the CPU build's own disk
cache; the fiber simulation is compiled for the first variant of each file.

Which GPU variants (``METAHEUR_COMPILE_CHECK``): ``all`` compiles every variant (the default);
``cover`` (a quicker local choice) compiles the first variant of every file
and every distinct set of defines once, on the smallest file that has it (e.g. each MH_TSP_WEIGHT
through tsp_moves.cu), so a large kernel is not compiled once per distance function on every
local run; ``first`` the first variant of each file; ``off`` none.
"""

from __future__ import annotations

import functools
import hashlib
import os
import shutil
import subprocess
import tempfile
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import pytest

from metaheur.device_data import COMPILE_VARIANTS
from metaheur.engine import cpu_build
from metaheur.engine.gpu_build import nvrtc_options
from metaheur.engine.module import _normalise_defines
from metaheur.engine.source import kernel_dir, load_source

ARCH = "sm_90"
VARIANTS = [(source, defines) for source, variants in sorted(COMPILE_VARIANTS.items()) for defines in variants]
CPU_JOBS = [(source, defines, False) for source, defines in VARIANTS] + [
    (source, variants[0], True) for source, variants in sorted(COMPILE_VARIANTS.items())]


def _gpu_mode() -> str:
    default = "all"
    mode = os.environ.get("METAHEUR_COMPILE_CHECK", default).strip().lower() or default
    if mode not in ("all", "cover", "first", "off"):
        raise ValueError(f"METAHEUR_COMPILE_CHECK must be all, cover, first or off, not {mode!r}")
    return mode


@functools.lru_cache(maxsize=1)
def _gpu_selection() -> frozenset:
    """Ids of the GPU variants to compile under ``_gpu_mode()``."""
    mode = _gpu_mode()
    if mode == "all":
        return frozenset(_variant_id(v) for v in VARIANTS)
    if mode == "off":
        return frozenset()
    chosen = {_variant_id((source, variants[0])) for source, variants in COMPILE_VARIANTS.items()}
    if mode == "cover":
        smallest: dict[tuple, tuple[int, str]] = {}
        for variant in VARIANTS:
            key, size = _normalise_defines(variant[1]), len(load_source(variant[0]).text)
            if key not in smallest or size < smallest[key][0]:
                smallest[key] = (size, _variant_id(variant))
        chosen |= {vid for _, vid in smallest.values()}
    return frozenset(chosen)


def _gpu_wanted(variant) -> bool:
    return _variant_id(variant) in _gpu_selection()


def _variant_id(variant) -> str:
    source, defines = variant[:2]
    label = source + "".join(f"-{d}" for d in _normalise_defines(defines))
    return label + ("-sim" if len(variant) > 2 and variant[2] else "")


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


def _ok_marker(text: str, options: list[str], version: str) -> Path:
    key = hashlib.sha256("\0".join([text, *options, version]).encode()).hexdigest()[:32]
    return cpu_build.cache_dir().parent / "compile_check" / f"{key}.ok"


def compile_for_gpu(source_name: str, defines) -> tuple[bool, str]:
    """``(ok, log)`` of compiling one variant for ``ARCH`` (``log`` is ``"cached"`` for a variant
    already compiled with the same source, options and compiler)."""
    kind, detail, version = gpu_compiler()
    source = load_source(source_name)
    options = [*nvrtc_options(_normalise_defines(defines)), f"-arch={ARCH}"]
    marker = _ok_marker(source.text, [kind, *options], version)
    if marker.is_file():
        return True, "cached"
    if kind == "nvrtc":
        from cupy.cuda import nvrtc

        prog = nvrtc.createProgram(source.text, source.name, [], [])
        try:
            try:
                nvrtc.compileProgram(prog, options)
            except nvrtc.NVRTCError:
                return False, f"NVRTC {' '.join(options)}:\n{nvrtc.getProgramLog(prog)}"
            log = nvrtc.getProgramLog(prog)
        finally:
            nvrtc.destroyProgram(prog)
    else:
        with tempfile.TemporaryDirectory(prefix="metaheur-compile-check-") as tmp:
            src = Path(tmp) / (Path(source_name).stem + ".cu")
            src.write_text(source.text)
            cmd = [detail, "-cubin", "-x", "cu", *options, "-o", str(Path(tmp) / "out.cubin"), str(src)]
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
            if proc.returncode != 0 or not (Path(tmp) / "out.cubin").is_file():
                return False, f"{' '.join(cmd)}\n{proc.stderr}{proc.stdout}"
            log = proc.stderr
    marker.parent.mkdir(parents=True, exist_ok=True)
    marker.write_text(f"{source_name} {' '.join(options)}\n{version}\n{log}")
    return True, log


def compile_for_cpu(source_name: str, defines, sim: bool) -> str:
    source = load_source(source_name)
    library = cpu_build.build(source, _normalise_defines(defines), sim)
    for name, params in source.signatures.items():
        cpu_build.bind(library.library, name, params)  # every kernel has its launcher
    return library.path.name


@pytest.fixture(scope="session")
def compile_jobs():
    """Every compile of this module, started at once: ``{("gpu"|"cpu", id): Future}``."""
    pool = ThreadPoolExecutor(max_workers=max(1, os.cpu_count() or 1), thread_name_prefix="compile-check")
    jobs: dict[tuple[str, str], Future] = {}
    if gpu_compiler()[0]:
        for variant in VARIANTS:
            if _gpu_wanted(variant):
                jobs["gpu", _variant_id(variant)] = pool.submit(compile_for_gpu, *variant)
    for job in CPU_JOBS:
        jobs["cpu", _variant_id(job)] = pool.submit(compile_for_cpu, *job)
    yield jobs
    pool.shutdown(wait=True, cancel_futures=True)


@pytest.mark.parametrize("variant", VARIANTS, ids=_variant_id)
def test_gpu_compile(variant, compile_jobs):
    kind, detail, _ = gpu_compiler()
    if not kind:
        pytest.skip(detail)
    if not _gpu_wanted(variant):
        pytest.skip(f"METAHEUR_COMPILE_CHECK={_gpu_mode()}")
    ok, log = compile_jobs["gpu", _variant_id(variant)].result()
    assert ok, f"{variant[0]} {variant[1]} does not compile for {ARCH} ({kind}):\n{log}"
    assert " error" not in log.lower(), log


@pytest.mark.parametrize("job", CPU_JOBS, ids=_variant_id)
def test_cpu_compile(job, compile_jobs):
    assert compile_jobs["cpu", _variant_id(job)].result().endswith(".so")


def test_every_kernel_file_is_in_compile_variants():
    files = sorted(p.name for p in kernel_dir().glob("*.cu"))
    assert files, "no kernel sources found"
    missing = [f for f in files if f not in COMPILE_VARIANTS]
    assert not missing, f"kernels/*.cu not listed in metaheur.device_data.COMPILE_VARIANTS: {missing}"
    unknown = [f for f in COMPILE_VARIANTS if f not in files]
    assert not unknown, f"COMPILE_VARIANTS names files that do not exist: {unknown}"
    for name, variants in COMPILE_VARIANTS.items():
        assert variants, f"{name}: no variant to compile"
        assert len({_normalise_defines(v) for v in variants}) == len(variants), f"{name}: duplicate variants"


def test_gpu_options_are_the_gpu_builds():
    options = nvrtc_options(_normalise_defines({"MH_TSP_WEIGHT": 3}))
    assert "--fmad=false" in options  # bit-for-bit distances with the CPU build
    assert "-DMH_TSP_WEIGHT=3" in options and "-DMH_GPU=1" in options
    assert not any(o.startswith("-arch") for o in options)  # CuPy picks the device's architecture


def test_a_broken_variant_fails_the_check(tmp_path, monkeypatch):
    """The check itself: a kernel that does not compile is reported with the compiler's message."""
    kind, detail, _ = gpu_compiler()
    if not kind:
        pytest.skip(detail)
    monkeypatch.setenv("METAHEUR_CACHE_DIR", str(tmp_path / "cache"))
    broken = tmp_path / "broken_check.cu"
    broken.write_text('extern "C" __global__ void k(int *o) { o[0] = not_declared; }\n')
    ok, log = compile_for_gpu(str(broken), {})
    assert not ok and "not_declared" in log
    fine = tmp_path / "fine_check.cu"
    fine.write_text('extern "C" __global__ void k(int *o) { o[0] = 1; }\n')
    assert compile_for_gpu(str(fine), {})[0]
    assert compile_for_gpu(str(fine), {}) == (True, "cached")
