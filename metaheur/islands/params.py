"""Parameters of an island (validated dataclasses): the GA's (:class:`GAParams`) and those of the
problem's local searches, one object per section (:class:`IslandParams`); the island algorithm
that each crossover runs, with the sizes it needs (:func:`with_crossover`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, fields, replace
from typing import TYPE_CHECKING, Any

from metaheur.errors import MetaheurError
from metaheur.ga.order_ga import CROSSOVER as ORDER_CROSSOVER
from metaheur.ga.perm_ga import CROSSOVERS as PERM_CROSSOVERS
from metaheur.problem.arrays import INT32_MAX
from metaheur.search.perm_search import PermSearchParams

if TYPE_CHECKING:
    from metaheur.islands.base import Island
    from metaheur.problem.interface import Problem

#: The crossovers of the engine's GA operators (metaheur/ga/), and ``none``: no crossover, an island
#: of continued local searches. A problem may offer more (the TSP's ``eax``).
ENGINE_CROSSOVERS = (*PERM_CROSSOVERS, ORDER_CROSSOVER, "none")
#: The restarts every island algorithm knows; an algorithm may declare more (:attr:`Island.restarts
#: <metaheur.islands.base.Island.restarts>`: the TSP's EAX islands' ``ils``).
RESTARTS = ("best", "full")
REPLACEMENTS = ("steady", "bnp")
#: The engine's own local-search parameters (the generic search of a user's problem), a section
#: every run has beside those the problems declare (:attr:`Problem.search_params
#: <metaheur.problem.Problem.search_params>`).
ENGINE_SEARCHES = (PermSearchParams,)


@dataclass(frozen=True)
class GAParams:
    """One island's genetic algorithm.

    ``population``: individuals kept; ``offspring``: children per generation (each improved by
    local search); ``crossover``: one the problem offers (:attr:`Problem.crossovers
    <metaheur.problem.Problem.crossovers>`; the engine's ``ux``/``cx``/``pmx`` of assignments and
    ``ox`` of orders, or those a problem adds), or ``none`` for a local-search-only island (each
    member's search goes on); ``mutation``: random mutations applied to each child (swaps, or
    segment reversals with ``ox``);
    ``ls_budget``: local-search effort per child (its unit is the problem's local search's: tabu
    iterations, kicks, greedy rounds; ``None``: a size-based default); ``restart_after``:
    generations without a new best in the population before it restarts (0: never);
    ``restart``: ``best`` keeps the population's best and replaces the others by new improved
    random solutions, ``full`` replaces every member (a new, independent GA; the island's best is
    kept apart in its state and is still what it reports and sends as a migrant), or a restart
    an island algorithm declares (:func:`restarts`: the TSP's EAX islands' ``ils`` goes on as an
    iterated local search of the converged island's best); ``replacement``: ``steady`` (each child replaces a worse
    member, :func:`~metaheur.islands.memetic.replace_members`) or ``bnp``, the
    best-non-penalised survivors of members and children together, whose distance threshold
    shrinks as the run goes on (:func:`~metaheur.islands.memetic.keep_non_penalised`; Lugo,
    Segura and Miranda 2022).

    A crossover may run another island algorithm (:meth:`Problem.island_algorithms
    <metaheur.problem.SolvingPlan.island_algorithms>`), with its own parameters in a section its
    problem declares; ``population = 0`` asks an algorithm that sizes its population itself
    (:attr:`Island.automatic_population <metaheur.islands.base.Island.automatic_population>`).
    """

    population: int = 20
    offspring: int = 10
    crossover: str = "ux"
    mutation: int = 0
    ls_budget: int | None = None
    restart_after: int = 30
    restart: str = "best"
    replacement: str = "steady"

    def __post_init__(self) -> None:
        if self.population < 0 or (self.population == 0 and not crossover_island(self.crossover).automatic_population):
            auto = ", ".join(c for c, cls in crossover_islands().items() if cls.automatic_population)
            raise MetaheurError(f"population must be at least 1 (0, automatic, with {auto}), got {self.population}")
        if self.offspring < 1:
            raise MetaheurError(f"offspring per generation must be at least 1, got {self.offspring}")
        if not 0 <= self.mutation <= INT32_MAX:
            raise MetaheurError(f"mutation must be from 0 to {INT32_MAX}, got {self.mutation}")
        if self.ls_budget is not None and self.ls_budget < 0:
            raise MetaheurError(f"local-search budget must be >= 0, got {self.ls_budget}")
        if self.restart_after < 0:
            raise MetaheurError(f"restart_after must be >= 0, got {self.restart_after}")
        if self.crossover not in ENGINE_CROSSOVERS and self.crossover not in crossover_islands():
            raise MetaheurError(f"unknown crossover {self.crossover!r}")
        if self.replacement not in REPLACEMENTS:
            raise MetaheurError(f"unknown replacement {self.replacement!r}: use one of {', '.join(REPLACEMENTS)}")
        if self.restart not in restarts():
            raise MetaheurError(f"unknown restart {self.restart!r}: use one of {', '.join(restarts())}")

    def check_for(self, problem: Problem) -> GAParams:
        """These parameters, when ``problem`` accepts the crossover."""
        allowed = problem.crossovers
        if self.crossover not in allowed:
            raise MetaheurError(f"crossover {self.crossover!r} is not for the {problem.kind.upper()}: "
                                f"use one of {', '.join(allowed)}")
        return self


def restarts() -> tuple[str, ...]:
    """The restarts a ``GAParams`` accepts: every algorithm's (:data:`RESTARTS`) and those the
    island algorithms of the registered problems declare (:attr:`Island.restarts
    <metaheur.islands.base.Island.restarts>`)."""
    return RESTARTS + tuple(dict.fromkeys(r for cls in crossover_islands().values() for r in cls.restarts))


def crossover_islands() -> dict[str, type[Island]]:
    """Every crossover the registered problems offer, with the island algorithm it runs there
    (:meth:`Problem.island_algorithms <metaheur.problem.Problem.island_algorithms>`, else the
    memetic GA): the first problem in registry order that offers a crossover names its algorithm."""
    from metaheur.problem.registry import per_registry

    return per_registry(_crossover_islands)


def _crossover_islands(classes: tuple[type[Problem], ...]) -> dict[str, type[Island]]:
    from metaheur.islands.memetic import MemeticIsland

    out: dict[str, type[Island]] = {}
    for cls in classes:
        try:
            algorithms = cls.island_algorithms()
        except TypeError:  # a plug-in's instance method (before it was a class method): its islands still run
            algorithms = {}
        for crossover in cls.crossovers:
            out.setdefault(crossover, algorithms.get(crossover, MemeticIsland))
    return out


def crossover_island(crossover: str, problem: Problem | None = None) -> type[Island]:
    """The island algorithm that ``crossover`` runs on ``problem`` (:meth:`Problem.island_algorithms
    <metaheur.problem.Problem.island_algorithms>`, else the memetic GA), or, without a problem, on
    the registered problems (:func:`crossover_islands`)."""
    from metaheur.islands.memetic import MemeticIsland

    if problem is not None:
        return problem.island_algorithms().get(crossover, MemeticIsland)
    return crossover_islands().get(crossover, MemeticIsland)


@dataclass(frozen=True, init=False)
class IslandParams:
    """Everything an island's epoch needs besides its state: the GA's parameters (``ga``) and those
    of the problem's local searches (``searches``), one object per section, each a frozen
    dataclass whose class names its ``section`` (``TabuParams``: ``tabu``); a section not given
    has its class's defaults. ``IslandParams(ga, searches)`` or by section name,
    ``IslandParams(ga, tabu=TabuParams(scale=4))``; read with :meth:`search`, or by section name
    (``params.tabu``) for the sections of registered problems (:func:`search_sections`)."""

    ga: GAParams
    searches: tuple

    def __init__(self, ga: GAParams | None = None, searches: Iterable[Any] = (), **sections: Any) -> None:
        if not isinstance(searches, (tuple, list)) and not hasattr(searches, "__next__"):
            raise MetaheurError("IslandParams(ga, searches): searches is a sequence of local searches' parameters; "
                                "give one by its section, e.g. IslandParams(ga, tabu=TabuParams())")
        given = by_section(searches, sections)
        # kept sorted by section and without defaults, so that equal parameters compare equal
        kept = tuple(value for _, value in sorted(given.items()) if value != type(value)())
        object.__setattr__(self, "ga", ga if ga is not None else GAParams())
        object.__setattr__(self, "searches", kept)

    def search(self, cls: type) -> Any:
        """The parameters of ``cls``'s section (a default ``cls()`` when not given)."""
        return next((value for value in self.searches if type(value).section == cls.section), None) or cls()

    def with_search(self, *values: Any) -> IslandParams:
        """These parameters with ``values`` replacing those of their sections."""
        return IslandParams(self.ga, (*self.searches, *values))

    def check_for(self, problem: Problem) -> IslandParams:
        """These parameters, when ``problem`` accepts the crossover and its island algorithm
        accepts them (:meth:`Island.check_params <metaheur.islands.base.Island.check_params>`)."""
        self.ga.check_for(problem)
        crossover_island(self.ga.crossover, problem).check_params(self, problem)
        return self

    def __getattr__(self, name: str) -> Any:
        """A registered section by its name (``params.tabu``)."""
        cls = None if name.startswith("_") else search_sections().get(name)
        if cls is None:
            raise AttributeError(f"{type(self).__name__} has no attribute or search section {name!r}")
        return self.search(cls)


