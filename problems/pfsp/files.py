"""Flow shop files: Taillard's format, VRF's, OR-Library's concatenations, and job-order solutions.

* Taillard's (Taillard 1993; the ``.fsp`` files of the shared library): a label line ``number of
  jobs, number of machines, initial seed, upper bound and lower bound :``, the line ``n m [seed ub
  lb]``, the label ``processing times :``, then ``m`` rows of ``n`` times (machine by machine). A
  file may concatenate several such blocks (his ``tai20_5.txt``).
* VRF's (Vallada, Ruiz and Framinan 2015; ``*_Gap.txt``): ``n m``, then per job ``m`` pairs
  ``machine time`` with machines numbered from 0.
* OR-Library's ``flowshop1.txt``: blocks introduced by ``instance NAME``, a free description line,
  then ``n m`` and VRF's pairs; ``+++`` lines separate the blocks.

A file with several instances is read with the instance named (``FILE#NAME``) or numbered from 1
(``FILE#K``). Solutions are job orders, 1-based (0-based accepted when the numbers say so), with
``#`` comment lines; the writer states the makespan in one.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from metaheur.errors import InputFormatError
from metaheur.inputs import SOLUTION, is_integer
from metaheur.problem.textio import parse_ints, read_text, split_pick
from metaheur.problems.pfsp.generator import TAILLARD_SEEDS

TIME_LIMIT = 2**31 - 1
_TAILLARD_LABEL = "number of jobs"
_NAMED_BY_SEED = {seed_key: name for name, seed_key in TAILLARD_SEEDS.items()}


@dataclass(frozen=True)
class FlowShopData:
    """One instance read from a file: its name and its m x n processing times."""

    name: str
    times: np.ndarray
    source: str


def is_flow_shop_file(path: str | os.PathLike) -> bool:
    """Whether the text looks like one of the three flow shop formats (for files whose extension says
    nothing): Taillard's label, an ``instance`` block, or ``n m`` followed by machine-time pairs."""
    try:
        text = read_text(path)
    except InputFormatError:
        return False
    head = text[:4000]
    if _TAILLARD_LABEL in head.lower() or re.search(r"(?im)^\s*instance\s+\S+\s*$", head):
        return True
    lines = [line.split() for line in head.splitlines() if line.strip()]
    if len(lines) < 2 or len(lines[0]) != 2 or not all(is_integer(t, signed=False) for t in lines[0]):
        return False
    row = lines[1]
    return len(row) % 2 == 0 and all(is_integer(t, signed=False) for t in row) and row[0] == "0"


def read_flow_shops(path: str | os.PathLike) -> list[FlowShopData]:
    """Every instance of a flow shop file, in file order (see the module docstring for the formats)."""
    path = Path(path)
    lines = read_text(path).splitlines()
    lowered = [line.lower() for line in lines]
    if any(_TAILLARD_LABEL in line for line in lowered):
        return _read_taillard(path, lines, lowered)
    if any(_instance_name(line) for line in lines):
        return _read_orlib(path, lines)
    first = next((k for k, line in enumerate(lines) if line.strip()), None)
    if first is None:
        raise InputFormatError(path, "empty file; expected a flow shop instance (Taillard's or VRF's format)")
    n, m = _header(path, lines, first, f"{_TAILLARD_LABEL}... label or 'n m' (VRF's format)")
    times = _pairs(path, lines, first + 1, len(lines), n, m)
    return [FlowShopData(path.stem.removesuffix("_Gap"), times, os.fspath(path))]


def read_flow_shop(spec: str | os.PathLike, pick: str | None = None) -> FlowShopData:
    """The instance of a file (``pick`` or the ``#NAME`` / ``#K`` of ``spec`` selects one of several)."""
    spec, from_spec = split_pick(spec)
    path = Path(spec)
    pick = pick if pick is not None else from_spec
    found = read_flow_shops(path)
    if pick is None:
        if len(found) == 1:
            return found[0]
        names = ", ".join(f.name for f in found[:4]) + (", ..." if len(found) > 4 else "")
        raise InputFormatError(path, f"holds {len(found)} instances ({names}); name one as FILE#NAME "
                                     f"or number it as FILE#K (1..{len(found)})")
    if is_integer(pick):
        k = int(pick)
        if not 1 <= k <= len(found):
            raise InputFormatError(path, f"instance #{k} asked for, the file holds {len(found)}")
        return found[k - 1]
    for data in found:
        if data.name.lower() == pick.lower():
            return data
    names = ", ".join(f.name for f in found[:8]) + (", ..." if len(found) > 8 else "")
    raise InputFormatError(path, f"no instance named {pick!r} (it holds {names})")


