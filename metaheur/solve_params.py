""":class:`SolveParams`: every setting of a solve that is not the instance, the stop rules, the seed
or a warm start, in one object (as PyVRP's ``SolveParams``), readable from the TOML file that
``metaheur solve --config`` reads."""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, fields
from typing import Any

from metaheur.arguments import BOOL, INT, NUMBER, STR, Takes, check_arguments, instance_of, plain
from metaheur.errors import MetaheurError
from metaheur.islands.migration import MigrationParams
from metaheur.islands.params import GAParams, by_section

RUN_KEYS = ("time_limit", "generations", "target", "no_improvement", "seed")  # [solve] keys that are solve()'s own
#: Earlier names of fields, still taken (with a warning).
RENAMED = {"tabu_islands": "ls_islands", "walk_islands": "ls_islands"}


#: The types of the fields (their values are checked by __post_init__ and the solver); ``searches``: by _by_section.
_TAKES = {"strategy": STR,
          "devices": Takes("a list of device names or None", lambda v: v is None or (
              not isinstance(v, (str, bytes)) and hasattr(v, "__iter__") and all(isinstance(d, str) for d in v))),
          "islands": INT.or_none(), "ls_islands": INT.or_none(), "ga": instance_of(GAParams, "a GAParams").or_none(),
          "migration": instance_of(MigrationParams, "a MigrationParams").or_none(), "sync": BOOL,
          "epoch_seconds": NUMBER, "epoch_generations": INT, "scheduler": STR.or_none(), "dask_local": INT.or_none(),
          "stop_at_optimum": BOOL}


