"""What a problem is (:class:`ProblemDomain`): its instances, their exact values, files,
generators, best-known values, description and picture; what the CLI, results, plots, warm starts
and checkpoints ask of it. How it is solved is the other half of a problem
(:class:`~metaheur.problem.solving.SolvingPlan`); :class:`~metaheur.problem.interface.Problem`
is both (docs/api.md, "The problem interface").

An instance has size ``n``; its solutions are permutations of ``0..n-1`` with exact integer
values, minimised (``sense = "min"``) or maximised (``"max"``). The engine minimises
``engine_sign * value`` everywhere inside (islands, migration, stop rules); every number a user
sees is back in the problem's own sense.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar

import numpy as np

from metaheur.errors import MetaheurError
from metaheur.problem.best_known import BestKnown, best_known

if TYPE_CHECKING:
    from pathlib import Path

    from metaheur.problem.interface import Problem

SENSES = ("min", "max")


@dataclass(frozen=True)
class LoadedSolution:
    """A solution file's permutation (0-based) with what the file said about itself."""

    permutation: np.ndarray
    stated_cost: int | None
    note: str | None


@dataclass(frozen=True)
class ProblemFormats:
    """A problem's files. ``extensions`` (".dat") make ``load_instance(FILE)`` pick the problem;
    ``folder`` is its library subfolder under ``METAHEUR_INSTANCES`` ("qaplib"); ``read(path)``
    reads an instance of the class (raising ValueError, or an InputFormatError, on a file it
    cannot read; any other exception is reported as such too, in one line naming the file and the
    reader: :func:`~metaheur.problem.instances.read_with`); ``sniff(path)`` tells the problem's
    files by content when the file has no extension or a generic one; ``read_solution(problem,
    path)`` and ``write_solution(problem, path, perm)`` (returns the value) read and write its
    solution files, ``solution_suffix`` their extension; ``generators`` maps a prefix to a
    builder of ``gen:PREFIX:...`` instances (it gets the whole name); ``picks``: a file may hold
    several instances, ``FILE#NAME`` or ``FILE#K`` picking one (``read`` then gets
    ``FILE#NAME``); ``sniff_broad``: the sniffer takes any file of a kind of syntax (the QAP's:
    any list of numbers), so it is asked after every exact one."""

    extensions: tuple[str, ...] = ()
    folder: str | None = None
    read: Callable[[Path], Problem] | None = None
    sniff: Callable[[Path], bool] | None = None
    read_solution: Callable[[Problem, Path], LoadedSolution] | None = None
    write_solution: Callable[[Problem, Path, np.ndarray], int] | None = None
    solution_suffix: str = ".txt"
    generators: Mapping[str, Callable[[str], Problem]] = field(default_factory=dict)
    picks: bool = False
    sniff_broad: bool = False


def check_permutation(perm, n: int, source: str | None = None) -> np.ndarray:
    """Validate a 0-based permutation of ``range(n)``: a 0-based int64 array, or a one-line
    :class:`MetaheurError` saying why it is not one."""
    where = f"{source}: " if source else ""
    try:
        p = np.asarray(perm)
    except (TypeError, ValueError):
        raise MetaheurError(f"{where}solution is not a sequence of integers") from None
    if p.ndim != 1 or p.size != n:
        raise MetaheurError(f"{where}solution has {p.size} entries, the instance has n = {n}")
    if p.dtype.kind not in "iu":
        if p.dtype.kind == "f" and np.all(np.isfinite(p)) and np.all(p == np.round(p)):
            p = p.astype(np.int64)
        else:
            raise MetaheurError(f"{where}solution entries must be integers")
    p = p.astype(np.int64, copy=False)
    if n and (p.min() < 0 or p.max() >= n or np.bincount(p, minlength=n).max() != 1):
        raise MetaheurError(f"{where}solution is not a permutation of 0..{n - 1} (1..{n} in files)")
    return p


def sense_sign(sense: str) -> int:
    """+1 for ``"min"``, -1 for ``"max"``: the factor that turns a value into an engine cost."""
    if sense not in SENSES:
        raise MetaheurError(f"sense must be 'min' or 'max', got {sense!r}")
    return 1 if sense == "min" else -1




class ProblemDomain(ABC):
    """What a problem is. Subclasses set the class attributes and implement :meth:`evaluate` and
    :meth:`fingerprint`; every other method has a default.

    Class attributes: ``kind`` (the registry name, lower case), ``title``, ``sense`` (``"min"`` or
    ``"max"``), ``formats`` (:class:`ProblemFormats` or None), ``picture`` (the name of the panel
    :meth:`draw` draws, None without one) and ``picture_column`` (it takes the figure's whole
    right column, not the space above the caption). Instances have ``name``, ``n`` and ``source``
    (where it was read from, or None)."""

    kind: ClassVar[str] = ""
    title: ClassVar[str] = ""
    sense: ClassVar[str] = "min"
    formats: ClassVar[ProblemFormats | None] = None
    picture: ClassVar[str | None] = None
    picture_column: ClassVar[bool] = False

    name: str
    n: int
    source: str | None

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        if cls.sense not in SENSES:
            raise MetaheurError(f"{cls.__name__}: sense must be 'min' or 'max', got {cls.sense!r}")

    # ------------------------------------------------------------------ values
    @abstractmethod
    def evaluate(self, perms: np.ndarray) -> np.ndarray:
        """Exact int64 values of a k x n batch of 0-based permutations, in the problem's sense."""

    def value(self, perm) -> int:
        """The exact value of one permutation."""
        return int(self.evaluate(self.check_solution(perm)[None, :])[0])

    @property
    def engine_sign(self) -> int:
        """+1 for a minimisation, -1 for a maximisation: the engine minimises ``engine_sign * value``."""
        return sense_sign(self.sense)

    def engine_costs(self, perms: np.ndarray) -> np.ndarray:
        """``engine_sign * evaluate(perms)``: what the engine minimises."""
        return self.engine_sign * self.evaluate(perms)

    def check_solution(self, perm, where: str | None = None) -> np.ndarray:
        """``perm`` as a validated 0-based int64 permutation (a one-line error otherwise)."""
        return check_permutation(perm, self.n, where)

    def canonical(self, perms: np.ndarray) -> np.ndarray:
        """One array per solution, so that equal solutions compare equal (default: as given)."""
        return np.asarray(perms)

    @abstractmethod
    def fingerprint(self) -> str:
        """A fingerprint of the instance's data (checkpoints and caches key on it)."""

    def best_known(self) -> BestKnown | None:
        """The best-known value of this instance in the problem's own table (kind-aware), or None."""
        return best_known(self.name, self.n, kind=self.kind)

    def properties(self) -> dict:
        """Properties shown by ``metaheur info`` (JSON-ready values)."""
        return {}

    @classmethod
    def describe_lines(cls, props: dict) -> list[str]:
        """Lines of ``metaheur info`` for :meth:`properties` (default: one ``key value`` line each)."""
        return [f"{key.replace('_', ' '):<11} {value}" for key, value in props.items()]

    def draw(self, ax, perm) -> None:
        """Draw ``perm`` on the matplotlib axes ``ax`` (only when ``picture`` is set)."""
        raise MetaheurError(f"the {self.kind} problem has no picture")

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r}, n={self.n})"