def by_section(values: Iterable[Any], named: Mapping[str, Any]) -> dict[str, Any]:
    """Local searches' parameters, ``values`` and ``named`` (section name -> parameters), by their
    section (the last given of a section wins); a value without a ``section``, or given under the
    name of another section, is a one-line error."""
    given = {}
    for value in [*values, *named.values()]:
        section = getattr(type(value), "section", None)
        if not isinstance(section, str):
            raise MetaheurError(f"{type(value).__name__} is not the parameters of a local search (no section)")
        given[section] = value
    for name, value in named.items():
        if type(value).section != name:
            expected = search_sections().get(name)
            wanted = expected.__name__ if expected else f"the parameters of section {name}"
            raise MetaheurError(f"{name} takes {wanted}, got {type(value).__name__}")
    return given


def search_sections(problem: Problem | None = None) -> dict[str, type]:
    """Every local search's parameter class by its section name: those the registered problems
    declare (:attr:`Problem.search_params <metaheur.problem.Problem.search_params>`; a section
    name declared twice keeps the first class in registry order), with ``problem``'s own when it
    is not registered, and the engine's own (:data:`ENGINE_SEARCHES`). Ordered by name, then
    ``problem``'s own: the configuration file's sections, the result's and the checkpoint's
    parameters follow this order."""
    from metaheur.problem.registry import per_registry

    sections = per_registry(_search_sections)
    own = {cls.section: cls for cls in (problem.search_params if problem is not None else ())
           if cls.section not in sections}
    return sections | own if own else sections


