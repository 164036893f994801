"""The result of a solve (in the manner of scipy.optimize's OptimizeResult and PyVRP's Result):
best solution and its exact cost, gap, stop reason, timings, typed per-island, per-epoch and
per-device rows, seeds, parameters and versions; JSON and CSV in and out (round trips)."""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path

from metaheur.errors import InputFormatError
from metaheur.inputs import SOLUTION, is_integer, is_json_int, parse_json, read_utf8
from metaheur.outputs import strict_json, write_text_atomically

RESULT_FORMAT = 1


def _rows(cls, items, src) -> list:
    """Rows of ``cls`` from JSON objects (unknown keys ignored, so that newer files still load)."""
    names = {f.name for f in dataclasses.fields(cls)}
    try:
        return [item if isinstance(item, cls) else cls(**{k: v for k, v in item.items() if k in names})
                for item in items]
    except (AttributeError, TypeError) as exc:
        raise InputFormatError(src, f"not a metaheur result: bad {cls.__name__} row ({exc})") from None


#: Seconds (a run's times and a device's busy and idle times) lie in 0 .. SECONDS_LIMIT (31 years).
SECONDS_LIMIT = 1e9
_RANGES = {"utilisation": (0.0, 1.0)} | {
    name: (0.0, SECONDS_LIMIT) for name in ("time_s", "compile_s", "setup_s", "busy_s", "idle_s")}


def _is_int64(value) -> bool:
    return is_json_int(value) and -(2**63) <= value < 2**63


def _is_number(value) -> bool:
    return (is_json_int(value) or isinstance(value, float)) and math.isfinite(value)


_CHECKS = {"int": (_is_int64, "a 64-bit integer"), "float": (_is_number, "a finite number"),
           "str": (lambda v: isinstance(v, str), "a string"), "dict": (lambda v: isinstance(v, dict), "an object"),
           "list[int]": (lambda v: isinstance(v, list) and all(map(_is_int64, v)), "a list of integers"),
           "list[str]": (lambda v: isinstance(v, list) and all(isinstance(x, str) for x in v), "a list of strings")}


