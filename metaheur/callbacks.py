"""Hooks a caller of :func:`metaheur.solve` or :class:`~metaheur.islands.model.IslandModel`
overrides to follow a run (the CLI's progress lines are one)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from metaheur.islands.island import EpochStats
    from metaheur.islands.migration import Migration
    from metaheur.islands.model import IslandModel


class Callbacks:
    """Hooks a caller may override; every one is a no-op by default. The costs they see are the
    engine's (``model.problem.engine_sign * value``: the value itself for a minimisation, its
    negation for a maximisation), as the islands keep them."""

    def on_start(self, model: IslandModel) -> None: ...

    def on_epoch(self, model: IslandModel, epoch: int, stats: list[EpochStats]) -> None: ...

    def on_best(self, model: IslandModel, cost: int, island: int) -> None: ...

    def on_migration(self, model: IslandModel, epoch: int, migrations: list[Migration]) -> None: ...

    def on_end(self, model: IslandModel, reason: str) -> None: ...

    def on_progress(self, model: IslandModel, elapsed: float) -> None:
        """Called every :data:`~metaheur.islands.model.PROGRESS_SECONDS` of wall time while the
        worker processes start (before ``on_start``) and while an epoch runs (building first
        populations included), so that a status line never goes quiet for long. From ``on_start``
        on, ``model.live`` (:class:`~metaheur.islands.model.LiveProgress`) holds the run's best
        and counters as the islands last reported them, at most about two seconds old, also in
        the middle of an epoch."""
