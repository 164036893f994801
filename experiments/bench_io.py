"""Benchmark of the problem layer's I/O: load time, scoring time and peak memory on large instances.

For each instance (default: tai100a, tai256c, si1032, pr2392, pla33810, pla85900 from
$METAHEUR_INSTANCES, those present), a fresh interpreter loads the instance file, reads its
published solution (``.sln`` / ``.opt.tour``; the identity tour when there is none) and scores it,
``--reps`` times. Reported: median and best wall times, the tracemalloc peak of one extra traced
repetition (numpy buffers included) and the growth of the process's peak RSS (``ru_maxrss``) over
its value after the imports. It demonstrates that pla85900 loads and scores in a few seconds and
well under 1 GB: coordinates only, no 85,900 x 85,900 matrix (27.5 GiB as int32).

    python experiments/bench_io.py [--reps 3] [--instances NAME ...] [--out experiments/results]

Writes ``bench_io.csv`` and ``bench_io.md`` under ``--out``; exits 1 if pla85900 misses the
requirement (peak memory < 1 GiB, load + score < 5 s).
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import platform
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from lib.report import write_csv

DEFAULT_INSTANCES = ["tai100a", "tai256c", "si1032", "pr2392", "pla33810", "pla85900"]
REQUIREMENT = {"instance": "pla85900", "memory_mib": 1024.0, "seconds": 5.0}
COLUMNS = [
    "instance", "problem", "n", "weights", "solution", "cost", "expected", "reps", "load_s_median",
    "load_s_min", "solution_s_median", "score_s_median", "score_s_min", "tracemalloc_peak_mib",
    "maxrss_delta_mib", "full_matrix_mib",
]
MARKDOWN_COLUMNS = [c for c in COLUMNS if c != "reps"]


def _maxrss_mib() -> float:
    import resource

    value = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return value / 2**20 if sys.platform == "darwin" else value / 2**10  # bytes on macOS, KiB on Linux


def child(name: str, root: Path, reps: int) -> dict:
    """One instance, measured in this (fresh) process; returns a row."""
    import csv as _csv
    import gc
    import time
    import tracemalloc

    import numpy as np

    from metaheur.problems import QAP, load_instance, load_solution

    base = _maxrss_mib()
    folder = next(p for p in (root / "qaplib", root / "tsplib") if (p / f"{name}.dat").is_file()
                  or (p / f"{name}.tsp").is_file())
    is_qap = folder.name == "qaplib"
    inst_path = folder / f"{name}{'.dat' if is_qap else '.tsp'}"
    sol_path = folder / f"{name}{'.sln' if is_qap else '.opt.tour'}"
    with open(folder / "bks.csv", newline="") as handle:
        bks = {row["name"]: int(row["best_known"]) for row in _csv.DictReader(handle)}

    def once():
        t0 = time.perf_counter()
        inst = load_instance(inst_path)
        t1 = time.perf_counter()
        if sol_path.is_file():
            sol = load_solution(inst, sol_path)
            perm, stated = sol.permutation, sol.stated_cost
        else:
            perm, stated = np.arange(inst.n), None
        t2 = time.perf_counter()
        cost = inst.cost(perm) if isinstance(inst, QAP) else inst.tour_length(perm)
        t3 = time.perf_counter()
        return inst, cost, stated, (t1 - t0, t2 - t1, t3 - t2)

    times = []
    for _ in range(reps):
        inst, cost, stated, t = once()
        times.append(t)
        has_matrix = "matrix" in getattr(inst, "_cache", {})
        del inst
        gc.collect()
    rss_delta = _maxrss_mib() - base
    tracemalloc.start()
    inst, _, _, _ = once()
    peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    # what the score must equal: the .sln's stated cost, or the optimum for a TSPLIB .opt.tour
    expected = (stated if is_qap else bks.get(name)) if sol_path.is_file() else None
    return {
        "instance": name,
        "problem": "QAP" if is_qap else "TSP",
        "n": inst.n,
        "weights": "dense matrices" if is_qap else (
            f"EXPLICIT ({inst.weight_format})" if inst.weight_type == "EXPLICIT" else inst.weight_type),
        "solution": sol_path.name if sol_path.is_file() else "identity tour",
        "cost": cost,
        "expected": expected,
        "reps": reps,
        "load_s_median": statistics.median(t[0] for t in times),
        "load_s_min": min(t[0] for t in times),
        "solution_s_median": statistics.median(t[1] for t in times),
        "score_s_median": statistics.median(t[2] for t in times),
        "score_s_min": min(t[2] for t in times),
        "tracemalloc_peak_mib": peak,
        "maxrss_delta_mib": rss_delta,
        "full_matrix_mib": inst.n * inst.n * (8 if is_qap else 4) * (2 if is_qap else 1) / 2**20,
        "built_matrix": has_matrix,
    }


def _fmt(value, key: str) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        if key.endswith("_s_median") or key.endswith("_s_min"):
            return f"{value:.4f}"
        return f"{value:.1f}"
    return str(value)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """The command-line options; an error when there is no instance folder."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--instances", nargs="*", default=DEFAULT_INSTANCES)
    parser.add_argument("--instances-dir", default=os.environ.get("METAHEUR_INSTANCES"))
    parser.add_argument("--out", default=str(Path(__file__).resolve().parent / "results"))
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if not args.instances_dir or not Path(args.instances_dir).is_dir():
        parser.error("set METAHEUR_INSTANCES (or --instances-dir) to the benchmark-instance directory")
    return args


