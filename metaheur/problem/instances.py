"""Finding and loading instances by path, by library name, or as a built-in generated instance.

A name such as ``tai30a`` or ``pr2392`` is looked up in the directory named by the environment
variable ``METAHEUR_INSTANCES``: in the library folder of every registered problem (``qaplib/``,
``tsplib/``, ``atsp/``, ...) with its file extensions, or directly in it; so is a pattern such as
``'qaplib/tai*a.dat'`` or ``'tai*a'`` that matches no file from the current directory. An unknown
name gets the nearest library names as suggestions.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from metaheur.arguments import PATH, STR, Takes, check_arguments, either, instance_of
from metaheur.errors import InputFormatError, MetaheurError
from metaheur.inputs import SOLUTION, is_json_int, parse_json
from metaheur.problem.interface import LoadedSolution, Problem
from metaheur.problem.registry import (
    builtins_first,
    class_for_extension,
    class_for_file,
    extensions,
    folders,
    generated,
    problem_class,
    registered,
)
from metaheur.problem.textio import read_text, split_pick
from metaheur.suggest import did_you_mean

ENV_VAR = "METAHEUR_INSTANCES"
_PATTERN_CHARS = "*?["


def instances_dir() -> Path | None:
    """The directory named by ``METAHEUR_INSTANCES``, if set (a relative path is taken from the
    current directory)."""
    value = os.environ.get(ENV_VAR)
    return Path(value).expanduser().absolute() if value else None


def _candidates(root: Path, name: str, classes: list[type[Problem]]):
    suffixes = extensions(classes)
    stem = name
    for suffix in suffixes:
        stem = stem.removesuffix(suffix)
    for folder in _folders(root, classes):
        for suffix in suffixes:
            yield folder / f"{stem}{suffix}"
    # then the name as it is (LOLIB's files have no extension), also in a library folder's sets
    # (lop/xLOLIB/be75eec_250)
    for folder in _folders(root, classes):
        yield folder / name
        if folder != root and folder.is_dir():
            yield from (sub / name for sub in sorted(folder.iterdir()) if sub.is_dir())


def _folders(root: Path, classes: list[type[Problem]]) -> list[Path]:
    """The library folders under ``root``: those of ``classes``, then ``root``."""
    return [root / sub for sub in folders(classes)] + [root]


def library_names(root: Path) -> list[str]:
    """The instance names under ``root`` (file names without their suffix)."""
    classes = list(registered(skip_broken=True).values())
    suffixes = extensions(classes)
    return sorted({p.stem for folder in _folders(root, classes) if folder.is_dir() for p in folder.iterdir()
                   if p.suffix.lower() in suffixes and p.is_file()})


def is_pattern(text: str) -> bool:
    return any(ch in text for ch in _PATTERN_CHARS)


def _natural(path: str) -> list:
    """Sort key that puts tai10a before tai100a (numbers compared as numbers)."""
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", path)]


def expand_pattern(pattern: str) -> list[str]:
    """The instance files a quoted pattern names, in natural order (tai10a before tai100a):
    matches from the current directory, else (a relative pattern) under ``METAHEUR_INSTANCES``,
    in its library folders and flat, with the instance suffixes tried when the pattern has none
    (``'tai*a'``)."""
    import glob

    found = sorted(glob.glob(os.path.expanduser(pattern)), key=_natural)
    root = instances_dir()
    if found or root is None or Path(pattern).is_absolute():
        return [p for p in found if Path(p).is_file()]

    def matches(classes: list[type[Problem]]) -> list[str] | None:
        tails = [pattern] if Path(pattern).suffix else [pattern + suffix for suffix in extensions(classes)]
        for base in _folders(root, classes):
            found = sorted({p for tail in tails for p in glob.glob(os.path.join(base, tail)) if Path(p).is_file()},
                           key=_natural)
            if found:
                return found
        return None

    return builtins_first(matches) or []


def resolve_instance(name_or_path: str | os.PathLike, cls: type[Problem] | None = None) -> Path:
    """Path of an instance given as a file path or a library name (see the module docstring);
    with ``cls``, a library name is looked up in that problem's folder and extensions."""
    path = Path(name_or_path).expanduser()
    if path.is_file():
        return path
    text = os.fspath(name_or_path)
    root = instances_dir()
    if root is not None and os.sep not in text:
        found = (_library_file(root, text, [cls]) if cls is not None
                 else builtins_first(lambda classes: _library_file(root, text, classes)))
        if found is not None:
            return found
    if path.exists():
        raise MetaheurError(f"{text}: is not a file")
    if root is None:
        raise MetaheurError(f"{text}: no such file (set {ENV_VAR} to look instances up by name)")
    hint = did_you_mean(Path(text).stem, library_names(root)) if os.sep not in text else ""
    raise MetaheurError(f"{text}: no such file, and no instance of that name under {ENV_VAR}={root}{hint}")


