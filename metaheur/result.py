"""The result of a solve (in the manner of scipy.optimize's OptimizeResult and PyVRP's Result):
best solution and its exact cost, gap, stop reason, timings, per-island and per-device
statistics, seeds, parameters and versions; JSON and CSV in and out."""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from metaheur.errors import InputFormatError
from metaheur.outputs import write_text_atomically

RESULT_FORMAT = 1
STATS_FIELDS = ("epoch", "island", "device", "time_s", "generations", "walk_steps", "ls_iterations", "busy_s",
                "best_cost", "global_best", "migrants_in")


@dataclass
class Result:
    instance: str
    problem: str  # "QAP" or "TSP"
    n: int
    permutation: list[int]  # 0-based (QAP: unit -> location; TSP: city order)
    cost: int  # recomputed from scratch on the host
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
    walk_steps: int = 0  # steps per local-search-only island (tabu walk, ILS chains; the most of any)
    islands: list[dict] = field(default_factory=list)  # per island: device, generations, best, ...
    device_loads: list[dict] = field(default_factory=list)  # per device: busy, idle, utilisation
    history: list[dict] = field(default_factory=list)  # per epoch and island: the statistics rows
    migrations: list[dict] = field(default_factory=list)  # epoch, source, target, cost
    trace: list[dict] = field(default_factory=list)  # time_s, island, cost: every new island best
    setup_s: float = 0.0  # starting worker processes (not search time)
    parameters: dict = field(default_factory=dict)
    versions: dict = field(default_factory=dict)
    source: str | None = None
    format: int = RESULT_FORMAT

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    def to_json(self, path: str | os.PathLike | None = None) -> str:
        """The result as JSON; also written to ``path`` when given."""
        text = json.dumps(self.to_dict(), indent=2)
        if path is not None:
            write_text_atomically(path, text + "\n")
        return text

    @classmethod
    def from_json(cls, text_or_path: str | os.PathLike) -> Result:
        """A result from a JSON string or file (as written by :meth:`to_json`)."""
        src = None
        text = str(text_or_path)
        if not text.lstrip().startswith("{"):
            src = Path(text_or_path)
            try:
                text = src.read_text()
            except OSError as exc:
                raise InputFormatError(src, f"cannot read: {exc.strerror or exc}") from None
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InputFormatError(src, f"invalid JSON: {exc.msg}", exc.lineno) from None
        names = {f.name for f in dataclasses.fields(cls)}
        if not isinstance(data, dict) or not {"instance", "permutation", "cost"} <= data.keys():
            raise InputFormatError(src, "not a metaheur result (keys instance, permutation, cost expected)")
        return cls(**{k: v for k, v in data.items() if k in names})

    def stats_csv(self, path: str | os.PathLike | None = None) -> str:
        """The per-epoch, per-island statistics as CSV; also written to ``path`` when given."""
        out = io.StringIO()
        writer = csv.DictWriter(out, fieldnames=STATS_FIELDS, lineterminator="\n")
        writer.writeheader()
        for row in self.history:
            writer.writerow({k: row.get(k) for k in STATS_FIELDS})
        if path is not None:
            write_text_atomically(path, out.getvalue())
        return out.getvalue()

    @staticmethod
    def read_stats_csv(path: str | os.PathLike) -> list[dict]:
        """Statistics rows back from :meth:`stats_csv` (numbers as int/float, empty as None)."""
        rows = []
        with open(path, newline="") as handle:
            for row in csv.DictReader(handle):
                rows.append({k: _number(v) for k, v in row.items()})
        return rows

    @property
    def solution(self) -> np.ndarray:
        return np.asarray(self.permutation, dtype=np.int64)


def _number(text: str):
    if text == "":
        return None
    for convert in (int, float):
        try:
            return convert(text)
        except ValueError:
            continue
    return text
