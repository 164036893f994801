"""Kernel constants come from one source: Python reads the ``MH_*`` defines of the kernel files
(statistics columns, capacities, limits), and the layouts it cannot read (scratch sizes written
as expressions) are checked against the kernel's text."""

from __future__ import annotations

import dataclasses
import re

import pytest
from qap_reference import QAP_MOVES

from metaheur.engine.source import kernel_constant, kernel_constants, kernel_dir, launch_bounds
from metaheur.problems.qap import device_data as ops_qap
from metaheur.problems.qap import tabu as qap_tabu
from metaheur.problems.tsp import eax as tsp_eax
from metaheur.problems.tsp import ils as tsp_ils
from metaheur.problems.tsp import params as tsp_params


def test_defines_are_parsed(write_kernel):
    path = write_kernel("consts.cu", "\n".join([
        "#define MH_A 7 /* a comment */",
        "#define MH_B (1 << 29)",
        "#define MH_C (1LL << 61)",
        "#ifdef X", "#define MH_D 1", "#else", "#define MH_D 2", "#endif",  # depends on the build: left out
        "#define MH_E(n) (3 * (n))", "#define OTHER 5", "#define MH_F MH_A",
    ]) + "\n")
    assert kernel_constants(path) == {"MH_A": 7, "MH_B": 2**29, "MH_C": 2**61}
    with pytest.raises(KeyError, match="MH_D"):
        kernel_constant(path, "MH_D")


def test_launch_bounds_are_parsed():
    text = "\n".join([
        "#define MH_WIDE 512",
        'extern "C" __global__ void __launch_bounds__(256, 2) a(int *x) {}',
        'extern "C" __global__ void __launch_bounds__(MH_WIDE) b(int *x) {}',
        'extern "C" __global__ __launch_bounds__(128) void c(int *x) {}',
        'extern "C" __global__ void d(int *x) {}',
    ])
    assert launch_bounds(text) == {"a": 256, "b": 512, "c": 128}


def _columns(source: str, prefix: str, count: str) -> list[str]:
    """The column defines of a statistics row (those written before its count): they number
    0 .. count - 1 in the order written."""
    consts = kernel_constants(source)
    names = list(consts)
    cols = [k for k in names[:names.index(count)] if k.startswith(prefix)]
    assert [consts[k] for k in cols] == list(range(consts[count])), source
    return [k.removeprefix(prefix) for k in cols]


def test_statistics_columns_are_the_kernels():
    assert _columns("tsp/tsp_ils.cu", "MH_ILS_", "MH_ILS_NSTATS") == [
        "COST", "KICKS", "CTR", "BETTER", "MOVES", "BEST", "PENDING"]
    ils = [tsp_ils.COST, tsp_ils.KICKS, tsp_ils.CTR, tsp_ils.BETTER, tsp_ils.MOVES, tsp_ils.BEST, tsp_ils.PENDING]
    assert ils == list(range(tsp_ils.N_STATS))
    assert _columns("qap/qap_tabu.cu", "MH_TS_", "MH_TS_NSTATS") == [
        "COST", "BEST", "ITER", "BASE", "CTR", "TENURE", "BEST_ITER"]
    tabu = [qap_tabu.COST, qap_tabu.BEST, qap_tabu.ITER, qap_tabu.BASE, qap_tabu.CTR, qap_tabu.TENURE,
            qap_tabu.BEST_ITER]
    assert tabu == list(range(qap_tabu.N_STATS))
    fields = [f.name for f in dataclasses.fields(tsp_eax.EAXInfo)]
    assert fields == list(tsp_eax.INFO_FIELDS) == [c.lower() for c in _columns("tsp/tsp_eax.cu", "MH_EAX_",
                                                                               "MH_EAX_NINFO")]
    assert len(fields) == tsp_eax.N_INFO


def test_limits_are_the_kernels():
    assert kernel_constant("tsp/tsp_ils.cu", "MH_ILS_LOG") == tsp_ils.LOG_CAPACITY
    assert kernel_constant("tsp/tsp_ils_lk.cuh", "MH_LK3_DEPTH") >= tsp_params.MAX_LK_DEPTH
    assert kernel_constant("tsp/tsp_ils_lk.cuh", "MH_LK_BREADTH") == tsp_params.MAX_LK_BREADTH
    assert kernel_constant("tsp/tsp_knn.cu", "MH_KNN_MAX") == tsp_params.MAX_NEIGHBOURS
    assert qap_tabu.ENTRY_LIMIT == kernel_constant("qap/qap_tabu.cu", "MH_TS_ENTRY_LIMIT") == 2**29
    assert kernel_constant("qap/qap_tabu.cu", "MH_TS_DELTA32_LIMIT") == ops_qap.DELTA32_LIMIT
    assert kernel_constant("qap/qap_tabu.cu", "MH_TS_DELTA_LIMIT") == ops_qap.DELTA_LIMIT == 2**60
    assert kernel_constant(QAP_MOVES, "MH_QAP_CATEGORY") == 2 * ops_qap.DELTA_LIMIT


def _affine(expr: str, n: int, consts: dict[str, int]) -> int:
    """An expression of the kernel text such as ``3LL * n + 2 * MH_ILS_LOG + 3`` evaluated at n."""
    assert re.fullmatch(r"[\w\s*+()]+", expr), expr
    names = {**consts, "n": n}
    return eval(re.sub(r"(\d+)LL", r"\1", expr), {"__builtins__": {}}, names)  # digits, names, + and *


@pytest.mark.parametrize("n", [5, 1000])
def test_scratch_sizes_are_the_kernels(n):
    ils = (kernel_dir() / "tsp/tsp_ils.cu").read_text()
    expr = re.search(r"int \*w = work \+ sol \* \((.+)\);", ils).group(1)
    assert tsp_ils.work_ints(n) == _affine(expr, n, kernel_constants("tsp/tsp_ils.cu"))
    eax = (kernel_dir() / "tsp/tsp_eax.cu").read_text()
    expr = re.search(r"#define MH_EAX_WORK\(n\) \((.+?)\)\s*/\*", eax).group(1)
    assert tsp_eax.work_ints(n) == _affine(expr, n, {})
