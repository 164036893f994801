"""The permutation flow shop: metaheur against the iterated greedy yardstick ig.c at equal wall time.

Each instance gets ``n x (m / 2) x MS`` milliseconds of wall time on this machine's 2 cores (the
budget of Ruiz and Stuetzle 2007 and their successors, with MS = 30 or 60):

* ``metaheur.solve(instance, time_limit, seed)`` with its default method, its setup (worker
  start, kernel load) included: the setup is measured on a short run first and taken off the
  time limit;
* ``ig.c`` (shared/yardsticks/ig.c: Ruiz and Stuetzle's IG with Taillard's acceleration, d = 4,
  T = 0.4) run once on each core at the same time for the same wall time, the better of the two
  counted.

Both makespans are recomputed from the returned job orders. The relative percentage deviation is
``100 (C - UB) / UB`` with UB the upper bound of the table (metaheur.problems.pfsp.best_known); the
tables give its average (ARPD) per class of Taillard (10 instances, 20 x 5 .. 500 x 20) or VRF
(10 instances per n x m) over instances and seeds, and overall.

    python experiments/bench_pfsp.py [--quick] [--parts taillard30,taillard60,vrf30] [--seeds 3]
        [--instances ta001,ta031] [--resume] [--lock FILE] [--yardsticks DIR] [--out experiments/results]

``--quick``: the first instance of each Taillard class (of ``--instances`` where given: its
second instances are ``ta002,ta012,...``), one seed unless ``--seeds`` says, 30 ms (table
``bench_pfsp_taillard30_quick``). A part is made in parts (experiments/lib/parts.py): the runs
table (with each run's load average, commit and CPU) and the summary (of every run of the design done
so far, this call's and earlier ones') are written after each run; ``--resume`` keeps the runs
already in the out folder's runs table and runs the others, one seed of every instance before
the next seed; ``--lock FILE`` holds a flock on FILE during each run; the summary says per class
how many runs of the design it has (``missing``, ``partial``, ``ok``). The yardstick is built
with gcc into a temporary folder from ``--yardsticks`` or ``$METAHEUR_YARDSTICKS`` (the folder
with ig.c). Instances are read from
``$METAHEUR_INSTANCES/pfsp`` (and ``pfsp/vrf``).
"""

from __future__ import annotations

import argparse
import functools
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from lib.parts import cell_status, held, read_runs, run_stamp
from lib.report import header, log, out_folder, write_table

import metaheur
from metaheur.problems.pfsp import read_pfsp
from metaheur.problems.pfsp.best_known import TAILLARD, VRF_SMALL

PARTS = ("taillard30", "taillard60", "vrf30")
PROBE_S = 0.3


def build_ig(folder: str | None, workdir: Path) -> Path:
    """ig.c of ``folder`` (or $METAHEUR_YARDSTICKS) compiled into ``workdir``."""
    root = folder or os.environ.get("METAHEUR_YARDSTICKS")
    source = Path(root) / "ig.c" if root else None
    if source is None or not source.is_file():
        sys.exit("bench_pfsp: give the folder with ig.c as --yardsticks or $METAHEUR_YARDSTICKS")
    exe = workdir / "ig"
    subprocess.run(["gcc", "-O3", "-march=native", "-o", str(exe), str(source), "-lm"], check=True)
    return exe


def run_ig(exe: Path, problem, path: Path, ms: int, seed: int, cores: int) -> int:
    """The best makespan of ``cores`` ig runs side by side, ``ms`` milliseconds each (recomputed)."""
    procs = [subprocess.Popen([str(exe), str(path), str(ms), str(seed * cores + k + 1)], stdout=subprocess.PIPE,
                              text=True) for k in range(cores)]
    best = None
    for proc in procs:
        out, _ = proc.communicate()
        if proc.returncode:
            sys.exit(f"bench_pfsp: ig failed on {path} (status {proc.returncode})")
        order = [int(j) - 1 for j in re.search(r"permutation=([\d,]+)", out).group(1).split(",")]
        value = problem.value(order)
        best = value if best is None else min(best, value)
    return best


def run_metaheur(problem, seconds: float, seed: int) -> tuple[int, float]:
    """metaheur's makespan within ``seconds`` of wall time, setup included, and the wall time used."""
    start = time.perf_counter()
    probe = metaheur.solve(problem, time_limit=PROBE_S, seed=seed)
    setup = max(0.0, time.perf_counter() - start - probe.time_s)
    start = time.perf_counter()
    result = metaheur.solve(problem, time_limit=max(0.05, seconds - setup), seed=seed)
    wall = time.perf_counter() - start
    return problem.value(result.permutation), wall


