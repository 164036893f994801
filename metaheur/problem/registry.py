"""The registered problems: those installed packages register through the entry-point group
``metaheur.problems`` (name -> ``"module:Class"``, as pytest and flake8 find plugins), the
built-in ones among them (metaheur's own entry points, in pyproject.toml: a built-in problem is
registered exactly as a plug-in is). :func:`problem_class` also takes a ``module:Class`` of a
user's own, imported from the current folder too (:func:`working_folder_on_path`).

Registry order: metaheur's own entry points first, by name, then other distributions', as their
metadata lists them; a name registered twice keeps the first. A problem's
:class:`~metaheur.problem.interface.ProblemFormats` make it found: its file extensions and
library folder (:func:`metaheur.problems.load_instance`), its content sniffer (exact sniffers in
registry order, then the broad ones), its ``gen:`` prefixes. A new built-in problem needs one line
in pyproject.toml's entry points (and a reinstall, which writes them into the package's metadata).
"""

from __future__ import annotations

import importlib
import importlib.metadata
import os
import sys
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

from metaheur.errors import MetaheurError
from metaheur.problem.interface import Problem
from metaheur.suggest import did_you_mean

ENTRY_POINT_GROUP = "metaheur.problems"
#: Extensions that say nothing of the problem (Taillard's flow shop files are .txt): their content decides.
GENERIC_EXTENSIONS = (".txt", ".text", ".data", ".in", ".inst")
OWN_DISTRIBUTION = "metaheur"


def import_class(spec: str, what: str = "problem") -> type[Problem]:
    """The :class:`Problem` subclass named by ``"module:Class"`` (one-line errors)."""
    module_name, _, class_name = spec.partition(":")
    if not module_name or not class_name:
        raise MetaheurError(f"{what} {spec!r}: give a registered name or module:Class")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise MetaheurError(f"{what} {spec!r}: cannot import {module_name}: {exc}") from None
    except Exception as exc:  # a user's module that fails while importing
        raise MetaheurError(f"{what} {spec!r}: importing {module_name} failed: {type(exc).__name__}: {exc}") from None
    cls = module
    for part in class_name.split("."):
        cls = getattr(cls, part, None)
        if cls is None:
            raise MetaheurError(f"{what} {spec!r}: {module_name} has no {class_name}")
    if not (isinstance(cls, type) and issubclass(cls, Problem)):
        raise MetaheurError(f"{what} {spec!r}: {class_name} is not a metaheur.Problem subclass")
    return cls


def working_folder_on_path() -> None:
    """Put the current folder first on ``sys.path`` (unless it is there), as ``python -m`` does,
    so that a user's ``module:Class`` imports from it; for good, as the worker processes started
    later take the parent's ``sys.path``."""
    here = os.getcwd()
    if not any(os.path.abspath(entry or os.curdir) == here for entry in sys.path):
        sys.path.insert(0, here)


_SCANNED: dict[tuple, list] = {}


def _entry_points() -> list[importlib.metadata.EntryPoint]:
    """The group's entry points in registry order, the first of each name: metaheur's own by name,
    then the others by distribution, as the metadata lists them; scanned once for a given
    ``sys.path`` (a scan reads every installed distribution's metadata)."""
    key = (importlib.metadata.entry_points, tuple(sys.path))
    if key not in _SCANNED:
        _SCANNED.clear()
        found = list(importlib.metadata.entry_points(group=ENTRY_POINT_GROUP))
        own = sorted((ep for ep in found if ep.dist is not None and ep.dist.name == OWN_DISTRIBUTION),
                     key=lambda ep: ep.name)
        first: dict[str, importlib.metadata.EntryPoint] = {}
        for ep in own + [ep for ep in found if ep not in own]:
            first.setdefault(ep.name, ep)
        _SCANNED[key] = list(first.values())
    return _SCANNED[key]


def registered(skip_broken: bool = False) -> dict[str, type[Problem]]:
    """Every registered problem class by kind, in registry order (a name registered twice keeps
    the first). An entry point whose class cannot be imported is a one-line error, or with
    ``skip_broken`` a warning and left out (what the framework reads of every registered problem,
    its parameter sections and crossovers, must not fail a run for a plug-in it does not use)."""
    out: dict[str, type[Problem]] = {}
    for ep in _entry_points():
        try:
            out[ep.name] = import_class(ep.value, f"problem {ep.name} (entry point of {ENTRY_POINT_GROUP})")
        except MetaheurError as exc:
            if not skip_broken:
                raise
            warnings.warn(f"metaheur: {exc}; left out", RuntimeWarning, stacklevel=2)
    if not _entry_points():
        raise MetaheurError(f"no problem is registered: the entry points of {ENTRY_POINT_GROUP} are missing from "
                            "metaheur's installed metadata (reinstall it: pip install metaheur, or pip install -e .)")
    return out


