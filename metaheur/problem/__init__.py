"""The problem interface the framework owns, and what every problem shares.

A problem is a :class:`Problem`: what it is (:class:`ProblemDomain`: values, files, generator,
best known, picture) and how it is solved (:class:`SolvingPlan`: searches, islands, kernels,
defaults), each with defaults (docs/api.md, "The problem interface"). Here too: the registry of
problems (entry-point group ``metaheur.problems``), the generic :class:`PermutationProblem` of a
user's own problem with :func:`check_problem`, and the helpers every problem uses (instances and
solutions by name or file, best-known tables, text and array checks, fingerprints).

The framework imports this package and never a problem's: the built-in problems
(``metaheur.problems.<name>``) are loaded through the registry when a run names them
(docs/architecture.md, "Layers and folders").
"""

from metaheur.problem.best_known import BestKnown, best_known
from metaheur.problem.domain import LoadedSolution, ProblemDomain, ProblemFormats
from metaheur.problem.generators import parse_generated
from metaheur.problem.instances import load_instance, load_solution, resolve_instance
from metaheur.problem.interface import Problem
from metaheur.problem.permutation import PermutationProblem
from metaheur.problem.permutation_check import check_problem
from metaheur.problem.registry import problem_class, registered
from metaheur.problem.solving import SearchForm, SolvingPlan

__all__ = [
    "BestKnown",
    "LoadedSolution",
    "PermutationProblem",
    "Problem",
    "ProblemDomain",
    "ProblemFormats",
    "SearchForm",
    "SolvingPlan",
    "best_known",
    "check_problem",
    "load_instance",
    "load_solution",
    "parse_generated",
    "problem_class",
    "registered",
    "resolve_instance",
]