def instances(part: str, names: list[str], root: Path, quick: bool) -> list[tuple[str, Path, int, str]]:
    """(name, path, upper bound, class) of the instances of a part."""
    if part.startswith("taillard"):
        rows = [(r[0], root / f"{r[0]}.fsp", r[4], f"{r[1]}x{r[2]}") for r in TAILLARD]
    else:
        rows = [(r[0], root / "vrf" / f"{r[0]}_Gap.txt", r[3], f"{r[1]}x{r[2]}") for r in VRF_SMALL]
    if names:
        rows = [r for r in rows if r[0] in names]
    if quick:
        seen: set[str] = set()
        rows = [r for r in rows if not (r[3] in seen or seen.add(r[3]))]
    return rows


RUN_COLUMNS = ["instance", "class", "seed", "ms", "upper_bound", "metaheur", "ig", "metaheur_wall_s", "load",
               "commit", "cpu"]
TABLE_COLUMNS = ["class", "instances", "runs", "ms_each", "arpd_metaheur", "arpd_ig", "metaheur_at_ub", "ig_at_ub",
                 "status"]


def earlier_runs(path: Path) -> dict[tuple[str, int], dict]:
    """The runs of a runs table written before (``--resume``), by (instance, seed)."""
    runs = {}
    for row in read_runs(path):
        run = {k: row[k] for k in ("instance", "class")} | {k: int(row[k]) for k in ("seed", "ms", "upper_bound",
                                                                                     "metaheur", "ig")}
        run |= {"metaheur_wall_s": float(row["metaheur_wall_s"]), "load": float(row["load"]),
                "commit": row.get("commit", ""), "cpu": row.get("cpu", "")}
        runs[run["instance"], run["seed"]] = run
    return runs


def run_part(rows, seeds: int, ms_factor: int, exe: Path, cores: int, done: dict, lock: str | None,
             save: Callable[[], None]) -> None:
    """Every (instance, seed) run of a part's instances ``rows`` not in ``done``, seed by seed (one
    seed of every instance first, so a part made in several calls has a whole seed early), each
    added to ``done`` and ``save`` called after it."""
    stamp = run_stamp()
    for seed in range(seeds):
        for name, path, ub, cls in rows:
            if (name, seed) in done:
                continue
            problem = read_pfsp(path, name=name)
            ms = int(problem.n * problem.m / 2 * ms_factor)
            with held(lock):
                load = os.getloadavg()[0]
                mh, wall = run_metaheur(problem, ms / 1000, seed)
                ig = run_ig(exe, problem, path, ms, seed, cores)
            done[name, seed] = {"instance": name, "class": cls, "seed": seed, "ms": ms, "upper_bound": ub,
                                "metaheur": mh, "ig": ig, "metaheur_wall_s": round(wall, 2), "load": round(load, 1)
                                } | stamp
            log(f"  {name} seed {seed}: metaheur {mh} ({wall:.1f} s), ig {ig}, UB {ub}")
            save()


def planned_runs(done: dict, rows, seeds: int) -> list[dict]:
    """The runs of ``done`` among the part's instances ``rows`` and seeds 0..``seeds``-1, seed by
    seed, with their RPDs above the upper bound."""
    runs = [done[name, seed] for seed in range(seeds) for name, *_ in rows if (name, seed) in done]
    return [run | {"metaheur_rpd": 100 * (run["metaheur"] - run["upper_bound"]) / run["upper_bound"],
                   "ig_rpd": 100 * (run["ig"] - run["upper_bound"]) / run["upper_bound"]} for run in runs]


def write_runs(done: dict, stem: str, head: list[str], out: Path, title: str) -> None:
    """The runs table: every run of ``done`` (those of earlier calls with it)."""
    write_table(list(done.values()), RUN_COLUMNS, stem, head, out, title, echo=False)


def save_part(done: dict, rows, seeds: int, stem: str, head: list[str], out: Path, title: str,
              echo: bool = False) -> None:
    """The runs table (every run of ``done``) and the summary of the planned runs done so far (a
    part not finished leaves its classes ``partial``)."""
    write_runs(done, f"{stem}_runs", head, out, title + ": every run")
    write_table(summary(planned_runs(done, rows, seeds), rows, seeds), TABLE_COLUMNS, stem, head, out, title,
                echo=echo)


