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

Loading: a name loads its entry point alone; a built-in's instance (``gen:`` prefix, extension,
library folder) is looked for among metaheur's own problems before any plug-in is loaded
(:func:`builtins_first`). A plug-in that cannot be loaded (its import fails, raises anything,
SystemExit and KeyboardInterrupt included, or names no Problem subclass) is a one-line error where
it is asked for, and elsewhere (``metaheur info``, what the framework reads of every problem) a
warning naming it, once, and left out. A plug-in's import runs in a thread given up after
``METAHEUR_PLUGIN_TIMEOUT`` seconds (default 10): a hanging import is a broken plug-in too.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import math
import os
import sys
import threading
import warnings
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, TypeVar

from metaheur.errors import MetaheurError, exception_line, one_line
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
        raise MetaheurError(f"{what} {spec!r}: cannot import {module_name}: {one_line(exc)}") from None
    except Exception as exc:  # a user's module that fails while importing
        raise MetaheurError(f"{what} {spec!r}: importing {module_name} failed: {exception_line(exc)}") from None
    cls: Any = module
    for part in class_name.split("."):
        cls = getattr(cls, part, _MISSING)
        if cls is _MISSING:
            raise MetaheurError(f"{what} {spec!r}: {module_name} has no {class_name}")
    if not (isinstance(cls, type) and issubclass(cls, Problem)):
        got = "a class" if isinstance(cls, type) else "None" if cls is None else f"a {type(cls).__name__}"
        raise MetaheurError(f"{what} {spec!r}: {class_name} is not a metaheur.Problem subclass ({got})")
    return cls


_MISSING = object()


def working_folder_on_path() -> None:
    """Put the current folder first on ``sys.path`` (unless it is there), as ``python -m`` does,
    so that a user's ``module:Class`` imports from it; for good, as the worker processes started
    later take the parent's ``sys.path``."""
    here = os.getcwd()
    if not any(os.path.abspath(entry or os.curdir) == here for entry in sys.path):
        sys.path.insert(0, here)


_SCANNED: dict[tuple, list] = {}
PLUGIN_TIMEOUT = 10.0  # seconds a plug-in's import may take (METAHEUR_PLUGIN_TIMEOUT)
PLUGIN_TIMEOUT_VAR = "METAHEUR_PLUGIN_TIMEOUT"
_LEFT_OUT_VAR = "_METAHEUR_PLUGINS_LEFT_OUT"  # name=value lines: entry points a parent process left out


def _entry_points() -> list[importlib.metadata.EntryPoint]:
    """The group's entry points in registry order, the first of each name: metaheur's own by name,
    then the others by distribution, as the metadata lists them; scanned once for a given
    ``sys.path`` (a scan reads every installed distribution's metadata)."""
    key = (importlib.metadata.entry_points, tuple(sys.path))
    if key not in _SCANNED:
        _SCANNED.clear()
        _LOADED.clear()
        _WARNED.clear()
        found = list(importlib.metadata.entry_points(group=ENTRY_POINT_GROUP))
        own = sorted((ep for ep in found if ep.dist is not None and ep.dist.name == OWN_DISTRIBUTION),
                     key=lambda ep: ep.name)
        first: dict[str, importlib.metadata.EntryPoint] = {}
        for ep in own + [ep for ep in found if ep not in own]:
            first.setdefault(ep.name, ep)
        _SCANNED[key] = list(first.values())
    return _SCANNED[key]


def _scanned() -> list[importlib.metadata.EntryPoint]:
    """:func:`_entry_points`, none being a one-line error (a stale install)."""
    found = _entry_points()
    if not found:
        raise MetaheurError(f"no problem is registered: the entry points of {ENTRY_POINT_GROUP} are missing from "
                            "metaheur's installed metadata (reinstall it: pip install metaheur, or pip install -e .)")
    return found


def _own(ep: importlib.metadata.EntryPoint) -> bool:
    return ep.dist is not None and ep.dist.name == OWN_DISTRIBUTION


def plugin_timeout() -> float:
    """How long a plug-in's import may take (seconds): ``METAHEUR_PLUGIN_TIMEOUT``, default
    :data:`PLUGIN_TIMEOUT`."""
    text = os.environ.get(PLUGIN_TIMEOUT_VAR, "").strip()
    if not text:
        return PLUGIN_TIMEOUT
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise MetaheurError(f"{PLUGIN_TIMEOUT_VAR} must be a positive number of seconds, got {text!r}")
    return value


