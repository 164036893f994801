"""Our TSP iterated local search against fast-tsp (and, optionally, elkai/LKH) at equal wall time.

For every instance, time limit and seed, the solvers run one after the other in fresh
interpreters, in alternating order (ours first for odd seeds, fast-tsp first for even ones), so
that a machine that slows down or speeds up during the run affects both alike:

- **ours**: :func:`metaheur.problems.tsp.ils.solve_ils` with its defaults (one search per CPU core,
  the best tour shared between them), on the ``cpu`` device. The time limit covers everything the
  solver does (neighbour lists, start tour, search); the kernel build is done (or fetched from the
  cache) before the clock starts.
- **fast-tsp** (``pip install fast-tsp``, imported lazily; skipped with a message when missing):
  ``fast_tsp.find_tour(matrix, seconds, max_threads=...)``. The n x n matrix is built and
  converted to Python lists before its clock starts. It needs a full matrix, so it is skipped above
  ``--fast-tsp-max-n`` cities (default 8000: a 10,000-city matrix as Python lists takes several GB;
  the 10k-20k instances are measured against the 2% target instead).
- **elkai** (LKH-3; only with ``--elkai``, for n <= ``--elkai-max-n``): ``runs=1``, no time limit;
  its own time is reported.

    python experiments/bench_tsp_ils.py [--seconds 10 30] [--seeds 2] [--instances NAME ...]
        [--quick] [--no-fast-tsp] [--elkai] [--out experiments/results]

Instances come from ``$METAHEUR_INSTANCES/tsplib`` (or ``--instances-dir``), gaps are to the
best-known lengths in its ``bks.csv``. Writes ``bench_tsp_ils.csv`` (one row per run) and
``bench_tsp_ils.md`` (means per instance and time limit) under ``--out``. ``--quick``: two small
instances, 2 s, one seed (a smoke test).
"""

from __future__ import annotations

import argparse
import csv
import datetime as _dt
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from lib.report import out_folder, write_csv

DEFAULT_INSTANCES = ["fl1577", "d2103", "u2319", "pr2392", "pcb3038", "rl5915", "rl11849", "brd14051", "d15112"]
QUICK_INSTANCES = ["kroA200", "pr439"]
TARGET_LARGE = 2.0  # % gap within 30 s on 10,000-20,000 cities
CSV_COLUMNS = ["instance", "n", "seconds", "seed", "method", "length", "best_known", "gap_pct", "wall_s", "note"]


# --------------------------------------------------------------------------- children (one run each)
def _load(root: Path, name: str):
    from metaheur.problems import load_instance

    return load_instance(root / f"{name}.tsp")


def child_ours(root: Path, name: str, seconds: float, seed: int) -> dict:
    from metaheur.engine import load_module
    from metaheur.problems.tsp.device_data import tsp_data
    from metaheur.problems.tsp.ils import solve_ils

    tsp = _load(root, name)
    load_module("tsp/tsp_ils.cu", "cpu", tsp_data(tsp, "cpu").defines)  # build / cache outside the clock
    load_module("tsp/tsp_knn.cu", "cpu")
    load_module("tsp/tsp_construct.cu", "cpu", tsp_data(tsp, "cpu").defines)
    t0 = time.perf_counter()
    tour, length, stats = solve_ils(tsp, seconds, seed)
    wall = time.perf_counter() - t0
    assert tsp.tour_length(tour) == length
    return {"length": int(length), "wall_s": wall,
            "note": f"{stats['searches']} searches, {stats['kicks']} kicks, {stats['adopted']} adoptions"}


def child_fast_tsp(root: Path, name: str, seconds: float, seed: int, threads: int) -> dict:
    import fast_tsp
    import numpy as np

    tsp = _load(root, name)
    matrix = tsp.distance_matrix(2**62)
    lists = matrix.tolist()  # conversion outside the clock
    del matrix
    t0 = time.perf_counter()
    tour = fast_tsp.find_tour(lists, seconds, max_threads=threads)
    wall = time.perf_counter() - t0
    return {"length": int(tsp.tour_length(np.asarray(tour))), "wall_s": wall, "note": f"max_threads={threads}"}


def child_elkai(root: Path, name: str, seconds: float, seed: int) -> dict:
    import elkai
    import numpy as np

    tsp = _load(root, name)
    matrix = tsp.distance_matrix(2**62).tolist()
    t0 = time.perf_counter()
    tour = elkai.DistanceMatrix(matrix).solve_tsp(runs=1)
    wall = time.perf_counter() - t0
    tour = np.asarray(tour[:-1] if len(tour) == tsp.n + 1 else tour)
    return {"length": int(tsp.tour_length(tour)), "wall_s": wall, "note": "runs=1, no time limit"}


