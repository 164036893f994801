"""A user's mistakes in their own problem module (issue 70, item 4): every one is one line and
status 2 from the command line, a MetaheurError (an InputFormatError for a reader) from Python,
before any search; and every --method and --moves combination runs or is refused in one line."""

from __future__ import annotations

import sys

import numpy as np
import pytest
from cliutil import cpu_runner, user_error
from perm_problems import random_tardiness

from metaheur import Result, check_problem, load_instance, solve
from metaheur import solver as solver_module
from metaheur.cli import cli
from metaheur.engine.user_source import MOVES
from metaheur.errors import InputFormatError, MetaheurError
from metaheur.islands.params import IslandParams
from metaheur.result import IslandRow
from metaheur.search.perm_defaults import RunBudget
from metaheur.search.perm_search import METHODS, PermSearchParams

MODULE = "mistakes_minla"
#: Minimum linear arrangement as a user writes it from docs/problems.md: a cost, and a cache of
#: each element's position that prepare fills; then one class per kind of mistake.
SOURCE = r'''
import numpy as np
import metaheur
from metaheur.problems import ProblemFormats

CODE = r"""
__device__ ll cost(const Data &d, const int *perm) {
  ll c = 0;
  for (int e = 0; e < d.m; ++e) {
    int a = 0, b = 0;
    for (int q = 0; q < d.n; ++q) { if (perm[q] == d.u[e]) a = q; if (perm[q] == d.v[e]) b = q; }
    c += a > b ? a - b : b - a;
  }
  return c;
}
__device__ void prepare(const Data &d, const int *perm, ll *cache, ll *work) {
  for (int q = mh_tid(); q < d.n; q += mh_nthreads()) cache[perm[q]] = q;
}
"""


def numbers(path):
    return np.array(open(path).read().split(), dtype=np.int64)


def read_mla(path, cls=None):
    """n, m, then m edges u v."""
    a = numbers(path)
    n, m = int(a[0]), int(a[1])
    return (cls or MinLA)(n, a[2:2 + 2 * m].reshape(m, 2), source=str(path))


class MinLA(metaheur.PermutationProblem):
    kind = "mistakes"
    moves = ("swap", "insert")
    device_code = CODE
    cache_size = property(lambda self: self.n)
    formats = ProblemFormats(extensions=(".mla",), read=lambda path: read_mla(path, None))

    def __init__(self, n, edges, name="minla", source=None):
        self.edges = np.asarray(edges, dtype=np.int64)
        super().__init__(name=name, n=n, source=source)

    def data(self):
        return {"m": len(self.edges), "u": self.edges[:, 0].astype(np.int32), "v": self.edges[:, 1].astype(np.int32)}

    def evaluate(self, perms):
        pos = np.argsort(np.asarray(perms), axis=1)
        return np.abs(pos[:, self.edges[:, 0]] - pos[:, self.edges[:, 1]]).sum(axis=1)


def own(cls):
    """The class reads its own instances (what a user's subclass of MinLA would write)."""
    cls.formats = ProblemFormats(extensions=(".mla",), read=lambda path: read_mla(path, cls))
    return cls


def raising(exc):
    def read(path):
        raise exc
    return read


class ReaderValueError(MinLA):
    formats = ProblemFormats(extensions=(".mla",), read=lambda path: int(open(path).read()))


class ReaderIndexError(MinLA):
    formats = ProblemFormats(extensions=(".mla",), read=lambda path: numbers(path)[99])


class ReaderKeyError(MinLA):
    formats = ProblemFormats(extensions=(".mla",), read=lambda path: {}["n"])


class ReaderUnicodeError(MinLA):
    formats = ProblemFormats(extensions=(".mla",), read=lambda path: b"\xff".decode())


class WrongClass(MinLA):  # inherits MinLA's reader, which returns a MinLA
    pass


@own
class InitRaises(MinLA):
    def __init__(self, n, edges, name="minla", source=None):
        raise RuntimeError("no edges given")


@own
class EvaluateRaises(MinLA):
    def evaluate(self, perms):
        return 1 // 0


@own
class EvaluateShape(MinLA):
    def evaluate(self, perms):
        return super().evaluate(perms)[:, None]


@own
class EvaluateFloats(MinLA):
    def evaluate(self, perms):
        return super().evaluate(perms) / 2


@own
class NoMoves(MinLA):
    moves = ()


@own
class NoMovesNumpy(MinLA):
    moves = ()
    device_code = None
    cache_size = 0


@own
class CacheTooSmall(MinLA):
    cache_size = property(lambda self: self.n - 3)
'''

