"""Every kernel variant the project can ask for compiles for a GPU (sm_90) with exactly the GPU
build's options, and for the CPU; and every block shape the package launches (and the GPU tests
launch) fits an H200 by the registers, spills and shared memory that ptxas reports.

The GPU compile needs no GPU: NVRTC through CuPy when ``cupy.cuda.nvrtc`` imports, else ``nvcc``
(on the PATH or in /usr/local/cuda/bin) with the same options, else the test is skipped with the
reason (metaheur/engine/sm90.py). Every ``kernels/*/*.cu`` file must be listed in the kernel
tables (:func:`metaheur.engine.catalogue.kernel_tables`: the engine's and every registered
problem's), with the shapes of every kernel's launches. The kernel files of the experiments that
the tests and benchmarks load by path (:data:`EXPERIMENT_VARIANTS`) are compiled and checked too.

Large kernels take tens of seconds each to compile for sm_90, so (1) all compiles of a session
start at once on a thread pool (one job a core) and each test waits for its own, and (2) a GPU
compile that succeeded is remembered on disk with its log (``<METAHEUR cache>/compile_check/``):
a variant is compiled again only when its source, options or compiler changed. The CPU builds
use the CPU build's own disk cache; the fiber simulation is compiled for the first variant of
each file.

Which GPU variants (``METAHEUR_COMPILE_CHECK``): ``all`` compiles every variant (the default);
``cover`` (a quicker local choice) compiles the first variant of every file
and every distinct set of defines once, on the smallest file that has it (e.g. each MH_TSP_WEIGHT
through tsp_moves.cu), so a large kernel is not compiled once per distance function on every
local run; ``first`` the first variant of each file; ``off`` none.
"""

from __future__ import annotations

import functools
import os
from concurrent.futures import Future, ThreadPoolExecutor
from types import SimpleNamespace

import pytest
from qap_reference import QAP_MOVES
from test_gpu import GPU_QAP_BLOCKS, GPU_TSP_BLOCKS

from metaheur.engine import cpu_build, sm90
from metaheur.engine.catalogue import kernel_tables
from metaheur.engine.gpu_build import nvrtc_options
from metaheur.engine.module import _normalise_defines
from metaheur.engine.source import kernel_dir, load_source
from metaheur.problems.qap.tabu import default_block
from metaheur.problems.tsp.descent import GPU_BLOCK

ARCH = sm90.ARCH
gpu_compiler = sm90.gpu_compiler
#: Block shapes tests/engine/test_gpu.py launches on a GPU, by kernel file.
GPU_TEST_BLOCKS = {QAP_MOVES: GPU_QAP_BLOCKS, "tsp/tsp_moves.cu": GPU_TSP_BLOCKS}
#: Kernel files outside the package (by path) that the tests and benchmarks load, with their variants.
EXPERIMENT_VARIANTS = {QAP_MOVES: ({}, {"MH_QAP_SYMMETRIC": 1})}
TABLE = kernel_tables()
COMPILE_VARIANTS, GPU_LAUNCHES, NOT_LAUNCHED = TABLE.variants, TABLE.launches, TABLE.not_launched
ALL_VARIANTS = sorted({**COMPILE_VARIANTS, **EXPERIMENT_VARIANTS}.items())
VARIANTS = [(source, defines) for source, variants in ALL_VARIANTS for defines in variants]
CPU_JOBS = [(source, defines, False) for source, defines in VARIANTS] + [
    (source, variants[0], True) for source, variants in ALL_VARIANTS]


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
    chosen = {_variant_id((source, variants[0])) for source, variants in ALL_VARIANTS}
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
    if os.path.isabs(source):  # an experiment's kernel file: its path in the checkout
        source = source.rsplit(os.sep + "experiments" + os.sep, 1)[-1]
    label = source + "".join(f"-{d}" for d in _normalise_defines(defines))
    return label + ("-sim" if len(variant) > 2 and variant[2] else "")


def _compile_gpu(source_name: str, defines) -> tuple[bool, str]:
    return sm90.compile_for_gpu(source_name, _normalise_defines(defines))


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
                jobs["gpu", _variant_id(variant)] = pool.submit(_compile_gpu, *variant)
    for job in CPU_JOBS:
        jobs["cpu", _variant_id(job)] = pool.submit(compile_for_cpu, *job)
    yield jobs
    pool.shutdown(wait=True, cancel_futures=True)


def _gpu_result(variant, compile_jobs) -> tuple[str, bool, str]:
    """``(compiler kind, ok, log)`` of this session's sm_90 compile of ``variant`` (skips the test
    without a GPU compiler or when METAHEUR_COMPILE_CHECK leaves the variant out)."""
    kind, detail, _ = gpu_compiler()
    if not kind:
        pytest.skip(detail)
    if not _gpu_wanted(variant):
        pytest.skip(f"METAHEUR_COMPILE_CHECK={_gpu_mode()}")
    return kind, *compile_jobs["gpu", _variant_id(variant)].result()


@pytest.mark.parametrize("variant", VARIANTS, ids=_variant_id)
def test_gpu_compile(variant, compile_jobs):
    kind, ok, log = _gpu_result(variant, compile_jobs)
    assert ok, f"{variant[0]} {variant[1]} does not compile for {ARCH} ({kind}):\n{log}"
    assert " error" not in log.lower(), log


