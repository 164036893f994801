"""Migration between islands at epoch boundaries (Alba and Tomassini 2002, "Parallelism and
evolutionary algorithms"): who sends to whom (topology) and what a migrant replaces (policy).

Topologies: ``ring`` (island i sends to i + 1), ``complete`` (every island to every other) and
``random`` (each island to one other island drawn each epoch). Policies: ``best-worst`` (the
sender's best replaces the receiver's worst, when better and not already present) and ``elite``
(an archive of the best distinct solutions seen anywhere; each island receives the archive
member it lacks that is best, in place of its worst). Migrants never duplicate a member. An
interval of 0 keeps the islands apart (independent runs).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from metaheur.errors import MetaheurError
from metaheur.islands.island import IslandState

TOPOLOGIES = ("ring", "complete", "random")
POLICIES = ("best-worst", "elite")


@dataclass(frozen=True)
class MigrationParams:
    """How the islands exchange their solutions at epoch boundaries (the module docstring).

    ``topology``: who sends to whom: ``ring``, ``complete`` or ``random``; ``policy``: what a
    migrant replaces: ``best-worst`` (the receiver's worst) or ``elite`` (an archive of the best
    distinct solutions); ``interval``: epochs between migrations (0: never, independent islands);
    ``archive``: the ``elite`` archive's size.
    """

    topology: str = "ring"
    policy: str = "best-worst"
    interval: int = 1  # epochs between migrations; 0: never
    archive: int = 8  # elite archive size

    def __post_init__(self) -> None:
        if self.topology not in TOPOLOGIES:
            raise MetaheurError(f"topology must be one of {', '.join(TOPOLOGIES)}, got {self.topology!r}")
        if self.policy not in POLICIES:
            raise MetaheurError(f"migration policy must be one of {', '.join(POLICIES)}, got {self.policy!r}")
        if self.interval < 0:
            raise MetaheurError(f"migration interval must be 0 (never) or a number of epochs, got {self.interval}")
        if self.archive < 1:
            raise MetaheurError(f"elite archive size must be at least 1, got {self.archive}")


@dataclass
class Migration:
    """One migrant: from island ``source`` to island ``target``, with its cost."""

    source: int
    target: int
    cost: int


def _senders(topology: str, count: int, rng: np.random.Generator) -> list[tuple[int, int]]:
    if count < 2:
        return []
    if topology == "ring":
        return [(i, (i + 1) % count) for i in range(count)]
    if topology == "complete":
        return [(i, j) for i in range(count) for j in range(count) if i != j]
    others = [(i, int(rng.integers(0, count - 1))) for i in range(count)]
    return [(i, j + (j >= i)) for i, j in others]


def _receive(state: IslandState, solution: np.ndarray, cost: int) -> bool:
    """Put ``solution`` in place of the worst member when better and not already present."""
    if state.population is None:
        return False
    worst = int(np.argmax(state.costs))
    if cost >= state.costs[worst] or (state.population == solution[None, :]).all(axis=1).any():
        return False
    state.population[worst], state.costs[worst] = solution, cost
    if state.best_cost is None or cost < state.best_cost:
        state.best, state.best_cost, state.stale = solution.copy(), int(cost), 0
    return True


class Migrator:
    """Applies a :class:`MigrationParams` to the island states (in place), deterministically."""

    def __init__(self, params: MigrationParams, seed: int):
        self.params = params
        self.rng = np.random.default_rng([seed, 0x616D])
        self.archive: list[tuple[int, np.ndarray]] = []

    def migrate(self, states: list[IslandState], epoch: int, refusing: frozenset[int] = frozenset()) -> list[Migration]:
        """Move migrants between ``states`` (in place) after ``epoch``; the islands in ``refusing``
        send but do not receive this time."""
        if len(states) < 2 or not self.params.interval or (epoch + 1) % self.params.interval:
            return []
        if self.params.policy == "elite":
            return self._elite(states, refusing)
        bests = [(s.best.copy(), s.best_cost) if s.best is not None else None for s in states]
        done = []
        for src, dst in _senders(self.params.topology, len(states), self.rng):
            if bests[src] is not None and dst not in refusing and _receive(states[dst], bests[src][0], bests[src][1]):
                done.append(Migration(src, dst, int(bests[src][1])))
        return done

    def state(self) -> dict:
        """What a checkpoint must keep: the random generator and the elite archive."""
        return {"rng": self.rng.bit_generator.state, "archive_costs": [c for c, _ in self.archive]}

    def archive_arrays(self) -> list[np.ndarray]:
        return [a for _, a in self.archive]

    def restore(self, state: dict, archive: list[np.ndarray]) -> None:
        self.rng.bit_generator.state = state["rng"]
        self.archive = [(int(c), np.asarray(a)) for c, a in zip(state["archive_costs"], archive, strict=True)]

    def _elite(self, states: list[IslandState], refusing: frozenset[int]) -> list[Migration]:
        for s in states:
            if s.best is not None and not any(np.array_equal(s.best, a) for _, a in self.archive):
                self.archive.append((int(s.best_cost), s.best.copy()))
        self.archive.sort(key=lambda item: item[0])
        del self.archive[self.params.archive:]
        done = []
        for i, s in enumerate(states):
            if i in refusing:
                continue
            for cost, sol in self.archive:
                if s.population is not None and not (s.population == sol[None, :]).all(axis=1).any():
                    if _receive(s, sol, cost):
                        done.append(Migration(-1, i, cost))
                    break
        return done
