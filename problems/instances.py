"""Finding and loading instances by path, by library name, or as a built-in generated instance.

A name such as ``tai30a`` or ``pr2392`` is looked up in the directory named by the environment
variable ``METAHEUR_INSTANCES``: in its ``qaplib/``, ``tsplib/`` and ``atsp/`` subfolders or
directly in it; so is a pattern such as ``'qaplib/tai*a.dat'`` or ``'tai*a'`` that matches no file
from the current directory. An unknown name gets the nearest library names as suggestions.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from metaheur.errors import InputFormatError, MetaheurError
from metaheur.problems.atsp import ATSP, is_atsp_file, read_atsp
from metaheur.problems.best_known import best_known
from metaheur.problems.generators import parse_generated
from metaheur.problems.qap import QAP, check_permutation, read_assignment, read_qaplib, read_sln
from metaheur.problems.textio import read_text
from metaheur.problems.tsp import TSP, is_number_list, read_city_list, read_tour, read_tsplib
from metaheur.suggest import did_you_mean

ENV_VAR = "METAHEUR_INSTANCES"
_SUFFIXES = (".dat", ".tsp", ".atsp")
_FOLDERS = ("qaplib", "tsplib", "atsp")
_PATTERN_CHARS = "*?["


def instances_dir() -> Path | None:
    """The directory named by ``METAHEUR_INSTANCES``, if set (a relative path is taken from the
    current directory)."""
    value = os.environ.get(ENV_VAR)
    return Path(value).expanduser().absolute() if value else None


def _candidates(root: Path, name: str):
    stem = name
    for suffix in _SUFFIXES:
        stem = stem.removesuffix(suffix)
    for folder in _folders(root):
        for suffix in _SUFFIXES:
            yield folder / f"{stem}{suffix}"


def _folders(root: Path) -> list[Path]:
    return [root / sub for sub in _FOLDERS] + [root]


def library_names(root: Path) -> list[str]:
    """The instance names under ``root`` (file names without their suffix)."""
    return sorted({p.stem for folder in _folders(root) if folder.is_dir() for p in folder.iterdir()
                   if p.suffix.lower() in _SUFFIXES and p.is_file()})


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
    tails = [pattern] if Path(pattern).suffix else [pattern + suffix for suffix in _SUFFIXES]
    for base in _folders(root):
        matches = sorted({p for tail in tails for p in glob.glob(os.path.join(base, tail)) if Path(p).is_file()},
                         key=_natural)
        if matches:
            return matches
    return []


def resolve_instance(name_or_path: str | os.PathLike) -> Path:
    """Path of an instance given as a file path or a library name (see the module docstring)."""
    path = Path(name_or_path).expanduser()
    if path.is_file():
        return path
    text = os.fspath(name_or_path)
    root = instances_dir()
    if root is not None and os.sep not in text:
        for candidate in _candidates(root, text):
            if candidate.is_file():
                return candidate
        lowered = {c.name.lower(): c for c in _candidates(root, text)}
        for folder in _folders(root):
            if folder.is_dir():
                for entry in folder.iterdir():
                    if entry.name.lower() in lowered and entry.is_file():
                        return entry
    if path.exists():
        raise MetaheurError(f"{text}: is not a file")
    if root is None:
        raise MetaheurError(f"{text}: no such file (set {ENV_VAR} to look instances up by name)")
    hint = did_you_mean(Path(text).stem, library_names(root)) if os.sep not in text else ""
    raise MetaheurError(f"{text}: no such file, and no instance of that name under {ENV_VAR}={root}{hint}")


def _looks_like_qaplib(path: Path) -> bool:
    first = read_text(path).lstrip()[:32].split()
    return bool(first) and first[0].lstrip("+-").isdigit()


def load_instance(spec: str | os.PathLike | QAP | TSP | ATSP) -> QAP | TSP | ATSP:
    """A QAP, TSP or ATSP from a path, a library name, a built-in ``gen:`` name or an instance
    object (a TSPLIB file is an ATSP when it says ``TYPE: ATSP``)."""
    if isinstance(spec, (QAP, TSP, ATSP)):
        return spec
    generated = parse_generated(os.fspath(spec))
    if generated is not None:
        return generated
    path = resolve_instance(spec)
    suffix = path.suffix.lower()
    if suffix == ".dat":
        return read_qaplib(path)
    if suffix == ".atsp" or (suffix != ".dat" and not _looks_like_qaplib(path) and is_atsp_file(path)):
        return read_atsp(path)
    if suffix == ".tsp":
        return read_tsplib(path)
    return read_qaplib(path) if _looks_like_qaplib(path) else read_tsplib(path)


@dataclass(frozen=True)
class LoadedSolution:
    """A solution file's permutation (0-based) with what the file said about itself."""

    permutation: np.ndarray
    stated_cost: int | None
    note: str | None


