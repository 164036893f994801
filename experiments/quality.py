"""Solution quality on the whole of QAPLIB and TSPLIB: the gap to the best-known value of
metaheur.solver.solve (default strategy: hybrid with a GPU, else cpu-islands on every core) on
every instance under METAHEUR_INSTANCES (qaplib/*.dat, tsplib/*.tsp listed in their bks.csv),
or a subset (--instances, --max-n, --library), over several seeds.

Time budget per run, scaled by size from --base-seconds B: QAP B * n / 50, TSP B * n / 1000, each
clipped to [B / 2, 10 B]; QAP instances with n <= 40 get at least --small-qap-seconds (default
30 s: the project's target is that all of them reach their best-known value within 30 s). Every
run also stops as soon as it reaches the best-known value (solve(target="bks")), so the easy
instances take far less than their budget.

Per instance: best and mean gap (%) over the seeds, how many seeds reached the best-known value
and the median time they took ("not reached" when most did not), the mean time to the run's own
best (from result.history, at epoch resolution), the mean search time and local-search
iterations per second. One table per library (quality_qaplib.*, quality_tsplib.*, plus
quality_runs.* with every run) and quality_gap_vs_n.png (mean gap against n, log x); with one
--library, these two are named quality_runs_LIB.* and quality_gap_vs_n_LIB.png. Prints the
QAP instances with n <= 40 that missed their best-known value in some seed.

    METAHEUR_INSTANCES=../shared/instances python experiments/quality.py --quick
    METAHEUR_INSTANCES=../shared/instances python experiments/quality.py [--base-seconds 10] [--seeds 3]
        [--library qaplib|tsplib|both] [--instances tai30a,pr2392,...] [--max-n 1000] [--out DIR]
"""

from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from lib.backends import auto_workers, one_thread_in_process, warm_pool
from lib.instances import budget_seconds, need_instances, split_names
from lib.report import RESULTS, log, out_folder, run_header, write_table
from lib.runs import RUN_COLUMNS, run_rows, solve_run, summarise

from metaheur.problems import best_known

QUICK = ["tai12a", "nug12", "chr12a", "burma14", "ulysses16", "berlin52"]
COLUMNS = ["instance", "n", "best_known", "optimal", "status", "budget_s", "seeds", "best_gap_%", "mean_gap_%",
           "reached_bks", "time_to_bks_s", "time_to_best_s", "time_s", "ls_per_s"]
SMALL_QAP = 40


def library(root: Path, lib: str) -> list[dict]:
    """Instances of one library folder that are listed in its bks.csv and present."""
    folder, suffix = root / lib, ".dat" if lib == "qaplib" else ".tsp"
    table = folder / "bks.csv"
    if not table.is_file():
        return []
    with open(table, newline="") as handle:
        rows = list(csv.DictReader(handle))
    out = []
    for row in rows:
        path = folder / f"{row['name']}{suffix}"
        if path.is_file():
            out.append({"name": row["name"], "n": int(row["n"]), "path": str(path), "lib": lib,
                        "optimal": row.get("optimal", "").strip().lower() == "true"})
    return out


