"""Checkpoints: the complete state of a run in one file, written atomically, read back to resume.

A checkpoint is a numpy ``.npz`` archive (read with ``allow_pickle=False``: no code runs when one
is loaded) holding a JSON header and the island arrays. The header says what the run is (format,
metaheur version, the instance's fingerprint, name, size and where it came from, the solve
settings: strategy, seed, devices, parameters of every island, migration, epochs, stop rules)
and where it stands (every island's counters, the migrator's random state and archive, the
statistics rows, the search time used). A resumed synchronous run ends exactly as an
uninterrupted one would. A checkpoint of another instance or another metaheur version, or a
damaged file, is a clear error, never a silent fresh start.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import time
from pathlib import Path

import numpy as np

from metaheur import __version__
from metaheur.errors import InputFormatError, MetaheurError
from metaheur.islands.island import IslandState
from metaheur.islands.migration import Migration
from metaheur.islands.model import RunRecord
from metaheur.islands.params import GAParams, IslandParams, search_sections, searches_as_dicts
from metaheur.outputs import write_atomically
from metaheur.problems.interface import Problem
from metaheur.result import EpochRow
from metaheur.run_settings import RunSettings

CHECKPOINT_FORMAT = 1
# An island's saved searches (IslandState.searches: a QAP tabu island's saved tabu searches, a chain
# island's best and current solutions), one array per name: searches_<name>_<island>.
_SEARCH_ARRAY = re.compile(r"searches_(?P<name>.+)_(?P<island>\d+)")
_STATE_SCALARS = ("generation", "streams", "stale", "best_cost", "ls_iterations", "restarts", "cycle_best")


def params_to_dict(p: IslandParams, sections: dict[str, type]) -> dict:
    """An island's parameters as JSON: the GA's and those of every local search of ``sections``
    (:func:`~metaheur.islands.params.search_sections` of its problem), by section."""
    return {"ga": dataclasses.asdict(p.ga), **searches_as_dicts(p, sections)}


def params_from_dict(d: dict, sections: dict[str, type], *, strict: bool = True) -> IslandParams:
    """The parameters of :func:`params_to_dict` (a section it lacks has its defaults); a section
    not among ``sections`` is an error, or with ``strict=False`` left out."""
    unknown = sorted(set(d) - {"ga", *sections})
    if unknown and strict:
        raise ValueError(f"unknown parameter section(s) {', '.join(unknown)}")
    return IslandParams(GAParams(**d["ga"]), tuple(sections[name](**values) for name, values in d.items()
                                                   if name in sections))


class Checkpointer:
    """Writes the run to ``path`` every ``every`` seconds (at epoch boundaries) and at the end."""

    def __init__(self, path: str | os.PathLike, every: float, settings: RunSettings):
        if every <= 0:
            raise MetaheurError(f"--checkpoint-every must be positive, got {every}")
        self.path = Path(path)
        self.every = every
        self.settings = settings
        self.last = time.monotonic()
        self.writes = 0
        folder = self.path.parent
        if not folder.is_dir():
            raise MetaheurError(f"{self.path}: folder {folder} does not exist")

    def __call__(self, record: RunRecord, migrator, final: bool) -> None:
        if final or time.monotonic() - self.last >= self.every:
            save_checkpoint(self.path, self.settings, record, migrator)
            self.last = time.monotonic()
            self.writes += 1


def save_checkpoint(path: str | os.PathLike, settings: RunSettings, record: RunRecord, migrator) -> None:
    """Write the checkpoint through a temporary file and a rename."""
    path = Path(path)
    arrays: dict[str, np.ndarray] = {}
    islands = []
    for s in record.states:
        islands.append({k: getattr(s, k) for k in _STATE_SCALARS})
        for name in ("population", "costs", "best"):
            value = getattr(s, name)
            if value is not None:
                arrays[f"{name}_{s.index}"] = np.asarray(value)
        for name, value in (s.searches or {}).items():
            arrays[f"searches_{name}_{s.index}"] = np.asarray(value)
    for j, a in enumerate(migrator.archive_arrays()):
        arrays[f"archive_{j}"] = a
    header = {
        "format": CHECKPOINT_FORMAT,
        "metaheur": __version__,
        "settings": settings.to_json(),
        "island_params": [params_to_dict(spec.params, search_sections(spec.problem)) for spec in record.specs],
        "islands": islands,
        "migrator": migrator.state(),
        "epochs": [dataclasses.asdict(e) for e in record.epochs],
        "migrations": [[e, dataclasses.asdict(m)] for e, m in record.migrations],
        "progress": {"next_epoch": record.next_epoch, "best": record.best, "stale": record.stale,
                     "seconds": record.seconds, "retries": record.retries},
    }
    arrays["header"] = np.array(json.dumps(header))

    def write(tmp: str) -> None:
        with open(tmp, "wb") as handle:
            np.savez(handle, **arrays)

    write_atomically(path, write)


@dataclasses.dataclass
class Checkpoint:
    path: Path
    settings: RunSettings
    params: list[dict]  # every island's parameters as saved (:func:`params_to_dict`)
    states: list[IslandState]
    migrator_state: dict
    archive: list[np.ndarray]
    record: RunRecord  # without specs (the caller rebuilds them)

    def island_params(self, problem: Problem) -> list[IslandParams]:
        """Every island's parameters, their sections read as ``problem``'s islands know them
        (:func:`~metaheur.islands.params.search_sections`: a section of an unregistered problem's
        own is known once the problem is); a section unknown then is a damaged checkpoint."""
        sections = search_sections(problem)
        try:
            return [params_from_dict(d, sections) for d in self.params]
        except (KeyError, TypeError, ValueError, MetaheurError) as exc:
            raise InputFormatError(self.path, f"damaged checkpoint: {exc}") from None


def load_checkpoint(path: str | os.PathLike) -> Checkpoint:
    """Read a checkpoint; a damaged or foreign file is an :class:`InputFormatError`."""
    path = Path(path)
    try:
        with np.load(path, allow_pickle=False) as data:
            header = json.loads(str(data["header"]))
            arrays = {k: data[k] for k in data.files if k != "header"}
    except FileNotFoundError:
        raise InputFormatError(path, "no such file") from None
    except Exception as exc:  # zipfile, numpy's array-header parser (SyntaxError, TokenError, ValueError...)
        # and json each fail in their own way on a damaged file
        raise InputFormatError(path, f"not a metaheur checkpoint or damaged ({type(exc).__name__})") from None
    try:
        if header.get("format") != CHECKPOINT_FORMAT:
            raise InputFormatError(path, f"checkpoint format {header.get('format')} is not supported "
                                         f"(this metaheur reads format {CHECKPOINT_FORMAT})")
        if header.get("metaheur") != __version__:
            raise InputFormatError(path, f"checkpoint written by metaheur {header.get('metaheur')}, this is "
                                         f"{__version__}: resume it with that version")
        states = []
        for i, scalars in enumerate(header["islands"]):
            st = IslandState(i, **{k: scalars[k] for k in _STATE_SCALARS if k in scalars})  # older: no cycle_best
            st.population = arrays.get(f"population_{i}")
            st.costs = arrays.get(f"costs_{i}")
            st.best = arrays.get(f"best_{i}")
            searches = {m["name"]: value for key, value in arrays.items()
                        if (m := _SEARCH_ARRAY.fullmatch(key)) and int(m["island"]) == i}
            st.searches = searches or None
            if (st.population is None) != (st.costs is None) or (st.best is None) != (st.best_cost is None):
                raise ValueError(f"island {i} is incomplete")
            states.append(st)
        archive = [arrays[f"archive_{j}"] for j in range(len(header["migrator"]["archive_costs"]))]
        prog = header["progress"]
        record = RunRecord(states, [], epochs=[EpochRow(**e) for e in header["epochs"]],
                           migrations=[(e, Migration(**m)) for e, m in header["migrations"]],
                           seconds=float(prog["seconds"]), retries=int(prog["retries"]),
                           next_epoch=int(prog["next_epoch"]), best=prog["best"], stale=int(prog["stale"]))
        params = header["island_params"]
        sections = search_sections()
        if not isinstance(params, list) or len(params) != len(states):
            raise ValueError("island count mismatch")
        for d in params:  # what can be read before the problem is known: the GA's and registered sections
            params_from_dict(d, sections, strict=False)
        settings = RunSettings.from_json(header["settings"])
    except InputFormatError:
        raise
    except (KeyError, TypeError, ValueError, MetaheurError) as exc:
        raise InputFormatError(path, f"damaged checkpoint: {exc}") from None
    return Checkpoint(path, settings, params, states, header["migrator"], archive, record)