@dataclass(frozen=True, init=False)
class SolveParams:
    """How a solve runs.

    ``strategy``: ``auto`` (hybrid with a GPU, cpu-islands without), ``cpu-serial``,
    ``cpu-islands``, ``gpu`` or ``hybrid``; ``devices``: the devices to use (``"cpu"``,
    ``"cuda:0"``; default all); ``islands``: how many (default one per core or GPU);
    ``ls_islands``: CPU islands that run the problem's local-search island instead of the GA
    (:meth:`Problem.local_search_island <metaheur.problem.SolvingPlan.local_search_island>`, a
    continued local search each), default :meth:`Problem.default_local_search_islands
    <metaheur.problem.SolvingPlan.default_local_search_islands>`.
    ``ga``, ``migration``: the parameters of the GA and the migration; ``searches``: those of the
    local searches, by section: a mapping ``{"tabu": TabuParams(scale=4)}`` or a sequence of
    parameter objects, each of a class that the problems declare (:attr:`Problem.search_params
    <metaheur.problem.SolvingPlan.search_params>`, listed by ``metaheur info PROBLEM``) or the
    engine's ``PermSearchParams`` (``perm``). ``SolveParams(tabu=..., ils=...)`` (a section by its
    name as a keyword) is an earlier spelling, still taken with a ``DeprecationWarning``, as is
    ``tabu_islands`` for ``ls_islands``; ``params.tabu`` reads a section given. ``None`` (a
    section not given) takes the instance's defaults (:meth:`Problem.default_params
    <metaheur.problem.SolvingPlan.default_params>` and :meth:`Problem.default_migration
    <metaheur.problem.SolvingPlan.default_migration>`).
    ``sync``: epochs of ``epoch_generations`` generations (the result is then the same for a seed
    wherever it runs), else epochs of ``epoch_seconds``. ``scheduler`` (``tcp://HOST:PORT``) or
    ``dask_local`` (workers): run the CPU islands on a Dask cluster. ``stop_at_optimum``: end the
    run, with stop reason ``optimal``, when it reaches a value the built-in table of best-known
    values says is optimal.
    """

    strategy: str = "auto"
    devices: tuple[str, ...] | None = None
    islands: int | None = None
    ls_islands: int | None = None
    ga: GAParams | None = None
    searches: tuple = ()
    migration: MigrationParams | None = None
    sync: bool = False
    epoch_seconds: float = 1.0
    epoch_generations: int = 5
    scheduler: str | None = None
    dask_local: int | None = None
    stop_at_optimum: bool = True

    def __init__(self, strategy: str = "auto", devices: Iterable[str] | None = None, islands: int | None = None,
                 ls_islands: int | None = None, ga: GAParams | None = None,
                 searches: Mapping[str, Any] | Iterable[Any] = (), migration: MigrationParams | None = None,
                 sync: bool = False, epoch_seconds: float = 1.0, epoch_generations: int = 5,
                 scheduler: str | None = None, dask_local: int | None = None, stop_at_optimum: bool = True,
                 **earlier: Any) -> None:
        arguments = locals()
        check_arguments("SolveParams()", _TAKES, arguments)
        values = {f.name: plain(arguments[f.name]) for f in fields(type(self))}  # the fields, as given
        for old, new in RENAMED.items():
            if old in earlier:
                warnings.warn(f"SolveParams({old}=...) is now {new}=...", DeprecationWarning, stacklevel=2)
                value = earlier.pop(old)
                values[new] = value if values[new] is None else values[new]
        if earlier:
            warnings.warn(f"SolveParams({', '.join(f'{k}=...' for k in earlier)}): give the local searches' "
                          f"parameters as searches={{{', '.join(repr(k) for k in earlier)}: ...}}",
                          DeprecationWarning, stacklevel=2)
        values["searches"] = _by_section(searches, earlier)
        for name, value in values.items():
            object.__setattr__(self, name, value)
        self.__post_init__()

    def __post_init__(self) -> None:
        if self.devices is not None:
            if isinstance(self.devices, str):
                raise MetaheurError(f"devices takes a list of device names, got {self.devices!r}")
            object.__setattr__(self, "devices", tuple(self.devices))
        if not self.epoch_seconds > 0:
            raise MetaheurError(f"epoch_seconds must be positive, got {self.epoch_seconds}")
        if self.epoch_generations < 1:
            raise MetaheurError(f"epoch_generations must be at least 1, got {self.epoch_generations}")

    def search(self, cls: type) -> Any:
        """The parameters given for ``cls``'s section, or None (the instance's defaults; the solver
        checks their class)."""
        return self.section(cls.section)

    def section(self, name: str) -> Any:
        """The parameters given for the section ``name``, or None."""
        return next((value for value in self.searches if type(value).section == name), None)

    def __getattr__(self, name: str) -> Any:
        """A section's parameters by its name (``params.tabu``), None when not given; the earlier
        name of a field (``params.tabu_islands``)."""
        if name.startswith("_"):
            raise AttributeError(name)
        if name in RENAMED:
            return getattr(self, RENAMED[name])
        from metaheur.islands.params import search_sections

        if name in search_sections():
            return self.section(name)
        raise AttributeError(f"{type(self).__name__} has no attribute or search section {name!r}")

    @classmethod
    def from_config(cls, config: dict) -> SolveParams:
        """The parameters of a configuration read by :func:`metaheur.config.read_config` (its local
        searches' sections by their names, :func:`~metaheur.islands.params.search_sections`)."""
        from metaheur.islands.params import search_sections

        names = {f.name for f in fields(cls)} - {"searches"}
        values = {k: v for k, v in config["solve"].items() if k in names}
        values.update({k: v for k, v in config.items() if k in names and v is not None})
        declared = search_sections()
        return cls(**values, searches={k: v for k, v in config.items() if k in declared and v is not None})

    @classmethod
    def from_file(cls, path: str | os.PathLike) -> SolveParams:
        """The parameters of a TOML file as ``metaheur solve --config`` reads it (same sections,
        keys and checks: see :mod:`metaheur.config`). The ``[solve]`` keys that are arguments of
        :func:`metaheur.solve` itself (time_limit, generations, target, no_improvement, seed) are
        not parameters: give them to ``solve()`` (a warning names any the file holds)."""
        from metaheur.config import read_config

        config = read_config(path)
        left = [k for k in RUN_KEYS if k in config["solve"]]
        if left:
            warnings.warn(f"{os.fspath(path)}: [solve] {', '.join(left)} are arguments of solve(), not "
                          "parameters: SolveParams.from_file leaves them out", UserWarning, stacklevel=2)
        return cls.from_config(config)



def _by_section(searches: Mapping[str, Any] | Iterable[Any], named: Mapping[str, Any]) -> tuple:
    """The local searches' parameters given, sorted by section, one object a section, None values
    left out: ``searches`` as a mapping from section name or a sequence, and ``named`` (sections
    given by keyword), checked by :func:`~metaheur.islands.params.by_section`."""
    if isinstance(searches, Mapping):
        values, named = [], {**searches, **named}
    elif isinstance(searches, (str, bytes)) or not isinstance(searches, Iterable):
        raise MetaheurError("searches takes a mapping {section: parameters} or a sequence of local searches' "
                            f"parameters, got {type(searches).__name__}")
    else:
        values = list(searches)
    given = by_section([v for v in values if v is not None], {k: v for k, v in named.items() if v is not None})
    return tuple(value for _, value in sorted(given.items()))
