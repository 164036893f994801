"""Kernel variants: the switches that choose between kernels doing the same work in another layout
(mostly the same moves, costs and solutions either way), kept side by side until a GPU measures
them.

Each switch is a *family*: its name (as its error messages name it), the values it allows, the
default first, and a one-line description. Whoever owns a switch registers its family where the
switch is declared (:func:`register_variants`: the engine's own in metaheur/search/, a problem's
in its package's parameters, at import), and checks a value with :func:`check_variant`, which
raises one uniform line::

    eax_kernel must be one of classic, fused, block, got 'x'

:func:`variant_families` lists what is registered (the framework names no problem: a family
appears once its owner is imported).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from metaheur.errors import MetaheurError


@dataclass(frozen=True)
class VariantFamily:
    """One switch: ``name``, the allowed ``values`` (the default first), a one-line ``description``."""

    name: str
    values: tuple[str, ...]
    description: str

    @property
    def default(self) -> str:
        return self.values[0]


_FAMILIES: dict[str, VariantFamily] = {}


def register_variants(family: str, values: Iterable[str], description: str) -> tuple[str, ...]:
    """Declare the variant family ``family``: its allowed ``values``, the default first, and a
    one-line ``description``; returns the values. Registering a family again with the same values
    is allowed (a module imported twice); with other values it is a programming error."""
    values = tuple(values)
    if not values or len(set(values)) != len(values) or not all(isinstance(v, str) and v for v in values):
        raise ValueError(f"variant family {family!r}: values must be distinct non-empty strings, got {values!r}")
    old = _FAMILIES.get(family)
    if old is not None and old.values != values:
        raise ValueError(f"variant family {family!r} is registered with {', '.join(old.values)}, "
                         f"not {', '.join(values)}")
    _FAMILIES[family] = VariantFamily(family, values, " ".join(description.split()))
    return values


def variants(family: str) -> tuple[str, ...]:
    """The allowed values of ``family``, the default first (a family not registered: KeyError)."""
    return _FAMILIES[family].values


def variant_families() -> dict[str, VariantFamily]:
    """Every registered family by name, in registration order."""
    return dict(_FAMILIES)


def check_variant(family: str, value) -> str:
    """``value`` when ``family`` allows it, else :class:`~metaheur.errors.MetaheurError` with one
    line: ``<family> must be one of <values>, got <value>``."""
    allowed = variants(family)
    if not isinstance(value, str) or value not in allowed:
        raise MetaheurError(f"{family} must be one of {', '.join(allowed)}, got {value!r}")
    return value
