"""How a problem is solved (:class:`SolvingPlan`): what the planner and the islands ask of it
(its searches and their parameters, its island algorithms, defaults chosen for the instance and
the time limit, kernels to build, GPU sizes, memory checks). Every hook has a default, so a
problem overrides only what it decides; the hooks read the problem's domain (``self.n``,
``self.kind``, :class:`~metaheur.problem.domain.ProblemDomain`), of which
:class:`~metaheur.problem.interface.Problem` is the other half (docs/api.md, "The problem
interface")."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from metaheur.errors import MetaheurError

if TYPE_CHECKING:
    from metaheur.devices import Device
    from metaheur.engine.catalogue import KernelTable
    from metaheur.islands.base import Island
    from metaheur.islands.migration import MigrationParams
    from metaheur.islands.params import IslandParams
    from metaheur.problem.interface import Problem
    from metaheur.search.perm_defaults import RunBudget, SearchChoice


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



class SolvingPlan:
    """How a problem is solved. Class attributes: ``crossovers`` (the crossovers its islands
    accept; ``"none"``: local search only) and ``search_params`` (the parameter classes of its own
    local searches, each a frozen dataclass, constructible without arguments (its defaults), whose
    class attribute ``section`` names it: its part of the islands' parameters,
    :class:`~metaheur.islands.params.IslandParams`, of ``SolveParams.searches``, of configuration
    files, of the result's parameters and of checkpoints; the engine's ``PermSearchParams`` is
    every run's; a class attribute ``moved_from`` names keys it took over from another section).
    Every method has a default; :meth:`operators` must be given (or inherited, as a
    :class:`~metaheur.PermutationProblem` does) for the problem to be solved."""

    crossovers: ClassVar[tuple[str, ...]] = ()
    search_params: ClassVar[tuple[type, ...]] = ()

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

    def preflight(self) -> None:
        """Refuse up front, in one line, a problem whose own code cannot be run (a user's problem:
        its moves, its evaluate, its cache; default: no check)."""
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
