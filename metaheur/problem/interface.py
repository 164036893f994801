"""The problem interface: a :class:`Problem` is what it is (:class:`ProblemDomain`: values,
files, generator, best known, picture) and how it is solved (:class:`SolvingPlan`: searches,
islands, defaults, kernels), two narrow halves with defaults, in one class to write (docs/api.md,
"The problem interface"). QAP, TSP, ATSP, the flow shop and the LOP implement it, and so does a
user's problem (a :class:`~metaheur.PermutationProblem`, registered by name, entry point or
``module:Class``, :mod:`metaheur.problem.registry`). The framework asks a problem only through
these two halves.
"""

from __future__ import annotations

from metaheur.problem.domain import (
    SENSES,
    LoadedSolution,
    ProblemDomain,
    ProblemFormats,
    check_permutation,
    sense_sign,
)
from metaheur.problem.solving import SearchForm, SolvingPlan

__all__ = ["SENSES", "LoadedSolution", "Problem", "ProblemDomain", "ProblemFormats", "SearchForm", "SolvingPlan",
           "check_permutation", "sense_sign"]


class Problem(ProblemDomain, SolvingPlan):
    """A permutation problem: its domain (:class:`ProblemDomain`) and how it is solved
    (:class:`SolvingPlan`). Subclasses set the class attributes of both and implement
    :meth:`evaluate`, :meth:`fingerprint` and :meth:`operators` (or inherit them, as a
    :class:`~metaheur.PermutationProblem` does); every other method has a default."""