def _library_file(root: Path, name: str, classes: list[type[Problem]]) -> Path | None:
    """The file of a library name under ``root`` in the folders and extensions of ``classes``
    (the exact name first, then one that differs in case only), or None."""
    candidates = list(_candidates(root, name, classes))
    for candidate in candidates:
        if candidate.is_file():
            return candidate
    lowered = {c.name.lower() for c in candidates}
    for folder in dict.fromkeys(c.parent for c in candidates):
        if folder.is_dir():
            for entry in folder.iterdir():
                if entry.name.lower() in lowered and entry.is_file():
                    return entry
    return None


_LOAD_TAKES = {"spec": either(instance_of(Problem, "a Problem"), PATH),
               "problem": either(STR, Takes("a Problem class", lambda v: isinstance(v, type) and issubclass(v, Problem))
                                 ).or_none()}


def load_instance(spec: str | os.PathLike | Problem, problem: str | type[Problem] | None = None) -> Problem:
    """A problem instance from a path, a library name, a built-in ``gen:`` name or an instance
    object. ``problem`` (a registered name, ``module:Class`` or a class) says which problem reads
    it; without it the file's extension, else its content, picks the registered problem
    (:func:`~metaheur.problem.registry.class_for_file`)."""
    check_arguments("load_instance()", _LOAD_TAKES, locals())
    cls = None if problem is None else problem_class(problem)
    if isinstance(spec, Problem):
        if cls is not None and not isinstance(spec, cls):
            raise MetaheurError(f"{spec.name} is a {spec.kind.upper()}, not a {cls.kind.upper()}")
        return spec
    generated_instance = generated(os.fspath(spec), cls)
    if generated_instance is not None:
        return generated_instance
    spec, pick = split_pick(spec)
    path = resolve_instance(spec, cls)
    told = cls or class_for_extension(path) or _library_class(path)  # a registered extension decides first
    cls = told or class_for_file(path)
    if cls.formats is None or cls.formats.read is None:
        raise MetaheurError(f"{path}: the {cls.kind or cls.__name__} problem reads no files")
    if pick is not None and not cls.formats.picks:
        raise MetaheurError(f"{path}#{pick}: a {cls.kind.upper()} file holds one instance (FILE#NAME picks one "
                            "instance of a file of several)")
    try:
        instance = read_with(cls, path if pick is None else f"{path}#{pick}", path)
    except InputFormatError as exc:
        if told is not None:
            raise
        # the content chose the problem: a malformed file of another problem may look like this one's
        raise InputFormatError(exc.path, f"{exc.reason} (read as a {cls.kind.upper()} file, which its content "
                                         "suggests; give --problem NAME for another problem's file)",
                               exc.line) from None
    # a registered reader may hand over to another class (TSP -> ATSP); a built-in's loads no plug-in
    registered_reader = builtins_first(lambda classes: cls in classes or None) is not None
    if not isinstance(instance, Problem) or not (registered_reader or isinstance(instance, cls)):
        raise InputFormatError(path, f"{_reader_name(cls)} returned {_kind_of(instance)}, not a {cls.__name__}: "
                                     "its formats' read must return an instance of the class --problem names")
    return instance