def _search_sections(classes: tuple[type[Problem], ...]) -> dict[str, type]:
    declared: dict[str, type] = {}
    for cls in (*ENGINE_SEARCHES, *(c for problem in classes for c in problem.search_params)):
        declared.setdefault(cls.section, cls)
    return dict(sorted(declared.items()))


def moved_keys(sections: dict[str, type]) -> dict[str, dict[str, str]]:
    """Keys that a section declared by a problem took over from another section (its class's
    ``moved_from``: section -> keys), as ``{old section: {key: new section}}``: what a
    configuration file or a checkpoint of an earlier version still holds in the old place."""
    out: dict[str, dict[str, str]] = {}
    for name, cls in sections.items():
        for old, keys in getattr(cls, "moved_from", {}).items():
            out.setdefault(old, {}).update(dict.fromkeys(keys, name))
    return out


def move_keys(values: dict[str, dict], sections: dict[str, type]) -> tuple[dict[str, dict], list[str]]:
    """``values`` (section -> keys) with the keys of :func:`moved_keys` in their new sections (a
    key given in both keeps the new section's), and the moves made (``"[ga] tries -> [eax]"``)."""
    out = {name: dict(keys) if isinstance(keys, dict) else keys for name, keys in values.items()}
    moves = []
    for old, keys in moved_keys(sections).items():
        if not isinstance(out.get(old), dict):
            continue
        for key in [k for k in out[old] if k in keys]:
            value = out[old].pop(key)
            new = out.setdefault(keys[key], {})
            if isinstance(new, dict):
                new.setdefault(key, value)
            moves.append(f"[{old}] {key} -> [{keys[key]}]")
    return out, moves


def searches_as_dicts(params: IslandParams, sections: dict[str, type]) -> dict[str, dict]:
    """Every section's parameters of ``params`` as JSON-ready dicts (the result's, a checkpoint's)."""
    return {name: asdict(params.search(cls)) for name, cls in sections.items()}


def with_crossover(ga: GAParams, crossover: str, problem: Problem | None = None) -> GAParams:
    """``ga`` with another crossover, and the sizes that the island algorithm it runs on
    ``problem`` (or the registered problems, :func:`crossover_island`) needs
    (:meth:`Island.sizes <metaheur.islands.base.Island.sizes>`): an island of continued local
    searches (crossover ``none``) keeps one member and one child a generation and never restarts;
    an EAX island sizes its population automatically with every member a parent each generation;
    a memetic island taking over from an automatic size gets 30 members and 10 children."""
    return replace(ga, crossover=crossover, **crossover_island(crossover, problem).sizes(ga))


def ls_island(ga: GAParams, problem: Problem | None = None) -> GAParams:
    """The GA parameters of a local-search island beside GA islands of ``ga``
    (:meth:`Problem.local_search_island <metaheur.problem.Problem.local_search_island>`): one
    continued search in place of the GA (crossover ``none``), a generation of it being the GA's
    local-search budget per child (for the QAP 50 n tabu iterations by default). A QAP tabu island
    (:class:`~metaheur.problems.qap.tabu_island.TabuIsland`) sends its best to the GA islands and
    takes no migrant, so its search keeps its memory for the whole run (docs/decisions/tabu-islands.md)."""
    return replace(with_crossover(ga, "none", problem), ls_budget=ga.ls_budget or None)


def ls_island_params(params: IslandParams, problem: Problem | None = None) -> IslandParams:
    """``params`` with the GA parameters of a local-search island (:func:`ls_island`)."""
    return replace(params, ga=ls_island(params.ga, problem))


def ls_budget(ga: GAParams, problem: Problem) -> int:
    """Local-search effort per child: ``ga.ls_budget``, else the problem's default
    (:meth:`Problem.default_ls_budget <metaheur.problem.Problem.default_ls_budget>`). An island
    algorithm may choose its own (:meth:`Island.ls_budget <metaheur.islands.base.Island.ls_budget>`)."""
    return ga.ls_budget if ga.ls_budget is not None else problem.default_ls_budget()


def param_names(cls) -> list[str]:
    return [f.name for f in fields(cls)]
