"""Checkpoints: the complete state of a run in one file, written atomically, read back to resume.

A checkpoint is a numpy ``.npz`` archive holding a JSON header and the island arrays. The header
says what the run is (format, metaheur version, the instance's fingerprint, name, size, kind and
where it came from, the solve settings: strategy, seed, devices, parameters of every island,
migration, epochs, stop rules) and where it stands (every island's counters, the migrator's
random state and archive, the statistics rows, the trace of new bests, the search time used). A
resumed synchronous run ends exactly as an uninterrupted one would.

A checkpoint is data, checked whole before any island, kernel or worker sees it. It names its
problem by registered kind, never code to import. :func:`load_checkpoint` reads a regular file
only (a FIFO or a device is refused before it is opened), its header (capped in size before it
is inflated) with every field's type and range checked, and the names of its members: only
those the format names. No array is read until the instance is known: :meth:`Checkpoint.validate`
checks every array member's declared shape and integer type against what a run of that instance
writes (:mod:`metaheur.checkpoint_shapes`) before reading any, then its content: every solution
a permutation, every recorded cost recomputed. A
checkpoint of another instance or another metaheur version, or a damaged file, is a one-line
:class:`InputFormatError`, never a silent fresh start. A checkpoint that cannot be written (a full
disk) warns once and the run goes on (:attr:`Checkpointer.error`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import json
import math
import os
import re
import reprlib
import time
import types
import typing
import warnings
import zipfile
from pathlib import Path
from typing import BinaryIO

import numpy as np

from metaheur import __version__
from metaheur.checkpoint_shapes import check_shapes, expected_shapes, most_bytes
from metaheur.errors import InputFormatError, MetaheurError, one_line
from metaheur.inputs import is_json_int, open_regular, parse_json
from metaheur.islands.island import IslandState, island_class
from metaheur.islands.migration import Migration
from metaheur.islands.model import RunRecord
from metaheur.islands.params import GAParams, IslandParams, move_keys, search_sections, searches_as_dicts
from metaheur.outputs import CHECKPOINT, check_writable, write_atomically
from metaheur.problem.interface import Problem, SearchForm
from metaheur.result import EpochRow
from metaheur.run_settings import InstanceInfo, RunSettings

CHECKPOINT_FORMAT = 1
HEADER_LIMIT = 64 << 20  # bytes of the header member once inflated (4 a character: 16 Mi characters of JSON)
_LIMIT_FLOOR, _LIMIT_CAP = 64 << 20, 8 << 30  # the bounds of an island's population in bytes (_member_limit)
_NPY_SLACK = 1 << 16  # the bytes of a member beyond its array's: the .npy header
_INT64 = 1 << 63
_CLASS_NAME = re.compile(r"[A-Za-z_][\w.]*:[A-Za-z_][\w.]*")  # module:Class, as a checkpoint names its problem
_STATE_SCALARS = {"generation": int, "streams": int, "stale": int, "best_cost": int | None, "ls_iterations": int,
                  "restarts": int, "cycle_best": int | None}
_STATE_COUNTERS = ("generation", "streams", "stale", "ls_iterations", "restarts")
_PROGRESS = {"next_epoch": int, "best": int | None, "stale": int, "seconds": float, "retries": int}
_EPOCH_COUNTERS = ("epoch", "time_s", "generations", "ls_iterations", "busy_s", "migrants_in", "search_steps")
_STOP = {"time_limit": float, "generations": int, "target": int, "no_improvement": int}
_ISLAND_ARRAYS = ("population", "costs", "best")


# An island's saved searches (Island.saved_searches: a QAP tabu island's, a chain island's), one
# member per array: searches_<name>_<island>, at most _MAX_SAVED of them an island.
_SEARCH_MEMBER = re.compile(r"searches_(?P<name>[a-z][a-z_]{0,30})_(?P<island>\d+)(\.npy)?")
_MAX_SAVED = 16


def params_to_dict(p: IslandParams, sections: dict[str, type]) -> dict:
    """An island's parameters as JSON: the GA's and those of every local search of ``sections``
    (:func:`~metaheur.islands.params.search_sections` of its problem), by section."""
    return {"ga": dataclasses.asdict(p.ga), **searches_as_dicts(p, sections)}


def params_from_dict(d: dict, sections: dict[str, type], *, strict: bool = True) -> IslandParams:
    """The parameters of :func:`params_to_dict`, every field of its type (a section it lacks has
    its defaults); a section not among ``sections`` is an error, or with ``strict=False`` left out."""
    if not isinstance(d, dict) or "ga" not in d:
        raise ValueError("an island's parameters have no GA section")
    d, _ = move_keys(d, {"ga": GAParams, **sections})  # a checkpoint of an earlier version
    unknown = sorted(set(d) - {"ga", *sections})
    if unknown and strict:
        raise ValueError(f"unknown parameter section(s) {', '.join(map(_shown, unknown))}")
    known = {name: values for name, values in d.items() if name in sections}
    _check_fields(d["ga"], GAParams, "ga")
    for name, values in known.items():
        _check_fields(values, sections[name], name)
    return IslandParams(GAParams(**d["ga"]), tuple(sections[name](**values) for name, values in known.items()))


class Checkpointer:
    """Writes the run to ``path`` every ``every`` seconds (at epoch boundaries) and at the end. A
    write that fails (a full disk) warns once and the run goes on; :attr:`error` is why the last
    write failed (``"PATH: reason"``), None once a write succeeds."""

    def __init__(self, path: str | os.PathLike, every: float, settings: RunSettings):
        if every <= 0:
            raise MetaheurError(f"--checkpoint-every must be positive, got {every}")
        self.path = Path(path)
        self.every = every
        self.settings = settings
        self.last = time.monotonic()
        self.error: str | None = None
        self.warned = False
        check_writable(str(self.path), CHECKPOINT)  # a regular file in a folder that exists

    def __call__(self, record: RunRecord, migrator, final: bool) -> None:
        if final or time.monotonic() - self.last >= self.every:
            self._write(record, migrator)
            self.last = time.monotonic()

    def _write(self, record: RunRecord, migrator) -> None:
        """Write the checkpoint; a failure is kept in :attr:`error` and warned about the first time."""
        try:
            save_checkpoint(self.path, self.settings, record, migrator)
        except OSError as exc:
            self.error = f"{self.path}: {exc.strerror or exc}"
            if not self.warned:
                warnings.warn(f"metaheur: cannot write the checkpoint {self.error}; the run goes on without it",
                              RuntimeWarning, stacklevel=2)
                self.warned = True
            return
        self.error = None


def save_checkpoint(path: str | os.PathLike, settings: RunSettings, record: RunRecord, migrator) -> None:
    """Write the checkpoint through a temporary file and a rename."""
    path = Path(path)
    arrays: dict[str, np.ndarray] = {}
    islands = []
    for s in record.states:
        islands.append({k: getattr(s, k) for k in _STATE_SCALARS})
        for name in _ISLAND_ARRAYS:
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
        "trace": [[float(t), int(i), int(c)] for t, i, c in record.trace],
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
    """A checkpoint as read (:func:`load_checkpoint`): its header checked, the names of its array
    members known; its arrays are read, checked against the instance, by :meth:`validate`."""

    path: Path
    settings: RunSettings
    params: list[dict]  # every island's parameters as saved (:func:`params_to_dict`)
    states: list[IslandState]  # their arrays None until validate reads them
    migrator_state: dict
    arrays: frozenset[str]  # the names of its array members
    record: RunRecord  # without specs (the caller rebuilds them)
    archive: list[np.ndarray] = dataclasses.field(default_factory=list)  # read by validate

    def island_params(self, problem: Problem) -> list[IslandParams]:
        """Every island's parameters, their sections read as ``problem``'s islands know them
        (:func:`~metaheur.islands.params.search_sections`: a section of an unregistered problem's
        own is known once the problem is); a section unknown then is a damaged checkpoint."""
        sections = search_sections(problem)
        try:
            return [params_from_dict(d, sections) for d in self.params]
        except (KeyError, TypeError, ValueError, MetaheurError) as exc:
            raise InputFormatError(self.path, f"damaged checkpoint: {one_line(exc)}") from None

    def validate(self, problem: Problem) -> None:
        """Read the arrays and check the checkpoint against ``problem``, the instance it resumes
        (of the checkpoint's fingerprint), before any island sees it: every island's parameters
        are for the problem; every array member's declared shape and type, before it is read, is
        one a run of the instance writes (:func:`_read_arrays`); every solution is a permutation
        of the search form's size with its recorded cost recomputed, every saved search of the
        layout its kind keeps; the same for the archive; the run's best is its islands' best.
        Solutions and costs are left as int64. A mismatch is a one-line :class:`InputFormatError`
        naming the checkpoint (and the member)."""
        form = problem.search_form()
        params = self.island_params(form.problem)
        try:
            for p in params:
                _check_params(p, form.problem, problem.n)
            algorithms = [island_class(form.problem, p.ga) for p in params]
            _read_arrays(self, form.problem.n, algorithms, params)
            for state, algorithm in zip(self.states, algorithms, strict=True):
                _check_island(state, form, problem, algorithm)
            costs = self.migrator_state["archive_costs"]
            self.archive = [_checked_best(a, c, form, problem, f"archive member {j}")
                            for j, (a, c) in enumerate(zip(self.archive, costs, strict=True))]
            _check_record_best(self.record, self.states)
        except InputFormatError:
            raise
        except (ValueError, MetaheurError) as exc:
            raise InputFormatError(self.path, f"damaged checkpoint: {one_line(exc)}") from None


# ------------------------------------------------------------------------------ reading


def load_checkpoint(path: str | os.PathLike) -> Checkpoint:
    """Read a checkpoint's header: a regular file (a FIFO, a device or a directory is refused
    before it is opened), its header with every field typed and in range, the names of the array
    members it has (a member the format does not name is refused unread). A damaged or foreign
    file is an :class:`InputFormatError`. No array is read: :meth:`Checkpoint.validate` reads
    them once the instance is known."""
    path = Path(path)
    with open_regular(path) as handle, _Members(path, handle) as members:
        header = members.header()
        _check_version(path, header)
        try:
            return _checkpoint(path, header, members)
        except InputFormatError:
            raise
        except (KeyError, TypeError, ValueError, MetaheurError) as exc:
            raise InputFormatError(path, f"damaged checkpoint: {one_line(exc)}") from None


class _Members:
    """The members of a checkpoint's zip archive, each read alone: its size (the zip entry's and
    the ``.npy`` header's shape times item size) and type checked before it is inflated."""

    def __init__(self, path: Path, handle: BinaryIO):
        self.path = path
        try:
            self.zip = zipfile.ZipFile(handle)
            self.infos = {info.filename: info for info in self.zip.infolist()}
        except Exception as exc:  # zipfile fails in its own ways on a damaged file
            raise self.damaged(exc) from None

    def __enter__(self) -> _Members:
        return self

    def __exit__(self, *exc) -> None:
        self.zip.close()

    def damaged(self, exc: Exception) -> InputFormatError:
        return InputFormatError(self.path, f"not a metaheur checkpoint or damaged ({type(exc).__name__})")

    def has(self, name: str) -> bool:
        return f"{name}.npy" in self.infos

    def refuse_others(self, names: set[str]) -> None:
        """Refuse, unread, every member but those of ``names``."""
        unknown = sorted(set(self.infos) - {f"{name}.npy" for name in names})
        if unknown:
            raise InputFormatError(self.path, f"damaged checkpoint: unknown member {_shown(unknown[0])}")

    def header(self) -> dict:
        """The header: a JSON object."""
        if not self.has("header"):
            raise InputFormatError(self.path, "not a metaheur checkpoint (no header)")
        text = self.array("header", HEADER_LIMIT, "U")
        if text.shape != ():
            raise InputFormatError(self.path, "damaged checkpoint: its header is not one text")
        header = parse_json(str(text[()]), self.path)
        del text
        if not isinstance(header, dict):
            raise InputFormatError(self.path, "damaged checkpoint: its header is not a JSON object")
        return header

    def array(self, name: str, limit: int, kinds: str) -> np.ndarray:
        """Member ``name`` (:meth:`declared`) of at most ``limit`` bytes, checked before it is read."""
        declared = self.declared(name, limit, kinds)
        size = math.prod(declared[0]) * declared[2].itemsize
        if size > limit:
            raise self.too_large(name, size, limit)
        return self.read(name, declared)

    def declared(self, name: str, limit: int, kinds: str = "iu") -> tuple[tuple[int, ...], bool, np.dtype]:
        """(shape, Fortran order, dtype) of member ``name`` as its ``.npy`` header declares them,
        read alone: a dtype of ``kinds`` (integers of at most 8 bytes by default); the zip
        entry's size as the central directory declares it, which bounds what is inflated, at
        most ``limit`` bytes, checked before the member is opened."""
        info = self.info(name)
        if info.file_size > limit + _NPY_SLACK:
            raise self.too_large(name, info.file_size, limit)
        with self.opened(info) as fp:
            shape, fortran, dtype = _npy_header(fp)
        if dtype.kind not in kinds or dtype.hasobject or not dtype.itemsize or (kinds == "iu" and dtype.itemsize > 8):
            raise InputFormatError(self.path, f"damaged checkpoint: {name} is of type {dtype}")
        return shape, fortran, dtype

    def read(self, name: str, declared: tuple[tuple[int, ...], bool, np.dtype]) -> np.ndarray:
        """Member ``name``'s array of its ``declared`` shape and type (:meth:`declared`): its data
        read once, into the array's own buffer; more or less data is a damaged member."""
        shape, fortran, dtype = declared
        with self.opened(self.info(name)) as fp:
            _npy_header(fp)
            data = _read_exactly(fp, math.prod(shape) * dtype.itemsize)
        return np.frombuffer(data, dtype).reshape(shape, order="F" if fortran else "C")

    def info(self, name: str) -> zipfile.ZipInfo:
        """Member ``name``'s zip entry; none is a damaged checkpoint."""
        if not self.has(name):
            raise InputFormatError(self.path, f"damaged checkpoint: no member {name}")
        return self.infos[f"{name}.npy"]

    @contextlib.contextmanager
    def opened(self, info: zipfile.ZipInfo):
        """The member of ``info`` open for reading; any failure of zipfile or of numpy's
        array-header parser (SyntaxError, TokenError, ValueError...) is a damaged checkpoint."""
        try:
            with self.zip.open(info) as fp:
                yield fp
        except InputFormatError:
            raise
        except Exception as exc:
            raise self.damaged(exc) from None

    def too_large(self, name: str, size: int, limit: int) -> InputFormatError:
        return InputFormatError(self.path, f"damaged checkpoint: {name} holds {size} bytes, more than the "
                                           f"{limit} a run of this instance writes")


