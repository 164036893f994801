"""The problem interface: everything the solver, the CLI, the islands, plots, descriptions, warm
starts and checkpoints ask of a problem (docs/api.md, "The problem interface").

A problem is a :class:`Problem`: an instance of size ``n`` whose solutions are permutations of
``0..n-1`` with exact integer values, minimised (``sense = "min"``) or maximised (``"max"``). The
engine minimises ``engine_sign * value`` everywhere inside (islands, migration, stop rules); every
number a user sees is back in the problem's own sense. QAP, TSP and ATSP implement it, and so
does a user's problem (registered by name, entry point or ``module:Class``,
:mod:`metaheur.problem.registry`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from metaheur.errors import MetaheurError
from metaheur.problem.best_known import BestKnown, best_known

if TYPE_CHECKING:
    from pathlib import Path

    from metaheur.devices import Device
    from metaheur.engine.catalogue import KernelTable
    from metaheur.islands.base import Island
    from metaheur.islands.migration import MigrationParams
    from metaheur.islands.params import IslandParams
    from metaheur.search.perm_defaults import RunBudget, SearchChoice

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
    reads an instance; ``sniff(path)`` tells the problem's files by content when the extension
    is not a registered one; ``read_solution(problem, path)`` and ``write_solution(problem, path,
    perm)`` (returns the value) read and write its solution files, ``solution_suffix`` their
    extension; ``generators`` maps a prefix to a builder of ``gen:PREFIX:...`` instances (it gets
    the whole name); ``picks``: a file may hold several instances, ``FILE#NAME`` or ``FILE#K``
    picking one (``read`` then gets ``FILE#NAME``); ``sniff_broad``: the sniffer takes any file of
    a kind of syntax (the QAP's: any list of numbers), so it is asked after every exact one."""

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


@dataclass(frozen=True)
class SearchForm:
    """What the islands search for a problem: ``problem`` (a :class:`Problem` with operators),
    ``to_search`` (k x n solutions of the problem -> k solutions of the searched one) and
    ``from_search`` (one searched solution -> the problem's). The maps keep values: a solution
    and its image have one value."""

    problem: Problem
    to_search: Callable[[np.ndarray], np.ndarray]
    from_search: Callable[[np.ndarray], np.ndarray]

    @classmethod
    def identity(cls, problem: Problem) -> SearchForm:
        return cls(problem, lambda perms: perms, lambda perm: perm)


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