def _import_bounded(ep: importlib.metadata.EntryPoint, seconds: float) -> type[Problem]:
    """The class of a third-party entry point, imported in a daemon thread that is given up after
    ``seconds`` (a hanging import then holds only its own modules' import locks, and
    they are never asked for again: :data:`_GIVEN_UP`). Whatever the import raises is a one-line
    error, KeyboardInterrupt and SystemExit too: the plug-in raised them (a stop signal runs its
    handler in the main thread, which waits here and stops as it would anywhere)."""
    what = f"problem {ep.name} (entry point of {ENTRY_POINT_GROUP})"
    outcome: dict[str, Any] = {}

    def load() -> None:
        try:
            outcome["class"] = import_class(ep.value, what)
        except MetaheurError as exc:
            outcome["error"] = exc
        except BaseException as exc:  # SystemExit, KeyboardInterrupt from the plug-in's own code
            module = ep.value.partition(":")[0]
            outcome["error"] = MetaheurError(f"{what} {ep.value!r}: importing {module} failed: {exception_line(exc)}")

    thread = threading.Thread(target=load, name=f"metaheur-plugin-{ep.name}", daemon=True)
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        error = MetaheurError(f"{what} {ep.value!r}: importing {ep.value.partition(':')[0]} did not finish within "
                              f"{seconds:g} s (set {PLUGIN_TIMEOUT_VAR} to wait longer)")
        _GIVEN_UP[(ep.name, ep.value)] = error
        raise error
    if "error" in outcome:
        raise outcome["error"]
    return outcome["class"]


_LOADED: dict[tuple[str, str], type[Problem] | MetaheurError] = {}  # this scan's imports, by entry point
_GIVEN_UP: dict[tuple[str, str], MetaheurError] = {}  # imports that hung: never tried again (their import lock)
_WARNED: set[tuple[str, str]] = set()  # this scan's plug-ins left out with a warning


def _load(ep: importlib.metadata.EntryPoint) -> type[Problem]:
    """The class of an entry point, imported once a scan (metaheur's own directly, a plug-in's
    bounded: :func:`_import_bounded`); one that cannot be loaded is a one-line error."""
    key = (ep.name, ep.value)
    if key in _GIVEN_UP:
        raise _GIVEN_UP[key]
    if key not in _LOADED and f"{ep.name}={ep.value}" in os.environ.get(_LEFT_OUT_VAR, "").split("\n"):
        _WARNED.add(key)  # the process that started this one warned, and waited for a hanging import
        _LOADED[key] = MetaheurError(f"problem {ep.name} (entry point of {ENTRY_POINT_GROUP}) {ep.value!r}: left "
                                     "out by the run's process")
    if key not in _LOADED:
        seconds = None if _own(ep) else plugin_timeout()
        try:
            _LOADED[key] = import_class(ep.value, f"problem {ep.name} (entry point of {ENTRY_POINT_GROUP})") \
                if seconds is None else _import_bounded(ep, seconds)
        except MetaheurError as exc:
            _LOADED[key] = exc
    loaded = _LOADED[key]
    if isinstance(loaded, MetaheurError):
        raise loaded
    return loaded


def registered(skip_broken: bool = False, builtin_only: bool = False) -> dict[str, type[Problem]]:
    """Every registered problem class by kind, in registry order (a name registered twice keeps
    the first); metaheur's own only with ``builtin_only``. An entry point whose class cannot be
    loaded (:func:`_load`) is a one-line error, or with ``skip_broken`` left out with a warning
    naming it, once (what the framework reads of every registered problem must not fail a run
    for a plug-in it does not use)."""
    entry_points = _scanned()
    if not builtin_only and not all(map(_own, entry_points)):
        plugin_timeout()  # a bad setting is an error of its own, not a plug-in's
    out: dict[str, type[Problem]] = {}
    for ep in entry_points:
        if builtin_only and not _own(ep):
            continue
        try:
            out[ep.name] = _load(ep)
        except MetaheurError as exc:
            if not skip_broken:
                raise
            _left_out(ep, exc)
    return out


def is_builtin(cls: type) -> bool:
    """Whether ``cls`` is one of metaheur's own problems (not a subclass: a user's code may be in it)."""
    return cls in registered(builtin_only=True).values()


def _left_out(ep: importlib.metadata.EntryPoint, error: MetaheurError) -> None:
    """Warn, once a scan, that the entry point which cannot be loaded is left out; the processes
    this one starts later (a run's workers) leave it out silently (:data:`_LEFT_OUT_VAR`)."""
    if (ep.name, ep.value) not in _WARNED:
        _WARNED.add((ep.name, ep.value))
        warnings.warn(f"metaheur: {error}; left out", RuntimeWarning, stacklevel=3)
        left_out = os.environ.get(_LEFT_OUT_VAR, "").split("\n")
        os.environ[_LEFT_OUT_VAR] = "\n".join(filter(None, [*left_out, f"{ep.name}={ep.value}"]))


T = TypeVar("T")