def _read_exactly(fp, size: int) -> bytearray:
    """The ``size`` bytes left in ``fp``, read in chunks into one buffer (no second copy of a
    large member); fewer or more is a damaged member."""
    data = bytearray(size)
    view, done = memoryview(data), 0
    while done < size:
        chunk = fp.read(min(size - done, 1 << 20))
        if not chunk:
            break
        view[done:done + len(chunk)] = chunk
        done += len(chunk)
    if done != size or fp.read(1):
        raise ValueError("the array's length")
    return data


def _npy_header(fp) -> tuple[tuple[int, ...], bool, np.dtype]:
    """(shape, Fortran order, dtype) of the ``.npy`` array ``fp`` starts with (formats 1.0 and 2.0)."""
    version = np.lib.format.read_magic(fp)
    read = {(1, 0): np.lib.format.read_array_header_1_0, (2, 0): np.lib.format.read_array_header_2_0}.get(version)
    if read is None:
        raise ValueError(f".npy format {version}")
    return read(fp)


def _member_limit(n: int) -> int:
    """The most bytes of an island's population in a checkpoint of an instance of size ``n``:
    64 squares of int64 of twice the size (a search form may double it, as the ATSP's does), at
    least 64 MiB, at most 8 GiB."""
    return min(_LIMIT_CAP, max(_LIMIT_FLOOR, 64 * 8 * (2 * n) ** 2))


