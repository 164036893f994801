"""Large TSP instances (10,000 to 100,000 cities) at equal wall time on this machine's cores:
``metaheur solve`` as a user runs it against fast-tsp and LKH-3 (elkai), with the time to the
first GA generation and the peak memory of each run (docs/decisions/tsp-start.md).

For each instance of ``--instances`` (usa13509, else brd14051 where the folder lacks it; d18512,
pla33810, pla85900), each time limit T of ``--seconds`` (60, 120, 300) and each seed s of
``--seeds``:

* ``metaheur``: ``metaheur solve NAME -t T --seed s --json F -q`` in a child process (default
  options: cpu-islands, one EAX island per core; kernel builds cached on disk by an earlier
  run). Its tour is re-scored here from the JSON. ``first_gen_s``: when the last island has built
  its population (its first trace point, bench_tsp_start.first_generation); ``wall_s``: the
  command's wall time (start-up, worker processes and compilation included).
* ``fast_tsp``: fast_tsp.find_tour(D, T, max_threads=cores) in a child process under
  ``--peer-python`` (experiments/peer_worker.py), D the full distance matrix handed over as a
  numpy array; its API takes distances below 65,536 only, so instances with longer edges are a
  row saying so. Its runs differ by its own randomness (the API takes no seed).
* ``elkai``: LKH-3 (elkai 2.0.1's LKH-3.0.8, default parameters, RUNS = 1) from the instance
  file, one run per core (seeds 2 s - 1 and 2 s, best of them: LKH is sequential), every
  improvement timed by the wall clock (bench_eax.run_lkh). One run as long as the largest T gives
  the row of every T (LKH's search does not depend on the limit: its best by T). ``first_gen_s``:
  its first tour (after its preprocessing, a subgradient ascent on the whole instance).

``peak_gib``: the largest summed PSS of the method's processes (experiments/lib/memory.py).
Gaps are to the optimum of the instance's bks.csv. ``bench_tsp_large_runs`` has every run (with
the load average at its start and the commit it ran),
``bench_tsp_large`` per instance, method and T the runs done (of 3 seeds), the mean and best gap
over them, the mean time to the first generation / tour and the largest peak memory; a cell of
the full table without runs yet says ``missing``.

    python experiments/bench_tsp_large.py [--instances brd14051,d18512,pla33810,pla85900]
        [--seconds 60,120,300] [--seeds 3] [--methods metaheur,fast_tsp,elkai]
        [--peer-python /tmp/benchvenv/bin/python] [--lock FILE] [--resume] [--out experiments/results]

``--resume`` keeps the runs of the out folder's runs table and runs only the missing ones (the
full table is about four hours of a 2-core machine). ``--lock FILE`` holds an exclusive flock on
FILE during each run. ``--quick``: pcb3038 at 8 s, one seed, metaheur and fast_tsp.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np
from bench_eax import run_lkh
from bench_tsp_start import first_generation
from lib.instances import names_arg, need_instances, present, problem, split_names
from lib.memory import PeakMemory
from lib.parts import held, read_runs
from lib.report import commit, log, out_folder, run_header, write_table
from peers import Peers

from metaheur.devices import cpu_count

METHODS = ["metaheur", "fast_tsp", "elkai"]
FAST_TSP_MAX_DISTANCE = 65_535
RUN_COLUMNS = ["instance", "n", "method", "seconds", "seed", "status", "cost", "gap_%", "first_gen_s", "wall_s",
               "peak_gib", "load", "commit"]
TABLE_COLUMNS = ["instance", "n", "method", "seconds", "runs", "mean_gap_%", "best_gap_%", "first_gen_s",
                 "peak_gib", "status"]
KEY = ("instance", "method", "seconds", "seed")


def metaheur_exe() -> str:
    """The ``metaheur`` command of this interpreter's environment."""
    exe = Path(sys.executable).with_name("metaheur")
    return str(exe) if exe.is_file() else "metaheur"


def gap(cost: int | None, optimum: int | None) -> float | None:
    return None if cost is None or not optimum else round(100 * (cost / optimum - 1), 3)


