"""The GPU targets of the round against what a GPU session measured: one row per target,
``| target | measured | goal | met |`` (``yes`` or ``no``; a target whose table is missing or
holds no GPU row is "not measured", not met).

Targets (issues of the QAP kernels, of the TSP and generic-engine kernels, and of the session):

* QAP tabu search, 1,024 searches of n = 100: >= 100x the CPU build on 2 cores
  (bench_search_gpu.csv, the best kernel); at 64 searches >= 3x today's kernel (``classic``) on the
  same machine;
* QAP delta update, 1,024 solutions of n = 100: >= 1e11 entries/s (bench_kernels_gpu.csv, the
  faster of qap_delta_update and its streaming variant);
* 2-opt over all pairs at n = 10,000: >= 2e11 moves/s, the best of the tour counts measured and
  of tsp_2opt_full and its cached variant (tsp_2opt_cached);
* the flow shop and the linear ordering problem: the GPU worth >= 40 cores, the tutorial's user
  problem >= 20 (iterations of the same search per second, the island's chains on the GPU against
  one core: engine_chains.csv);
* hybrid (the GPU and the other cores) reaching a lower mean gap than CPU islands on every core
  (16 on the GPU machine) at equal time on the QAP (n = 100) and the 10,000-city TSP
  (strategies.csv; Van Luong et al. 2012).

    python experiments/gpu_targets.py FOLDER [--qap-n 100] [--tsp-n 10000] [--batch 1024]
        [--kernels-only] [--out targets.md]

``--kernels-only``: the three kernel rows of experiments/gpu_check.sh.
"""

from __future__ import annotations

import argparse
import csv
import sys
from collections.abc import Callable
from pathlib import Path

TABU_RATIO, TABU_64_GAIN, DELTA_RATE, TWO_OPT_RATE = 100.0, 3.0, 1e11, 2e11
CORES_WORTH = {"flow shop": 40.0, "LOP": 40.0, "weighted tardiness (user)": 20.0}  # engine_chains.csv's problems
NOT_MEASURED = "not measured"
TODAY = "classic"  # the tabu kernel of the H200 run (qap_tabu_run), the one the new kernels must beat


def rows(folder: Path, name: str) -> list[dict]:
    """The rows of the CSV table ``name`` in ``folder`` (comment lines skipped), [] when absent."""
    path = folder / name
    if not path.is_file():
        return []
    with open(path) as f:
        return list(csv.DictReader(line for line in f if not line.startswith("#")))


def number(value: str | None) -> float | None:
    try:
        return None if value in (None, "") else float(value)
    except ValueError:
        return None


def picked(table: list[dict], column: str, best: Callable = max, **match) -> float | None:
    """The best (``best``) number of ``column`` among the rows matching ``match``."""
    found = [number(r.get(column)) for r in table if all(r.get(k) == str(v) for k, v in match.items())]
    found = [v for v in found if v is not None]
    return best(found) if found else None


def fastest(table: list[dict], kernels: tuple, **match) -> float | None:
    """The most moves per second of any of ``kernels`` (variants of one kernel) in the rows
    matching ``match``."""
    found = [v for v in (picked(table, "moves_per_s", kernel=k, **match) for k in kernels) if v is not None]
    return max(found) if found else None


def gpu(row: dict, key: str = "device") -> bool:
    return str(row.get(key, "")).startswith("cuda")


def kernel_targets(folder: Path, qap_n: int, tsp_n: int, batch: int) -> list[tuple[str, float | None, str, bool]]:
    """(target, measured, goal, met) of the QAP tabu search, the delta update and 2-opt."""
    kernels, tabu = rows(folder, "bench_kernels_gpu.csv"), rows(folder, "bench_search_gpu.csv")
    gpu_tabu = [r for r in tabu if gpu(r)]
    counts = sorted({int(r["searches"]) for r in gpu_tabu})
    searches = batch if batch in counts or not counts else counts[-1]  # else the largest batch measured
    ratio = picked(gpu_tabu, "vs_cpu_2_cores", searches=searches)
    delta = fastest(kernels, ("qap_delta_update", "qap_delta_update_stream"), n=qap_n, batch=batch, backend="cuda:0")
    two_opt = fastest(kernels, ("tsp_2opt_full", "tsp_2opt_cached"), n=tsp_n, backend="cuda:0")
    return [
        (f"QAP tabu search, {searches:,} searches of n = {qap_n}: iterations/s vs the CPU build on 2 cores",
         ratio, f">= {TABU_RATIO:g}", ratio is not None and ratio >= TABU_RATIO),
        (f"QAP delta update, {batch:,} solutions of n = {qap_n}: entries/s", delta, f">= {DELTA_RATE:g}",
         delta is not None and delta >= DELTA_RATE),
        (f"2-opt over all pairs at n = {tsp_n:,}: moves/s (best tour count)", two_opt, f">= {TWO_OPT_RATE:g}",
         two_opt is not None and two_opt >= TWO_OPT_RATE),
    ]