def _check_version(path: Path, header: dict) -> None:
    """The format and the metaheur version that wrote the checkpoint are this one's."""
    if type(header.get("format")) is not int or header.get("format") != CHECKPOINT_FORMAT:
        raise InputFormatError(path, f"checkpoint format {_shown(header.get('format'))} is not supported "
                                     f"(this metaheur reads format {CHECKPOINT_FORMAT})")
    if header.get("metaheur") != __version__:
        raise InputFormatError(path, f"checkpoint written by metaheur {_shown(header.get('metaheur'))}, this is "
                                     f"{__version__}: resume it with that version")


def _checkpoint(path: Path, header: dict, members: _Members) -> Checkpoint:
    """The checkpoint of a header of this format and version, its fields checked, and its arrays."""
    settings = _settings(header["settings"])
    islands, params, migrator = header["islands"], header["island_params"], header["migrator"]
    if not isinstance(islands, list) or not islands or not isinstance(params, list):
        raise ValueError("no islands")
    if not len(islands) == len(params) == len(settings.devices):
        raise ValueError("island count mismatch")
    sections = search_sections()
    for d in params:  # what can be read before the problem is known: the GA's and registered sections
        params_from_dict(d, sections, strict=False)
    _check_migrator(migrator, settings.migration.archive)
    record = _record(header, len(islands))
    archived = len(migrator["archive_costs"])
    names = _member_names(len(islands), archived, members)
    members.refuse_others(names)
    for j in range(archived):
        if not members.has(f"archive_{j}"):
            raise ValueError(f"archive member {j} is missing")
    record.states = [_island_state(i, scalars, members) for i, scalars in enumerate(islands)]
    arrays = frozenset(name for name in names if members.has(name)) - {"header"}
    return Checkpoint(path, settings, params, record.states, migrator, arrays, record)