def _shown(value) -> str:
    """A JSON value as a message shows it (cut at 40 characters)."""
    text = json.dumps(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _check_fields(src, cls, values: dict, where: str) -> None:
    """The JSON ``values`` of a ``cls`` (a result or one of its rows) against the fields' types
    (:data:`_CHECKS`; ``X | None`` also takes null; ``true`` is no integer) and ranges
    (:data:`_RANGES`), the rows' lists row by row; the first wrong one is one line naming it."""
    for f in dataclasses.fields(cls):
        if f.name not in values:
            continue
        value, name = values[f.name], f"{where}{f.name}"
        if f.name in _ROWS and cls is Result:
            if not isinstance(value, list) or not all(isinstance(item, dict) for item in value):
                raise InputFormatError(src, f"not a metaheur result: {name} must be a list of objects")
            for k, item in enumerate(value):
                _check_fields(src, _ROWS[f.name], item, f"{name}[{k}].")
            continue
        base = f.type.replace(" | None", "")
        if value is None and base != f.type:
            continue
        ok, what = _CHECKS[base]
        if not ok(value):
            raise InputFormatError(src, f"not a metaheur result: {name} must be {what}, got {_shown(value)}")
        low, high = _RANGES.get(f.name, (-math.inf, math.inf))
        if base == "float" and not low <= value <= high:
            raise InputFormatError(src, f"not a metaheur result: {name} = {value} is out of {low:g} .. {high:g}")


def _check_solution(src, result: Result) -> None:
    """A result's solution as a run writes it: ``permutation`` a permutation of 0..n-1, ``sense``
    min or max."""
    n, perm = result.n, result.permutation
    if n < 1 or len(perm) != n or sorted(perm) != list(range(n)):
        raise InputFormatError(src, f"not a metaheur result: permutation is not a permutation of 0..{n - 1} "
                                    f"(n = {n})")
    if result.sense not in ("min", "max"):
        raise InputFormatError(src, f"not a metaheur result: sense must be min or max, got {_shown(result.sense)}")


@dataclass
class IslandRow:
    """One island at the end of the run."""

    island: int
    device: str  # "cpu" or "cuda:k"
    generations: int  # GA generations (0 on a local-search-only island)
    ls_iterations: int  # tabu iterations (QAP), ILS kicks and descent moves or EAX children (TSP)
    best_cost: int | None
    restarts: int
    population: int
    offspring: int
    algorithm: str  # "GA (ux)", "tabu search", "ILS chains", "iterated greedy chains", "GA (eax)"
    search_steps: int = 0  # steps of a local-search-only island (tabu search, ILS chains); 0 on a GA island


@dataclass
class EpochRow:
    """One island in one epoch: a row of the statistics (``--stats`` CSV)."""

    epoch: int
    island: int
    device: str
    time_s: float  # run time at the end of the epoch
    generations: int  # GA generations (0 on a local-search-only island)
    ls_iterations: int
    busy_s: float
    best_cost: int | None
    global_best: int | None
    migrants_in: int
    search_steps: int = 0  # steps of a local-search-only island (tabu search, ILS chains); 0 on a GA island


@dataclass
class DeviceRow:
    """One device's load over the run."""

    device: str
    islands: int
    busy_s: float
    idle_s: float
    utilisation: float
    ls_iterations: int
    ls_iterations_per_s: float


@dataclass
class MigrationRow:
    """A migrant: in which epoch, from which island to which, at which cost."""

    epoch: int
    source: int
    target: int
    cost: int


@dataclass
class TracePoint:
    """A new island best: when, where, how good."""

    time_s: float
    island: int
    cost: int


STATS_FIELDS = tuple(f.name for f in dataclasses.fields(EpochRow))
#: The statistics' column names of a maximisation (its values are values, not costs).
_MAX_COLUMNS = {"best_cost": "best_value", "global_best": "global_best_value"}
_ROWS = {"islands": IslandRow, "device_loads": DeviceRow, "history": EpochRow, "migrations": MigrationRow,
         "trace": TracePoint}


@dataclass
class Result:
    """What a solve returns. ``permutation`` is the solution (0-based; QAP: unit -> location,
    TSP: the city order); ``problem`` is the problem's kind as every output spells it (``"QAP"``,
    ``"TSP"``: the result JSON, ``metaheur info`` and ``evaluate``). ``sense`` is the problem's
    (``"min"`` or ``"max"``): ``cost`` (also :attr:`value`) and every cost of the rows are values
    in that sense, and ``gap_percent`` is the gap above the best known for a minimisation, below
    it for a maximisation. ``str(result)`` is :meth:`summary`, what the CLI prints."""

    instance: str
    problem: str  # "QAP" or "TSP" (the problem's ``kind`` in upper case)
    n: int
    permutation: list[int]  # 0-based (QAP: unit -> location; TSP: city order)
    cost: int  # the exact value, recomputed from scratch on the host (``value``)
    best_known: int | None
    gap_percent: float | None
    stop_reason: str
    strategy: str
    seed: int
    devices: list[str]
    time_s: float  # search time
    compile_s: float  # kernel compilation (or cache loading), apart from search time
    search_iterations: int  # tabu iterations (QAP), ILS kicks and descent moves or EAX children (TSP), all islands
    generations: int  # GA generations per island (the most of any GA island)
    search_steps: int = 0  # steps per local-search-only island (tabu search, ILS chains; the most of any)
    sense: str = "min"  # the problem's: "min" or "max" (results written before it was kept are "min")
    islands: list[IslandRow] = field(default_factory=list)
    device_loads: list[DeviceRow] = field(default_factory=list)
    history: list[EpochRow] = field(default_factory=list)  # per epoch and island
    migrations: list[MigrationRow] = field(default_factory=list)
    trace: list[TracePoint] = field(default_factory=list)  # every new island best
    setup_s: float = 0.0  # starting worker processes (not search time)
    search_choice: dict | None = None  # how the local search was chosen (metaheur.search.perm_defaults), or None
    parameters: dict = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)  # what the run says of its result (no_generation_warning)
    versions: dict = field(default_factory=dict)
    source: str | None = None
    format: int = RESULT_FORMAT

    @property
    def value(self) -> int:
        """The best solution's exact value (``cost``: the name of a minimisation's)."""
        return self.cost

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    def to_json(self, path: str | os.PathLike | None = None) -> str:
        """The result as JSON; also written to ``path`` when given."""
        text = strict_json(self.to_dict())
        if path is not None:
            write_text_atomically(path, text + "\n")
        return text

    @classmethod
    def from_json(cls, text_or_path: str | os.PathLike) -> Result:
        """A result from a JSON string or file (as written by :meth:`to_json`): equal to the one
        written. Every field is checked (:func:`_check_fields`): a file that is not a result, or
        holds a value no run writes, is one :class:`InputFormatError` line."""
        src = None
        text = str(text_or_path)
        if not text.lstrip().startswith("{"):
            src = Path(text_or_path)
            text = read_utf8(src, SOLUTION)
        data = parse_json(text, src)
        if not isinstance(data, dict) or not {"instance", "permutation", "cost"} <= data.keys():
            raise InputFormatError(src, "not a metaheur result (keys instance, permutation, cost expected)")
        names = {f.name for f in dataclasses.fields(cls)}
        values = {k: v for k, v in data.items() if k in names}
        _check_fields(src, cls, values, "")
        for key, row in _ROWS.items():
            if key in values:
                values[key] = _rows(row, values[key], src)
        try:
            result = cls(**values)
        except TypeError as exc:
            raise InputFormatError(src, f"not a metaheur result ({exc})") from None
        _check_solution(src, result)
        return result

    def stats_csv(self, path: str | os.PathLike | None = None) -> str:
        """The per-epoch, per-island statistics as CSV; also written to ``path`` when given."""
        out = io.StringIO()
        names = _MAX_COLUMNS if self.sense == "max" else {}
        writer = csv.DictWriter(out, fieldnames=[names.get(f, f) for f in STATS_FIELDS], lineterminator="\n")
        writer.writeheader()
        for row in self.history:
            writer.writerow({names.get(k, k): v for k, v in dataclasses.asdict(row).items()})
        if path is not None:
            write_text_atomically(path, out.getvalue())
        return out.getvalue()

    @staticmethod
    def read_stats_csv(path: str | os.PathLike) -> list[EpochRow]:
        """Statistics rows back from :meth:`stats_csv` (numbers as int/float, empty as None; a
        maximisation's value columns as the rows' cost fields)."""
        back = {v: k for k, v in _MAX_COLUMNS.items()}
        handle = io.StringIO(read_utf8(path, SOLUTION), newline="")
        return _rows(EpochRow, [{back.get(k, k): _number(v) for k, v in row.items()}
                                for row in csv.DictReader(handle)], path)

    def summary(self) -> str:
        """The lines the CLI prints after a solve: instance, cost, gap, time, strategy, stop reason."""
        from metaheur.describe import format_evaluation
        from metaheur.problem import best_known

        entry = best_known(self.instance, self.n, kind=self.problem.lower())
        lines = format_evaluation({
            "instance": self.instance, "problem": self.problem, "n": self.n, "cost": self.cost, "sense": self.sense,
            "best_known": self.best_known, "best_known_optimal": entry.optimal if entry else None,
            "gap_percent": self.gap_percent, "stated_cost": None, "note": None}).splitlines()
        islands = len(self.islands)
        lines.append(f"time        {self.time_s:.2f} s search + {self.compile_s:.2f} s kernel build, "
                     f"{self.search_iterations:,} local-search iterations")
        searches = [isl.algorithm for isl in self.islands if not isl.algorithm.startswith("GA")]
        counts = [f"{self.generations} GA generations per island"] if len(searches) < islands else []
        if searches:
            counts.append(f"{self.search_steps} steps per local-search island ({searches[0]})")
        lines.append(f"generations {', '.join(counts)}")
        lines += [f"warning     {w}" for w in self.warnings]
        lines.append(f"strategy    {self.strategy} on {', '.join(self.devices)} "
                     f"({islands} island{'s' if islands != 1 else ''})")
        lines.append(f"stopped     {self.stop_reason}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.summary()


def _number(text: str):
    if text == "":
        return None
    if is_integer(text):
        return int(text)
    try:
        return float(text) if text.isascii() and "_" not in text else text
    except ValueError:
        return text