def summary(runs: list[dict], rows, seeds: int) -> list[dict]:
    """Per class of the part's instances ``rows`` and overall: the runs done of those planned
    (instances x ``seeds``), the ARPD of each method over them and the runs at the upper bound; a
    class without runs says ``missing``, one with some ``partial``."""
    classes = list(dict.fromkeys(r[3] for r in rows))
    table = []
    for cls in [*classes, "overall"]:
        planned = seeds * sum(cls in ("overall", r[3]) for r in rows)
        sel = [r for r in runs if cls in ("overall", r["class"])]
        row = {"class": cls, "instances": len({r[0] for r in rows if cls in ("overall", r[3])}),
               "runs": f"{len(sel)}/{planned}", "status": cell_status(len(sel), planned)}
        if sel:
            row |= {"ms_each": "" if cls == "overall" else sel[0]["ms"],
                    "arpd_metaheur": round(statistics.mean(r["metaheur_rpd"] for r in sel), 3),
                    "arpd_ig": round(statistics.mean(r["ig_rpd"] for r in sel), 3),
                    "metaheur_at_ub": sum(r["metaheur"] <= r["upper_bound"] for r in sel),
                    "ig_at_ub": sum(r["ig"] <= r["upper_bound"] for r in sel)}
        table.append(row)
    return table


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="first instance of each Taillard class (of --instances), "
                    "1 seed unless --seeds, 30 ms")
    ap.add_argument("--parts", default=",".join(PARTS), help=f"tables to make, of {', '.join(PARTS)}")
    ap.add_argument("--seeds", type=int, default=None, help="seeds per instance (default: 3; --quick: 1)")
    ap.add_argument("--instances", default="", help="comma-separated names (default: every instance of the part)")
    ap.add_argument("--resume", action="store_true", help="keep the runs of the out folder's runs tables, run the "
                    "others")
    ap.add_argument("--yardsticks", default=None, help="folder with ig.c (default: $METAHEUR_YARDSTICKS)")
    ap.add_argument("--lock", default=None, help="hold an exclusive flock on this file during each run")
    ap.add_argument("--cores", type=int, default=2, help="ig runs side by side (one per core)")
    ap.add_argument("--out", default=None, help="folder for the tables (default: results/; --quick: a new temporary "
                    "folder)")
    args = ap.parse_args()
    root = os.environ.get("METAHEUR_INSTANCES")
    if not root or not (Path(root) / "pfsp" / "ta001.fsp").is_file():
        sys.exit("bench_pfsp: set METAHEUR_INSTANCES to the folder with pfsp/ta001.fsp")
    parts = ["taillard30"] if args.quick else [p for p in args.parts.split(",") if p]
    bad = [p for p in parts if p not in PARTS]
    if bad:
        sys.exit(f"bench_pfsp: unknown part {bad[0]!r} (of {', '.join(PARTS)})")
    seeds = args.seeds or (1 if args.quick else 3)
    names = [s for s in args.instances.split(",") if s]
    out = out_folder(args.out, args.quick)
    kept = "; the runs of earlier calls kept (--resume)" if args.resume else ""
    with tempfile.TemporaryDirectory(prefix="metaheur-ig-") as work:
        exe = build_ig(args.yardsticks, Path(work))
        for part in parts:
            rows = instances(part, names, Path(root) / "pfsp", args.quick)
            if not rows:
                sys.exit(f"bench_pfsp: no instance of {part} among {args.instances}")
            stem = f"bench_pfsp_{part}" + ("_quick" if args.quick else "")
            subset = ("the QUICK SUBSET: the first instance of each class" if args.quick
                      else f"{len(rows)} instances")
            head = header(f"settings: {subset}, {seeds} seed(s); n x (m / 2) x {part[-2:]} ms of wall time per "
                          f"instance; metaheur: solve() with its defaults, setup included; ig.c: {args.cores} runs "
                          f"side by side, the better counted; each run's load average at its start, commit and CPU "
                          f"in the runs table{kept}")
            title = f"PFSP: metaheur vs ig.c at n x (m/2) x {part[-2:]} ms" + (" (quick subset)" if args.quick else "")
            done = earlier_runs(out / f"{stem}_runs.csv") if args.resume else {}
            save = functools.partial(save_part, done, rows, seeds, stem, head, out, title)
            run_part(rows, seeds, int(part[-2:]), exe, args.cores, done, args.lock, save)
            save(echo=True)

if __name__ == "__main__":
    main()
