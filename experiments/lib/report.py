"""Table and report output of the experiment scripts: the run header (command, date, machine,
versions, devices, load), CSV and Markdown tables, progress lines on stderr."""

from __future__ import annotations

import csv
import datetime as _dt
import os
import platform
import subprocess
import sys
import tempfile
from pathlib import Path

from metaheur.devices import cpu_count, gpu_devices

RESULTS = Path(__file__).resolve().parents[1] / "results"


def out_folder(out: str | Path | None, quick: bool) -> Path:
    """Where a script writes its tables: ``--out`` when given, else a new temporary folder for a
    ``--quick`` run (smoke tests never touch the committed tables), else ``results/``."""
    if out:
        return Path(out)
    if quick:
        folder = Path(tempfile.mkdtemp(prefix="metaheur-quick-"))
        print(f"--quick: writing into {folder}")
        return folder
    return RESULTS


def cpu_model() -> str:
    """The CPU's model name (/proc/cpuinfo; the platform's processor or machine type elsewhere)."""
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as handle:
            cpu = next((ln.split(":", 1)[1].strip() for ln in handle if ln.startswith("model name")), cpu)
    except OSError:
        pass
    return cpu


def machine() -> str:
    return f"{cpu_model()}, {os.cpu_count()} cores, {platform.system()} {platform.release()}"


def commit() -> str:
    """The checkout's short commit, ``+`` when it has uncommitted changes (``unknown`` outside git)."""
    here = Path(__file__).resolve().parent
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, timeout=10,
                              cwd=here).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], capture_output=True,
                               text=True, timeout=10, cwd=here).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return f"{head}+" if head and dirty else head or "unknown"


def header(extra: str = "") -> list[str]:
    """Lines saying how a table was made."""
    import numpy

    from metaheur import __version__
    from metaheur.engine.cpu_build import find_compiler

    compiler = find_compiler()
    lines = [
        f"command: {' '.join([Path(sys.argv[0]).name, *sys.argv[1:]])}",
        f"date: {_dt.datetime.now().isoformat(timespec='seconds')}",
        f"machine: {machine()}",
        f"versions: metaheur {__version__}, Python {platform.python_version()}, numpy {numpy.__version__}, "
        f"{compiler.version if compiler else 'no C compiler'}; commit {commit()}",
    ]
    return lines + ([extra] if extra else [])


def fmt(value) -> str:
    if isinstance(value, float):
        return f"{value:.4g}" if abs(value) < 1e5 else f"{value:,.0f}"
    return "" if value is None else str(value)


def markdown(rows: list[dict], columns: list[str]) -> str:
    out = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    out += ["| " + " | ".join(fmt(r.get(c)) for c in columns) + " |" for r in rows]
    return "\n".join(out)


def write_csv(path: Path, rows: list[dict], columns: list[str], comment: str = "") -> None:
    """Write ``rows`` as CSV with the header ``columns`` (other keys of a row left out), after a
    line ``# comment`` when one is given."""
    with open(path, "w", newline="") as handle:
        if comment:
            handle.write(f"# {comment}\n")
        writer = csv.DictWriter(handle, fieldnames=columns, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)


def write_table(rows: list[dict], columns: list[str], stem: str, head: list[str], out: Path | None = None,
                title: str = "", echo: bool = True) -> tuple[Path, Path]:
    """Write ``stem.csv`` and ``stem.md`` (header lines, then the table) and print the table
    (unless ``echo`` is false)."""
    folder = Path(out) if out else RESULTS
    folder.mkdir(parents=True, exist_ok=True)
    csv_path, md_path = folder / f"{stem}.csv", folder / f"{stem}.md"
    write_csv(csv_path, rows, columns)
    table = markdown(rows, columns)
    md_path.write_text((f"# {title}\n\n" if title else "") + "\n".join(f"- {h}" for h in head) + "\n\n" + table + "\n")
    if echo:
        print("\n".join(head))
        print(table)
    return csv_path, md_path


def log(message: str) -> None:
    """Progress line on stderr (tables go to stdout)."""
    print(message, file=sys.stderr, flush=True)


def run_header(settings: str) -> list[str]:
    """:func:`header` plus the settings, the devices and the load average at the start (a busy
    machine makes every rate here noisy)."""
    gpus = ", ".join(f"{g.name} {g.label}" for g in gpu_devices()) or "none"
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg()) if hasattr(os, "getloadavg") else "?"
    return [*header(settings), f"devices: {cpu_count()} CPU cores; GPUs: {gpus}; load average at start: {load}"]