def tabu_64_gain(folder: Path) -> tuple[str, float | None, str, bool]:
    """The best kernel's rate at 64 searches over today's (``classic``), on the same machine (the
    table's ``variant`` column: TabuParams.kernel)."""
    table = [r for r in rows(folder, "bench_search_gpu.csv") if gpu(r) and r.get("searches") == "64"]
    rates = {r.get("variant", TODAY): number(r.get("iters_per_s")) for r in table}
    today = rates.get(TODAY)
    gain = max(v for v in rates.values() if v is not None) / today if today else None
    return ("QAP tabu search, 64 searches: iterations/s vs today's kernel on the same machine", gain,
            f">= {TABU_64_GAIN:g}", gain is not None and gain >= TABU_64_GAIN)


def chain_targets(folder: Path) -> list[tuple[str, float | None, str, bool]]:
    """The GPU worth in cores of the generic engine's chains: the island's chain count's row
    (the row with a verdict in engine_chains.csv)."""
    table = rows(folder, "engine_chains.csv")
    out = []
    for problem, goal in CORES_WORTH.items():
        mine = [r for r in table if r.get("problem") == problem and gpu(r) and r.get("met") in ("yes", "no")]
        worth = picked(mine, "cores_worth")
        size = next((r.get("n") for r in table if r.get("problem") == problem), "?")
        out.append((f"{problem}, n = {size}: the GPU worth (cores; the island's chains vs one core)", worth,
                    f">= {goal:g}", worth is not None and worth >= goal))
    return out


def hybrid_targets(folder: Path) -> list[tuple[str, float | None, str, bool]]:
    """Hybrid against the CPU islands on every core (the table's largest cpu-islands row) at equal
    time, on the QAP and the TSP of the comparison."""
    table = rows(folder, "strategies.csv")
    out = []
    for kind in ("QAP", "TSP"):
        mine = [r for r in table if r.get("problem") == kind and r.get("status") == "ok"]
        gaps = {r["config"]: number(r.get("mean_gap_%")) for r in mine}
        cpu_rows = [r for r in mine if r["config"].startswith("cpu-islands")]
        baseline = max(cpu_rows, key=lambda r: int(r.get("cores") or 0))["config"] if cpu_rows else "cpu-islands"
        hybrid, cpu = gaps.get("hybrid"), gaps.get(baseline)
        size = next((r.get("n") for r in mine), "?")
        measured = None if hybrid is None or cpu is None else hybrid - cpu
        out.append((f"{kind} n = {size}: hybrid's mean gap minus {baseline}'s at equal time (%)", measured,
                    "< 0", measured is not None and measured < 0))
    return out


def shown(value: float | None) -> str:
    return NOT_MEASURED if value is None else f"{value:.3g}"


def table(targets: list[tuple[str, float | None, str, bool]], met_column: bool = True) -> str:
    head = "| target | measured | goal |" + (" met |" if met_column else "")
    lines = [head, "|---|---|---|" + ("---|" if met_column else "")]
    for title, measured, goal, met in targets:
        verdict = f" {'yes' if met else 'no'} |" if met_column else ""
        lines.append(f"| {title} | {shown(measured)} | {goal} |{verdict}")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("folder", type=Path, help="the folder of the session's CSV tables")
    ap.add_argument("--qap-n", type=int, default=100)
    ap.add_argument("--tsp-n", type=int, default=10000)
    ap.add_argument("--batch", type=int, default=1024)
    ap.add_argument("--kernels-only", action="store_true", help="the three kernel rows (gpu_check.sh)")
    ap.add_argument("--out", type=Path, default=None, help="write the table there (else print it)")
    args = ap.parse_args(argv)
    targets = kernel_targets(args.folder, args.qap_n, args.tsp_n, args.batch)
    if not args.kernels_only:
        targets[1:1] = [tabu_64_gain(args.folder)]
        targets += chain_targets(args.folder) + hybrid_targets(args.folder)
    text = table(targets, met_column=not args.kernels_only)
    if args.out is None:
        sys.stdout.write(text)
    else:
        args.out.write_text(text)


if __name__ == "__main__":
    main()