def plot(rows_by_lib: dict[str, list[dict]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import NullFormatter, ScalarFormatter

    libs = [lib for lib, rows in rows_by_lib.items() if any(r.get("mean_gap_%") is not None for r in rows)]
    if not libs:
        return
    fig, axes = plt.subplots(1, len(libs), figsize=(5.6 * len(libs), 4.2), squeeze=False)
    for ax, lib in zip(axes[0], libs, strict=True):
        rows = [r for r in rows_by_lib[lib] if r.get("mean_gap_%") is not None]
        ax.scatter([r["n"] for r in rows], [r["mean_gap_%"] for r in rows], s=14, label="mean over seeds")
        ax.scatter([r["n"] for r in rows], [r["best_gap_%"] for r in rows], s=10, marker="x", label="best seed")
        ax.set_xscale("log")
        ax.xaxis.set_major_formatter(ScalarFormatter())
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_xlabel("n (log scale)")
        ax.set_ylabel("gap to best known (%)")
        ax.set_title(f"{'QAPLIB' if lib == 'qaplib' else 'TSPLIB'}: {len(rows)} instances", fontsize=10)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    print(f"wrote {path}")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """The command-line options, with the defaults of the mode (full or ``--quick``) filled in."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="six small instances, about a second each (smoke test)")
    ap.add_argument("--library", choices=("qaplib", "tsplib", "both"), default="both")
    ap.add_argument("--instances", default=None, help="comma-separated subset of names")
    ap.add_argument("--max-n", type=int, default=None)
    ap.add_argument("--seeds", type=int, default=None, help="seeds per instance (default 3; quick 2)")
    ap.add_argument("--base-seconds", type=float, default=None,
                    help="B of the size-scaled budget (default 10; quick 1)")
    ap.add_argument("--small-qap-seconds", type=float, default=None,
                    help=f"least budget of QAP instances with n <= {SMALL_QAP} (default 30; quick none)")
    ap.add_argument("--epoch-seconds", type=float, default=None, help="epoch length (default 1; quick 0.5)")
    ap.add_argument("--out", type=Path, default=None,
                    help=f"output folder (default {RESULTS}; --quick: a temporary folder)")
    args = ap.parse_args(argv)
    args.out = out_folder(args.out, args.quick)
    if args.quick:
        args.instances = args.instances or ",".join(QUICK)
    args.base_seconds = args.base_seconds or (1.0 if args.quick else 10.0)
    if args.small_qap_seconds is None:
        args.small_qap_seconds = 0.0 if args.quick else 30.0
    args.seeds = args.seeds or (2 if args.quick else 3)
    args.epoch_seconds = args.epoch_seconds or (0.5 if args.quick else 1.0)
    return args


def select_entries(root: Path, libs: tuple[str, ...], args: argparse.Namespace) -> list[dict]:
    """The instances of the libraries, narrowed by ``--instances`` (names not present are
    reported) and ``--max-n``."""
    entries = [e for lib in libs for e in library(root, lib)]
    if args.instances:
        wanted = split_names(args.instances)
        unknown = [w for w in wanted if w not in {e["name"] for e in entries}]
        if unknown:
            log(f"quality: not present (skipped): {', '.join(unknown)}")
        entries = [e for e in entries if e["name"] in wanted]
    if args.max_n:
        entries = [e for e in entries if e["n"] <= args.max_n]
    return entries


def seconds_for(e: dict, base: float, small: float) -> float:
    """The size-scaled budget, at least ``small`` for QAP instances with n <= SMALL_QAP."""
    kind = "qap" if e["lib"] == "qaplib" else "tsp"
    b = budget_seconds(kind, e["n"], base)
    return max(b, small) if kind == "qap" and e["n"] <= SMALL_QAP else b


def run_instance(e: dict, args: argparse.Namespace) -> tuple[dict, list]:
    """Every seed on one instance, stopping at its best-known value: the summary row and the runs."""
    entry = best_known(e["name"], e["n"])
    seconds = seconds_for(e, args.base_seconds, args.small_qap_seconds)
    runs = [solve_run(e["path"], config=e["name"], strategy="auto", seconds=seconds, seed=s,
                      epoch_seconds=args.epoch_seconds, target="bks" if entry else None) for s in range(args.seeds)]
    for r in runs:
        r.instance = e["name"]
    ref = entry.value if entry else None
    row = summarise(runs, ref, "bks" if ref is not None else "", 0.0 if ref is not None else None)
    row.update({"instance": e["name"], "n": e["n"], "best_known": ref, "optimal": e["optimal"],
                "reached_bks": row.get("reached"), "time_to_bks_s": row.get("time_to_target_s")})
    return row, runs


def small_qap_note(rows: list[dict]) -> str:
    """The QAP instances with n <= SMALL_QAP that missed their best-known value in some seed."""
    misses = [r for r in rows if r["n"] <= SMALL_QAP
              and (r.get("reached_bks") is None or r["reached_bks"].split("/")[0] != r["reached_bks"].split("/")[1])]
    return (f"QAP instances with n <= {SMALL_QAP} that missed their best-known value in some seed: "
            + (", ".join(f"{r['instance']} ({r.get('reached_bks') or r['status']}, budget {r['budget_s']} s)"
                         for r in misses) or "none"))


def settings_line(args: argparse.Namespace) -> str:
    return (f"settings: strategy auto, {args.seeds} seed(s), budget B = {args.base_seconds} s (QAP B*n/50, "
            f"TSP B*n/1000, clipped to [B/2, 10B]; QAP n <= {SMALL_QAP} at least {args.small_qap_seconds} s), "
            f"stop at the best-known value, epochs of {args.epoch_seconds} s")


def write_report(args: argparse.Namespace, head: list[str], rows_by_lib: dict[str, list[dict]], all_runs: list,
                 small_note: str) -> None:
    """A table per library, the table of every run and the gap-against-n figure under ``args.out``."""
    suffix = "_quick" if args.quick else ""
    per_library = "" if args.library == "both" else f"_{args.library}"  # quality_runs_qaplib beside quality_qaplib
    titles = {"qaplib": "QAPLIB: gap to the best-known value", "tsplib": "TSPLIB: gap to the best-known value"}
    for lib, rows in rows_by_lib.items():
        if rows:
            extra = [small_note] if lib == "qaplib" else []
            write_table(rows, COLUMNS, f"quality_{lib}{suffix}", head + extra, args.out, titles[lib])
    write_table(run_rows(all_runs, {"qap": 0.0, "tsp": 0.0}),
                [c for c in RUN_COLUMNS if c not in ("group", "config", "time_to_target_s")],
                f"quality_runs{per_library}{suffix}", head, args.out, "Quality: every run")
    plot(rows_by_lib, args.out / f"quality_gap_vs_n{per_library}{suffix}.png")


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    root = need_instances("quality")
    libs = ("qaplib", "tsplib") if args.library == "both" else (args.library,)
    entries = select_entries(root, libs, args)
    if not entries:
        sys.exit("quality: no instance selected")
    one_thread_in_process()
    warm_pool(auto_workers())
    total = sum(seconds_for(e, args.base_seconds, args.small_qap_seconds) for e in entries) * args.seeds
    log(f"quality: {len(entries)} instances x {args.seeds} seeds, at most {total:.0f} s of search "
        "(runs stop at the best-known value)")
    head = run_header(settings_line(args))
    rows_by_lib: dict[str, list[dict]] = {lib: [] for lib in libs}
    all_runs = []
    for e in entries:
        row, runs = run_instance(e, args)
        rows_by_lib[e["lib"]].append(row)
        all_runs += runs
    small_note = small_qap_note(rows_by_lib.get("qaplib", []))
    write_report(args, head, rows_by_lib, all_runs, small_note)
    print(small_note)


if __name__ == "__main__":
    main()