def read_with(cls: type[Problem], spec: str | os.PathLike, path: Path) -> Problem:
    """``cls.formats.read(spec)``; a file it cannot read is one line naming the file and the reader:
    the reader's InputFormatError as it is, and any other exception it raises on a malformed file
    (ValueError, the documented one, but also IndexError, KeyError, UnicodeDecodeError, ..., or its
    class's ``__init__`` failing) as an InputFormatError (docs/problems.md, "What a reader raises")."""
    try:
        return cls.formats.read(spec)
    except MetaheurError:
        raise
    except Exception as exc:  # the reader's own code, often a user's: one line, never a traceback
        raise InputFormatError(path, f"{_reader_name(cls)} cannot read it: {type(exc).__name__}: {exc}") from exc


def _reader_name(cls: type[Problem]) -> str:
    """The reader of ``cls`` as a message names it: ``the reader read_mla of minla:MinLA``."""
    read = cls.formats.read
    return f"the reader {getattr(read, '__qualname__', repr(read))} of {cls.__module__}:{cls.__qualname__}"


def _kind_of(value: object) -> str:
    return f"a {type(value).__module__}.{type(value).__qualname__}"


def _library_class(path: Path) -> type[Problem] | None:
    """The registered problem whose library folder under ``METAHEUR_INSTANCES`` holds ``path``
    (asked after the file's extension: that decides)."""
    root = instances_dir()
    if root is None:
        return None
    return builtins_first(lambda classes: next(
        (c for c in classes if c.formats and c.formats.folder and c.formats.read
         and path.absolute().is_relative_to(root / c.formats.folder)), None))


def load_solution(instance: Problem, path: str | os.PathLike) -> LoadedSolution:
    """Read a solution for ``instance``: a metaheur result JSON, or a file of the problem's own
    formats (QAPLIB ``.sln`` or a plain assignment list for the QAP; TSPLIB ``.tour`` or a plain
    city list for the TSP and ATSP). A file of another problem, or one that names another
    instance, is refused with both named."""
    check_arguments("load_solution()", {"instance": instance_of(Problem, "a Problem"), "path": PATH}, locals())
    path = Path(path)
    text = read_text(path, SOLUTION)
    if path.suffix.lower() == ".json" or text.lstrip().startswith("{"):
        return _load_result_json(instance, path, text)
    if instance.formats is None or instance.formats.read_solution is None:
        raise InputFormatError(path, f"the {instance.kind.upper()} reads solutions from result JSON files only")
    return instance.formats.read_solution(instance, path)


def _shown(value: object) -> str:
    """A value read from a file as it may stand in a one-line message (quoted when not printable)."""
    text = str(value)
    return text if text.isprintable() else repr(text)


def _load_result_json(instance: Problem, path: Path, text: str) -> LoadedSolution:
    data = parse_json(text, path)
    if not isinstance(data, dict) or "permutation" not in data:
        raise InputFormatError(path, "no 'permutation' key (expected a metaheur result JSON)")
    problem, name = data.get("problem"), data.get("instance")
    if isinstance(problem, str) and problem.upper() != instance.kind.upper():
        raise InputFormatError(path, f"this is a result of a {_shown(problem.upper())} ({_shown(name)}), the "
                                     f"instance {instance.name} is a {instance.kind.upper()}")
    if isinstance(name, str) and name.lower() != instance.name.lower():
        raise InputFormatError(path, f"a result of instance {_shown(name)}, not of {instance.name}")
    perm, cost = data["permutation"], data.get("cost")
    if not (isinstance(perm, list) and all(map(is_json_int, perm))):
        raise InputFormatError(path, "'permutation' must be a list of integers")
    if cost is not None and not is_json_int(cost):
        raise InputFormatError(path, f"'cost' must be an integer, got {_shown(json.dumps(cost))[:40]}")
    try:
        perm = instance.check_solution(perm, os.fspath(path))
    except MetaheurError as exc:
        raise InputFormatError(path, str(exc).split(": ", 1)[-1]) from None
    return LoadedSolution(perm, cost, None)
