"""The problem interface's two halves (docs/api.md, "The problem interface"): what a problem is
(:class:`ProblemDomain`) and how it is solved (:class:`SolvingPlan`), each with defaults; a
:class:`Problem` is both, and what needs only the domain (descriptions, evaluations, warm starts,
figures) takes a domain alone."""

from __future__ import annotations

import numpy as np
import pytest

import metaheur
from metaheur.describe import evaluation, format_summary, instance_summary
from metaheur.errors import MetaheurError
from metaheur.islands.params import IslandParams
from metaheur.problem import Problem, ProblemDomain, SearchForm, SolvingPlan
from metaheur.warm_start import initial_solutions


def public(cls: type) -> set[str]:
    return {name for name in vars(cls) if not name.startswith("_")}


class Displacement(ProblemDomain):
    """A domain only: the sum of |p[i] - i| (the identity is optimal)."""

    kind = "displacement"
    title = "displacement"

    def __init__(self, n: int) -> None:
        self.name, self.n, self.source = f"disp{n}", n, None

    def evaluate(self, perms: np.ndarray) -> np.ndarray:
        perms = np.asarray(perms, dtype=np.int64)
        return np.abs(perms - np.arange(self.n)).sum(axis=1)

    def fingerprint(self) -> str:
        return f"displacement-{self.n}"


def test_the_halves_are_disjoint_and_a_problem_is_both():
    domain, plan = public(ProblemDomain), public(SolvingPlan)
    assert not domain & plan
    assert {"evaluate", "fingerprint", "formats", "best_known", "draw", "properties", "sense"} <= domain
    assert {"operators", "default_params", "choose_search", "search_params", "crossovers", "kernel_table",
            "gpu_chains", "precompile", "check_memory", "island_algorithms"} <= plan
    assert issubclass(Problem, ProblemDomain) and issubclass(Problem, SolvingPlan)
    assert metaheur.ProblemDomain is ProblemDomain and metaheur.SolvingPlan is SolvingPlan
    assert issubclass(metaheur.QAP, Problem) and issubclass(metaheur.PermutationProblem, Problem)


def test_a_domain_alone_is_described_evaluated_and_warm_started():
    d = Displacement(5)
    assert d.value([0, 1, 2, 3, 4]) == 0 and d.value([1, 0, 2, 3, 4]) == 2
    assert d.engine_sign == 1 and d.best_known() is None
    summary = instance_summary(d)
    assert summary["n"] == 5 and "instance    disp5" in format_summary(summary, d)
    assert evaluation(d, [4, 3, 2, 1, 0])["cost"] == 12
    starts = initial_solutions(d, [[1, 0, 2, 3, 4], [0, 1, 2, 3, 4]])
    assert starts.tolist() == [[0, 1, 2, 3, 4], [1, 0, 2, 3, 4]]  # best first
    with pytest.raises(MetaheurError, match="not a permutation"):
        d.check_solution([0, 0, 1, 2, 3])


def test_a_plan_has_a_default_for_every_hook_but_operators():
    class Plain(Displacement, SolvingPlan):
        pass

    p = Plain(6)
    form = p.search_form()
    perms = np.array([[1, 0, 2, 3, 4, 5]])
    assert isinstance(form, SearchForm) and form.problem is p
    assert form.to_search(perms) is perms and np.array_equal(form.from_search(perms[0]), perms[0])
    assert p.default_params() == IslandParams() and p.default_ls_budget() == 50
    assert p.local_search_island(IslandParams()) is None and p.default_local_search_islands(4) == 0
    assert p.kernel_table() is None and p.island_algorithms() == {} and p.chain_search(IslandParams()) == "ILS"
    with pytest.raises(MetaheurError, match="has no island operators"):
        p.operators("cpu", IslandParams())
