"""Finding and loading instances by path, by library name, or as a built-in generated instance.

A name such as ``tai30a`` or ``pr2392`` is looked up in the directory named by the environment
variable ``METAHEUR_INSTANCES``: in its ``qaplib/``, ``tsplib/`` and ``atsp/`` subfolders or directly
in it.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from metaheur.errors import InputFormatError, MetaheurError
from metaheur.problems.atsp import ATSP, is_atsp_file, read_atsp
from metaheur.problems.generators import parse_generated
from metaheur.problems.qap import QAP, check_permutation, read_qaplib, read_sln
from metaheur.problems.textio import read_text
from metaheur.problems.tsp import TSP, read_tour, read_tsplib

ENV_VAR = "METAHEUR_INSTANCES"
_SUFFIXES = (".dat", ".tsp", ".atsp")
_FOLDERS = ("qaplib", "tsplib", "atsp")


def instances_dir() -> Path | None:
    """The directory named by ``METAHEUR_INSTANCES``, if set (a relative path is taken from the
    current directory)."""
    value = os.environ.get(ENV_VAR)
    return Path(value).expanduser().absolute() if value else None


def _candidates(root: Path, name: str):
    stem = name
    for suffix in _SUFFIXES:
        stem = stem.removesuffix(suffix)
    for folder in (*(root / f for f in _FOLDERS), root):
        for suffix in _SUFFIXES:
            yield folder / f"{stem}{suffix}"


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
        for folder in (*(root / f for f in _FOLDERS), root):
            if folder.is_dir():
                for entry in folder.iterdir():
                    if entry.name.lower() in lowered and entry.is_file():
                        return entry
    if path.exists():
        raise MetaheurError(f"{text}: is not a file")
    if root is None:
        raise MetaheurError(f"{text}: no such file (set {ENV_VAR} to look instances up by name)")
    raise MetaheurError(f"{text}: no such file, and no instance of that name under {ENV_VAR}={root}")


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
    """Read a solution for ``instance``: QAPLIB ``.sln``, TSPLIB ``.tour`` or a metaheur result JSON."""
    path = Path(path)
    if path.suffix.lower() == ".json":
        return _load_result_json(instance, path)
    if isinstance(instance, QAP):
        sol = read_sln(path, instance)
        notes = ["the file stores the inverse permutation"] if sol.orientation == "inverse" else []
        if sol.zero_based:
            notes.append("the file numbers locations from 0")
        return LoadedSolution(sol.permutation, sol.stated_cost, "; ".join(notes) or None)
    return LoadedSolution(read_tour(path, instance), None, None)


def _load_result_json(instance: QAP | TSP | ATSP, path: Path) -> LoadedSolution:
    try:
        data = json.loads(read_text(path))
    except json.JSONDecodeError as exc:
        raise InputFormatError(path, f"invalid JSON: {exc.msg}", exc.lineno) from None
    except (ValueError, RecursionError) as exc:  # a number too long for int(), nesting too deep
        raise InputFormatError(path, f"invalid JSON: {exc}") from None
    if not isinstance(data, dict) or "permutation" not in data:
        raise InputFormatError(path, "no 'permutation' key (expected a metaheur result JSON)")
    try:
        perm = check_permutation(data["permutation"], instance.n, os.fspath(path))
    except MetaheurError as exc:
        raise InputFormatError(path, str(exc).split(": ", 1)[-1]) from None
    cost = data.get("cost")
    return LoadedSolution(perm, int(cost) if isinstance(cost, int) else None, None)