def _read_arrays(saved: Checkpoint, n: int, algorithms: list[type], params: list[IslandParams]) -> None:
    """Read the checkpoint's arrays into its states and archive once every member's declared
    shape and type is one a run of the instance writes (:func:`~metaheur.checkpoint_shapes.expected_shapes`
    of the searched size ``n``, each island's algorithm keeping at most
    :meth:`~metaheur.islands.base.Island.most_members` of its parameters): nothing is read
    before every member is checked."""
    islands = [(s.index, algorithm, algorithm.most_members(p.ga), _saved_names(saved.arrays, s.index))
               for s, algorithm, p in zip(saved.states, algorithms, params, strict=True)
               if f"population_{s.index}" in saved.arrays]
    expected = expected_shapes(n, islands, len(saved.migrator_state["archive_costs"]))
    with open_regular(saved.path) as handle, _Members(saved.path, handle) as members:
        members.refuse_others({"header", *expected})
        declared = {name: members.declared(name, most_bytes(shape)) for name, shape in expected.items()}
        check_shapes({name: d[0] for name, d in declared.items()}, expected)  # integers: at most 8 bytes an item
        arrays = {name: members.read(name, d) for name, d in declared.items()}
    for s in saved.states:
        s.population, s.costs, s.best = (arrays.get(f"{name}_{s.index}") for name in _ISLAND_ARRAYS)
        saved_searches = {name: arrays[f"searches_{name}_{s.index}"] for name in _saved_names(saved.arrays, s.index)}
        s.searches = saved_searches or None
    saved.archive = [arrays[f"archive_{j}"] for j in range(len(saved.migrator_state["archive_costs"]))]


