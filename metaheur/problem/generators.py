"""Built-in instances, accepted wherever an instance is: ``gen:KIND:N[:SEED]`` (the seed defaults
to 1), made by the seeded generator of the registered problem whose formats register the prefix
``KIND`` (:class:`~metaheur.problem.interface.ProblemFormats`; the built-in problems' generators
are in problems/<name>/). The CLI's built-in instances and the unit tests' data."""

from __future__ import annotations

from metaheur.errors import MetaheurError
from metaheur.inputs import parse_int


def generated_size(spec: str, max_n: int) -> tuple[int, int]:
    """``(n, seed)`` of a built-in name ``gen:KIND:N[:SEED]`` (the seed defaults to 1)."""
    parts = spec.split(":")
    usage = f"built-in instances are gen:{parts[1]}:N with an optional :SEED"
    if len(parts) not in (3, 4):
        raise MetaheurError(f"unknown built-in instance {spec!r}: {usage}")
    try:
        n = parse_int(parts[2])
        seed = parse_int(parts[3]) if len(parts) == 4 else 1
    except ValueError:
        raise MetaheurError(f"bad built-in instance {spec!r}: {usage}") from None
    if seed < 0:
        raise MetaheurError(f"bad built-in instance {spec!r}: the seed must be >= 0")
    if n > max_n:
        raise MetaheurError(f"built-in instance {spec!r} is too large")
    return n, seed


def parse_generated(spec: str):
    """The instance named by ``gen:KIND:N[:SEED]`` (through the registered problem whose formats
    generate ``KIND``), or ``None`` when ``spec`` is not such a name."""
    from metaheur.problem.registry import generated

    return generated(spec)
