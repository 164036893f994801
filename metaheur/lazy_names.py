"""Names a package re-exports from modules it does not import until a name is asked for (PEP 562):
``import metaheur`` loads no problem package, ``metaheur.QAP`` loads the QAP's alone
(docs/architecture.md, "Layers and folders")."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_names(namespace: dict[str, Any], table: Mapping[str, str]) -> tuple[Callable[[str], Any],
                                                                           Callable[[], list[str]]]:
    """A module's ``__getattr__`` and ``__dir__`` that serve the names of ``table`` (name -> the
    module defining it) from their modules on first use, kept in ``namespace`` (the module's
    globals) from then on."""
    module_name = namespace["__name__"]

    def __getattr__(name: str) -> Any:
        if name not in table:
            raise AttributeError(f"module {module_name!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(table[name]), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *table})

    return __getattr__, __dir__