def _member_names(islands: int, archived: int, members: _Members) -> set[str]:
    """Every member a checkpoint of ``islands`` islands and ``archived`` archive members may hold:
    the header, the archive, each island's arrays and at most :data:`_MAX_SAVED` saved searches
    (checked against the island's algorithm by :meth:`Checkpoint.validate`)."""
    names = {"header", *(f"archive_{j}" for j in range(archived))}
    for i in range(islands):
        names |= {f"{name}_{i}" for name in _ISLAND_ARRAYS}
        saved = _saved_names(members.infos, i)
        if len(saved) > _MAX_SAVED:
            raise ValueError(f"island {i} has {len(saved)} saved search arrays")
        names |= {f"searches_{name}_{i}" for name in saved}
    return names


def _saved_names(members: typing.Iterable[str], island: int) -> list[str]:
    """The names of island ``island``'s saved search arrays among the names of ``members`` (with
    or without ``.npy``)."""
    return sorted(m["name"] for m in map(_SEARCH_MEMBER.fullmatch, members) if m and int(m["island"]) == island)


def _settings(data) -> RunSettings:
    """The run's settings, every field typed and in range."""
    from metaheur.solver import STRATEGIES

    _check_fields(data, RunSettings, "settings")
    settings = RunSettings.from_json(data)
    if settings.strategy not in STRATEGIES or settings.strategy == "auto":
        raise ValueError(f"unknown strategy {_shown(settings.strategy)}")
    if settings.seed < 0:
        raise ValueError(f"the seed {settings.seed} is negative")
    if not settings.epoch_seconds > 0 or settings.epoch_generations < 1:
        raise ValueError("epochs of no length")
    _check_instance(settings.problem)
    _check_object(settings.stop, _STOP, set(), "the stop rules")
    _check_counters(settings.stop, ("time_limit", "generations", "no_improvement"), "the stop rules", bounded=False)
    return settings


