"""The settings of a run that a checkpoint keeps: what :func:`metaheur.solve` resolved before the
islands started (strategy, devices, seed, migration, epochs, stop rules), so that a resumed run
goes on exactly as it began. Plain data with a JSON round trip (the checkpoint's header)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from metaheur.islands.migration import MigrationParams


@dataclass(frozen=True)
class InstanceInfo:
    """Which instance a run solves: its fingerprint (:meth:`Problem.fingerprint`), name, size, kind,
    where it was read from (None for an instance built in memory) and its class as
    ``module:Class`` (what reads it again on resuming; None in older checkpoints)."""

    key: str
    name: str
    n: int
    kind: str
    source: str | None = None
    problem_class: str | None = None


@dataclass(frozen=True)
class RunSettings:
    """A run's resolved settings: ``strategy`` (resolved, never ``auto``), one device name per
    island, the ``seed``, the ``migration``, ``sync`` epochs of ``epoch_generations`` generations
    or epochs of ``epoch_seconds``, the built-in stop rules by name (``stop``: ``time_limit``,
    ``generations``, ``target``, ``no_improvement``), whether the run ends at a proven optimum of
    the built-in table (``stop_at_optimum``) and whether the islands run in this process
    (``in_process``)."""

    problem: InstanceInfo
    strategy: str
    seed: int
    devices: tuple[str, ...]
    migration: MigrationParams = field(default_factory=MigrationParams)
    sync: bool = False
    epoch_seconds: float = 1.0
    epoch_generations: int = 5
    stop: dict = field(default_factory=dict)
    stop_at_optimum: bool = True
    in_process: bool = False

    def to_json(self) -> dict:
        """A JSON-ready dict (what a checkpoint's header holds)."""
        return dataclasses.asdict(self) | {"devices": list(self.devices)}

    @classmethod
    def from_json(cls, data: dict) -> RunSettings:
        """The settings :meth:`to_json` wrote (a missing or mistyped field raises KeyError/TypeError)."""
        return cls(**(data | {"problem": InstanceInfo(**data["problem"]), "devices": tuple(data["devices"]),
                              "migration": MigrationParams(**data["migration"])}))
