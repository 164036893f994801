"""Every kernel variant the project can ask for compiles for a GPU (sm_90) with exactly the GPU
build's options, and for the CPU in both modes.

The GPU compile needs no GPU: NVRTC through CuPy when ``cupy.cuda.nvrtc`` imports, else ``nvcc``
(on the PATH or in /usr/local/cuda/bin) with the same options, else the test is skipped with the
reason. Every ``kernels/*.cu`` file must be listed in ``metaheur.ops.COMPILE_VARIANTS``.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from metaheur.engine import cpu_build
from metaheur.engine.gpu_build import nvrtc_options
from metaheur.engine.module import _normalise_defines
from metaheur.engine.source import kernel_dir, load_source
from metaheur.ops import COMPILE_VARIANTS

ARCH = "sm_90"
VARIANTS = [(source, defines) for source, variants in sorted(COMPILE_VARIANTS.items()) for defines in variants]


def _variant_id(variant) -> str:
    source, defines = variant
    return source + "".join(f"-{d}" for d in _normalise_defines(defines))


@functools.lru_cache(maxsize=1)
def gpu_compiler() -> tuple[str, str | None]:
    """``("nvrtc", None)``, ``("nvcc", path)`` or ``("", reason)`` when neither is available."""
    try:
        from cupy.cuda import nvrtc

        nvrtc.getVersion()
        return "nvrtc", None
    except Exception as exc:  # no CuPy, or CuPy without a loadable NVRTC
        why = f"CuPy's NVRTC unavailable ({type(exc).__name__}: {exc})"
    nvcc = shutil.which("nvcc") or next(
        (p for p in ("/usr/local/cuda/bin/nvcc",) if os.access(p, os.X_OK)), None)
    if nvcc:
        return "nvcc", nvcc
    return "", f"no GPU compiler: {why}, and no nvcc on the PATH or in /usr/local/cuda/bin"


def compile_for_gpu(source_name: str, defines, tmp_path: Path) -> str:
    """Compile one variant for ``ARCH``; returns the compiler's log (warnings). Fails the test on
    an error, with the log."""
    kind, detail = gpu_compiler()
    if not kind:
        pytest.skip(detail)
    source = load_source(source_name)
    options = list(nvrtc_options(_normalise_defines(defines)))
    if kind == "nvrtc":
        from cupy.cuda import nvrtc

        prog = nvrtc.createProgram(source.text, source.name, [], [])
        try:
            try:
                nvrtc.compileProgram(prog, [*options, f"-arch={ARCH}"])
            except nvrtc.NVRTCError:
                pytest.fail(f"NVRTC failed on {source_name} {defines}:\n{nvrtc.getProgramLog(prog)}")
            return nvrtc.getProgramLog(prog)
        finally:
            nvrtc.destroyProgram(prog)
    src = tmp_path / (Path(source_name).stem + ".cu")
    src.write_text(source.text)
    cmd = [detail, f"-arch={ARCH}", "-cubin", "-x", "cu", *options, "-o", str(tmp_path / "out.cubin"), str(src)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        pytest.fail(f"nvcc failed on {source_name} {defines}:\n{' '.join(cmd)}\n{proc.stderr}{proc.stdout}")
    assert (tmp_path / "out.cubin").stat().st_size > 0
    return proc.stderr


@pytest.mark.parametrize("variant", VARIANTS, ids=_variant_id)
def test_gpu_compile(variant, tmp_path):
    source_name, defines = variant
    log = compile_for_gpu(source_name, defines, tmp_path)
    assert " error" not in log.lower(), log


@pytest.mark.parametrize("sim", [False, True], ids=["fast", "sim"])
@pytest.mark.parametrize("variant", VARIANTS, ids=_variant_id)
def test_cpu_compile(variant, sim):
    source_name, defines = variant
    source = load_source(source_name)
    library = cpu_build.build(source, _normalise_defines(defines), sim)
    for name, params in source.signatures.items():
        cpu_build.bind(library.library, name, params)  # every kernel has its launcher


def test_every_kernel_file_is_in_compile_variants():
    files = sorted(p.name for p in kernel_dir().glob("*.cu"))
    assert files, "no kernel sources found"
    missing = [f for f in files if f not in COMPILE_VARIANTS]
    assert not missing, f"kernels/*.cu not listed in metaheur.ops.COMPILE_VARIANTS: {missing}"
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