def _check_instance(info: InstanceInfo) -> None:
    """The instance's size is positive; its problem class, when named, a ``module:Class`` (a name
    only: compared with the registered classes', never imported)."""
    if info.n < 1:
        raise ValueError(f"the instance's size {info.n} is not positive")
    if info.problem_class is not None and not _CLASS_NAME.fullmatch(info.problem_class):
        raise ValueError(f"the problem {_shown(info.problem_class)} is not named module:Class")


def _check_migrator(state, archive_size: int) -> None:
    """The migrator's state: a PCG64 random state and the costs of at most ``archive_size``
    archive members."""
    _check_object(state, {"rng": dict, "archive_costs": list[int]}, {"rng", "archive_costs"}, "the migrator")
    if len(state["archive_costs"]) > archive_size:
        raise ValueError(f"an archive of {len(state['archive_costs'])} members, more than its {archive_size}")
    try:
        np.random.default_rng().bit_generator.state = state["rng"]
    except (KeyError, TypeError, ValueError, OverflowError):
        raise ValueError("the migrator's random state is not a PCG64 state") from None


def _record(header: dict, islands: int) -> RunRecord:
    """The run's record (without states and specs): its progress, statistics rows, migrations and
    trace, every field typed, counters non-negative, islands and epochs in range (a checkpoint
    of an older write has no trace)."""
    progress = header["progress"]
    _check_object(progress, _PROGRESS, set(_PROGRESS), "the progress")
    _check_counters(progress, ("next_epoch", "stale", "seconds", "retries"), "the progress")
    epochs = _rows(header["epochs"], "epochs")
    for k, row in enumerate(epochs):
        _check_fields(row, EpochRow, f"epoch row {k}")
        _check_counters(row, _EPOCH_COUNTERS, f"epoch row {k}")
        _check_in(row["island"], islands, f"epoch row {k}'s island")
        _check_in(row["epoch"], progress["next_epoch"], f"epoch row {k}'s epoch")
    migrations = _rows(header["migrations"], "migrations")
    for k, (epoch, move) in enumerate(_pairs(migrations, 2, "migration")):
        _check_fields(move, Migration, f"migration {k}")
        _check_in(epoch, progress["next_epoch"], f"migration {k}'s epoch")
        _check_in(move["source"] + 1, islands + 1, f"migration {k}'s source")  # -1: the elite archive
        _check_in(move["target"], islands, f"migration {k}'s target")
    trace = _pairs(_rows(header.get("trace", []), "trace"), 3, "trace point")
    for k, (t, island, cost) in enumerate(trace):
        if not (_matches(t, float) and t >= 0 and _matches(cost, int)):
            raise ValueError(f"trace point {k} is not (seconds, island, cost)")
        _check_in(island, islands, f"trace point {k}'s island")
    return RunRecord([], [], epochs=[EpochRow(**e) for e in epochs],
                     migrations=[(e, Migration(**m)) for e, m in migrations],
                     seconds=float(progress["seconds"]), retries=progress["retries"],
                     next_epoch=progress["next_epoch"], best=progress["best"], stale=progress["stale"],
                     trace=[(float(t), i, c) for t, i, c in trace])


def _island_state(i: int, scalars, members: _Members) -> IslandState:
    """Island ``i``'s state: its counters, typed and non-negative; of its arrays (read by
    :meth:`Checkpoint.validate`) it has all (population, costs, best and its cost) or none
    (saved searches only with them)."""
    _check_object(scalars, _STATE_SCALARS, set(_STATE_SCALARS) - {"cycle_best"}, f"island {i}")  # older: no cycle_best
    _check_counters(scalars, _STATE_COUNTERS, f"island {i}")
    state = IslandState(i, **scalars)
    given = [members.has(f"{name}_{i}") for name in _ISLAND_ARRAYS] + [state.best_cost is not None]
    if any(given) != all(given) or (_saved_names(members.infos, i) and not all(given)):
        raise ValueError(f"island {i} is incomplete")
    return state


