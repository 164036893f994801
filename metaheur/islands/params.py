"""Parameters of a memetic island (validated dataclasses)."""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace

from metaheur.errors import MetaheurError
from metaheur.search.perm_search import PermSearchParams
from metaheur.search.qap_tabu import TabuParams
from metaheur.search.tsp_ils import ILSParams

QAP_CROSSOVERS = ("ux", "cx", "pmx", "none")
TSP_CROSSOVERS = ("eax", "ox", "none")
RESTARTS = ("best", "full", "ils")
STARTS = ("auto", "random", "curve")
REPLACEMENTS = ("steady", "bnp")


@dataclass(frozen=True)
class GAParams:
    """One island's genetic algorithm.

    ``population``: individuals kept; ``offspring``: children per generation (each improved by
    local search); ``crossover``: QAP ``ux``/``cx``/``pmx``, TSP ``eax``/``ox``, or ``none`` for a
    local-search-only island (a tabu island for the QAP, an ILS island for the TSP: each member's
    search goes on);
    ``mutation``: random swaps (QAP) or segment reversals (TSP) applied to each child;
    ``ls_budget``: local-search effort per child (tabu iterations for the QAP, kicks for the TSP;
    ``None``: a size-based default); ``restart_after``: generations without a new best in the
    population before it restarts (0: never); ``restart``: ``best`` keeps the population's best
    and replaces the others by new improved random solutions, ``full`` replaces every member (a
    new, independent GA; the island's best is kept apart in its state and is still what it
    reports and sends as a migrant), ``ils`` (EAX islands; others as ``best``) makes the
    converged island go on as an iterated local search of its best, ``ils_kicks`` kicks a
    generation (None: n / 10); ``replacement``: ``steady`` (each child replaces a worse
    member, :func:`~metaheur.islands.memetic.replace_members`) or ``bnp``, the
    best-non-penalised survivors of members and children together, whose distance threshold
    shrinks as the run goes on (:func:`~metaheur.islands.memetic.keep_non_penalised`; Lugo,
    Segura and Miranda 2022).

    With ``crossover = "eax"`` the island runs the GA of Nagata and Kobayashi (2013) instead (see
    :class:`~metaheur.islands.eax.EAXIsland`): every member is parent A once a generation, ``tries`` EAX children
    per pair, no local search of children; ``population = 0`` sizes the population from the time
    budget; ``ls_budget`` is then the kicks of the local search that builds the population;
    ``starts``: the tours that search starts from, ``random`` permutations, ``curve``
    (space-filling-curve tours, instances with coordinates) or ``auto`` (curve tours on a GPU and
    from 10,000 cities, :func:`~metaheur.islands.operators.curve_starts`); ``init_share``: the
    share of the time budget that builds an automatic population (None: 0.1 for curve starts on
    the CPU, else 0.3; docs/decisions/tsp-start.md).
    """

    population: int = 20
    offspring: int = 10
    crossover: str = "ux"
    mutation: int = 0
    ls_budget: int | None = None
    restart_after: int = 30
    tries: int = 30
    restart: str = "best"
    starts: str = "auto"
    init_share: float | None = None
    replacement: str = "steady"
    ils_kicks: int | None = None

    def __post_init__(self) -> None:
        if self.population < 0 or (self.population == 0 and self.crossover != "eax"):
            raise MetaheurError(f"population must be at least 1 (0, automatic, with eax), got {self.population}")
        if self.tries < 1:
            raise MetaheurError(f"tries must be at least 1, got {self.tries}")
        if self.offspring < 1:
            raise MetaheurError(f"offspring per generation must be at least 1, got {self.offspring}")
        if self.mutation < 0:
            raise MetaheurError(f"mutation must be >= 0, got {self.mutation}")
        if self.ls_budget is not None and self.ls_budget < 0:
            raise MetaheurError(f"local-search budget must be >= 0, got {self.ls_budget}")
        if self.restart_after < 0:
            raise MetaheurError(f"restart_after must be >= 0, got {self.restart_after}")
        if self.crossover not in QAP_CROSSOVERS + TSP_CROSSOVERS:
            raise MetaheurError(f"unknown crossover {self.crossover!r}")
        if self.replacement not in REPLACEMENTS:
            raise MetaheurError(f"unknown replacement {self.replacement!r}: use one of {', '.join(REPLACEMENTS)}")
        if self.restart not in RESTARTS:
            raise MetaheurError(f"unknown restart {self.restart!r}: use one of {', '.join(RESTARTS)}")
        if self.starts not in STARTS:
            raise MetaheurError(f"unknown starts {self.starts!r}: use one of {', '.join(STARTS)}")
        if self.ils_kicks is not None and self.ils_kicks < 1:
            raise MetaheurError(f"ils_kicks must be at least 1, got {self.ils_kicks}")
        if self.init_share is not None and not 0 < self.init_share <= 1:
            raise MetaheurError(f"init_share must be in (0, 1], got {self.init_share}")

    def check_for(self, problem) -> GAParams:
        """These parameters, when ``problem`` (a :class:`~metaheur.problems.Problem`) accepts the crossover."""
        allowed = problem.crossovers
        if self.crossover not in allowed:
            raise MetaheurError(f"crossover {self.crossover!r} is not for the {problem.kind.upper()}: "
                                f"use one of {', '.join(allowed)}")
        if self.crossover == "eax" and self.starts == "curve" and getattr(problem, "coords", None) is None:
            raise MetaheurError(f"starts = 'curve' needs city coordinates, which {problem.name} has not: "
                                "use 'random' or 'auto'")
        return self