def measure(names: list[str], root: Path, reps: int) -> list[dict] | None:
    """One fresh interpreter per instance (:func:`child`), a progress line each; ``None`` when
    one fails (its error output is printed)."""
    rows = []
    for name in names:
        cmd = [sys.executable, __file__, "--child", name, "--reps", str(reps), "--instances-dir", str(root)]
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            print(proc.stderr, file=sys.stderr)
            return None
        row = json.loads(proc.stdout)
        rows.append(row)
        print(f"{name:>10}  n={row['n']:>6}  load {row['load_s_median']:.3f} s  "
              f"score {row['score_s_median']:.4f} s  tracemalloc {row['tracemalloc_peak_mib']:.1f} MiB  "
              f"maxrss +{row['maxrss_delta_mib']:.1f} MiB", flush=True)
    return rows


def how_run(argv: list[str] | None) -> str:
    """The report's header line: command, date, machine, Python."""
    command = "python " + " ".join([os.path.relpath(__file__)] + (argv if argv is not None else sys.argv[1:]))
    return (f"command: {command}; date: {_dt.datetime.now().astimezone().isoformat(timespec='seconds')}; "
            f"machine: {platform.platform()} ({platform.machine()}, {os.cpu_count()} CPUs, "
            f"{platform.processor() or 'unknown processor'}); python: {platform.python_version()} "
            f"({platform.python_implementation()})")


def verdicts(rows: list[dict]) -> list[str]:
    """PASS or FAIL of the :data:`REQUIREMENT` instance when it was measured (peak memory, load +
    read solution + score time, no distance matrix built)."""
    lines = []
    for row in rows:
        if row["instance"] == REQUIREMENT["instance"]:
            memory = max(row["tracemalloc_peak_mib"], row["maxrss_delta_mib"])
            seconds = row["load_s_median"] + row["solution_s_median"] + row["score_s_median"]
            ok = (memory < REQUIREMENT["memory_mib"] and seconds < REQUIREMENT["seconds"]
                  and not row["built_matrix"])
            lines.append(
                f"{'PASS' if ok else 'FAIL'}: {row['instance']} (n = {row['n']}) loads and scores in "
                f"{seconds:.2f} s "
                f"with a peak of {memory:.1f} MiB (limit {REQUIREMENT['memory_mib']:.0f} MiB, "
                f"{REQUIREMENT['seconds']:.0f} s); no distance matrix built (a full one: "
                f"{row['full_matrix_mib'] / 1024:.1f} GiB)")
    return lines


def write_report(out: Path, header: str, rows: list[dict], missing: list[str], verdict: list[str]) -> None:
    """``bench_io.csv`` (the header as a ``#`` line, then every column) and ``bench_io.md``."""
    out.mkdir(parents=True, exist_ok=True)
    write_csv(out / "bench_io.csv", rows, COLUMNS, comment=header)
    md = [
        "# Problem-layer I/O benchmark",
        "",
        f"_{header}_",
        "",
        "Times in seconds (median and best of the repetitions), memory in MiB. `tracemalloc` = peak of the "
        "Python and numpy allocations during one load + read solution + score; `maxrss +` = growth of the "
        "process's peak RSS over its value after the imports (fresh interpreter per instance). "
        "`full matrix` = what dense matrices would take (QAP: both int64 matrices; TSP: one int32 matrix).",
        "",
        "| instance | problem | n | weights | solution | cost | expected | load (median) | load (min) | "
        "read solution | score (median) | score (min) | tracemalloc peak | maxrss + | full matrix |",
        "|---|---|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for row in rows:
        md.append("| " + " | ".join(_fmt(row[k], k) for k in MARKDOWN_COLUMNS) + " |")
    md.append("")
    if missing:
        md.append(f"Not present under the instance directory: {', '.join(missing)}.")
        md.append("")
    if verdict:
        md += [*verdict, ""]
    (out / "bench_io.md").write_text("\n".join(md))


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    root = Path(args.instances_dir)
    if args.child:
        print(json.dumps(child(args.child, root, args.reps)))
        return 0
    layout = (("qaplib", ".dat"), ("tsplib", ".tsp"))
    present = [name for name in args.instances
               if any((root / lib / f"{name}{suf}").is_file() for lib, suf in layout)]
    missing = sorted(set(args.instances) - set(present))
    rows = measure(present, root, args.reps)
    if rows is None:
        return 2
    verdict = verdicts(rows)
    out = Path(args.out)
    write_report(out, how_run(argv), rows, missing, verdict)
    for line in verdict:
        print(line)
    print(f"wrote {out / 'bench_io.csv'} and {out / 'bench_io.md'}")
    return 1 if any(v.startswith("FAIL") for v in verdict) else 0


if __name__ == "__main__":
    sys.exit(main())
