"""The kernel loader: argument checks of kernel calls, compile errors, the missing-compiler error,
the disk cache, header inlining and signature parsing (metaheur/engine/module.py, source.py,
cpu_build.py)."""

from __future__ import annotations

import re

import numpy as np
import pytest
from qap_reference import QAP_MOVES

from metaheur.devices import Device
from metaheur.engine import compile_seconds_total, cpu_build, load_module
from metaheur.engine import module as engine_module
from metaheur.engine.source import kernel_dir, load_source, parse_signatures
from metaheur.errors import MetaheurError

PROBE = r"""
#include "mh_common.cuh"
/* every scalar type the loader supports, and a const and a non-const pointer */
extern "C" __global__ void probe(const int *src, long long *dst, int n, unsigned int u, long long big,
                                 unsigned char c, double x, float f) {
  if (mh_block() >= 2) return; /* dst holds two blocks' results; launch-shape tests may run more */
  for (int k = threadIdx.x; k < n; k += blockDim.x)
    dst[mh_block() * n + k] = (long long)src[k] * 1000 + (long long)u + big + c + (long long)(x * 10) + (long long)f;
}
"""


@pytest.fixture
def isolated_cache(tmp_path, monkeypatch):
    """A private disk cache and an empty per-process module cache for one test."""
    monkeypatch.setenv("METAHEUR_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(engine_module, "_MODULES", {})
    return tmp_path / "cache"


@pytest.fixture(scope="module")
def probe(tmp_path_factory):
    path = tmp_path_factory.mktemp("probe") / "probe.cu"
    path.write_text(PROBE)
    return load_module(str(path), "cpu").kernel("probe")


def _args(**change):
    args = {"src": np.arange(4, dtype=np.int32), "dst": np.zeros((2, 4), np.int64), "n": 4, "u": 7, "big": 2**40,
            "c": 3, "x": 1.5, "f": 2.0}
    args.update(change)
    return list(args.values())


def test_probe_runs_and_converts_scalars(probe):
    args = _args()
    probe(2, 1, args)
    expected = np.arange(4) * 1000 + 7 + 2**40 + 3 + 15 + 2
    assert np.array_equal(args[1], np.stack([expected, expected]))
    # a numpy integer scalar and an int for a double parameter are accepted too
    args = _args(n=np.int64(4), x=2)
    probe(1, 1, args)
    assert args[1][0, 0] == 7 + 2**40 + 3 + 20 + 2


def test_wrong_argument_count(probe):
    with pytest.raises(TypeError, match=r"takes 8 arguments .*got 7"):
        probe(1, 1, _args()[:-1])
    with pytest.raises(TypeError, match="got 9"):
        probe(1, 1, [*_args(), 1])


@pytest.mark.parametrize(("which", "value", "error", "pattern"), [
    ("src", np.arange(4, dtype=np.int64), TypeError, r"src .*needs dtype int32, got int64"),
    ("src", np.arange(4, dtype=np.float32), TypeError, "needs dtype int32"),
    ("dst", np.zeros((2, 4), np.int32), TypeError, "needs dtype int64"),
    ("src", [0, 1, 2, 3], TypeError, "needs a numpy array"),
    ("n", 4.0, TypeError, r"argument n \(int\) needs an integer, got float"),
    ("n", np.float64(4), TypeError, "needs an integer"),
    ("n", True, TypeError, "needs an integer, got bool"),
    ("n", np.bool_(True), TypeError, "needs an integer"),
    ("n", "4", TypeError, "needs an integer"),
    ("n", 2**31, OverflowError, r"n = 2147483648 does not fit int"),
    ("n", -(2**31) - 1, OverflowError, "does not fit int"),
    ("u", -1, OverflowError, "does not fit unsigned int"),
    ("u", 2**32, OverflowError, "does not fit unsigned int"),
    ("c", 256, OverflowError, "does not fit unsigned char"),
    ("big", 2**63, OverflowError, "does not fit long long"),
    ("x", True, TypeError, r"argument x \(double\) needs a number, got bool"),
    ("x", "1.5", TypeError, "needs a number"),
    ("x", np.zeros(1), TypeError, "needs a number"),
    ("n", np.zeros(1, np.int32), TypeError, "needs an integer"),
])
def test_bad_argument(probe, which, value, error, pattern):
    args = _args(**{which: value})
    with pytest.raises(error, match=pattern):
        probe(1, 1, args)
    assert not args[1].any(), "nothing may run when an argument is rejected"


def test_limits_of_int32_are_accepted(probe):
    probe(1, 1, _args(n=0, u=2**32 - 1, big=-(2**63), c=255))  # n = 0: no work, but the values are legal


def test_read_only_array_for_non_const_pointer(probe):
    dst = np.zeros((2, 4), np.int64)
    dst.setflags(write=False)
    with pytest.raises(ValueError, match="dst is written by the kernel but is read-only"):
        probe(1, 1, _args(dst=dst))
    src = np.arange(4, dtype=np.int32)
    src.setflags(write=False)  # const pointer: a read-only array is fine
    args = _args(src=src)
    probe(1, 1, args)
    assert args[1][0, 3] == 3000 + 7 + 2**40 + 3 + 15 + 2


def test_non_contiguous_array(probe):
    src = np.arange(8, dtype=np.int32)[::2]
    with pytest.raises(ValueError, match="src must be C-contiguous"):
        probe(1, 1, _args(src=src))
    dst = np.zeros((4, 2), np.int64).T  # right shape, Fortran order
    with pytest.raises(ValueError, match="dst must be C-contiguous"):
        probe(1, 1, _args(dst=dst))


@pytest.mark.parametrize("grid", [0, -1, (), (1, 1, 1, 1), (2, 0), 1.0, "2", (1.0,), None])
def test_bad_grid(probe, grid):
    with pytest.raises(MetaheurError, match="grid must be a positive int or a tuple of 1-3 positive ints"):
        probe(grid, 1, _args())


@pytest.mark.parametrize("block", [0, (0, 1), (1, 2, 3, 4), 2.5, (32, -1)])
def test_bad_block(probe, block):
    with pytest.raises(MetaheurError, match="block must be"):
        probe(1, block, _args())


@pytest.mark.parametrize("block", [1025, (33, 32), (8, 8, 17), (1024, 2)])
def test_block_over_1024_threads(probe, block):
    with pytest.raises(MetaheurError, match="1024"):
        probe(1, block, _args())


@pytest.mark.gpusim
def test_block_within_launch_bounds(write_kernel):
    """A kernel's __launch_bounds__ caps its blocks on every device (a GPU refuses a larger block)."""
    path = write_kernel("bounded.cu", '#define MH_WIDE 96\n'
                        'extern "C" __global__ void __launch_bounds__(MH_WIDE, 2) bounded(int *out) { out[0] = 1; }\n'
                        'extern "C" __global__ void free_width(int *out) { out[0] = 2; }\n')
    out = np.zeros(1, np.int32)
    for sim in (False, True):
        module = load_module(path, "cpu", sim=sim)
        assert module.kernel("bounded").max_threads == 96 and module.kernel("free_width").max_threads == 1024
        module.kernel("bounded")(1, (32, 3), (out,))
        too_wide = r"at most 96 threads for this kernel \(its __launch_bounds__\), got \(32, 4, 1\)"
        with pytest.raises(MetaheurError, match=too_wide):
            module.kernel("bounded")(1, (32, 4), (out,))
        module.kernel("free_width")(1, 1024, (out,))
    assert load_module("qap/qap_tabu.cu", "cpu").kernel("qap_tabu_run").max_threads == 256


def test_grid_and_block_shapes_accepted(probe):
    for grid, block in [(2, 1), ((2,), (1024,)), ((1, 2), (32, 32)), ((2, 1, 1), (4, 4, 64)),
                        (np.int64(2), np.int32(3))]:
        args = _args()
        probe(grid, block, args)
        assert args[1][1, 3] == 3000 + 7 + 2**40 + 3 + 15 + 2


@pytest.mark.parametrize(("grid", "block"), [
    ((2**32,), 1),        # wraps to 0 blocks in the CPU launcher: nothing would run
    ((2**32 + 2,), 1),    # wraps to 2 blocks
    ((1, 65536), 1),      # CUDA: gridDim.y, gridDim.z <= 65535
    (True, 1),            # a bool is not a size
    (1, (1, 1, 128)),     # CUDA: blockDim.z <= 64
])
def test_grid_and_block_beyond_cuda_limits(probe, grid, block):
    """Launch shapes a GPU rejects must be rejected on the CPU too (never silently truncated)."""
    with pytest.raises(MetaheurError):
        probe(grid, block, _args())


def test_no_such_kernel(write_kernel):
    module = load_module(write_kernel("probe.cu", PROBE), "cpu")
    with pytest.raises(MetaheurError, match="no kernel 'nope' in"):
        module.kernel("nope")
    assert module["probe"] is module.kernel("probe")


def test_sim_is_cpu_only():
    gpu = Device("cuda:0", "cuda", 0, "a GPU that is never used", 1, None)
    with pytest.raises(MetaheurError, match="simulation is a CPU build"):
        load_module(QAP_MOVES, gpu, sim=True)


def test_unknown_source():
    with pytest.raises(MetaheurError, match=r"no kernel source 'nope\.cu'"):
        load_module("nope.cu", "cpu")


BROKEN = """#include "mh_common.cuh"
extern "C" __global__ void broken(int *out, int n) {
  int k = threadIdx.x;
  out[k] = undeclared_name + n;
}
"""


def test_compile_error_names_file_and_line(tmp_path, isolated_cache):
    path = tmp_path / "broken.cu"
    path.write_text(BROKEN)
    with pytest.raises(MetaheurError) as info:
        load_module(str(path), "cpu")
    message = str(info.value)
    assert "kernel compile failed (broken.cu, CPU build)" in message
    assert f"{path}:4:" in message, message  # line 4 of the file, despite the inlined header
    assert "undeclared_name" in message


def test_compile_error_in_a_header_names_the_header(tmp_path, isolated_cache):
    (tmp_path / "bad_header.cuh").write_text("/* line 1 */\n__device__ int oops(void) { return missing_symbol; }\n")
    path = tmp_path / "uses_header.cu"
    path.write_text('#include "bad_header.cuh"\nextern "C" __global__ void k(int *o) { o[0] = oops(); }\n')
    with pytest.raises(MetaheurError, match=re.escape(f"{tmp_path / 'bad_header.cuh'}:2:")):
        load_module(str(path), "cpu")


@pytest.fixture
def no_compiler(monkeypatch, isolated_cache):
    monkeypatch.setenv("CC", "metaheur-no-such-compiler")
    cpu_build.find_compiler.cache_clear()
    yield
    monkeypatch.undo()
    cpu_build.find_compiler.cache_clear()


def test_no_c_compiler_is_a_clear_error(no_compiler):
    assert cpu_build.find_compiler() is None
    with pytest.raises(MetaheurError, match=r"no C compiler found .*the CPU build of the kernels needs one"):
        load_module(QAP_MOVES, "cpu")


def test_disk_cache_is_reused(isolated_cache):
    source = load_source("tsp/tsp_knn.cu")
    first = cpu_build.build(source, ("MH_TEST_CACHE=1",), False)
    second = cpu_build.build(source, ("MH_TEST_CACHE=1",), False)
    assert not first.cached and second.cached
    assert first.path == second.path and first.path.parent == isolated_cache / "kernels"
    assert [p.name for p in isolated_cache.joinpath("kernels").iterdir()] == [first.path.name]
    # other defines, or the simulation, are another library
    third = cpu_build.build(source, ("MH_TEST_CACHE=2",), False)
    fourth = cpu_build.build(source, ("MH_TEST_CACHE=1",), True)
    assert not third.cached and not fourth.cached
    assert len({first.path, third.path, fourth.path}) == 3


def test_load_module_is_cached_per_process(isolated_cache):
    one = load_module("tsp/tsp_moves.cu", "cpu", {"MH_TSP_WEIGHT": 1})
    assert load_module("tsp/tsp_moves.cu", "cpu", ["MH_TSP_WEIGHT=1"]) is one
    assert load_module("tsp/tsp_moves.cu", "cpu", {"MH_TSP_WEIGHT": 2}) is not one
    assert load_module("tsp/tsp_moves.cu", "cpu", {"MH_TSP_WEIGHT": 1}, sim=True) is not one


def test_compile_seconds_total_increases(isolated_cache):
    before = compile_seconds_total()
    module = load_module(QAP_MOVES, "cpu", {"MH_TEST_SECONDS": 1})
    assert module.compile_seconds > 0
    assert compile_seconds_total() == pytest.approx(before + module.compile_seconds)


def test_headers_are_inlined_with_line_directives():
    source = load_source("tsp/tsp_moves.cu")
    text = source.text
    project_headers = sorted(p.name for p in kernel_dir().glob("*/*.cuh"))
    for header in project_headers:
        assert f'#include "{header}"' not in text
    # each header it uses is inlined once, announced by a #line directive, and the .cu resumes after
    for header in ("engine/mh_common.cuh", "tsp/tsp_moves.cuh", "tsp/tsp_dist.cuh"):
        assert text.count(f'#line 1 "kernels/{header}"') == 1
    assert text.count("#define MH_COMMON_CUH") == 1
    lines = text.splitlines()
    original = (kernel_dir() / "tsp/tsp_moves.cu").read_text().splitlines()
    # after a '#line N "kernels/tsp/tsp_moves.cu"' directive, the next line is line N of the file
    checked = 0
    for k, line in enumerate(lines):
        m = re.match(r'#line (\d+) "kernels/tsp/tsp_moves.cu"', line)
        if m and k + 1 < len(lines):
            line_n = original[int(m.group(1)) - 1]
            if lines[k + 1].startswith("#line 1 "):  # line N is an #include, replaced by the header
                assert line_n.startswith("#include")
            else:
                assert lines[k + 1] == line_n
            checked += 1
    assert checked >= 2
    assert set(source.signatures) == {"tsp_2opt_full", "tsp_oropt_full", "tsp_2opt_cand", "tsp_oropt_cand",
                                      "tsp_positions", "tsp_apply_best", "tsp_best_at", "tsp_apply_disjoint",
                                      "tsp_lengths", "tsp_keep_better", "tsp_cache_tour", "tsp_2opt_cached",
                                      "tsp_oropt_cached", "tsp_best_of_parts", "tsp_dlb_best_at", "tsp_dlb_apply"}


def test_test_kernels_find_headers_next_to_them_first(tmp_path):
    (tmp_path / "local.cuh").write_text("#define LOCAL_VALUE 41\n")
    path = tmp_path / "k.cu"
    path.write_text('#include "local.cuh"\n#include "mh_rng.cuh"\nextern "C" __global__ void k(int *o) '
                    "{ o[0] = LOCAL_VALUE + 1; }\n")
    source = load_source(str(path))
    assert f'#line 1 "{tmp_path / "local.cuh"}"' in source.text
    assert '#line 1 "kernels/engine/mh_rng.cuh"' in source.text
    out = np.zeros(1, np.int32)
    load_module(str(path), "cpu").kernel("k")(1, 1, (out,))
    assert out[0] == 42


SAMPLE = r'''
/* not a kernel: */ __device__ int helper(int x) { return x; }
extern "C" __global__ void plain(void) {}
extern "C" __global__ void many(const int *__restrict__ a, long long* out, unsigned int u, unsigned n2,
                                const double * xy, float f, unsigned char c, short s, unsigned short us,
                                char ch, signed char sc, long long int lli, unsigned long long int ulli,
                                unsigned long long seed) {}
extern "C" __global__ __launch_bounds__(256) void bounded(int n) {}
extern "C"
__global__
void split_lines(
    int *x,
    const unsigned long long *k) {}
'''


def test_parse_signatures():
    sigs = parse_signatures(SAMPLE)
    assert list(sigs) == ["plain", "many", "bounded", "split_lines"]
    assert sigs["plain"] == ()
    many = {p.name: (p.dtype, p.pointer, p.const) for p in sigs["many"]}
    assert many == {
        "a": ("int32", True, True), "out": ("int64", True, False), "u": ("uint32", False, False),
        "n2": ("uint32", False, False), "xy": ("float64", True, True), "f": ("float32", False, False),
        "c": ("uint8", False, False), "s": ("int16", False, False), "us": ("uint16", False, False),
        "ch": ("int8", False, False), "sc": ("int8", False, False), "lli": ("int64", False, False),
        "ulli": ("uint64", False, False), "seed": ("uint64", False, False),
    }
    assert [p.describe() for p in sigs["split_lines"]] == ["int* x", "const unsigned long long* k"]
    assert [(p.name, p.dtype) for p in sigs["bounded"]] == [("n", "int32")]


def test_parse_signatures_launch_bounds_after_void():
    """CUDA's documented placement is ``__global__ void __launch_bounds__(N) name(...)``."""
    sigs = parse_signatures('extern "C" __global__ void __launch_bounds__(128, 4) tuned(int *x, int n) {}')
    assert list(sigs) == ["tuned"]
    assert [(p.name, p.dtype, p.pointer) for p in sigs["tuned"]] == [("x", "int32", True), ("n", "int32", False)]


@pytest.mark.parametrize("decl", ["int **pp", "long n", "size_t n", "bool flag", "struct s *p", "float4 v"])
def test_parse_signatures_rejects_unsupported_types(decl):
    with pytest.raises(MetaheurError, match=r"kernel k: parameter"):
        parse_signatures(f'extern "C" __global__ void k({decl}) {{}}')