@dataclass(frozen=True)
class IslandParams:
    """Everything an island's epoch needs besides its state: GA and local-search parameters."""

    ga: GAParams = field(default_factory=GAParams)
    tabu: TabuParams = field(default_factory=TabuParams)
    ils: ILSParams = field(default_factory=ILSParams)
    perm: PermSearchParams = field(default_factory=PermSearchParams)  # a user problem's local search


def with_crossover(ga: GAParams, crossover: str) -> GAParams:
    """``ga`` with another crossover, and the sizes that crossover needs: ``none`` (a tabu island
    for the QAP, an ILS island for the TSP) keeps one member and one child a generation and never
    restarts;
    ``eax`` sizes its population automatically with every member a parent each generation; a
    steady-state crossover taking over from EAX's automatic size gets 30 members and 10 children."""
    if crossover == "none":
        return replace(ga, crossover="none", population=1, offspring=1, restart_after=0)
    if crossover == "eax":
        return replace(ga, crossover="eax", population=0, offspring=1)
    if ga.population == 0:
        return replace(ga, crossover=crossover, population=30, offspring=10)
    return replace(ga, crossover=crossover)


def ls_island(ga: GAParams) -> GAParams:
    """The GA parameters of a local-search island beside GA islands of ``ga``
    (:meth:`Problem.local_search_island <metaheur.problems.Problem.local_search_island>`): one
    continued search in place of the GA (crossover ``none``), a generation of it being the GA's
    local-search budget per child (for the QAP 50 n tabu iterations by default). A QAP tabu island
    (:class:`~metaheur.islands.tabu.TabuIsland`) sends its best to the GA islands and takes no
    migrant, so its search keeps its memory for the whole run (docs/decisions/tabu-islands.md)."""
    return replace(with_crossover(ga, "none"), ls_budget=ga.ls_budget or None)


def ls_island_params(params: IslandParams) -> IslandParams:
    """``params`` with the GA parameters of a local-search island (:func:`ls_island`)."""
    return replace(params, ga=ls_island(params.ga))


def default_ls_budget(params: GAParams, kind: str, n: int) -> int:
    """Local-search effort per child: the explicit budget, else QAP 50 n tabu iterations, TSP n / 4
    kicks (at least 50). An island algorithm may choose its own (:meth:`Island.ls_budget`)."""
    if params.ls_budget is not None:
        return params.ls_budget
    return 50 * n if kind == "qap" else max(50, n // 4)


def param_names(cls) -> list[str]:
    return [f.name for f in fields(cls)]