def load_solution(instance: QAP | TSP | ATSP, path: str | os.PathLike) -> LoadedSolution:
    """Read a solution for ``instance``: QAPLIB ``.sln``, a plain assignment list (QAP), TSPLIB
    ``.tour``, a plain city list (TSP, ATSP) or a metaheur result JSON. A file of the other problem,
    or one that names another instance, is refused with both named."""
    path = Path(path)
    text = read_text(path)
    if path.suffix.lower() == ".json" or text.lstrip().startswith("{"):
        return _load_result_json(instance, path, text)
    if isinstance(instance, QAP):
        if path.suffix.lower() == ".tour" or "TOUR_SECTION" in text.upper():
            raise InputFormatError(path, f"this is a TSP tour file, the instance {instance.name} is a QAP")
        if not is_number_list(text):
            raise InputFormatError(path, f"not a QAP solution: {instance.name} is a QAP, which takes a QAPLIB .sln "
                                         "or a plain list of locations")
        values = text.split()
        if len(values) == instance.n:
            perm, zero_based = read_assignment(path, instance)
            return LoadedSolution(perm, None, "the file numbers locations from 0" if zero_based else None)
        sol = read_sln(path, instance)
        notes = ["the file stores the inverse permutation"] if sol.orientation == "inverse" else []
        if sol.zero_based:
            notes.append("the file numbers locations from 0")
        return LoadedSolution(sol.permutation, sol.stated_cost, "; ".join(notes) or None)
    if path.suffix.lower() == ".sln":
        raise InputFormatError(path, f"this is a QAP solution file (.sln), the instance {instance.name} is a "
                            f"{instance.kind.upper()}")
    if is_number_list(text):
        tour, zero_based = read_city_list(path, instance)
        return LoadedSolution(tour, None, "the file numbers cities from 0" if zero_based else None)
    header = _tour_name(text)
    if header and header.lower() != instance.name.lower() and best_known(header) is not None:
        raise InputFormatError(path, f"a tour of {header}, not of {instance.name}")
    return LoadedSolution(read_tour(path, instance), None, None)


def _tour_name(text: str) -> str | None:
    """The instance a .tour file's NAME names (``pr2392.opt.tour`` -> ``pr2392``), if any."""
    for line in text.splitlines()[:20]:
        key, _, value = line.partition(":")
        if key.strip().upper() == "NAME" and value.strip():
            return value.strip().split(".")[0]
    return None


def _shown(value: object) -> str:
    """A value read from a file as it may stand in a one-line message (quoted when not printable)."""
    text = str(value)
    return text if text.isprintable() else repr(text)


def _load_result_json(instance: QAP | TSP | ATSP, path: Path, text: str) -> LoadedSolution:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputFormatError(path, f"invalid JSON: {exc.msg}", exc.lineno) from None
    except (ValueError, RecursionError) as exc:  # a number too long for int(), nesting too deep
        raise InputFormatError(path, f"invalid JSON: {exc}") from None
    if not isinstance(data, dict) or "permutation" not in data:
        raise InputFormatError(path, "no 'permutation' key (expected a metaheur result JSON)")
    problem, name = data.get("problem"), data.get("instance")
    if isinstance(problem, str) and problem.upper() != instance.kind.upper():
        raise InputFormatError(path, f"this is a result of a {_shown(problem.upper())} ({_shown(name)}), the "
                                     f"instance {instance.name} is a {instance.kind.upper()}")
    if isinstance(name, str) and name.lower() != instance.name.lower():
        raise InputFormatError(path, f"a result of instance {_shown(name)}, not of {instance.name}")
    try:
        perm = check_permutation(data["permutation"], instance.n, os.fspath(path))
    except MetaheurError as exc:
        raise InputFormatError(path, str(exc).split(": ", 1)[-1]) from None
    cost = data.get("cost")
    return LoadedSolution(perm, int(cost) if isinstance(cost, int) else None, None)
