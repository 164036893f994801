"""The linear ordering problem: `metaheur.solve` against the iterated local search lop_ils.c at
equal wall time, and the solved sets within 5 s.

Two tables:

* ``bench_lop``: xLOLIB (n = 150 and 250) and xLOLIB2 (n = 300) of ``$METAHEUR_INSTANCES/lop``, at
  each of ``--times`` seconds, ``--seeds`` seeds: ``metaheur.solve(instance, time_limit=T, seed)``
  (the default strategy on every core), then lop_ils.c once per core at the same time for T
  seconds each (seeds 2 s + 1, 2 s + 2, ...), the best of them. Per set and time: the mean gap
  below the best-known value (``100 (bks - value) / bks``) of each, their ratio, and how many runs
  reached the best-known value. ``bench_lop_runs`` has every run.
* ``bench_lop_solved``: every IO and SGB instance (proven optima), ``metaheur.solve`` with
  ``--solved-seconds`` and the optimum as its target, ``--seeds`` seeds (``--quick``: one): the
  value, whether it is the optimum, the time to reach it.

Both are made in parts (experiments/lib/parts.py; docs/development.md): each run is written out
as soon as it ends, with the load average at its start, its commit and its CPU; ``--resume`` keeps the
runs of the out folder's tables and runs the others (the solved runs first, then one seed of
every set and time before the next seed); ``--lock FILE`` holds a flock on FILE during each run;
the summary says per set and time how many runs of the design it has (``missing``, ``partial``,
``ok``).

lop_ils.c (after Schiavinotto and Stuetzle 2004) is built with ``gcc -O3 -march=native`` into a
temporary folder from ``--yardsticks DIR`` or ``$METAHEUR_YARDSTICKS`` (default: shared/yardsticks
next to the repository).

    python experiments/bench_lop.py [--quick] [--seeds 3] [--times 10 60] [--solved-seconds 5]
        [--sets xLOLIB150,xLOLIB250,xLOLIB2,solved] [--resume] [--lock FILE] [--yardsticks DIR]
        [--out experiments/results]
    python experiments/bench_lop.py --settings be75eec_250,t75d11xx_250 --times 10 --seeds 2
    python experiments/bench_lop.py --instances stabu3_150,stabu1_250,stabu70_300 --times 10 --seeds 1

``--instances NAMES`` runs the first table on those instances only (``bench_lop_check``: a default
checked on instances it was not chosen on). ``--settings NAMES`` writes ``bench_lop_settings_Ts``
(T: the first of ``--times``) instead: each setting of :data:`SETTINGS` (the GA's, the children's local search's, the
migration's, the distance's; ``--only "LABEL;LABEL"`` for some of them) changed alone from the
defaults, mean and worst gap over the instances and seeds, and the generations an island ran (mean).

The full tables take about 14 hours on 2 cores; ``--quick`` runs two instances of each xLOLIB set
at 10 s with one seed, and four IO/SGB instances.
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from lib.parts import cell_status, held, read_runs, run_stamp
from lib.report import header, log, out_folder, write_table

import metaheur
from metaheur.devices import cpu_count
from metaheur.problems.lop.files import read_lolib

YARDSTICKS = Path(__file__).resolve().parents[2] / "shared" / "yardsticks"
SETS = {"xLOLIB150": ("xLOLIB", 150), "xLOLIB250": ("xLOLIB", 250), "xLOLIB2": ("xLOLIB2", 300)}
QUICK = {"xLOLIB150": ["be75eec_150", "t75d11xx_150"], "xLOLIB250": ["be75eec_250", "t75d11xx_250"],
         "xLOLIB2": ["be75eec_300", "t75d11xx_300"], "solved": ["be75eec", "t65w11xx", "sgb75.01", "sgb75.13"]}


def build_lop_ils(folder: str | None, workdir: Path) -> Path:
    """lop_ils.c from ``folder`` (or $METAHEUR_YARDSTICKS, or shared/yardsticks) compiled into ``workdir``."""
    source = Path(folder or os.environ.get("METAHEUR_YARDSTICKS") or YARDSTICKS) / "lop_ils.c"
    if not source.is_file():
        sys.exit(f"bench_lop: {source} not found (give --yardsticks DIR or set METAHEUR_YARDSTICKS)")
    exe = workdir / "lop_ils"
    subprocess.run(["gcc", "-O3", "-march=native", "-o", str(exe), str(source)], check=True)
    return exe


def lop_ils_best_of_cores(exe: Path, path: Path, seconds: float, seed: int, cores: int) -> dict:
    """lop_ils once per core at the same time, ``seconds`` each (seeds cores * seed + 1 ...): the best."""

    def one(s: int) -> dict:
        out = subprocess.run([str(exe), str(path), str(int(seconds * 1000)), str(s)], capture_output=True,
                             text=True, check=True).stdout
        values = dict(re.findall(r"(\w+)=([\d.]+)", out))
        return {"best": int(values["best"]), "iterations": int(values["iterations"])}

    with ThreadPoolExecutor(cores) as pool:
        runs = list(pool.map(one, [cores * seed + 1 + i for i in range(cores)]))
    return {"best": max(r["best"] for r in runs), "iterations": sum(r["iterations"] for r in runs)}


def gap(value: int, bks: int) -> float:
    return 100.0 * (bks - value) / abs(bks)


def set_members(bks: dict, label: str, chosen: list[str] | None) -> list[str]:
    """The instances of xLOLIB set ``label`` (all, or those of ``chosen`` in it)."""
    folder, n = SETS[label]
    return sorted(k for k, r in bks.items() if r["set"] == folder and r["n"] == n and (chosen is None or k in chosen))


RUN_COLUMNS = ["set", "instance", "n", "seconds", "seed", "best_known", "metaheur", "metaheur_gap_%",
               "metaheur_wall_s", "lop_ils", "lop_ils_gap_%", "lop_ils_iterations", "load", "commit", "cpu"]
SUMMARY_COLUMNS = ["instance", "n", "seconds", "instances", "runs", "metaheur_mean_gap_%", "lop_ils_mean_gap_%",
                   "ratio", "metaheur_at_bks", "lop_ils_at_bks", "status"]
SOLVED_COLUMNS = ["instance", "set", "n", "seed", "optimum", "value", "at_optimum", "time_s", "load",
                  "commit", "cpu"]


def versus_plan(bks: dict, sets: list[str], times: list[float], seeds: int,
                chosen: list[str] | None) -> list[tuple[int, float, str, str]]:
    """Every (seed, seconds, set, instance) run of the versus table, seed by seed (one seed of every
    set and time first, so a table made in several calls has a whole seed early)."""
    return [(seed, seconds, label, name) for seed in range(seeds) for seconds in times for label in sets
            for name in set_members(bks, label, chosen)]


def versus_run(root: Path, bks: dict, label: str, name: str, seconds: float, seed: int, exe: Path) -> dict:
    """One run of the versus table: metaheur.solve, then lop_ils.c once per core, at ``seconds`` each."""
    folder, _ = SETS[label]
    lop = read_lolib(root / folder / name)
    best = bks[name]["value"]
    load = os.getloadavg()[0]
    start = time.perf_counter()
    r = metaheur.solve(lop, time_limit=seconds, seed=seed)
    wall = time.perf_counter() - start
    ils = lop_ils_best_of_cores(exe, root / folder / name, seconds, seed, cpu_count())
    return {"set": label, "instance": name, "n": lop.n, "seconds": seconds, "seed": seed, "best_known": best,
            "metaheur": r.value, "metaheur_gap_%": round(gap(r.value, best), 4), "metaheur_wall_s": round(wall, 1),
            "lop_ils": ils["best"], "lop_ils_gap_%": round(gap(ils["best"], best), 4),
            "lop_ils_iterations": ils["iterations"], "load": round(load, 1)}


def versus_summary(done: dict, plan: list[tuple[int, float, str, str]]) -> list[dict]:
    """Per set and time of ``plan``: the runs done of those planned, the mean gap of each method over
    them, their ratio and the runs at the best-known value (``missing``/``partial``/``ok``)."""
    cells = list(dict.fromkeys((label, seconds) for _, seconds, label, _ in plan))
    table = []
    for label, seconds in cells:
        keys = [(name, seconds, seed) for seed, t, lab, name in plan if (lab, t) == (label, seconds)]
        block = [done[k] for k in keys if k in done]
        row = {"instance": label, "n": SETS[label][1], "seconds": seconds,
               "instances": len({k[0] for k in keys}), "runs": f"{len(block)}/{len(keys)}",
               "status": cell_status(len(block), len(keys))}
        if block:
            ours = statistics.mean(float(r["metaheur_gap_%"]) for r in block)
            theirs = statistics.mean(float(r["lop_ils_gap_%"]) for r in block)
            row |= {"metaheur_mean_gap_%": round(ours, 4), "lop_ils_mean_gap_%": round(theirs, 4),
                    "ratio": round(ours / theirs, 3) if theirs else None,
                    "metaheur_at_bks": f"{sum(float(r['metaheur_gap_%']) <= 0 for r in block)}/{len(block)}",
                    "lop_ils_at_bks": f"{sum(float(r['lop_ils_gap_%']) <= 0 for r in block)}/{len(block)}"}
        table.append(row)
    return table


def solved_run(root: Path, bks: dict, name: str, seconds: float, seed: int) -> dict:
    """One run of the solved table: metaheur.solve with the optimum as its target; time_s: when it
    was reached (else the run's time)."""
    lop = read_lolib(root / bks[name]["set"] / name)
    optimum = bks[name]["value"]
    load = os.getloadavg()[0]
    r = metaheur.solve(lop, time_limit=seconds, target=optimum, seed=seed)
    reached = [t.time_s for t in r.trace if t.cost == optimum] if r.value == optimum else []
    return {"instance": name, "set": bks[name]["set"], "n": lop.n, "seed": seed, "optimum": optimum,
            "value": r.value, "at_optimum": r.value == optimum, "time_s": round(min(reached, default=r.time_s), 2),
            "load": round(load, 1)}


def run_in_parts(plan: list, key, run, done: dict, lock: str | None, save) -> None:
    """Every run of ``plan`` whose ``key`` is not in ``done``: ``run(item)`` under the lock, added to
    ``done`` with the checkout's commit and the CPU, then ``save()`` (experiments/lib/parts.py)."""
    stamp = run_stamp()
    for item in plan:
        if key(item) in done:
            continue
        with held(lock):
            done[key(item)] = row = run(item) | stamp
        log("  " + ", ".join(f"{k} {row[k]}" for k in ("instance", "seconds", "seed", "metaheur_gap_%",
                                                           "lop_ils_gap_%", "value", "time_s") if k in row))
        save()


def earlier(path: Path, key_columns: tuple[str, ...]) -> dict:
    """The runs of a runs table written before (``--resume``), by ``key_columns`` (seconds as float,
    seed as int)."""
    types = {"seconds": float, "seed": int}
    return {tuple(types.get(c, str)(row[c]) for c in key_columns): row for row in read_runs(path)}


#: The settings compared by the ``settings`` table: changes to LOP.default_params().ga, to its local
#: search (``perm``: changes to LOP.default_params().perm), to the migration (``migration``) and to
#: the problem's distance (``distance``).
PARTS = ("perm", "migration", "distance")
SETTINGS = {
    "default": {},
    "population 10, 10 children": {"population": 10, "offspring": 10},
    "population 50, 50 children": {"population": 50, "offspring": 50},
    "population 60, 60 children": {"population": 60, "offspring": 60},
    "population 100, 100 children": {"population": 100, "offspring": 100},
    "population 150, 150 children": {"population": 150, "offspring": 150},
    "steady-state replacement, restart after 30": {"replacement": "steady", "restart_after": 30},
    "positions distance (Hamming)": {"distance": "positions"},
    "ILS children, 2 kicks of 3 insertions": {"ls_budget": 2},
    "10 members, 5 ILS children of 20 kicks, steady-state": {"population": 10, "offspring": 5, "ls_budget": 20,
                                                            "replacement": "steady", "restart_after": 30},
    "cycle crossover (cx)": {"crossover": "cx"},
    "no migration": {"migration": {"interval": 0}},
}


def settings_rows(root: Path, bks: dict, names: list[str], seconds: float, seeds: int,
                  only: list[str] | None = None) -> list[dict]:
    """Each of SETTINGS (or those labelled in ``only``) on ``names`` (xLOLIB/xLOLIB2), ``seconds``
    each, seeds 0.."""
    rows = []
    for label, change in SETTINGS.items():
        if only and label not in only:
            continue
        gaps, generations = [], []
        for name in names:
            lop = read_lolib(root / bks[name]["set"] / name)
            lop.distance = change.get("distance", lop.distance)
            defaults = lop.default_params()
            ga = dataclasses.replace(defaults.ga, **{k: v for k, v in change.items() if k not in PARTS})
            perm = dataclasses.replace(defaults.perm, **change.get("perm", {}))
            migration = dataclasses.replace(lop.default_migration(), **change.get("migration", {}))
            for seed in range(seeds):
                r = metaheur.solve(lop, time_limit=seconds, seed=seed,
                                   params=metaheur.SolveParams(ga=ga, searches=[perm], migration=migration))
                gaps.append(gap(r.value, bks[name]["value"]))
                generations.append(statistics.mean(i.generations for i in r.islands))
                print(f"  {label} {name} seed {seed}: {gaps[-1]:.4f} %, {generations[-1]:.0f} generations an island",
                      flush=True)
        rows.append({"instance": ", ".join(names), "config": label, "seconds": seconds, "runs": len(gaps),
                     "mean_gap_%": round(statistics.mean(gaps), 4), "max_gap_%": round(max(gaps), 4),
                     "generations": round(statistics.mean(generations))})
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="two instances per xLOLIB set, 1 seed, 10 s; 4 IO/SGB")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--times", type=float, nargs="*", default=None, help="seconds per run (default 10 60; quick 10)")
    ap.add_argument("--solved-seconds", type=float, default=5.0)
    ap.add_argument("--sets", default="xLOLIB150,xLOLIB250,xLOLIB2,solved")
    ap.add_argument("--instances", default=None, help="instead of whole sets: these comma-separated xLOLIB/xLOLIB2 "
                    "instances (tables bench_lop_check*)")
    ap.add_argument("--only", default=None, help="with --settings: only these SETTINGS labels, separated by ;")
    ap.add_argument("--settings", default=None, help="instead: the GA settings table on these comma-separated "
                    "xLOLIB/xLOLIB2 instances (at the first of --times, --seeds seeds)")
    ap.add_argument("--resume", action="store_true", help="keep the runs of the out folder's runs tables, run the "
                    "others")
    ap.add_argument("--lock", default=None, help="hold an exclusive flock on this file during each run")
    ap.add_argument("--yardsticks", default=None, help="folder with lop_ils.c (default $METAHEUR_YARDSTICKS)")
    ap.add_argument("--out", default=None, help="folder for the tables (default: results/; --quick: a new temporary "
                    "folder)")
    args = ap.parse_args()
    only = [s for s in (args.only or "").split(";") if s]
    unknown = [s for s in only if s not in SETTINGS]
    if unknown:
        sys.exit(f"bench_lop: no setting labelled {', '.join(map(repr, unknown))} (see SETTINGS)")
    root = os.environ.get("METAHEUR_INSTANCES")
    if not root or not (Path(root) / "lop" / "bks.csv").is_file():
        sys.exit("set METAHEUR_INSTANCES to the folder with lop/bks.csv")
    root = Path(root) / "lop"
    with open(root / "bks.csv", newline="") as handle:
        bks = {r["name"]: {"set": r["set"], "n": int(r["n"]), "value": int(r["best_known"])}
               for r in csv.DictReader(handle)}
    seeds = 1 if args.quick else args.seeds
    times = args.times or ([10.0] if args.quick else [10.0, 60.0])
    chosen = [s for s in args.instances.split(",") if s] if args.instances else None
    if chosen:
        missing = [s for s in chosen if s not in bks or bks[s]["set"] not in ("xLOLIB", "xLOLIB2")]
        if missing:
            sys.exit(f"bench_lop: not an xLOLIB or xLOLIB2 instance: {', '.join(missing)}")
    elif args.quick:
        chosen = [name for label in SETS for name in QUICK[label]]
    suffix = "_quick" if args.quick else "_check" if args.instances else ""
    wanted = [s for s in args.sets.split(",") if s]
    per_run = f", {', '.join(f'{t:g}' for t in times)} s per run" if args.settings or set(wanted) & set(SETS) else ""
    head = header(f"settings: {seeds} seed(s){per_run}"
                  f"{'; the --quick subset: ' + ', '.join(n for s in wanted for n in QUICK[s]) if args.quick else ''}"
                  f"{'; instances: ' + args.instances if args.instances else ''}"
                  f"; load average at the start {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    out = out_folder(args.out, args.quick)
    metaheur.solve(read_lolib(root / "IO" / "be75eec"), time_limit=1.0, seed=0)  # kernels built before timing
    if args.settings:
        names = [s for s in args.settings.split(",") if s]
        write_table(settings_rows(root, bks, names, times[0], seeds, only),
                    ["instance", "config", "seconds", "runs", "mean_gap_%", "max_gap_%", "generations"],
                    f"bench_lop_settings_{times[0]:g}s", [*head, "metaheur.solve, default strategy, one setting of "
                                                           "LOP.default_params() changed at a time"],
                    out, "LOP: GA settings")
        return
    note = ("metaheur.solve (default strategy, every core) with time_limit T; lop_ils.c (gcc -O3 -march=native) "
            f"once per core ({cpu_count()}) at the same time, T each, the best; gap below the best-known value; each "
            "run's load average at its start, commit and CPU in the runs table" + ("; the runs of earlier calls kept "
                                                                              "(--resume)" if args.resume else ""))
    if "solved" in wanted and not args.instances:
        names = QUICK["solved"] if args.quick else sorted(k for k, r in bks.items() if r["set"] in ("IO", "SGB"))
        stem = f"bench_lop_solved{suffix}"
        done = earlier(out / f"{stem}.csv", ("instance", "seed")) if args.resume else {}
        solved_head = [*head, f"IO and SGB (proven optima): metaheur.solve with {args.solved_seconds:g} s and the "
                              "optimum as target; time_s: when the optimum was reached"]

        def save_solved() -> None:
            write_table(list(done.values()), SOLVED_COLUMNS, stem, solved_head, out, "LOP: the solved sets",
                        echo=False)

        run_in_parts([(name, seed) for seed in range(seeds) for name in names], lambda item: item,
                     lambda item: solved_run(root, bks, item[0], args.solved_seconds, item[1]), done, args.lock,
                     save_solved)
        save_solved()
        at = sum(str(r["at_optimum"]) == "True" for r in done.values())
        log(f"bench_lop: {at} of {len(done)} solved runs at the optimum")
    versus = [s for s in wanted if s in SETS]
    if versus:
        plan = versus_plan(bks, versus, times, seeds, chosen)
        done = earlier(out / f"bench_lop_runs{suffix}.csv", ("instance", "seconds", "seed")) if args.resume else {}

        def save_versus(echo: bool = False) -> None:
            write_table(list(done.values()), RUN_COLUMNS, f"bench_lop_runs{suffix}", [*head, note], out,
                        "LOP: every run", echo=False)
            write_table(versus_summary(done, plan), SUMMARY_COLUMNS, f"bench_lop{suffix}", [*head, note], out,
                        "LOP: metaheur vs lop_ils.c at equal wall time", echo=echo)

        with tempfile.TemporaryDirectory() as tmp:
            exe = build_lop_ils(args.yardsticks, Path(tmp))
            run_in_parts(plan, lambda item: (item[3], item[1], item[0]),
                         lambda item: versus_run(root, bks, item[2], item[3], item[1], item[0], exe), done,
                         args.lock, save_versus)
        save_versus(echo=True)


if __name__ == "__main__":
    main()