def run_metaheur(name: str, tsp, seconds: float, seed: int) -> dict:
    """One ``metaheur solve`` in a child process: its re-scored cost and first generation."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "result.json"
        start = time.perf_counter()
        with PeakMemory() as peak:
            proc = subprocess.run([metaheur_exe(), "solve", name, "-t", f"{seconds:g}", "--seed", str(seed),
                                   "--json", str(out), "-q"], capture_output=True, text=True)
        wall = time.perf_counter() - start
        if proc.returncode != 0 or not out.is_file():
            return {"status": f"error: {(proc.stderr.strip().splitlines() or ['?'])[-1][:200]}"}
        data = json.loads(out.read_text())
    cost = int(tsp.tour_length(np.asarray(data["permutation"])))
    if cost != data["cost"]:
        raise AssertionError(f"{name}: metaheur reported {data['cost']}, its tour is {cost} long")
    trace = SimpleNamespace(trace=[SimpleNamespace(**p) for p in data["trace"]])
    return {"status": "ok", "cost": cost, "first_gen_s": first_generation(trace), "wall_s": round(wall, 1),
            "peak_gib": peak.gib}


def fast_tsp_matrix(tsp, folder: Path) -> tuple[Path | None, str]:
    """The instance's distance matrix saved for fast_tsp (uint16), or why there is none (the
    widest side of the cities' bounding box bounds the longest edge from below)."""
    path = folder / f"{tsp.name}_D.npy"
    if path.is_file():
        return path, ""
    if tsp.coords is not None:
        side = float(np.ptp(np.asarray(tsp.coords), axis=0).max())
        if side > FAST_TSP_MAX_DISTANCE:
            return None, f"skipped: edges of {side:,.0f} or more, fast_tsp takes up to {FAST_TSP_MAX_DISTANCE:,}"
    matrix = tsp.distance_matrix(budget_bytes=8 * tsp.n**2 + 1)
    if matrix is None:
        return None, "skipped: no full distance matrix"
    longest = int(matrix.max())
    if longest > FAST_TSP_MAX_DISTANCE:
        return None, f"skipped: edges up to {longest:,}, fast_tsp takes up to {FAST_TSP_MAX_DISTANCE:,}"
    np.save(path, matrix.astype(np.uint16))
    return path, ""


def run_fast_tsp(tsp, seconds: float, peers: Peers, matrix: Path | None, why: str) -> dict:
    if matrix is None:
        return {"status": why}
    start = time.perf_counter()
    with PeakMemory() as peak:
        res = peers.run("fast_tsp", {"matrix": str(matrix), "array": True, "seconds": seconds, "seed": 0,
                                     "cores": cpu_count()}, timeout=2 * seconds + 300)
    if res["status"] != "ok":
        return {"status": res["status"]}
    return {"status": "ok", "cost": int(tsp.tour_length(np.asarray(res["solution"]))),
            "wall_s": round(time.perf_counter() - start, 1), "peak_gib": peak.gib}


def run_elkai(path: Path, tsp, seconds: list[float], seed: int, python: str) -> list[dict]:
    """One pair of LKH runs on the TSPLIB file ``path``, as long as the largest limit; a result
    for each limit."""
    if not path.is_file():
        return [{"status": f"skipped: no TSPLIB file {path.name}"} for _ in seconds]
    if not Path(python).is_file():
        return [{"status": f"absent: no --peer-python {python}"} for _ in seconds]
    threads = cpu_count()
    with PeakMemory() as peak:
        trace, _ = run_lkh(tsp, path, max(seconds), threads=threads, python=python,
                           first_seed=threads * (seed - 1) + 1)
    first = round(trace.points[0][0], 1) if trace.points else None
    return [{"status": "ok" if trace.best_at(t) is not None else "no tour within the limit", "cost": trace.best_at(t),
             "first_gen_s": first, "wall_s": t, "peak_gib": peak.gib} for t in seconds]


def earlier_runs(path: Path) -> dict[tuple, dict]:
    """The runs of a runs table written before (``--resume``), by (instance, method, seconds, seed)."""
    return {(r["instance"], r["method"], float(r["seconds"]), int(r["seed"])): r for r in read_runs(path)}


def with_gaps(runs: list[dict]) -> list[dict]:
    """Each run's gap to its instance's optimum, else to the best cost of the instance's runs."""
    best: dict[str, int] = {}
    for r in runs:
        if r.get("cost") not in (None, ""):
            best[r["instance"]] = min(int(r["cost"]), best.get(r["instance"], int(r["cost"])))
    for r in runs:
        known = problem(r["instance"]).best_known()
        ref = known.value if known else best.get(r["instance"])
        r["gap_%"] = gap(None if r.get("cost") in (None, "") else int(r["cost"]), ref)
    return runs


