"""The linear ordering problem (LOP, a maximisation), in one package: the instance and exact
values (``problem``), its device code on the device contract of a user's problem (``device``),
the generator (``generator``), LOLIB's files (``files``) and best-known values (``best_known``).
It is written on the generic engine as a user's problem is."""

from metaheur.problems.lop import files as _files  # noqa: F401  (sets LOP.formats)
from metaheur.problems.lop.generator import random_lop
from metaheur.problems.lop.problem import LOP, overflow_reason

__all__ = ["LOP", "overflow_reason", "random_lop"]
