"""metaheur: hybrid metaheuristics for permutation problems (QAP, TSP, ATSP, flow shop, linear
ordering, a user's own :class:`Problem`) on CPU cores, GPUs and Dask clusters.

``metaheur.solve(problem, stop, seed, params, initial)`` returns a :class:`Result`;
``metaheur.resume(checkpoint)`` continues a saved run. The problem interface is
``metaheur.problem``, the built-in problems ``metaheur.problems``, the kernel engine
``metaheur.engine``. See docs/api.md.

The built-in problems' names (``metaheur.QAP``, ``metaheur.TabuParams``, ...) are loaded when
first asked for (PEP 562), so that ``import metaheur`` loads no problem package.
"""

from __future__ import annotations

from metaheur._version import __version__
from metaheur.callbacks import Callbacks
from metaheur.errors import InputFormatError, MetaheurError
from metaheur.islands.migration import MigrationParams
from metaheur.islands.params import GAParams
from metaheur.lazy_names import lazy_names
from metaheur.problem import (
    PermutationProblem,
    Problem,
    ProblemDomain,
    ProblemFormats,
    SearchForm,
    SolvingPlan,
    best_known,
    check_problem,
    load_instance,
    load_solution,
    problem_class,
)
from metaheur.result import DeviceRow, EpochRow, IslandRow, MigrationRow, Result, TracePoint
from metaheur.search.perm_search import PermSearchParams
from metaheur.solve_params import SolveParams
from metaheur.solver import resume, solve
from metaheur.stopping import (
    MaxGenerations,
    NoImprovement,
    Progress,
    ProvenOptimum,
    StopRules,
    Target,
    TimeLimit,
    stop_rules,
)

__all__ = [
    "ATSP",
    "QAP",
    "TSP",
    "Callbacks",
    "DeviceRow",
    "EpochRow",
    "GAParams",
    "ILSParams",
    "InputFormatError",
    "IslandRow",
    "MaxGenerations",
    "MetaheurError",
    "MigrationParams",
    "MigrationRow",
    "NoImprovement",
    "PermSearchParams",
    "PermutationProblem",
    "Problem",
    "ProblemDomain",
    "ProblemFormats",
    "Progress",
    "ProvenOptimum",
    "Result",
    "SearchForm",
    "SolveParams",
    "SolvingPlan",
    "StopRules",
    "TabuParams",
    "Target",
    "TimeLimit",
    "TracePoint",
    "__version__",
    "best_known",
    "check_problem",
    "load_instance",
    "load_solution",
    "problem_class",
    "read_qaplib",
    "read_sln",
    "read_tour",
    "read_tsplib",
    "resume",
    "solve",
    "stop_rules",
    "write_sln",
    "write_tour",
]

#: The built-in problems' public names -> their module, imported when first asked for.
_LAZY = {
    "ATSP": "metaheur.problems.atsp",
    "QAP": "metaheur.problems.qap",
    "TSP": "metaheur.problems.tsp",
    "TabuParams": "metaheur.problems.qap.params",
    "ILSParams": "metaheur.problems.tsp.params",
    **{name: "metaheur.problems.qap" for name in ("read_qaplib", "read_sln", "write_sln")},
    **{name: "metaheur.problems.tsp" for name in ("read_tour", "read_tsplib", "write_tour")},
}


__getattr__, __dir__ = lazy_names(globals(), _LAZY)