# ------------------------------------------------------------------------------ header fields


@functools.cache
def _hints(cls: type) -> dict[str, object]:
    """The fields of the dataclass ``cls`` and their types."""
    hints = typing.get_type_hints(cls)
    return {f.name: hints[f.name] for f in dataclasses.fields(cls)}


def _check_fields(data, cls: type, where: str) -> None:
    """``data`` is a JSON object of the dataclass ``cls``: every field of its type, those without a
    default present, no other key (a field of a dataclass type is an object of its own)."""
    required = {f.name for f in dataclasses.fields(cls)
                if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING}
    _check_object(data, _hints(cls), required, where)


def _check_object(data, hints: dict[str, object], required: set[str], where: str) -> None:
    """``data`` is a JSON object of the keys of ``hints``, those of ``required`` present, every
    value of its key's type (:func:`_matches`)."""
    if not isinstance(data, dict):
        raise ValueError(f"{where} is not an object")
    unknown = sorted(set(data) - set(hints))
    missing = sorted(required - set(data))
    if unknown or missing:
        raise ValueError(f"{where} has {'an unknown' if unknown else 'no'} field {_shown((unknown or missing)[0])}")
    for name, value in data.items():
        hint = hints[name]
        if dataclasses.is_dataclass(hint):
            _check_fields(value, hint, f"{where}.{name}")
        elif not _matches(value, hint):
            raise ValueError(f"{where}.{name} is {_shown(value)}, not of type {_type_name(hint)}")


def _matches(value, hint) -> bool:
    """Whether a JSON value is of the annotated type ``hint``: an int a JSON integer within int64,
    a float a finite number, a str printable, a tuple or list one of its items' type each."""
    if hint is int:
        return is_json_int(value) and -_INT64 <= value < _INT64
    if hint is float:
        return (isinstance(value, float) and math.isfinite(value)) or _matches(value, int)
    if hint is str:
        return isinstance(value, str) and value.isprintable()
    if hint in (bool, dict, type(None)):
        return isinstance(value, hint)
    origin = typing.get_origin(hint)
    if origin in (types.UnionType, typing.Union):
        return any(_matches(value, h) for h in typing.get_args(hint))
    if origin in (tuple, list):
        return isinstance(value, list) and all(_matches(v, typing.get_args(hint)[0]) for v in value)
    return isinstance(value, (bool, int, float, str, type(None)))


def _type_name(hint) -> str:
    return getattr(hint, "__name__", None) or str(hint)


_COUNTER_LIMIT = 1 << 53  # a counter a run could reach: room to count on without overflowing int64


def _check_counters(data: dict, names, where: str, bounded: bool = True) -> None:
    """The values of ``names`` in ``data`` (those present) are not negative and, ``bounded``,
    below :data:`_COUNTER_LIMIT` (counters a resumed run adds to; not the stop rules)."""
    for name in names:
        if data.get(name) is not None and data[name] < 0:
            raise ValueError(f"{where}.{name} is negative ({data[name]})")
        if bounded and data.get(name) is not None and data[name] >= _COUNTER_LIMIT:
            raise ValueError(f"{where}.{name} is out of range ({data[name]})")


def _check_in(value, bound: int, what: str) -> None:
    """``value`` is an int in ``0 .. bound - 1``."""
    if not (_matches(value, int) and 0 <= value < bound):
        raise ValueError(f"{what} {_shown(value)} is out of range")


def _rows(value, what: str) -> list:
    if not isinstance(value, list):
        raise ValueError(f"the {what} are not a list")
    return value


def _pairs(rows: list, size: int, what: str) -> list:
    """``rows``, each a list of ``size`` items."""
    for k, row in enumerate(rows):
        if not (isinstance(row, list) and len(row) == size):
            raise ValueError(f"{what} {k} is not a list of {size}")
    return rows


def _shown(value) -> str:
    """A value of the file as an error message shows it: as it is, or its repr when it is not
    printable text, at most 40 characters."""
    text = value if isinstance(value, str) and value.isprintable() else reprlib.repr(value)
    return text if len(text) <= 40 else f"{text[:37]}..."