# --------------------------------------------------------------------------- parent
def _run_child(method: str, root: Path, name: str, seconds: float, seed: int, args) -> dict:
    cmd = [sys.executable, __file__, "--child", method, "--instances-dir", str(root), "--instances", name,
           "--seconds", str(seconds), "--child-seed", str(seed), "--fast-tsp-threads", str(args.fast_tsp_threads)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=max(600.0, 20 * seconds))
    if proc.returncode != 0:
        return {"length": None, "wall_s": None, "note": f"failed: {proc.stderr.strip().splitlines()[-1:]}"}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _available(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is not None


def _version(module: str) -> str:
    try:
        from importlib.metadata import version

        return version(module.replace("_", "-"))
    except Exception:
        return "?"


def _fmt(x, digits=3) -> str:
    return "-" if x is None else f"{x:.{digits}f}"


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """The command-line options (the hidden ``--child`` ones run one solver in this process)."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seconds", type=float, nargs="+", default=[10.0, 30.0])
    ap.add_argument("--seeds", type=int, default=2, help="seeds 1..N for every instance and time limit")
    ap.add_argument("--instances", nargs="+", default=None)
    ap.add_argument("--instances-dir", default=None, help="folder with the .tsp files and bks.csv "
                    "(default: $METAHEUR_INSTANCES/tsplib)")
    ap.add_argument("--quick", action="store_true", help=f"{' and '.join(QUICK_INSTANCES)}, 2 s, one seed")
    ap.add_argument("--no-fast-tsp", action="store_true")
    ap.add_argument("--fast-tsp-threads", type=int, default=os.cpu_count() or 1,
                    help="fast-tsp max_threads (default: every core, like our searches)")
    ap.add_argument("--fast-tsp-max-n", type=int, default=8000)
    ap.add_argument("--elkai", action="store_true", help="also run elkai (LKH-3, runs=1) on small instances")
    ap.add_argument("--elkai-max-n", type=int, default=3100)
    ap.add_argument("--out", default=None, help="output folder (default results/; --quick: a temporary folder)")
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--child-seed", type=int, default=1, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    args.out = out_folder(args.out, args.quick)
    return args


def instances_root(args: argparse.Namespace) -> Path | None:
    """``--instances-dir``, else ``$METAHEUR_INSTANCES/tsplib``; ``None`` (with a message) when neither."""
    if args.instances_dir:
        return Path(args.instances_dir)
    env = os.environ.get("METAHEUR_INSTANCES")
    if not env:
        print("set METAHEUR_INSTANCES (or --instances-dir) to the benchmark-instance folder", file=sys.stderr)
        return None
    return Path(env) / "tsplib"


def run_as_child(args: argparse.Namespace, root: Path) -> None:
    """One solver on one instance in this process; its row as a JSON line on stdout."""
    name, seconds = args.instances[0], args.seconds[0]
    if args.child == "ours":
        row = child_ours(root, name, seconds, args.child_seed)
    elif args.child == "fast-tsp":
        row = child_fast_tsp(root, name, seconds, args.child_seed, args.fast_tsp_threads)
    else:
        row = child_elkai(root, name, seconds, args.child_seed)
    print(json.dumps(row))


def peers(args: argparse.Namespace) -> tuple[bool, bool]:
    """(run fast-tsp, run elkai): asked for and installed; a line for each one asked for but missing."""
    use_fast = not args.no_fast_tsp and _available("fast_tsp")
    if not args.no_fast_tsp and not use_fast:
        print("fast-tsp is not installed (pip install fast-tsp): only our solver runs", flush=True)
    use_elkai = args.elkai and _available("elkai")
    if args.elkai and not use_elkai:
        print("elkai is not installed (pip install elkai): skipped", flush=True)
    return use_fast, use_elkai


def result_row(name: str, n: int, best: int, seconds: float, seed: int, method: str, res: dict) -> dict:
    """A CSV row of one child's result, with its gap to the best-known length."""
    gap = None if res["length"] is None else 100.0 * (res["length"] - best) / best
    return {"instance": name, "n": n, "seconds": seconds, "seed": seed, "method": method, "length": res["length"],
            "best_known": best, "gap_pct": gap, "wall_s": res["wall_s"], "note": res["note"]}


def run_instance(name: str, n: int, best: int, root: Path, args: argparse.Namespace, use_fast: bool,
                 use_elkai: bool) -> list[dict]:
    """Every time limit and seed on one instance (ours and fast-tsp in alternating order), then
    elkai once; a progress line per run."""
    rows = []
    for seconds in args.seconds:
        for seed in range(1, args.seeds + 1):
            methods = ["ours"]
            if use_fast and n <= args.fast_tsp_max_n:
                methods.append("fast-tsp")
            if seed % 2 == 0:
                methods.reverse()
            for method in methods:
                row = result_row(name, n, best, seconds, seed, method,
                                 _run_child(method, root, name, seconds, seed, args))
                rows.append(row)
                print(f"{name:>9} n={n:<6} {seconds:>5.1f}s seed {seed} {method:>8}: gap {_fmt(row['gap_pct'])}% "
                      f"wall {_fmt(row['wall_s'], 2)}s  {row['note']}", flush=True)
    if use_elkai and n <= args.elkai_max_n:
        row = result_row(name, n, best, 0.0, 1, "elkai", _run_child("elkai", root, name, 0.0, 1, args))
        rows.append(row)
        print(f"{name:>9} n={n:<6} elkai: gap {_fmt(row['gap_pct'])}% wall {_fmt(row['wall_s'], 2)}s", flush=True)
    return rows


def main(argv=None) -> int:
    args = parse_args(argv)
    root = instances_root(args)
    if root is None:
        return 2
    if args.child:
        run_as_child(args, root)
        return 0
    if args.quick:
        args.instances, args.seconds, args.seeds = args.instances or QUICK_INSTANCES, [2.0], 1
    names = args.instances or DEFAULT_INSTANCES
    with open(root / "bks.csv", newline="") as handle:
        bks = {r["name"]: (int(r["n"]), int(r["best_known"])) for r in csv.DictReader(handle)}
    names = [m for m in names if (root / f"{m}.tsp").is_file() and m in bks]
    use_fast, use_elkai = peers(args)
    rows = []
    for name in names:
        rows += run_instance(name, *bks[name], root, args, use_fast, use_elkai)
    summary = _summarise(rows, names, args.seconds, bks, args.fast_tsp_max_n)
    _write(args, rows, summary, use_fast, use_elkai)
    return 0


def _mean(values):
    values = [v for v in values if v is not None]
    return sum(values) / len(values) if values else None


def _summarise(rows, names, seconds_list, bks, fast_max_n):
    out = []
    for name in names:
        for seconds in seconds_list:
            sel = [r for r in rows if r["instance"] == name and r["seconds"] == seconds]
            ours = _mean([r["gap_pct"] for r in sel if r["method"] == "ours"])
            fast = _mean([r["gap_pct"] for r in sel if r["method"] == "fast-tsp"])
            n = bks[name][0]
            if fast is not None and ours is not None:
                ratio = 1.0 if ours <= fast else (float("inf") if fast == 0 else ours / fast)
                verdict = "ok" if ours <= fast else "behind"
            elif ours is not None and 10000 <= n <= 20000 and seconds <= 30:
                ratio, verdict = None, ("ok" if ours <= TARGET_LARGE else "behind") + f" (target {TARGET_LARGE}%)"
            else:
                ratio, verdict = None, "-" if n > fast_max_n else "no fast-tsp"
            ours_gaps = [r["gap_pct"] for r in sel if r["method"] == "ours" and r["gap_pct"] is not None]
            out.append({"instance": name, "n": n, "seconds": seconds, "ours": ours, "fast": fast, "ratio": ratio,
                        "ours_best": min(ours_gaps, default=None), "verdict": verdict})
    return out


def _write(args, rows, summary, use_fast, use_elkai):
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    write_csv(out / "bench_tsp_ils.csv", rows, CSV_COLUMNS)
    import numpy as np

    import metaheur

    cmd = "python experiments/bench_tsp_ils.py " + " ".join(sys.argv[1:])
    header = (f"_command: {cmd.strip()}; date: {_dt.datetime.now(_dt.timezone.utc).isoformat(timespec='seconds')}; "
              f"machine: {platform.platform()} ({platform.machine()}, {os.cpu_count()} CPUs); "
              f"python {platform.python_version()}, numpy {np.__version__}, metaheur {metaheur.__version__}, "
              f"fast-tsp {_version('fast_tsp') if use_fast else 'not run'}, "
              f"elkai {_version('elkai') if use_elkai else 'not run'}_")
    lines = ["# TSP iterated local search vs fast-tsp", "", header, "",
             f"Mean gap to the best-known length over {args.seeds} seed(s), equal wall time. `ratio` = ours / "
             "fast-tsp (1.000 when ours is no larger). fast-tsp runs with max_threads="
             f"{args.fast_tsp_threads} and only up to {args.fast_tsp_max_n} cities (it needs a full matrix as "
             f"Python lists); the 10k-20k-city instances are held to the {TARGET_LARGE}% target within 30 s.", "",
             "| instance | n | time (s) | ours gap % | ours best % | fast-tsp gap % | ratio | verdict |",
             "|---|---:|---:|---:|---:|---:|---:|---|"]
    for s in summary:
        ratio = "-" if s["ratio"] is None else ("inf" if s["ratio"] == float("inf") else f"{s['ratio']:.3f}")
        lines.append(f"| {s['instance']} | {s['n']} | {s['seconds']:g} | {_fmt(s['ours'])} | {_fmt(s['ours_best'])} | "
                     f"{_fmt(s['fast'])} | {ratio} | {s['verdict']} |")
    elk = [r for r in rows if r["method"] == "elkai"]
    if elk:
        lines += ["", "elkai (LKH-3, runs=1, no time limit):", "", "| instance | n | gap % | wall (s) |",
                  "|---|---:|---:|---:|"]
        lines += [f"| {r['instance']} | {r['n']} | {_fmt(r['gap_pct'])} | {_fmt(r['wall_s'], 2)} |" for r in elk]
    (out / "bench_tsp_ils.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines[4:]))
    print(f"\nwrote {out / 'bench_tsp_ils.csv'} and {out / 'bench_tsp_ils.md'}")


if __name__ == "__main__":
    sys.exit(main())
