"""Run configuration from a TOML file (``--config``), validated into the parameter dataclasses.

Sections: ``[solve]`` (the stop rules and seed of :func:`metaheur.solve`: time_limit,
generations, target, no_improvement, seed; and the plain fields of
:class:`~metaheur.solve_params.SolveParams`: strategy, devices, islands, ls_islands, sync,
epoch_seconds, epoch_generations, scheduler, dask_local, stop_at_optimum), ``[ga]`` (GAParams),
one section per local search that the registered problems declare and the engine's own
(:func:`sections`, :func:`~metaheur.islands.params.search_sections`: ``metaheur info PROBLEM``
lists a problem's) and ``[migration]`` (MigrationParams). Unknown sections or keys are errors, so
that a typo never silently changes nothing; a key that a section took over from another in an
earlier version (``moved_from``) is read into its new section with a warning.
"""

from __future__ import annotations

import dataclasses
import math
import os
import re
import sys
import warnings

from metaheur.errors import InputFormatError, MetaheurError
from metaheur.inputs import CONFIG, read_bytes
from metaheur.islands.migration import MigrationParams
from metaheur.islands.params import GAParams, move_keys, search_sections
from metaheur.suggest import did_you_mean

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

_NUMBER = (int, float)
SOLVE_KEYS = {"time_limit": _NUMBER, "generations": int, "target": (int, str), "no_improvement": int, "seed": int,
              "strategy": str, "devices": list, "islands": int, "ls_islands": int,
              "sync": bool, "epoch_seconds": _NUMBER,
              "epoch_generations": int, "scheduler": str, "dask_local": int, "stop_at_optimum": bool}
_SOLVE_ALIASES = {"walk_islands": "ls_islands", "tabu_islands": "ls_islands"}  # earlier names still read
_ANNOTATIONS = {"int": int, "float": _NUMBER, "str": str, "bool": bool}


def sections() -> dict[str, type]:
    """Every section but ``[solve]``, with the parameter class it holds: ``[ga]``, every local
    search's that is declared (:func:`~metaheur.islands.params.search_sections`), ``[migration]``."""
    return {"ga": GAParams, **search_sections(), "migration": MigrationParams}


def _check_type(path, where: str, key: str, value, expected) -> None:
    """TOML values are typed: refuse 'population = "20"', 'time_limit = true' or 'time_limit = inf'
    up front."""
    kinds = expected if isinstance(expected, tuple) else (expected,)
    ok = isinstance(value, kinds) and not (isinstance(value, bool) and bool not in kinds)
    if not ok:
        names = " or ".join(k.__name__ for k in kinds)
        raise InputFormatError(path, f"[{where}] {key} must be {names}, got {value!r}")
    if isinstance(value, float) and not math.isfinite(value):
        raise InputFormatError(path, f"[{where}] {key} must be a finite number, got {value!r}")


def _field_type(annotation: str):
    base = annotation.replace(" | None", "").strip()
    return _ANNOTATIONS.get(base), "None" in annotation


def _refuse_unknown(path, section: str, values: dict, keys: list[str]) -> None:
    """An unknown key is an error naming the nearest valid keys and listing the section's keys."""
    unknown = sorted(set(values) - set(keys))
    if unknown:
        hints = "".join(did_you_mean(k, keys) for k in unknown)
        raise InputFormatError(path, f"unknown key(s) in [{section}]: {', '.join(unknown)}{hints}; "
                                     f"its keys are {', '.join(keys)}")


def read_config(path: str | os.PathLike) -> dict:
    """``{"solve": {...}, "ga": GAParams | None, ...}`` from a TOML file."""
    raw = read_bytes(path, CONFIG)
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        line = getattr(exc, "lineno", None)
        if line is None:  # before Python 3.14 the line is only in the message
            found = re.search(r"\(at line (\d+), column \d+\)", str(exc))
            line = int(found.group(1)) if found else None
        raise InputFormatError(path, f"invalid TOML: {str(exc).split(' (at line')[0]}", line) from None
    except RecursionError:
        raise InputFormatError(path, "invalid TOML: nested too deep") from None
    except ValueError:  # Python's limit on the digits of an integer read from text
        raise InputFormatError(path, "invalid TOML: an integer too long to read") from None
    out: dict = {"solve": {}}
    known = sections()
    data, moves = move_keys(data, known)
    if moves:
        warnings.warn(f"{os.fspath(path)}: {', '.join(moves)}: read there (moved in this version)", FutureWarning,
                      stacklevel=2)
    for section, values in data.items():
        if not isinstance(values, dict):
            raise InputFormatError(path, f"{section!r} must be a [section]")
        if section == "solve":
            values = {_SOLVE_ALIASES.get(k, k): v for k, v in values.items()}
            _refuse_unknown(path, "solve", values, list(SOLVE_KEYS))
            for key, value in values.items():
                _check_type(path, "solve", key, value, SOLVE_KEYS[key])
            if "devices" in values and not all(isinstance(d, str) for d in values["devices"]):
                raise InputFormatError(path, "[solve] devices must be a list of names such as \"cpu\", \"cuda:0\"")
            out["solve"] = dict(values)
        elif section in known:
            cls = known[section]
            types = {f.name: f.type for f in dataclasses.fields(cls)}
            _refuse_unknown(path, section, values, list(types))
            for key, value in values.items():
                expected, optional = _field_type(types[key])
                if expected is not None and not (optional and value is None):
                    _check_type(path, section, key, value, expected)
            try:
                out[section] = cls(**values)
            except MetaheurError as exc:
                raise InputFormatError(path, f"[{section}] {exc}") from None
            except TypeError as exc:
                raise InputFormatError(path, f"[{section}] {exc}") from None
        else:
            raise InputFormatError(path, f"unknown section [{section}] (expected solve, {', '.join(known)})"
                                         f"{did_you_mean(section, ['solve', *known])}")
    return out