_DERIVED: dict[Callable, tuple[tuple, Any]] = {}


def per_registry(build: Callable[[tuple[type[Problem], ...]], Any]) -> Any:
    """``build(classes)`` of the registered classes that import (:func:`registered` with
    ``skip_broken``), computed once for a given registry (what the framework derives from every
    registered problem: parameter sections, crossovers)."""
    classes = tuple(registered(skip_broken=True).values())
    cached = _DERIVED.get(build)
    if cached is None or cached[0] != classes:
        cached = _DERIVED[build] = (classes, build(classes))
    return cached[1]


def problem_class(name_or_spec: str | type[Problem]) -> type[Problem]:
    """The problem class of a registered name (``"qap"``) or a ``"module:Class"``."""
    if isinstance(name_or_spec, type):
        if not issubclass(name_or_spec, Problem):
            raise MetaheurError(f"{name_or_spec.__name__} is not a metaheur.Problem subclass")
        return name_or_spec
    text = str(name_or_spec)
    if ":" in text:
        working_folder_on_path()
        return import_class(text)
    classes = registered()
    if text.lower() in classes:
        return classes[text.lower()]
    raise MetaheurError(f"unknown problem {text!r}{did_you_mean(text, classes)}: the registered problems are "
                        f"{', '.join(classes)}, or give module:Class")


def folders() -> list[str]:
    """The library subfolders of every registered problem, in registry order."""
    return list(dict.fromkeys(c.formats.folder for c in registered().values() if c.formats and c.formats.folder))


def extensions() -> list[str]:
    """The file extensions of every registered problem, in registry order."""
    return list(dict.fromkeys(e for c in registered().values() if c.formats for e in c.formats.extensions))


def class_for_extension(path: Path) -> type[Problem] | None:
    """The problem registering the file's extension, or None."""
    suffix = path.suffix.lower()
    return next((c for c in registered().values() if c.formats and c.formats.read and suffix in c.formats.extensions),
                None)


def class_for_file(path: Path) -> type[Problem]:
    """The problem of a file: the one registering its extension, else, for a file without an
    extension or with a generic one (:data:`GENERIC_EXTENSIONS`; a number such as LOLIB's
    ``.01`` is none), the first whose sniffer accepts its content; another extension that no
    registered problem reads is refused (no guess from the content: your own problem's file)."""
    by_extension = class_for_extension(path)
    if by_extension is not None:
        return by_extension
    classes = [c for c in registered().values() if c.formats and c.formats.read]
    known = ", ".join(f"{e} ({c.kind})" for c in classes for e in c.formats.extensions)
    if any(ch.isalpha() for ch in path.suffix) and path.suffix.lower() not in GENERIC_EXTENSIONS:
        raise MetaheurError(f"{path}: no registered problem reads {path.suffix} files (known extensions: {known}); "
                            "give --problem NAME or module:Class (your own problem's class)")
    for cls in sorted(classes, key=lambda c: c.formats.sniff_broad):  # exact sniffers first (a stable sort)
        if cls.formats.sniff is not None and cls.formats.sniff(path):
            return cls
    raise MetaheurError(f"{path}: cannot tell which problem this file is (known extensions: {known}); "
                        "give --problem NAME or module:Class")


def generated(spec: str, cls: type[Problem] | None = None) -> Problem | None:
    """The instance named by ``gen:PREFIX:...`` through the generator that registers ``PREFIX``
    (of ``cls`` only, when given), or None when ``spec`` is not such a name."""
    if not spec.startswith("gen:"):
        return None
    prefix = spec.split(":")[1]
    classes = [cls] if cls is not None else list(registered().values())
    makers = {p: g for c in classes if c.formats for p, g in c.formats.generators.items()}
    if prefix not in makers:
        usage = ", ".join(f"gen:{p}:N" for p in makers) or "none"
        raise MetaheurError(f"unknown built-in instance {spec!r}: built-in instances are {usage}, with an optional "
                            ":SEED")
    return makers[prefix](spec)


def describe_problem(cls: type[Problem]) -> dict:
    """A problem class's name, sense and files as a JSON-ready dict (``metaheur info``)."""
    fmt = cls.formats
    return {"kind": cls.kind, "title": cls.title, "sense": cls.sense,
            "extensions": list(fmt.extensions) if fmt else [], "folder": fmt.folder if fmt else None,
            "generators": [f"gen:{p}:N" for p in fmt.generators] if fmt else []}


def describe_problems() -> list[dict]:
    """Every registered problem as a JSON-ready dict (``metaheur info``; ``class``: its entry point)."""
    specs = {ep.name: ep.value for ep in _entry_points()}
    return [describe_problem(cls) | {"kind": kind, "class": specs[kind]} for kind, cls in registered().items()]