#: class -> what its one line says (the reader's exceptions: the type the docs name, and the others)
MISTAKES = {
    "ReaderValueError": "the reader ReaderValueError.<lambda> of mistakes_minla:ReaderValueError cannot read it: "
                        "ValueError",
    "ReaderIndexError": "cannot read it: IndexError",
    "ReaderKeyError": "cannot read it: KeyError",
    "ReaderUnicodeError": "cannot read it: UnicodeDecodeError",
    "WrongClass": "returned a mistakes_minla.MinLA, not a WrongClass",
    "InitRaises": "cannot read it: RuntimeError: no edges given",
    "EvaluateRaises": "evaluate raised ZeroDivisionError",
    "EvaluateShape": "evaluate must return 4 integers (int64), got shape (4, 1)",
    "EvaluateFloats": "dtype float64",
    "NoMoves": "moves must be a tuple of one or more of",
    "NoMovesNumpy": "moves must be a tuple of one or more of",
    "CacheTooSmall": "the cache is too small: cache_size is 9 but prepare writes cache[11]; it needs cache_size >= 12",
}
READERS = [k for k in MISTAKES if k.startswith("Reader") or k in ("WrongClass", "InitRaises")]


@pytest.fixture
def user_module(tmp_path, monkeypatch):
    """The module and an instance (12 elements) in tmp_path, the working folder."""
    (tmp_path / f"{MODULE}.py").write_text(SOURCE)
    rng = np.random.default_rng(3)
    edges = [(i, j) for i in range(12) for j in range(i + 1, 12) if rng.random() < 0.3]
    (tmp_path / "g.mla").write_text(f"12 {len(edges)}\n" + "\n".join(f"{a} {b}" for a, b in edges) + "\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    sys.modules.pop(MODULE, None)


@pytest.mark.parametrize("mistake", MISTAKES)
def test_a_mistake_is_one_line_and_status_2_from_the_cli(mistake, user_module, monkeypatch):
    runner = cpu_runner(monkeypatch, user_module)
    done = runner.invoke(cli, ["solve", "--problem", f"{MODULE}:{mistake}", "g.mla", "-t", "5", "-q"])
    user_error(done, MISTAKES[mistake])


@pytest.mark.parametrize("mistake", MISTAKES)
def test_a_mistake_is_a_clear_exception_from_python(mistake, user_module):
    spec = f"{MODULE}:{mistake}"
    if mistake in READERS:
        with pytest.raises(InputFormatError) as info:
            load_instance(user_module / "g.mla", spec)
        assert str(info.value).startswith(f"{user_module / 'g.mla'}: ")
    else:
        with pytest.raises(MetaheurError) as info:
            solve(load_instance(user_module / "g.mla", spec), time_limit=5)
    assert MISTAKES[mistake] in str(info.value) and "\n" not in str(info.value)
    if mistake == "CacheTooSmall":  # check_problem says so too, before any mismatch
        with pytest.raises(MetaheurError, match="the cache is too small"):
            check_problem(load_instance(user_module / "g.mla", spec), devices=["cpu"])


def test_the_module_without_mistakes_runs_and_an_unknown_extension_names_problem(user_module, monkeypatch):
    runner = cpu_runner(monkeypatch, user_module)
    done = runner.invoke(cli, ["solve", "--problem", f"{MODULE}:MinLA", "g.mla", "-g", "1", "--sync", "-q",
                               "--strategy", "cpu-serial"])  # worker processes started earlier lack the module
    assert done.exit_code == 0, done.output
    user_error(runner.invoke(cli, ["solve", "g.mla", "-t", "1"]), "g.mla: no registered problem reads .mla files",
               "give --problem NAME or module:Class")


def refused(problem, method: str, move: str) -> bool:
    """The rule: a move the problem does not offer; the iterated greedy without
    partial_insert_row; the tabu search over reversals; any method on the numpy-only route."""
    code = problem.user_code()
    return (move not in problem.moves or (code is None and method != "auto")
            or (code is not None and method == "ig" and not code.has("partial_insert_row"))
            or (method == "tabu" and move == "reverse"))


def cost_only(problem):
    """``problem`` without its device functions but ``cost`` (what a first version has)."""
    clone = type(problem)(problem.p, problem.w, problem.due)
    clone.device_code = problem.device_code.split("__device__ void partial_insert_row")[0]
    return clone


def numpy_only(problem):
    clone = type(problem)(problem.p, problem.w, problem.due)
    clone.device_code = None
    return clone


PROBLEMS = {"insert rows and partial insertions": lambda: random_tardiness(10, 1), "cost and insert rows":
            lambda: cost_only(random_tardiness(10, 1)), "numpy only": lambda: numpy_only(random_tardiness(10, 1))}


@pytest.mark.parametrize("kind", PROBLEMS)
@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("move", MOVES)
def test_every_method_and_move_is_chosen_or_refused_in_one_line(kind, method, move):
    """Timed (the probe) as ``-t 1`` times it: the given method and move, or one line."""
    problem = PROBLEMS[kind]()
    params = IslandParams(problem.default_params().ga, (PermSearchParams(method=method, move=move),))
    if refused(problem, method, move):
        with pytest.raises(MetaheurError) as info:
            problem.choose_search(params, RunBudget(1.0, True))
        assert "\n" not in str(info.value)
        return
    tuned, _ = problem.choose_search(params, RunBudget(1.0, True))
    chosen = tuned.search(PermSearchParams)
    assert chosen.move == move and (method == "auto" or chosen.method == method)


@pytest.mark.parametrize("method", ["ig", "tabu"])
def test_a_method_the_problem_cannot_run_from_the_cli(method, user_module, monkeypatch):
    """The reported case: --method ig on a problem without partial_insert_row (a TypeError before)."""
    runner = cpu_runner(monkeypatch, user_module)
    done = runner.invoke(cli, ["solve", "--problem", f"{MODULE}:MinLA", "g.mla", "-t", "1", "--method", method,
                               "--moves", "reverse" if method == "tabu" else "insert"])
    user_error(done, "partial_insert_row" if method == "ig" else "offers the moves swap, insert, not 'reverse'")


def write_graph(path, n: int, degree: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    edges = {tuple(sorted(map(int, rng.choice(n, 2, replace=False)))) for _ in range(degree * n)}
    path.write_text(f"{n} {len(edges)}\n" + "\n".join(f"{a} {b}" for a, b in sorted(edges)) + "\n")


def test_a_given_method_too_slow_for_the_limit_is_refused_or_sized_down(user_module, monkeypatch):
    """Issue 70, item 3: a cost-only insert neighbourhood (a full scan n (n - 1) costs of O(m n))
    with --method tabu: at n = 150 and -t 1 one step a search is more than the limit (one line,
    status 2); at n = 50 and -t 3 the given 64 steps are sized down and the run has generations
    (or says it has none)."""
    runner = cpu_runner(monkeypatch, user_module)
    write_graph(user_module / "big.mla", 150, 2, 1)
    tabu = ["--problem", f"{MODULE}:MinLA", "--method", "tabu", "--moves", "insert", "--ls-budget", "64"]
    user_error(runner.invoke(cli, ["solve", "big.mla", "-t", "1", *tabu]),
               "the tabu search over insert moves cannot finish a first generation in 1 s")
    write_graph(user_module / "mid.mla", 50, 2, 1)
    done = runner.invoke(cli, ["solve", "mid.mla", "-t", "3", "-q", *tabu, "--json", "r.json", "--strategy",
                               "cpu-serial"])
    assert done.exit_code == 0, done.output
    result = Result.from_json(user_module / "r.json")
    assert result.search_choice["ls_budget"] < 64 and "sized down to" in result.search_choice["reason"]
    assert (result.generations == 0) == bool(result.warnings)


@pytest.mark.parametrize("islands", [["GA (ux)"], ["GA (ux)", "tabu search"], ["tabu search"]])
@pytest.mark.parametrize("done", [0, 3])
@pytest.mark.parametrize("stop", ["time_limit", "interrupted", "optimal", "target"])
def test_a_run_with_no_generation_says_so(islands, done, stop):
    """The result's warnings, its summary and its JSON say that no island finished a generation
    in a run its time stopped; one that reached its target or an optimum first says nothing."""
    rows = [IslandRow(island=k, device="cpu", generations=done if a.startswith("GA") else 0,
                      ls_iterations=0, best_cost=1, restarts=0, population=4, offspring=2, algorithm=a,
                      search_steps=done if not a.startswith("GA") else 0) for k, a in enumerate(islands)]
    warned = solver_module._no_generation(rows, stop)
    timed_out = done == 0 and stop in ("time_limit", "interrupted")
    assert bool(warned) == timed_out
    result = Result(instance="x", problem="X", n=2, permutation=[0, 1], cost=1, best_known=None, gap_percent=None,
                    stop_reason=stop, strategy="cpu-serial", seed=0, devices=["cpu"], time_s=1.0,
                    compile_s=0.0, search_iterations=0, generations=done, islands=rows, warnings=warned)
    assert ("warning     no island finished a generation" in result.summary()) == timed_out
    assert Result.from_json(result.to_json()).warnings == warned
