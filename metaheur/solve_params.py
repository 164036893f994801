""":class:`SolveParams`: every setting of a solve that is not the instance, the stop rules, the seed
or a warm start, in one object (as PyVRP's ``SolveParams``), readable from the TOML file that
``metaheur solve --config`` reads."""

from __future__ import annotations

import os
import warnings
from dataclasses import dataclass, fields
from typing import Any

from metaheur.errors import MetaheurError
from metaheur.islands.migration import MigrationParams
from metaheur.islands.params import GAParams
from metaheur.search.perm_search import PermSearchParams

RUN_KEYS = ("time_limit", "generations", "target", "no_improvement", "seed")  # [solve] keys that are solve()'s own


@dataclass(frozen=True)
class SolveParams:
    """How a solve runs.

    ``strategy``: ``auto`` (hybrid with a GPU, cpu-islands without), ``cpu-serial``,
    ``cpu-islands``, ``gpu`` or ``hybrid``; ``devices``: the devices to use (``"cpu"``,
    ``"cuda:0"``; default all); ``islands``: how many (default one per core or GPU);
    ``tabu_islands``: CPU islands that run the problem's local-search island instead of the GA
    (:meth:`Problem.local_search_island <metaheur.problems.Problem.local_search_island>`; QAP: one
    continued robust tabu search each; a flow shop or a user problem: a chain of its local
    search), default :meth:`Problem.default_local_search_islands
    <metaheur.problems.Problem.default_local_search_islands>` (QAP: half, rounded down).
    ``ga``, ``tabu``, ``ils``, ``migration``: the parameters of the GA, the tabu search (QAP,
    ``TabuParams``), the iterated local search (TSP, ``ILSParams``) and the migration (``perm``: the
    generic local search of a user's :class:`~metaheur.PermutationProblem`); a local search's
    parameters go by their section's name (:func:`~metaheur.islands.params.search_sections`);
    ``None`` takes the instance's defaults (:meth:`Problem.default_params
    <metaheur.problems.Problem.default_params>` and :meth:`Problem.default_migration
    <metaheur.problems.Problem.default_migration>`).
    ``sync``: epochs of ``epoch_generations`` generations (the result is then the same for a seed
    wherever it runs), else epochs of ``epoch_seconds``. ``scheduler`` (``tcp://HOST:PORT``) or
    ``dask_local`` (workers): run the CPU islands on a Dask cluster. ``stop_at_optimum``: end the
    run, with stop reason ``optimal``, when it reaches a value the built-in table of best-known
    values says is optimal.
    """

    strategy: str = "auto"
    devices: tuple[str, ...] | None = None
    islands: int | None = None
    tabu_islands: int | None = None
    ga: GAParams | None = None
    tabu: Any = None  # the QAP's TabuParams
    ils: Any = None  # the TSP's ILSParams
    perm: PermSearchParams | None = None
    migration: MigrationParams | None = None
    sync: bool = False
    epoch_seconds: float = 1.0
    epoch_generations: int = 5
    scheduler: str | None = None
    dask_local: int | None = None
    stop_at_optimum: bool = True

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
        """The parameters given for ``cls``'s section (a field of that name), or None (the
        instance's defaults; the solver checks their class)."""
        return getattr(self, cls.section, None)

    @classmethod
    def from_config(cls, config: dict) -> SolveParams:
        """The parameters of a configuration read by :func:`metaheur.config.read_config`."""
        names = {f.name for f in fields(cls)}
        values = {k: v for k, v in config["solve"].items() if k in names}
        values.update({k: v for k, v in config.items() if k in names and v is not None})
        return cls(**values)

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