class Problem(ABC):
    """A permutation problem (see the module docstring). Subclasses set the class attributes and
    implement :meth:`evaluate`, :meth:`fingerprint` and :meth:`operators` (or inherit them, as a
    :class:`~metaheur.PermutationProblem` does); every other method has a default.

    Class attributes: ``kind`` (the registry name, lower case), ``title``, ``sense`` (``"min"`` or
    ``"max"``), ``formats`` (:class:`ProblemFormats` or None), ``crossovers`` (the crossovers its
    islands accept; ``"none"``: local search only), ``search_params`` (the parameter classes of
    its own local searches, each a frozen dataclass, constructible without arguments (its
    defaults), whose class attribute ``section`` names it: its part of the islands' parameters,
    :class:`~metaheur.islands.params.IslandParams`, of the result's parameters and of checkpoints;
    the engine's ``PermSearchParams`` is every run's), ``picture`` (the name of the panel
    :meth:`draw` draws, None without one) and ``picture_column`` (it takes the figure's whole
    right column, not the space above the caption). Instances have ``name``, ``n`` and ``source``
    (where it was read from, or None)."""

    kind: ClassVar[str] = ""
    title: ClassVar[str] = ""
    sense: ClassVar[str] = "min"
    formats: ClassVar[ProblemFormats | None] = None
    crossovers: ClassVar[tuple[str, ...]] = ()
    search_params: ClassVar[tuple[type, ...]] = ()
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

    # ------------------------------------------------------------------ how it is searched
    def search_form(self) -> SearchForm:
        """What the islands search (default: the problem itself)."""
        return SearchForm.identity(self)

    def default_params(self) -> IslandParams:
        """The islands' default GA and local-search parameters for this instance."""
        from metaheur.islands.params import IslandParams

        return IslandParams()

    def choose_search(self, params: IslandParams, budget: RunBudget) -> tuple[IslandParams, SearchChoice | None]:
        """The run's island parameters with what they leave open chosen for ``budget`` (the time
        limit, whether the problem may be timed), and the choice made (None: nothing chosen, the
        default). A user problem's generic local search follows the cost of its device functions
        (:mod:`metaheur.search.perm_defaults`)."""
        return params, None

    def default_migration(self) -> MigrationParams:
        """The default migration for this instance."""
        from metaheur.islands.migration import MigrationParams

        return MigrationParams()

    def operators(self, device: Device, params: IslandParams, ls_budget: int | None = None, **options: Any) -> Any:
        """The operators the islands drive on ``device`` (random solutions, crossover, mutation,
        local search, distances, exact cost; see metaheur/islands/operators.py). The costs they
        return are engine costs (``engine_sign * value``), what islands, migration and selection
        minimise. ``options``: what the island algorithm asks of its problem's operators
        (:attr:`Island.operator_options <metaheur.islands.base.Island.operator_options>`), for a
        problem's own island algorithms; the framework passes them on unread."""
        raise MetaheurError(f"the {self.kind or type(self).__name__} problem has no island operators")

    @classmethod
    def island_algorithms(cls) -> dict[str, type[Island]]:
        """Crossover name -> island class where it is not the memetic GA (the default for a
        crossover of two parents); a class method, so that the registry reads what each
        registered problem's crossovers run (:func:`~metaheur.islands.params.crossover_islands`)."""
        return {}

    def default_ls_budget(self) -> int:
        """Local-search effort per child when the GA parameters give none (``ls_budget``): n / 4,
        at least 50 (the TSP's kicks; the QAP's is 50 n tabu iterations)."""
        return max(50, self.n // 4)

    @classmethod
    def kernel_table(cls) -> KernelTable | None:
        """The problem's own kernel files (under ``kernels/<problem>/``), the defines they are
        compiled with and the block shapes of their launches, which the compile checks build and
        hold against a GPU's limits (:mod:`metaheur.engine.catalogue`); None (the default): it
        runs the engine's kernels only."""
        return None

    def chain_search(self, params: IslandParams) -> str:
        """The local search that an island of continued searches (crossover ``none``,
        :class:`~metaheur.islands.ils.ILSIsland`) runs with ``params``, as its label names it
        (``"NAME chains"``); default: the ILS."""
        return "ILS"

    def gpu_chains(self, params: IslandParams, device: Device) -> int:
        """Continued searches that a GPU island of this problem's default chains (crossover
        ``none``, no GA parameters given) runs side by side, a kernel block each; default: one."""
        return 1

    def wave_blocks_per_sm(self, device: Device) -> int:
        """Blocks of the kernel that sizes a GPU island's wave that one multiprocessor of
        ``device`` runs at once (:func:`~metaheur.islands.balance.gpu_wave`; default: one)."""
        return 1

    def precompile(self, device: Device) -> None:
        """Build every kernel variant the islands will load on ``device`` (before the clock starts;
        default: nothing to build)."""
        return

    def check_memory(self, devices: list[Device]) -> None:
        """Refuse up front a run whose searches cannot fit ``devices`` (default: no check)."""
        return

    def local_search_island(self, params: IslandParams) -> IslandParams | None:
        """The parameters of this problem's local-search island (crossover ``none``: continued
        searches, :meth:`island_algorithms`) for a run whose GA islands have ``params``: what the
        CPU islands that are not GA islands run when the islands are a mix of the two kinds
        (:meth:`default_local_search_islands`, ``SolveParams.tabu_islands``); None (the default):
        the problem mixes no island kinds."""
        return None

    def default_local_search_islands(self, cpu_islands: int) -> int:
        """How many of ``cpu_islands`` CPU islands run :meth:`local_search_island` beside GA islands
        by default, when the run's islands are memetic GA islands (default 0: GA islands only)."""
        return 0

    # ------------------------------------------------------------------ describing and drawing
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
