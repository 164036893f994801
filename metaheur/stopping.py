"""Stop rules, combined by "stop when any fires" (PyVRP's stopping criteria are the model).

Each rule looks at a :class:`Progress` snapshot taken at an epoch boundary (and between kernel
launches for the time limit) and returns the reason it fires, or ``None``.
"""

from __future__ import annotations

from dataclasses import dataclass

from metaheur.errors import MetaheurError


@dataclass
class Progress:
    elapsed: float  # seconds of search (compilation excluded)
    generations: int  # generations done by the island that did fewest (synchronous) / all (time mode)
    best_cost: int | None
    epochs_without_improvement: int
    interrupted: bool = False


@dataclass(frozen=True)
class TimeLimit:
    seconds: float

    def __post_init__(self) -> None:
        if not self.seconds > 0:
            raise MetaheurError(f"time limit must be positive, got {self.seconds}")

    def fired(self, p: Progress) -> str | None:
        return "time_limit" if p.elapsed >= self.seconds else None


@dataclass(frozen=True)
class MaxGenerations:
    generations: int

    def __post_init__(self) -> None:
        if self.generations < 1:
            raise MetaheurError(f"generations must be at least 1, got {self.generations}")

    def fired(self, p: Progress) -> str | None:
        return "generations" if p.generations >= self.generations else None


@dataclass(frozen=True)
class Target:
    value: int

    def fired(self, p: Progress) -> str | None:
        return "target" if p.best_cost is not None and p.best_cost <= self.value else None


@dataclass(frozen=True)
class NoImprovement:
    epochs: int

    def __post_init__(self) -> None:
        if self.epochs < 1:
            raise MetaheurError(f"no-improvement limit must be at least 1 epoch, got {self.epochs}")

    def fired(self, p: Progress) -> str | None:
        return "no_improvement" if p.epochs_without_improvement >= self.epochs else None


@dataclass(frozen=True)
class StopRules:
    """Any of the rules; a run needs a time limit or a generation budget to be sure to end."""

    rules: tuple = ()

    def __post_init__(self) -> None:
        if not any(isinstance(r, (TimeLimit, MaxGenerations)) for r in self.rules):
            raise MetaheurError("give a time limit or a number of generations (or both)")

    def fired(self, p: Progress) -> str | None:
        if p.interrupted:
            return "interrupted"
        for rule in self.rules:
            reason = rule.fired(p)
            if reason:
                return reason
        return None

    def find(self, cls):
        return next((r for r in self.rules if isinstance(r, cls)), None)

    @property
    def target(self) -> int | None:
        rule = self.find(Target)
        return None if rule is None else rule.value


def stop_rules(*, time_limit: float | None = None, generations: int | None = None, target: int | None = None,
               no_improvement: int | None = None) -> StopRules:
    """Build :class:`StopRules` from plain values (``None`` leaves a rule out)."""
    rules = []
    if time_limit is not None:
        rules.append(TimeLimit(float(time_limit)))
    if generations is not None:
        rules.append(MaxGenerations(int(generations)))
    if target is not None:
        rules.append(Target(int(target)))
    if no_improvement is not None:
        rules.append(NoImprovement(int(no_improvement)))
    return StopRules(tuple(rules))
