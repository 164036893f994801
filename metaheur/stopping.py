"""Stop rules, combined by "stop when any fires" (PyVRP's stopping criteria are the model).

A stop rule is any callable ``rule(progress) -> bool`` that looks at a :class:`Progress` snapshot
taken at an epoch boundary; the built-in rules below are such callables, each with the
``reason`` a result reports when it fires. A user's rule reports its ``reason`` attribute when it
has one, else its function name, else ``"user"`` (a lambda). A run needs a :class:`TimeLimit`
or a :class:`MaxGenerations` among its rules to be sure to end.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, fields
from typing import ClassVar

from metaheur.errors import MetaheurError


@dataclass(frozen=True)
class Progress:
    """Where a run stands at the end of an epoch."""

    elapsed: float  # seconds of search (compilation excluded), over every session of a resumed run
    best_cost: int | None  # the run's best value so far, in the problem's sense (None before the first population)
    generations: int  # generations done by the island that did fewest
    epochs: int  # epochs done
    epochs_without_improvement: int
    interrupted: bool = False  # Ctrl-C: the run stops whatever the rules say


StopRule = Callable[[Progress], bool]


@dataclass(frozen=True)
class TimeLimit:
    """Fires after ``seconds`` of search; also bounds every epoch's work, so a run ends on time."""

    seconds: float
    reason: ClassVar[str] = "time_limit"

    def __post_init__(self) -> None:
        if not self.seconds > 0:
            raise MetaheurError(f"time limit must be positive, got {self.seconds}")

    def __call__(self, p: Progress) -> bool:
        return p.elapsed >= self.seconds


@dataclass(frozen=True)
class MaxGenerations:
    """Fires when every island has done ``generations`` generations."""

    generations: int
    reason: ClassVar[str] = "generations"

    def __post_init__(self) -> None:
        if self.generations < 1:
            raise MetaheurError(f"generations must be at least 1, got {self.generations}")

    def __call__(self, p: Progress) -> bool:
        return p.generations >= self.generations


@dataclass(frozen=True)
class Target:
    """Fires at ``value`` or better in the problem's ``sense``: a cost of at most ``value`` for a
    minimisation (``"min"``), a value of at least ``value`` for a maximisation (``"max"``)."""

    value: int
    sense: str = "min"
    reason: ClassVar[str] = "target"

    def __post_init__(self) -> None:
        if self.sense not in ("min", "max"):
            raise MetaheurError(f"sense must be 'min' or 'max', got {self.sense!r}")

    def __call__(self, p: Progress) -> bool:
        if p.best_cost is None:
            return False
        return p.best_cost <= self.value if self.sense == "min" else p.best_cost >= self.value

    @property
    def engine_value(self) -> int:
        """The target as an engine cost (the engine minimises; a maximisation's values are negated)."""
        return self.value if self.sense == "min" else -self.value


@dataclass(frozen=True)
class ProvenOptimum(Target):
    """Fires at the proven optimum ``value`` of the best-known table: nothing better exists. A
    better value proves that the entry is of another instance of that name and size (a renamed or
    changed file): :meth:`StopRules.without_beaten_optimum` then drops the rule."""

    reason: ClassVar[str] = "optimal"


@dataclass(frozen=True)
class NoImprovement:
    """Fires after ``epochs`` epochs without a new best."""

    epochs: int
    reason: ClassVar[str] = "no_improvement"

    def __post_init__(self) -> None:
        if self.epochs < 1:
            raise MetaheurError(f"no-improvement limit must be at least 1 epoch, got {self.epochs}")

    def __call__(self, p: Progress) -> bool:
        return p.epochs_without_improvement >= self.epochs


BUILT_IN = (TimeLimit, MaxGenerations, Target, NoImprovement)  # the rules a checkpoint stores, by reason


def rule_reason(rule: StopRule) -> str:
    """The stop reason a rule reports: its ``reason``, else its function's name, else ``"user"``."""
    reason = getattr(rule, "reason", None)
    if isinstance(reason, str) and reason:
        return reason
    name = getattr(rule, "__name__", "")
    return name if name.isidentifier() else "user"


@dataclass(frozen=True)
class StopRules:
    """Any of the rules; a run needs a time limit or a generation budget to be sure to end."""

    rules: tuple[StopRule, ...] = ()

    def __post_init__(self) -> None:
        for rule in self.rules:
            if not callable(rule):
                raise MetaheurError(f"a stop rule is a callable rule(progress) -> bool, got {rule!r}")
        if not any(isinstance(r, (TimeLimit, MaxGenerations)) for r in self.rules):
            raise MetaheurError("give a time limit or a number of generations (or both)")

    def fired(self, p: Progress) -> str | None:
        """The reason of the first rule that fires, or None."""
        if p.interrupted:
            return "interrupted"
        return next((rule_reason(rule) for rule in self.rules if rule(p)), None)

    def find(self, cls):
        return next((r for r in self.rules if isinstance(r, cls)), None)

    def without_beaten_optimum(self, best: int | None) -> StopRules | None:
        """These rules less the proven optimum that ``best`` (an engine cost) beats; None when no
        proven optimum is beaten."""
        rule = self.find(ProvenOptimum)
        if rule is None or best is None or best >= rule.engine_value:
            return None
        return StopRules(tuple(r for r in self.rules if r is not rule))

    @property
    def target(self) -> int | None:
        """The largest engine cost at which a target rule ends the run (islands stop their epoch
        there; :attr:`Target.engine_value`)."""
        values = [r.engine_value for r in self.rules if isinstance(r, Target)]
        return max(values) if values else None

    def built_in(self) -> dict:
        """The built-in rules as plain values (what a checkpoint and a result's parameters hold;
        a user's callable cannot be stored)."""
        return {r.reason: getattr(r, fields(r)[0].name) for r in self.rules if type(r) in BUILT_IN}


def as_rule_list(stop: StopRule | Iterable[StopRule] | None) -> list[StopRule]:
    """``stop`` as a list of rules: one rule, a list of them, a :class:`StopRules`, or None."""
    if stop is None:
        return []
    if isinstance(stop, StopRules):
        return list(stop.rules)
    if callable(stop):
        return [stop]
    try:
        return list(stop)
    except TypeError:
        raise MetaheurError(f"stop takes a rule (a callable rule(progress) -> bool) or a list of them, "
                            f"got {stop!r}") from None


def stop_rules(*, time_limit: float | None = None, generations: int | None = None, target: int | None = None,
               no_improvement: int | None = None, sense: str = "min") -> StopRules:
    """Build :class:`StopRules` from plain values (``None`` leaves a rule out; ``sense``: the
    problem's, for the target)."""
    return StopRules(tuple(built_in_rules(time_limit=time_limit, generations=generations, target=target,
                                          no_improvement=no_improvement, sense=sense)))


def built_in_rules(*, time_limit: float | None = None, generations: int | None = None, target: int | None = None,
                   no_improvement: int | None = None, sense: str = "min") -> list[StopRule]:
    """The built-in rules for plain values (``None`` leaves a rule out; ``sense``: the problem's,
    for the target)."""
    rules: list[StopRule] = []
    if time_limit is not None:
        rules.append(TimeLimit(float(time_limit)))
    if generations is not None:
        rules.append(MaxGenerations(int(generations)))
    if target is not None:
        rules.append(Target(int(target), sense))
    if no_improvement is not None:
        rules.append(NoImprovement(int(no_improvement)))
    return rules