@pytest.mark.parametrize("job", CPU_JOBS, ids=_variant_id)
def test_cpu_compile(job, compile_jobs):
    assert compile_jobs["cpu", _variant_id(job)].result().endswith(".so")


def _kernel_files() -> list[str]:
    """Every kernel file, by its path under kernels/ (``qap/qap_tabu.cu``)."""
    return sorted(p.relative_to(kernel_dir()).as_posix() for p in kernel_dir().glob("*/*.cu"))


def test_every_kernel_file_is_in_compile_variants():
    files = _kernel_files()
    assert files, "no kernel sources found"
    assert not list(kernel_dir().glob("*.cu")), "kernel files live in a folder of their owner: kernels/<owner>/"
    missing = [f for f in files if f not in COMPILE_VARIANTS]
    assert not missing, f"kernels/*/*.cu not listed in a kernel table (metaheur.engine.catalogue): {missing}"
    unknown = [f for f in COMPILE_VARIANTS if f not in files]
    assert not unknown, f"the kernel tables name files that do not exist: {unknown}"
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
    ok, log = _compile_gpu(str(broken), {})
    assert not ok and "not_declared" in log
    fine = tmp_path / "fine_check.cu"
    fine.write_text('extern "C" __global__ void k(int *o) { o[0] = 1; }\n')
    ok, log = _compile_gpu(str(fine), {})
    assert ok
    if kind == "nvcc":
        assert set(sm90.resources(log)) == {"k"}
    assert _compile_gpu(str(fine), {}) == (True, log)  # the second time from the disk cache, with its log


def _launch_shapes(source_name: str, kernel: str) -> list:
    return [*GPU_LAUNCHES.get((source_name, kernel), ()), *GPU_TEST_BLOCKS.get(source_name, ())]


@pytest.mark.gpusim
@pytest.mark.parametrize("variant", VARIANTS, ids=_variant_id)
def test_launch_shapes_fit_an_h200(variant, compile_jobs):
    """Registers x threads within the register file, static shared memory within a block's
    limit, blocks within the kernel's launch bounds, for every shape the package and the GPU
    tests launch (ptxas's report of this variant's sm_90 build)."""
    kind, ok, log = _gpu_result(variant, compile_jobs)
    assert ok, log
    found = sm90.resources(log)
    if not found and kind == "nvrtc":
        pytest.skip("this NVRTC gives no ptxas report (kernel resources are read from nvcc's)")
    source = load_source(variant[0])
    assert set(found) == set(source.signatures), log
    problems = [p for name, res in found.items()
                for p in sm90.launch_problems(name, res, source.max_threads[name], _launch_shapes(variant[0], name))]
    assert not problems, "\n".join(problems)


@pytest.mark.gpusim
def test_every_kernel_has_its_launch_shapes():
    kernels = {(name, k) for name in _kernel_files() for k in load_source(name).signatures}
    assert kernels == set(GPU_LAUNCHES) | NOT_LAUNCHED
    assert not set(GPU_LAUNCHES) & NOT_LAUNCHED


@pytest.mark.gpusim
def test_launchers_take_their_shapes_from_the_table():
    gpu = SimpleNamespace(is_gpu=True)
    tabu = GPU_LAUNCHES["qap/qap_tabu.cu", "qap_tabu_run"]
    assert {default_block(gpu, n) for n in (5, 127, 128, 1000)} == set(tabu)
    assert all((GPU_BLOCK,) in GPU_LAUNCHES["tsp/tsp_moves.cu", k] for k in ("tsp_2opt_cand", "tsp_oropt_cand",
                                                                         "tsp_apply_best", "tsp_positions",
                                                                         "tsp_best_at", "tsp_apply_disjoint"))
    assert default_block(SimpleNamespace(is_gpu=False), 100) == (1, 1)


@pytest.mark.gpusim
def test_launch_limits_of_an_h200():
    """The check itself: what an H200 runs and what it refuses."""
    report = "\n".join([
        "ptxas info    : Compiling entry function 'wide' for 'sm_90'",
        "ptxas info    : Function properties for wide",
        "    8 bytes stack frame, 4 bytes spill stores, 4 bytes spill loads",
        "ptxas info    : Used 72 registers, used 1 barriers, 512 bytes smem",
        "ptxas info    : Compiling entry function 'lean' for 'sm_90'",
        "ptxas info    : Function properties for lean",
        "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads",
        "ptxas info    : Used 32 registers, used 0 barriers",
    ])
    res = sm90.resources(report)
    assert res == {"wide": sm90.KernelResources(72, 4, 4, 8, 512), "lean": sm90.KernelResources(32, 0, 0, 0, 0)}
    wide, lean = res["wide"], res["lean"]
    assert sm90.blocks_per_sm(wide, 1024) == 0  # 72 x 1024 > 65,536 registers
    assert sm90.launch_problems("wide", wide, 1024, [(1024,)]) and not sm90.launch_problems("wide", wide, 1024,
                                                                                               [(512,)])
    assert sm90.launch_problems("lean", lean, 256, [(32, 16)])  # beyond its launch bounds
    assert sm90.blocks_per_sm(lean, 1024) == 2 and sm90.occupancy(lean, 1024) == 1.0
    assert sm90.blocks_per_sm(sm90.KernelResources(128, 0, 0, 0, 8704), 256) == 2  # the tabu kernel's bounds
    assert sm90.blocks_per_sm(lean, 1) == 32 and sm90.occupancy(lean, 1) == 0.5  # 32 one-warp blocks of 64 warps