def summary(runs: list[dict], design: list[tuple], seeds: int) -> list[dict]:
    """Per instance, method and limit of the runs and of ``design`` (the cells of the full
    table): the runs done of ``seeds``, mean and best gap, mean first generation, largest peak;
    a cell without runs says ``missing``."""
    groups: dict[tuple, list[dict]] = {cell: [] for cell in design}
    for r in runs:
        groups.setdefault((r["instance"], r["method"], float(r["seconds"])), []).append(r)
    rows = []
    for (name, method, seconds), group in groups.items():
        if not group:
            rows.append({"instance": name, "n": problem(name).n, "method": method, "seconds": seconds,
                         "runs": f"0/{seeds}", "status": "missing"})
            continue
        ok = [r for r in group if r["status"] == "ok"]
        gaps = [float(r["gap_%"]) for r in ok]
        firsts = [float(r["first_gen_s"]) for r in ok if r.get("first_gen_s") not in (None, "")]
        peaks = [float(r["peak_gib"]) for r in ok if r.get("peak_gib") not in (None, "")]
        rows.append({"instance": name, "n": group[0]["n"], "method": method, "seconds": seconds,
                     "runs": f"{len(group)}/{max(seeds, len(group))}",
                     "mean_gap_%": round(statistics.mean(gaps), 3) if gaps else None,
                     "best_gap_%": min(gaps) if gaps else None,
                     "first_gen_s": round(statistics.mean(firsts), 1) if firsts else None,
                     "peak_gib": max(peaks) if peaks else None,
                     "status": "ok" if len(ok) == len(group) else group[-1]["status"]})
    return rows


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="pcb3038, 8 s, one seed, metaheur and fast_tsp")
    ap.add_argument("--instances", default=None, help="comma-separated TSPLIB or gen: names")
    ap.add_argument("--seconds", default=None, help="comma-separated time limits (default 60,120,300)")
    ap.add_argument("--seeds", type=int, default=None, help="seeds 1..K (default 3; --quick 1)")
    ap.add_argument("--methods", default=None, help=f"comma-separated, of {', '.join(METHODS)}")
    ap.add_argument("--peer-python", default="/tmp/benchvenv/bin/python",
                    help="a Python with fast_tsp and elkai installed")
    ap.add_argument("--lock", default=None, help="hold an exclusive flock on this file during each run")
    ap.add_argument("--resume", action="store_true", help="keep the runs of the out folder's runs table")
    ap.add_argument("--name", default="bench_tsp_large")
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    root = need_instances("bench_tsp_large.py")
    out = out_folder(args.out, args.quick)
    suffix = "_quick" if args.quick else ""
    first = "usa13509" if (root / "tsplib" / "usa13509.tsp").is_file() else "brd14051"
    names, _ = present(names_arg(args.instances, [first, "d18512", "pla33810", "pla85900"], ["pcb3038"],
                                 args.quick))
    seconds = [float(x) for x in split_names(args.seconds or ("8" if args.quick else "60,120,300"))]
    seeds = range(1, (args.seeds or (1 if args.quick else 3)) + 1)
    methods = split_names(args.methods or ("metaheur,fast_tsp" if args.quick else ",".join(METHODS)))
    unknown = [m for m in methods if m not in METHODS]
    if unknown:
        ap.error(f"unknown methods {', '.join(unknown)}: use {', '.join(METHODS)}")
    kept = "; the runs of earlier invocations kept (--resume; their load in the runs table)" if args.resume else ""
    head = run_header(f"settings: {cpu_count()} cores for every method, metaheur solve with default options; this "
                      f"invocation: {', '.join(methods)} at {', '.join(f'{t:g}' for t in seconds)} s, seeds "
                      f"{seeds[0]}-{seeds[-1]}{kept}")
    runs_path = out / f"{args.name}_runs{suffix}.csv"
    done = earlier_runs(runs_path) if args.resume else {}
    peers = Peers([args.peer_python, sys.executable])
    runs: list[dict] = list(done.values())
    source = commit()

    def record(name, tsp, method, t, seed, res, load) -> None:
        row = {"instance": name, "n": tsp.n, "method": method, "seconds": t, "seed": seed, "load": load,
               "commit": source, **res}
        runs.append(row)
        done[name, method, t, seed] = row
        write_table(with_gaps(runs), RUN_COLUMNS, f"{args.name}_runs{suffix}", head, out, "Large TSP: every run")
        log(f"  {name} {method} {t:g} s seed {seed}: {res.get('cost', res['status'])} gap {row['gap_%']}")

    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            tsp = problem(name)
            matrix, why = (fast_tsp_matrix(tsp, Path(tmp)) if "fast_tsp" in methods else (None, ""))
            for seed in seeds:
                for method in methods:
                    todo = [t for t in seconds if (name, method, t, seed) not in done]
                    if not todo:
                        continue
                    if method == "elkai":
                        with held(args.lock):
                            load = round(os.getloadavg()[0], 2)
                            results = run_elkai(root / "tsplib" / f"{name}.tsp", tsp, todo, seed, args.peer_python)
                        for t, res in zip(todo, results, strict=True):
                            record(name, tsp, method, t, seed, res, load)
                        continue
                    for t in todo:
                        with held(args.lock):
                            load = round(os.getloadavg()[0], 2)
                            res = (run_metaheur(name, tsp, t, seed) if method == "metaheur"
                                   else run_fast_tsp(tsp, t, peers, matrix, why))
                        record(name, tsp, method, t, seed, res, load)
    full = [first, "d18512", "pla33810", "pla85900"]
    design = [] if args.quick else [(name, method, t) for name in present(full)[0] for method in METHODS
                                    for t in (60.0, 120.0, 300.0)]
    def order(row: dict) -> tuple:
        return (full.index(row["instance"]) if row["instance"] in full else -1, row["instance"],
                METHODS.index(row["method"]), row["seconds"])

    table = sorted(summary(runs, design, len(seeds) if args.quick else 3), key=order)
    write_table(table, TABLE_COLUMNS, f"{args.name}{suffix}", head, out,
                "Large TSP at equal wall time: gap to the optimum, first generation, peak memory")


if __name__ == "__main__":
    main()