# ------------------------------------------------------------------------------ arrays, against the problem


def _check_params(params: IslandParams, search: Problem, n: int) -> None:
    """An island's parameters are those of the searched problem's islands (crossover and island
    algorithm), with no more members or children than a checkpoint of an instance of size ``n``
    (the instance's own) may hold (:func:`_member_limit`)."""
    params.check_for(search)
    rows = _member_limit(n) // (8 * search.n)
    if max(params.ga.population, params.ga.offspring) > rows:
        raise ValueError(f"an island of {params.ga.population} members and {params.ga.offspring} children a "
                         f"generation, more than the {rows} a checkpoint holds")


def _check_island(state: IslandState, form: SearchForm, problem: Problem, algorithm: type) -> None:
    """An island's arrays: its population permutations of the search form's size with their exact
    costs, its best (:func:`_checked_best`), its saved searches (:func:`_check_searches`)."""
    if state.population is None:
        return
    where, search = f"island {state.index}", form.problem
    state.population = _permutations(state.population, search.n, f"{where}'s population")
    state.costs = _costs(state.costs, search.engine_costs(state.population), f"{where}'s costs")
    state.best = _checked_best(state.best, state.best_cost, form, problem, f"{where}'s best")
    _check_searches(state.searches, algorithm, search, where)


def _permutations(rows: np.ndarray, n: int, what: str) -> np.ndarray:
    """``rows`` (k >= 1 rows of ``n``) as int64, when each is a permutation of ``0 .. n - 1``."""
    if rows.ndim != 2 or rows.shape[0] < 1 or rows.shape[1] != n:
        raise ValueError(f"{what} has shape {rows.shape}, not rows of {n}")
    if not (np.sort(rows, axis=1) == np.arange(n)).all():
        raise ValueError(f"{what} holds a row that is not a permutation of 0..{n - 1}")
    return rows.astype(np.int64)


def _costs(saved: np.ndarray, exact: np.ndarray, what: str) -> np.ndarray:
    """The ``saved`` costs as int64, when they are the ``exact`` ones."""
    if saved.shape != exact.shape or not np.array_equal(saved.astype(np.int64), exact):
        raise ValueError(f"{what} are not those of its solutions")
    return saved.astype(np.int64)


def _checked_best(solution: np.ndarray, cost: int, form: SearchForm, problem: Problem, what: str) -> np.ndarray:
    """A best solution (an island's, an archive member) as int64, when it is a permutation of the
    search form's size of engine cost ``cost``, and mapped back to the problem, of that exact
    value in the engine's sense (what the run's result is checked against)."""
    if solution.ndim != 1:
        raise ValueError(f"{what} has shape {solution.shape}, not one solution")
    solution = _permutations(solution[None, :], form.problem.n, what)[0]
    exact = int(form.problem.engine_costs(solution[None, :])[0])
    if exact != cost:
        raise ValueError(f"{what} costs {exact}, not the {cost} recorded")
    try:
        value = problem.value(form.from_search(solution))
    except MetaheurError:
        raise ValueError(f"{what} is not a solution of {problem.name}") from None
    if problem.engine_sign * value != cost:
        raise ValueError(f"{what}'s cost is not its value")
    return solution


def _check_searches(searches: dict | None, algorithm: type, search: Problem, where: str) -> None:
    """An island's saved searches: none, or the arrays its algorithm keeps
    (:attr:`~metaheur.islands.base.Island.saved_searches`, their names and shapes checked before
    they were read: :mod:`metaheur.checkpoint_shapes`), its solutions permutations of their
    recorded costs."""
    if searches is None:
        return
    layout = algorithm.saved_searches
    for name in layout.solutions:
        _permutations(searches[name], search.n, f"{where}'s saved {name}")
    for (name, column), solutions in layout.costs.items():
        _costs(searches[name][:, column], search.engine_costs(searches[solutions].astype(np.int64)),
               f"{where}'s saved costs of {solutions}")


def _check_record_best(record: RunRecord, states: list[IslandState]) -> None:
    """The run's best is the best of its islands' bests."""
    best = min((s.best_cost for s in states if s.best_cost is not None), default=None)
    if record.best != best:
        raise ValueError(f"the run's best {record.best} is not its islands' best {best}")
