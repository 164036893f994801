"""One check of the public API's arguments (``metaheur.solve``, ``resume``, ``SolveParams``,
``load_instance``, ``load_solution``): each entry point states what every argument takes
(:class:`Takes`), and :func:`check_arguments` refuses, before any work, a value of another type
with :class:`~metaheur.errors.ArgumentTypeError` (a TypeError) and one out of range with
:class:`~metaheur.errors.ArgumentValueError` (a ValueError), both naming the function, the
argument and what it takes. A bool is not an integer or a number, a string is not a number; a
numpy integer is an integer (kept as a Python one: :func:`plain`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from numbers import Integral, Real
from typing import Any

import numpy as np

from metaheur.errors import ArgumentTypeError, ArgumentValueError

_BOOLS = (bool, np.bool_)


@dataclass(frozen=True)
class Takes:
    """What an argument takes: ``words`` for the messages, ``is_type`` (a TypeError otherwise)
    and ``is_valid`` (a ValueError otherwise; asked only of a value of the right type)."""

    words: str
    is_type: Callable[[Any], bool]
    is_valid: Callable[[Any], bool] = lambda value: True

    def or_none(self) -> Takes:
        """This, or None."""
        return Takes(f"{self.words} or None", lambda v: v is None or self.is_type(v),
                     lambda v: v is None or self.is_valid(v))

    def where(self, words: str, is_valid: Callable[[Any], bool]) -> Takes:
        """This type with a rule on its values (``words`` replace the description)."""
        return Takes(words, self.is_type, is_valid)


def is_int(value: object) -> bool:
    """An integer (a numpy one too), not a bool."""
    return isinstance(value, Integral) and not isinstance(value, _BOOLS)


def is_number(value: object) -> bool:
    """A real number (an integer or a float, numpy's too), not a bool and not a string."""
    return isinstance(value, Real) and not isinstance(value, _BOOLS)


INT = Takes("an integer", is_int)
NUMBER = Takes("a number", is_number)
BOOL = Takes("True or False", lambda v: isinstance(v, _BOOLS))
STR = Takes("a string", lambda v: isinstance(v, str))
PATH = Takes("a path (str or os.PathLike)", lambda v: isinstance(v, (str, os.PathLike)))


def is_rules(value: object) -> bool:
    """Stop rules as ``solve(stop=...)`` takes them: None, one callable rule, or a list or tuple of
    them (any other iterable is taken as it is)."""
    if value is None or callable(value):
        return True
    if isinstance(value, (list, tuple)):
        return all(callable(rule) for rule in value)
    return not isinstance(value, (str, bytes, Mapping)) and hasattr(value, "__iter__")


def is_callbacks(value: object) -> bool:
    """None, or an object with every hook of :class:`~metaheur.callbacks.Callbacks` (a subclass's
    instance)."""
    from metaheur.callbacks import Callbacks

    hooks = [name for name in vars(Callbacks) if name.startswith("on_")]
    return value is None or all(callable(getattr(value, name, None)) for name in hooks)


STOP = Takes("a stop rule (a callable rule(progress) -> bool), a list of them or None", is_rules)
CALLBACKS = Takes("a metaheur.Callbacks (an object with its on_... hooks) or None", is_callbacks)


def either(*kinds: Takes) -> Takes:
    """One of ``kinds`` (a value valid for the first whose type it has)."""
    def valid(value: object) -> bool:
        return next(k for k in kinds if k.is_type(value)).is_valid(value)

    return Takes(" or ".join(k.words for k in kinds), lambda v: any(k.is_type(v) for k in kinds), valid)


def instance_of(cls: type | tuple[type, ...], words: str) -> Takes:
    """An instance of ``cls``."""
    return Takes(words, lambda v: isinstance(v, cls))


def check_arguments(where: str, takes: Mapping[str, Takes], values: Mapping[str, object]) -> None:
    """Refuse the first of ``values`` (argument name -> value) that its :class:`Takes` in ``takes``
    does not take; ``where``: the function, as the message names it (``solve()``)."""
    for name, rule in takes.items():
        value = values[name]
        if not rule.is_type(value):
            raise ArgumentTypeError(f"{where}: {name} takes {rule.words}, got {_shown(value)}")
        if not rule.is_valid(value):
            raise ArgumentValueError(f"{where}: {name} takes {rule.words}, got {_shown(value)}")


def plain(value: object) -> object:
    """A numpy scalar (``np.int64(3)``, ``np.bool_``) as the Python value it holds, so that a
    result or checkpoint written from it is plain JSON; any other value as it is."""
    return value.item() if isinstance(value, np.generic) else value


def _shown(value: object) -> str:
    """A value in a message: its repr (shortened) and its type."""
    text = repr(value)
    return f"{text if len(text) <= 60 else text[:57] + '...'} ({type(value).__name__})"