def _instance_name(line: str) -> str | None:
    parts = line.split()
    return parts[1] if len(parts) == 2 and parts[0].lower() == "instance" else None


def _header(path: Path, lines: list[str], k: int, expected: str, longer: bool = False) -> tuple[int, int]:
    tokens = lines[k].split()
    if len(tokens) < 2 or (len(tokens) > 2 and not longer):
        raise InputFormatError(path, f"expected {expected}", k + 1)
    values = parse_ints(path, [" ".join(tokens)], k + 1)
    n, m = int(values[0]), int(values[1])
    if n < 2 or m < 1:
        raise InputFormatError(path, f"n = {n} jobs, m = {m} machines; a flow shop needs n >= 2 and m >= 1", k + 1)
    if n * m > 50_000_000:
        raise InputFormatError(path, f"n x m = {n} x {m} is too large", k + 1)
    return n, m


def _check_times(path: Path, lines: list[str], start: int, values: np.ndarray, positions: np.ndarray) -> None:
    """Every time is a non-negative int32; ``positions`` are the indices of the times in ``values``."""
    times = values[positions]
    bad = np.flatnonzero((times < 0) | (times > TIME_LIMIT))
    if bad.size:
        t = int(times[bad[0]])
        why = "negative" if t < 0 else f"beyond {TIME_LIMIT}"
        raise InputFormatError(path, f"processing time {t} is {why}",
                               _line_of(lines, start, int(positions[bad[0]])))


def _line_of(lines: list[str], start: int, index: int) -> int:
    count = 0
    for k in range(start, len(lines)):
        width = len(lines[k].split())
        if index < count + width:
            return k + 1
        count += width
    return max(len(lines), 1)


def _last_line(lines: list[str], start: int, stop: int) -> int:
    for k in range(stop - 1, start - 1, -1):
        if lines[k].strip():
            return k + 1
    return start if start >= 1 else 1


def _counted(path: Path, lines: list[str], start: int, stop: int, need: int, what: str) -> np.ndarray:
    values = parse_ints(path, lines[start:stop], start + 1)
    if values.size < need:
        raise InputFormatError(path, f"truncated: {what} needs {need} numbers, the file has {values.size}",
                               _last_line(lines, start, stop))
    if values.size > need:
        raise InputFormatError(path, f"{values.size - need} numbers more than {what} needs (does the header "
                                     "say the right n and m?)", _line_of(lines, start, need))
    return values


def _matrix(path: Path, lines: list[str], start: int, stop: int, n: int, m: int) -> np.ndarray:
    values = _counted(path, lines, start, stop, n * m, f"n x m = {n} x {m}")
    _check_times(path, lines, start, values, np.arange(n * m))
    return values.reshape(m, n)


def _pairs(path: Path, lines: list[str], start: int, stop: int, n: int, m: int) -> np.ndarray:
    values = _counted(path, lines, start, stop, 2 * n * m, f"n = {n} jobs of m = {m} (machine, time) pairs")
    machines = values[0::2].reshape(n, m)
    bad = np.argwhere((machines < 0) | (machines >= m))
    if bad.size:
        j, k = (int(x) for x in bad[0])
        raise InputFormatError(path, f"job {j + 1}: machine {int(machines[j, k])} is out of range 0..{m - 1}",
                               _line_of(lines, start, 2 * (j * m + k)))
    for j in np.flatnonzero([np.unique(row).size < m for row in machines]):
        seen: set[int] = set()
        for k, machine in enumerate(machines[j].tolist()):
            if machine in seen:
                raise InputFormatError(path, f"job {j + 1}: machine {machine} appears twice",
                                       _line_of(lines, start, 2 * (j * m + k)))
            seen.add(machine)
    _check_times(path, lines, start, values, np.arange(1, 2 * n * m, 2))
    times = np.empty((m, n), dtype=np.int64)
    rows = np.repeat(np.arange(n), m)
    times[machines.ravel(), rows] = values[1::2]
    return times


