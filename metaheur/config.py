"""Run configuration from a TOML file (``--config``), validated into the parameter dataclasses.

Sections: ``[solve]`` (the keyword arguments of :func:`metaheur.solver.solve` that are plain
values: time_limit, generations, target, no_improvement, seed, strategy, devices, islands, sync,
epoch_seconds, epoch_generations, scheduler, dask_local), ``[ga]``, ``[tabu]``, ``[ils]`` and
``[migration]`` (the fields of GAParams, TabuParams, ILSParams and MigrationParams). Unknown
sections or keys are errors, so that a typo never silently changes nothing.
"""

from __future__ import annotations

import dataclasses
import os
import sys

from metaheur.errors import InputFormatError, MetaheurError
from metaheur.islands.migration import MigrationParams
from metaheur.islands.params import GAParams
from metaheur.search.qap_tabu import TabuParams
from metaheur.search.tsp_ils import ILSParams

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

SOLVE_KEYS = ("time_limit", "generations", "target", "no_improvement", "seed", "strategy", "devices", "islands",
              "sync", "epoch_seconds", "epoch_generations", "scheduler", "dask_local")
SECTIONS = {"ga": GAParams, "tabu": TabuParams, "ils": ILSParams, "migration": MigrationParams}


def read_config(path: str | os.PathLike) -> dict:
    """``{"solve": {...}, "ga": GAParams | None, ...}`` from a TOML file."""
    try:
        with open(path, "rb") as handle:
            data = tomllib.load(handle)
    except FileNotFoundError:
        raise InputFormatError(path, "no such file") from None
    except OSError as exc:
        raise InputFormatError(path, f"cannot read: {exc.strerror or exc}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        line = getattr(exc, "lineno", None)
        raise InputFormatError(path, f"invalid TOML: {str(exc).split(' (at line')[0]}", line) from None
    out: dict = {"solve": {}}
    for section, values in data.items():
        if not isinstance(values, dict):
            raise InputFormatError(path, f"{section!r} must be a [section]")
        if section == "solve":
            unknown = set(values) - set(SOLVE_KEYS)
            if unknown:
                raise InputFormatError(path, f"unknown key(s) in [solve]: {', '.join(sorted(unknown))}")
            out["solve"] = dict(values)
        elif section in SECTIONS:
            cls = SECTIONS[section]
            names = {f.name for f in dataclasses.fields(cls)}
            unknown = set(values) - names
            if unknown:
                raise InputFormatError(path, f"unknown key(s) in [{section}]: {', '.join(sorted(unknown))}")
            try:
                out[section] = cls(**values)
            except MetaheurError as exc:
                raise InputFormatError(path, f"[{section}] {exc}") from None
            except TypeError as exc:
                raise InputFormatError(path, f"[{section}] {exc}") from None
        else:
            raise InputFormatError(path, f"unknown section [{section}] (expected solve, {', '.join(SECTIONS)})")
    return out
