"""A user problem's class: its generated header, the contract checks (missing cost, misspelled
names, wrong signatures), compile errors with the snippet's own line numbers, data validation,
and pickling as its arrays (loky processes) without the generated source."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from perm_problems import (
    QAP_CACHED,
    QAP_COST,
    CachedQAP,
    TaillardQAP,
    Tardiness,
    UserQAP,
    random_qap_arrays,
    random_tardiness,
)

from metaheur.devices import gpu_devices
from metaheur.engine.user_source import contract_functions, device_functions
from metaheur.errors import MetaheurError


def _with_code(code: str, kind: str = "bad", base=UserQAP):
    cls = type(f"P_{kind}", (base,), {"kind": kind, "device_code": code})
    return cls(*random_qap_arrays(6, 1))


def test_the_header_declares_the_data_and_the_functions_present():
    pb = CachedQAP(*random_qap_arrays(5, 1))
    code = pb.user_code()
    assert code.functions == {"cost", "swap_delta", "prepare", "update_swap"}
    header = code.header
    assert "struct Data { int n; const int *a; const int *b; };" in header
    assert "#define MH_USER_HAS_UPDATE_SWAP 1" in header and "MH_USER_HAS_INSERT_ROW" not in header
    assert '#line 1 "<cqap problem>"' in header and "#define MH_SENSE (1)" in header
    source = code.source("engine/perm_eval.cu")
    names = [p.name for p in source.signatures["perm_cost"]]
    assert names == ["perms", "k", "n", "out", "mh_d_a", "mh_d_b"]


def test_signatures_are_read_without_parameter_names_or_comments():
    found = device_functions("/* __device__ ll swap_delta(int) { */\n__device__ __forceinline__ long long cost("
                             "const Data& d,const int* perm) { return 0; }")
    assert found == {"cost": ("ll", ("const Data&", "const int*"), 2)}


@pytest.mark.parametrize(("code", "message"), [
    ("__device__ ll costs(const Data &d, const int *p) { return 0; }",
     r"line 1: __device__ function 'costs' is not a contract function \(did you mean cost\?\)"),
    ("__device__ int helper(int x) { return x; }",
     r"defines no `__device__ ll cost\(const Data &d, const int \*perm\)`"),
    (QAP_COST + "__device__ void insert_row(const Data &d, const int *p, int i, ll *out, ll *work) {}",
     r"line \d+: insert_row must be `__device__ void insert_row\(const Data&, const int\*, const cache_t\*, int, "
     r"ll\*, ll\*\)`"),
    (QAP_COST + "\n__device__ ll swap_dleta(const Data &d, const int *p, const ll *c, int i, int j) { return 0; }",
     rf"line {QAP_COST.count(chr(10)) + 2}: __device__ function 'swap_dleta' is not a contract function "
     r"\(did you mean swap_delta\?\)"),
])
def test_contract_mistakes_are_one_line_errors(code, message):
    with pytest.raises(MetaheurError, match=message):
        contract_functions("bad", code)


def test_a_helper_with_the_problems_prefix_is_its_own():
    """The message's advice holds: cvrp_delta is near swap_delta, but named with the kind's prefix."""
    code = QAP_COST + "\n__device__ ll bad_delta(const Data &d, int i) { return i; }"
    assert contract_functions("bad", code) == {"cost"}
    with pytest.raises(MetaheurError, match="'bad_delta' is not a contract function"):
        contract_functions("other", code)


def test_a_cache_needs_prepare_and_hooks_need_a_cache():
    class NoPrepare(UserQAP):
        kind = "noprep"
        cache_size = 4

    with pytest.raises(MetaheurError, match="cache_size is 4 but device_code defines no prepare"):
        NoPrepare(*random_qap_arrays(4, 1)).user_code()

    class NoCache(CachedQAP):
        kind = "nocache"
        cache_size = 0

    with pytest.raises(MetaheurError, match="defines prepare, update_swap but cache_size is 0"):
        NoCache(*random_qap_arrays(4, 1)).user_code()


def test_a_snippet_that_does_not_compile_reports_its_own_line_on_the_cpu():
    pb = _with_code("\n__device__ ll cost(const Data &d, const int *p) {\n  return undefined_thing;\n}\n", "nocomp")
    with pytest.raises(MetaheurError, match=r"CPU build\): <nocomp problem>:3: .*undefined_thing") as err:
        pb.user_code().module("engine/perm_eval.cu", "cpu")
    assert "Traceback" not in str(err.value) and len(str(err.value).splitlines()) <= 3


@pytest.mark.gpusim
def test_a_snippet_that_does_not_compile_reports_its_own_line_on_a_simulated_gpu(monkeypatch):
    monkeypatch.setenv("METAHEUR_SIMULATED_GPUS", "1")
    gpu_devices.cache_clear()
    try:
        pb = _with_code("__device__ ll cost(const Data &d, const int *p) {\n\n  return d.missing;\n}\n", "gpucomp")
        with pytest.raises(MetaheurError, match=r"GPU build\).*<gpucomp problem>:3: .*missing"):
            pb.user_code().module("engine/perm_search.cu", "cuda:0")
    finally:
        monkeypatch.undo()
        gpu_devices.cache_clear()


def _tardiness_with(data: dict, bound=None):
    class Custom(Tardiness):
        kind = "custom"

        def data(self):
            return data

        def value_bound(self):
            return bound

    return Custom([1, 2, 3], [1, 1, 1], [0, 0, 0])


@pytest.mark.parametrize(("data", "message"), [
    ({"p": np.ones(3)}, r"data field 'p': dtype float64 is not an integer type"),
    ({"p": np.ones(3, np.uint64)}, r"dtype uint64 is not an integer type"),
    ({"for": np.ones(3, np.int32)}, r"data field 'for' is not usable as a C identifier"),
    ({"n": 3}, r"data field 'n' is not usable"),
    ({"p": True}, r"a bool scalar"),
    ({"m": 2**63}, r"does not fit int64"),
])
def test_bad_data_is_refused_in_one_line(data, message):
    with pytest.raises(MetaheurError, match=message):
        _tardiness_with(data).device_data()


def test_small_integer_types_are_widened_and_copied_read_only():
    src = np.array([[1, 2], [3, 4]], dtype=np.uint8)[:, ::-1]
    fields, arrays = _tardiness_with({"p": src, "flag": np.array([True, False]), "m": np.int16(7)}).device_data()
    assert [(f.name, f.dtype, f.array) for f in fields] == [("p", "int32", True), ("flag", "int32", True),
                                                           ("m", "int64", False)]
    assert arrays["p"].flags.c_contiguous and not arrays["p"].flags.writeable
    assert arrays["p"].tolist() == [[2, 1], [4, 3]] and arrays["m"] == 7


def test_a_value_bound_that_could_overflow_is_refused():
    with pytest.raises(MetaheurError, match="not below 2\\^62"):
        _tardiness_with({"p": np.ones(3, np.int32)}, bound=2**62).device_data()


def test_pickled_as_arrays_without_the_generated_code():
    pb = CachedQAP(*random_qap_arrays(6, 3))
    pb.user_code(), pb.device_data()
    blob = pickle.dumps(pb)
    assert b"update_swap" not in blob and b"struct Data" not in blob
    back = pickle.loads(blob)
    assert "_mh_code" not in back.__dict__ and back.fingerprint() == pb.fingerprint()
    assert back.user_code().functions == pb.user_code().functions


def _solve_in_worker(pb):
    from metaheur.search.perm_search import PermSearchBatch, PermSearchParams

    starts = np.array([np.arange(pb.n)[::-1]])
    res = PermSearchBatch(pb, "cpu", 1, PermSearchParams(method="ils")).run(starts, np.array([7], np.uint64), 3)
    return int(res.best_costs[0]), pb.value(res.best[0])


def test_a_user_problem_runs_in_loky_workers():
    joblib = pytest.importorskip("joblib")
    pb = random_tardiness(9, 4)
    got = joblib.Parallel(n_jobs=2, backend="loky")(joblib.delayed(_solve_in_worker)(pb) for _ in range(2))
    assert got[0] == got[1] == _solve_in_worker(pb)
    assert got[0][0] == got[0][1]


def test_an_int32_cache_is_typed_and_its_bound_checked():
    """cache_t is the C type of cache_dtype (written either way); an int32 cache whose declared
    bound is not below 2^31, or that has no bound, is refused in one line."""
    code = QAP_CACHED.replace("ll *cache", "int *cache")
    assert "update_swap" in contract_functions("q32", code, "int32")
    with pytest.raises(MetaheurError, match=r"swap_delta must be `__device__ ll swap_delta\(const Data&, const "
                                            r"int\*, const cache_t\*, int, int\)`, got .*const int\*, int, int"):
        contract_functions("q32", code)
    a, b = random_qap_arrays(8, 1)
    assert "typedef int cache_t;" in TaillardQAP(a, b, cache_dtype="int32").user_code().header
    assert "typedef ll cache_t;" in TaillardQAP(a, b).user_code().header
    with pytest.raises(MetaheurError, match=r"tqap problem: cache_dtype int32 needs delta_bound\(\) below "
                                            r"2\^31 \(cache entries could overflow 32 bits\), got \d+; use "
                                            r"cache_dtype int64"):
        TaillardQAP(a * 2**12, b * 2**12, cache_dtype="int32").user_code()

    class Unbounded(TaillardQAP):
        def value_bound(self):
            return None

        def delta_bound(self):
            return None

    with pytest.raises(MetaheurError, match=r"needs delta_bound\(\) below 2\^31 .*got None"):
        Unbounded(a, b, cache_dtype="int32").user_code()
    with pytest.raises(MetaheurError, match=r"cache_dtype must be 'int64' or 'int32', got 'int16'"):
        TaillardQAP(a, b, cache_dtype="int16").user_code()


@pytest.mark.parametrize("kind", ["my-problem", "n", "mh_x", "class", "2opt"])
def test_a_kind_that_is_no_c_identifier_is_refused_when_the_class_is_created(kind):
    """``kind`` names the kernels' symbols: a class with one that cannot be a C identifier is
    refused at once, in one line (before, only check_problem or the first compile found it)."""
    from metaheur.problem.permutation import PermutationProblem

    with pytest.raises(MetaheurError, match=f"problem kind {kind!r} is not usable as a C identifier"):
        type("Bad", (PermutationProblem,), {"kind": kind})