def builtins_first(find: Callable[[list[type[Problem]]], T | None]) -> T | None:
    """``find`` of metaheur's own problems, else of every registered problem that loads: an
    instance of a built-in problem (its ``gen:`` name, extension, library folder) loads no
    plug-in."""
    found = find(list(registered(builtin_only=True).values()))
    return found if found is not None else find(list(registered(skip_broken=True).values()))


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
    """The problem class of a registered name (``"qap"``; that entry point alone is loaded) or a
    ``"module:Class"``."""
    if isinstance(name_or_spec, type):
        if not issubclass(name_or_spec, Problem):
            raise MetaheurError(f"{name_or_spec.__name__} is not a metaheur.Problem subclass")
        return name_or_spec
    text = str(name_or_spec)
    if ":" in text:
        working_folder_on_path()
        return import_class(text)
    by_name = {ep.name: ep for ep in _scanned()}
    if text.lower() in by_name:
        return _load(by_name[text.lower()])
    raise MetaheurError(f"unknown problem {text!r}{did_you_mean(text, by_name)}: the registered problems are "
                        f"{', '.join(by_name)}, or give module:Class")


def registered_names() -> list[str]:
    """The registered problems' names, in registry order (nothing is loaded)."""
    return [ep.name for ep in _scanned()]


def registered_class(kind: str) -> type[Problem] | None:
    """The class registered as ``kind`` (that entry point alone is loaded), or None: none is, or
    it cannot be loaded (a warning, as :func:`registered` with ``skip_broken`` gives)."""
    ep = next((ep for ep in _scanned() if ep.name == kind), None)
    if ep is None:
        return None
    try:
        return _load(ep)
    except MetaheurError as exc:
        _left_out(ep, exc)
        return None


def folders(classes: Iterable[type[Problem]]) -> list[str]:
    """The library subfolders of ``classes``, in their order."""
    return list(dict.fromkeys(c.formats.folder for c in classes if c.formats and c.formats.folder))


def extensions(classes: Iterable[type[Problem]]) -> list[str]:
    """The file extensions of ``classes``, in their order."""
    return list(dict.fromkeys(e for c in classes if c.formats for e in c.formats.extensions))


def class_for_extension(path: Path) -> type[Problem] | None:
    """The problem registering the file's extension (a built-in's first), or None."""
    suffix = path.suffix.lower()
    return builtins_first(lambda classes: next(
        (c for c in classes if c.formats and c.formats.read and suffix in c.formats.extensions), None))


def class_for_file(path: Path) -> type[Problem]:
    """The problem of a file: the one registering its extension, else, for a file without an
    extension or with a generic one (:data:`GENERIC_EXTENSIONS`; a number such as LOLIB's
    ``.01`` is none), the first whose sniffer accepts its content (every registered problem's
    sniffer is asked: a plug-in's exact one before a built-in's broad one); another extension
    that no registered problem reads is refused (no guess from the content: your own problem's
    file)."""
    by_extension = class_for_extension(path)
    if by_extension is not None:
        return by_extension
    classes = [c for c in registered(skip_broken=True).values() if c.formats and c.formats.read]
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
    (of ``cls`` only, when given; else the first in registry order, a built-in's before any
    plug-in is loaded), or None when ``spec`` is not such a name."""
    if not spec.startswith("gen:"):
        return None
    prefix = spec.split(":")[1]

    def maker(classes: list[type[Problem]]) -> Callable[[str], Problem] | None:
        return next((c.formats.generators[prefix] for c in classes if c.formats and prefix in c.formats.generators),
                    None)

    make = maker([cls]) if cls is not None else builtins_first(maker)
    if make is None:
        classes = [cls] if cls is not None else registered(skip_broken=True).values()
        usage = ", ".join(dict.fromkeys(f"gen:{p}:N" for c in classes if c.formats for p in c.formats.generators))
        raise MetaheurError(f"unknown built-in instance {spec!r}: built-in instances are {usage or 'none'}, with an "
                            "optional :SEED")
    return make(spec)


def describe_problem(cls: type[Problem]) -> dict:
    """A problem class's name, sense and files as a JSON-ready dict (``metaheur info``)."""
    fmt = cls.formats
    return {"kind": cls.kind, "title": cls.title, "sense": cls.sense,
            "extensions": list(fmt.extensions) if fmt else [], "folder": fmt.folder if fmt else None,
            "generators": [f"gen:{p}:N" for p in fmt.generators] if fmt else []}


def describe_problems() -> list[dict]:
    """Every registered problem as a JSON-ready dict (``metaheur info``; ``class``: its entry point)."""
    specs = {ep.name: ep.value for ep in _entry_points()}
    return [describe_problem(cls) | {"kind": kind, "class": specs[kind]}
            for kind, cls in registered(skip_broken=True).items()]