def _read_taillard(path: Path, lines: list[str], lowered: list[str]) -> list[FlowShopData]:
    starts = [k for k, line in enumerate(lowered) if _TAILLARD_LABEL in line]
    stray = next((k for k in range(starts[0]) if lines[k].strip()), None)
    if stray is not None:
        raise InputFormatError(path, "text before the first 'number of jobs, ...' label", stray + 1)
    blocks = []
    for b, start in enumerate(starts):
        stop = starts[b + 1] if b + 1 < len(starts) else len(lines)
        head = next((k for k in range(start + 1, stop) if lines[k].strip()), None)
        if head is None:
            raise InputFormatError(path, "the label has no 'n m seed upper lower' line after it", start + 1)
        n, m = _header(path, lines, head, "'n m [seed upper lower]' after the label", longer=True)
        stated = parse_ints(path, [lines[head]], head + 1)
        label = next((k for k in range(head + 1, stop) if lines[k].strip()), None)
        body = head + 1
        if label is not None and "processing times" in lowered[label]:
            body = label + 1
        times = _matrix(path, lines, body, stop, n, m)
        blocks.append((stated, times))
    single = len(blocks) == 1
    out = []
    for b, (stated, times) in enumerate(blocks):
        m, n = times.shape
        by_seed = _NAMED_BY_SEED.get((n, m, int(stated[2]))) if stated.size >= 3 else None
        name = path.stem if single else by_seed or f"{path.stem}-{b + 1}"
        out.append(FlowShopData(name, times, os.fspath(path)))
    return out


def _read_orlib(path: Path, lines: list[str]) -> list[FlowShopData]:
    starts = [k for k, line in enumerate(lines) if _instance_name(line)]
    out = []
    for b, start in enumerate(starts):
        stop = starts[b + 1] if b + 1 < len(starts) else len(lines)
        name = _instance_name(lines[start])
        head = next((k for k in range(start + 1, stop) if _two_ints(lines[k])), None)
        if head is None:
            raise InputFormatError(path, f"instance {name}: no 'n m' line", start + 1)
        n, m = _header(path, lines, head, "'n m'")
        end = next((k for k in range(head + 1, stop) if lines[k].strip().startswith("+")), stop)
        out.append(FlowShopData(name, _pairs(path, lines, head + 1, end, n, m), os.fspath(path)))
    return out


def _two_ints(line: str) -> bool:
    tokens = line.split()
    return len(tokens) == 2 and all(map(is_integer, tokens))


# ------------------------------------------------------------------------------------ solutions


@dataclass(frozen=True)
class JobOrder:
    """A job order read from a file (0-based), the makespan it states, and whether it was 0-based."""

    order: np.ndarray
    stated_makespan: int | None
    zero_based: bool


def read_job_order(path: str | os.PathLike, n: int) -> JobOrder:
    """A job-order file: ``#`` comment lines (``# makespan 1278`` states the value), then the ``n`` jobs
    1-based (0-based when the numbers run over 0..n-1), any line breaks."""
    lines = read_text(path, SOLUTION).splitlines()
    stated = None
    body = []
    for line in lines:
        if line.lstrip().startswith("#"):
            found = re.search(r"makespan\s*[:=]?\s*(-?[0-9]+)", line, re.IGNORECASE)
            if found and stated is None:
                stated = int(found.group(1))
            body.append("")
        else:
            body.append(line)
    values = parse_ints(path, body)
    if values.size != n:
        raise InputFormatError(path, f"the job order has {values.size} numbers, the instance has n = {n} jobs",
                               _last_line(body, 0, len(body)))
    zero_based = n > 0 and int(values.min()) == 0 and int(values.max()) == n - 1
    order = values if zero_based else values - 1
    if n == 0 or order.min() < 0 or order.max() >= n or np.bincount(order, minlength=n).max() != 1:
        raise InputFormatError(path, f"not a permutation of the jobs 1..{n}")
    return JobOrder(order, stated, zero_based)


def write_job_order(path: str | os.PathLike, name: str, order: np.ndarray, makespan: int) -> None:
    """Write a job order (1-based, 20 a line) after a comment line naming the instance and the makespan."""
    rows = [" ".join(str(int(j) + 1) for j in order[k : k + 20]) for k in range(0, len(order), 20)]
    Path(path).write_text(f"# {name}: makespan {makespan}\n" + "\n".join(rows) + "\n")
