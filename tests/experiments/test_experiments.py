"""Smoke tests of the experiment scripts: each runs with --quick --out TMP as a subprocess, exits
0 and writes its CSV and Markdown tables (with the header saying how they were made) with the
expected columns. Scripts that read QAPLIB/TSPLIB files skip when METAHEUR_INSTANCES is unset
(conftest's instances_dir fixture); the others run on generated instances. A few tests call
the strategy comparison (experiments/lib/strategies.py) in-process.
No timing or quality is asserted: those are what the scripts measure."""

from __future__ import annotations

import csv
import os
import subprocess
import sys
from pathlib import Path

import pytest

EXPERIMENTS = Path(__file__).resolve().parents[2] / "experiments"
pytestmark = pytest.mark.slow

RUN_COLUMNS = {"instance", "n", "config", "seed", "status", "time_s", "cost", "gap_%", "ls_per_s",
               "time_to_best_s"}


def run(script: str, tmp_path: Path, *extra: str, timeout: float = 240) -> subprocess.CompletedProcess:
    proc = subprocess.run([sys.executable, str(EXPERIMENTS / script), "--quick", "--out", str(tmp_path), *extra],
                          capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, f"{script} exited {proc.returncode}:\n{proc.stdout[-2000:]}\n{proc.stderr[-4000:]}"
    return proc


def table(tmp_path: Path, stem: str, columns: set[str]) -> list[dict]:
    """Rows of STEM.csv, after checking both files and the columns."""
    csv_path, md_path = tmp_path / f"{stem}.csv", tmp_path / f"{stem}.md"
    made = sorted(p.name for p in tmp_path.iterdir())
    assert csv_path.is_file() and md_path.is_file(), f"{stem}.csv/.md missing: {made}"
    with open(csv_path, newline="") as handle:
        reader = csv.DictReader(handle)
        rows = list(reader)
        header = set(reader.fieldnames or [])
    assert columns <= header, f"{stem}.csv lacks {sorted(columns - header)}"
    assert rows, f"{stem}.csv has no rows"
    md = md_path.read_text()
    assert "- command: " in md and "- machine: " in md and "- settings: " in md
    assert "| instance |" in md or "| target |" in md
    return rows


def test_scripts_have_help():
    for script in ("strategies.py", "quality.py", "peers.py", "ablation.py", "bench_hybrid.py", "bench_atsp.py",
                   "bench_cvrp.py", "bench_lop.py", "lop_throughput.py"):
        proc = subprocess.run([sys.executable, str(EXPERIMENTS / script), "--help"], capture_output=True, text=True,
                              timeout=60)
        assert proc.returncode == 0 and "--quick" in proc.stdout and "--out" in proc.stdout, script


def test_strategies_quick(tmp_path):
    run("strategies.py", tmp_path)
    rows = table(tmp_path, "strategies_quick", {"instance", "config", "cores", "status", "ls_per_s", "speedup",
                                                "mean_gap_%", "time_to_target_s", "device_split"})
    configs = {r["config"] for r in rows}
    assert {"cpu-serial", "cpu-islands x1", "gpu", "hybrid"} <= configs
    for r in rows:
        if r["config"] in ("gpu", "hybrid"):
            assert r["status"] in ("ok", "absent: no GPU")
        else:
            assert r["status"] == "ok" and float(r["ls_per_s"]) > 0
    assert {r["speedup"] for r in rows if r["config"] == "cpu-serial"} == {"1.0"}
    table(tmp_path, "strategies_runs_quick", RUN_COLUMNS | {"time_to_target_s"})
    assert (tmp_path / "strategies_speedup_quick.png").stat().st_size > 1000


def test_ablation_quick(tmp_path):
    run("ablation.py", tmp_path)
    rows = table(tmp_path, "ablation_quick", {"instance", "group", "config", "status", "mean_gap_%", "best_gap_%",
                                              "ls_per_s", "note"})
    assert {r["group"] for r in rows} == {"hybridisation", "crossover", "topology", "interval", "restart"}
    configs = {r["config"] for r in rows}
    assert {"GA+LS (default)", "LS-only multistart", "GA-only (ls_budget=0)", "GA+LS islands only (ls_islands=0)",
            "cx", "pmx", "complete", "random", "every 10 epochs", "after 30 stale generations (default)",
            "after 100 stale generations", "never", "no migration (default)", "no migration"} <= configs
    eax = [r for r in rows if r["config"].startswith("eax")]
    assert eax and all(r["status"] in ("ok", "skipped") for r in eax)
    table(tmp_path, "ablation_runs_quick", RUN_COLUMNS | {"group"})


def test_bench_hybrid_quick(tmp_path):
    run("bench_hybrid.py", tmp_path)
    targets = table(tmp_path, "bench_hybrid_quick", {"target", "instance", "measured", "threshold", "verdict"})
    assert any(r["target"].startswith("cpu-islands") for r in targets)
    assert any(r["target"].startswith("dask_local") for r in targets)
    assert all(r["verdict"] in ("met", "not met", "not measured") for r in targets)
    table(tmp_path, "bench_hybrid_strategies_quick", {"config", "ls_per_s", "speedup", "time_to_target_s"})
    rows = table(tmp_path, "bench_hybrid_ablation_quick", {"config", "mean_gap_%", "ls_per_s"})
    assert {"GA+LS (default)", "LS-only multistart", "GA-only (ls_budget=0)"} <= {r["config"] for r in rows} <= {
        "GA+LS (default)", "LS-only multistart", "GA-only (ls_budget=0)", "GA+LS islands only (ls_islands=0)",
        "GA+LS, half tabu islands (ls_islands=1)"}
    rows = table(tmp_path, "bench_hybrid_dask_quick", {"config", "status", "ls_per_s", "ratio_to_loky"})
    assert {r["config"] for r in rows} >= {"loky"}
    assert (tmp_path / "bench_hybrid_speedup_quick.png").is_file()


@pytest.fixture
def lib(monkeypatch):
    """experiments/lib, imported in-process."""
    monkeypatch.syspath_prepend(str(EXPERIMENTS))
    import lib.backends
    import lib.strategies

    return lib


def test_strategy_comparison_takes_the_steady_workload_for_the_tsp(lib):
    """bench_hybrid's scaling runs give TSP islands a fixed population of 100 without restarts
    (lib.backends.steady_workload) and leave the QAP's GA at its default."""
    serial = [c for c in lib.strategies.strategy_configs(cores=1, gpus=0) if c.strategy == "cpu-serial"]
    _, runs = lib.strategies.compare_strategies(["gen:tsp:200", "gen:qap:12"], 1, lambda prob: 0.3, configs=serial,
                                                warm=False, ga_for=lib.backends.steady_workload)
    population = {run.problem: run.result.islands[0].population for run in runs}
    assert population == {"TSP": 100, "QAP": 20}


def test_strategy_comparison_runs_the_configurations_side_by_side(lib, monkeypatch):
    """Within each seed every configuration runs once before the next seed starts, so that a
    shared machine's drift falls on all of them alike."""
    order, solve_run = [], lib.strategies.solve_run
    monkeypatch.setattr(lib.strategies, "solve_run", lambda name, **kw: order.append((kw["config"], kw["seed"]))
                        or solve_run(name, **kw))
    configs = [c for c in lib.strategies.strategy_configs(cores=1, gpus=0) if c.strategy.startswith("cpu")]
    rows, _ = lib.strategies.compare_strategies(["gen:qap:12"], 2, lambda prob: 0.2, configs=configs, warm=False)
    labels = [c.label for c in configs]
    assert len(labels) == 2 and order == [(label, seed) for seed in (0, 1) for label in labels]
    assert [row["seeds"] for row in rows] == [2, 2]


def test_quality_quick(tmp_path, instances_dir):
    proc = run("quality.py", tmp_path)
    columns = {"instance", "n", "best_known", "best_gap_%", "mean_gap_%", "reached_bks", "time_to_bks_s",
               "time_to_best_s"}
    for lib in ("qaplib", "tsplib"):
        rows = table(tmp_path, f"quality_{lib}_quick", columns)
        assert all(r["status"] == "ok" and float(r["mean_gap_%"]) >= 0 for r in rows)
    table(tmp_path, "quality_runs_quick", RUN_COLUMNS - {"config"})
    assert (tmp_path / "quality_gap_vs_n_quick.png").is_file()
    assert "QAP instances with n <= 40" in proc.stdout


def test_bench_tsp_start_quick(tmp_path, instances_dir):
    run("bench_tsp_start.py", tmp_path, "--count", "2")
    members = table(tmp_path, "bench_tsp_start_members_quick", {"instance", "starts", "seconds_per_member",
                                                                 "mean_gap_%"})
    assert {r["starts"] for r in members} == {"random", "curve"}
    rows = table(tmp_path, "bench_tsp_start_quick", {"instance", "config", "first_generation_s", "gap_end_%"})
    assert {r["config"] for r in rows} == {"random-0.3", "auto"} and all(r["status"] == "ok" for r in rows)


def test_bench_tsp_large_quick(tmp_path, instances_dir):
    run("bench_tsp_large.py", tmp_path, "--seconds", "3")
    runs = table(tmp_path, "bench_tsp_large_runs_quick", {"instance", "method", "seconds", "seed", "cost", "gap_%",
                                                          "first_gen_s", "peak_gib"})
    ours = [r for r in runs if r["method"] == "metaheur"]
    assert len(ours) == 1 and ours[0]["status"] == "ok" and float(ours[0]["gap_%"]) >= 0
    assert float(ours[0]["first_gen_s"]) > 0 and float(ours[0]["peak_gib"]) > 0
    peer = next(r for r in runs if r["method"] == "fast_tsp")  # ran, or says why not
    assert peer["status"] == "ok" or peer["status"].startswith(("absent", "error")), peer
    rows = table(tmp_path, "bench_tsp_large_quick", {"instance", "method", "seconds", "mean_gap_%", "peak_gib"})
    assert {r["method"] for r in rows} == {"metaheur", "fast_tsp"}


def test_peers_quick(tmp_path, instances_dir):
    run("peers.py", tmp_path)
    columns = {"instance", "solver", "cores", "status", "wall_s", "best_gap_%", "mean_gap_%", "gap_ratio",
               "time_ratio", "note"}
    qap = table(tmp_path, "peers_qap_quick", columns)
    assert [r["solver"] for r in qap] == ["metaheur", "scipy-2opt", "scipy-faq", "rots.c"]
    assert qap[0]["status"] == "ok"
    tsp = table(tmp_path, "peers_tsp_quick", columns)
    assert [r["solver"] for r in tsp] == ["metaheur", "fast_tsp", "elkai", "ortools"]
    for r in tsp[1:]:  # a peer either ran or says why not
        assert r["status"] == "ok" or r["status"].startswith(("absent", "skipped")), r


def test_bench_lop_quick(tmp_path, instances_dir):
    """The --quick subset with 1 s runs: the per-set table, every run, the solved sets."""
    yardsticks = Path(os.environ.get("METAHEUR_YARDSTICKS") or EXPERIMENTS.parents[1] / "shared" / "yardsticks")
    if not (yardsticks / "lop_ils.c").is_file():
        pytest.skip(f"no lop_ils.c in {yardsticks} (set METAHEUR_YARDSTICKS)")
    run("bench_lop.py", tmp_path, "--times", "1", "--solved-seconds", "1", "--yardsticks", str(yardsticks))
    rows = table(tmp_path, "bench_lop_quick", {"instance", "n", "seconds", "metaheur_mean_gap_%",
                                               "lop_ils_mean_gap_%", "ratio"})
    assert [r["instance"] for r in rows] == ["xLOLIB150", "xLOLIB250", "xLOLIB2"]
    runs = table(tmp_path, "bench_lop_runs_quick", {"instance", "metaheur", "lop_ils", "best_known"})
    assert all(int(r["metaheur"]) <= int(r["best_known"]) and int(r["lop_ils"]) <= int(r["best_known"]) for r in runs)
    solved = table(tmp_path, "bench_lop_solved_quick", {"instance", "optimum", "value", "at_optimum", "time_s"})
    assert len(solved) == 4


def test_bench_lop_settings_only(tmp_path, instances_dir):
    """The settings table with --only: the labelled rows, a local-search setting among them."""
    run("bench_lop.py", tmp_path, "--settings", "be75eec_150", "--only",
        "default;ILS children, 2 kicks of 3 insertions;positions distance (Hamming)", "--times", "1")
    rows = table(tmp_path, "bench_lop_settings_1s", {"instance", "config", "runs", "mean_gap_%", "max_gap_%"})
    assert [r["config"] for r in rows] == ["default", "positions distance (Hamming)",
                                           "ILS children, 2 kicks of 3 insertions"]  # in SETTINGS' order


def test_lop_throughput_quick(tmp_path, instances_dir):
    yardsticks = Path(os.environ.get("METAHEUR_YARDSTICKS") or EXPERIMENTS.parents[1] / "shared" / "yardsticks")
    if not (yardsticks / "lop_ils.c").is_file():
        pytest.skip(f"no lop_ils.c in {yardsticks} (set METAHEUR_YARDSTICKS)")
    run("lop_throughput.py", tmp_path, "--yardsticks", str(yardsticks))
    rows = table(tmp_path, "lop_throughput_quick", {"instance", "n", "engine_kicks_per_s", "lop_ils_k3_per_s",
                                                     "children_per_s", "population_s"})
    assert [r["instance"] for r in rows] == ["be75eec_150"] and float(rows[0]["engine_kicks_per_s"]) > 0


def test_bench_atsp_quick(tmp_path, instances_dir):
    run("bench_atsp.py", tmp_path)
    rows = table(tmp_path, "bench_atsp_quick", {"instance", "n", "optimum", "median_length", "optimal_runs",
                                                "median_time_s"})
    assert [r["instance"] for r in rows] == ["br17", "ftv33"]
    versus = table(tmp_path, "bench_atsp_elkai_quick", {"instance", "n", "seconds", "elkai", "metaheur",
                                                        "metaheur_wall_s", "note"})
    assert versus[0]["instance"] == "gen:atsp:200:1"
    assert versus[0]["metaheur"] or versus[0]["note"].startswith("absent"), versus[0]  # it ran or says why not


def test_bench_cvrp_quick(tmp_path):
    """The routing tutorial's class against PyVRP: a value from the routes of each (or PyVRP's
    absence said), the gap of the two."""
    run("bench_cvrp.py", tmp_path, "--one-core")
    rows = table(tmp_path, "bench_cvrp_quick", {"instance", "n", "seconds", "pyvrp", "metaheur", "gap_%", "note",
                                                "metaheur_1core"})
    assert [r["instance"] for r in rows] == ["cvrp30-1"] and int(rows[0]["metaheur"]) > 0
    assert int(rows[0]["metaheur_1core"]) > 0
    if rows[0]["pyvrp"]:
        gap = 100 * (int(rows[0]["metaheur"]) - int(rows[0]["pyvrp"])) / int(rows[0]["pyvrp"])
        assert float(rows[0]["gap_%"]) == round(gap, 2)
    else:
        assert rows[0]["note"].startswith("PyVRP absent"), rows[0]


def test_bench_descent_quick(tmp_path):
    run("bench_descent.py", tmp_path, "--sizes", "300", "--limit", "20")
    with open(tmp_path / "bench_descent_quick.csv", newline="") as handle:
        rows = {(r["start"], r["moves"]): r for r in csv.DictReader(handle)}
    assert set(rows) == {(s, m) for s in ("random", "curve") for m in ("one", "several", "dlb")}
    assert all(r["stop"] == "local optimum" and int(r["length"]) < int(r["start_length"]) for r in rows.values())
    assert int(rows["curve", "several"]["passes"]) < int(rows["random", "one"]["passes"])
    assert int(rows["curve", "dlb"]["passes"]) < int(rows["random", "one"]["passes"])
    assert "- settings: " in (tmp_path / "bench_descent_quick.md").read_text()


def test_dlb_lists_quick(tmp_path):
    """The dlb pass's counts: its replay of the claims takes the kernel's moves (checked in the
    script), the lists look at fewer positions a pass than there are, both rules end the descent."""
    run("dlb_lists.py", tmp_path)
    with open(tmp_path / "dlb_lists_quick.csv", newline="") as handle:
        rows = {r["start"]: r for r in csv.DictReader(handle)}
    assert set(rows) == {"random", "curve"}
    for r in rows.values():
        assert 1 <= int(r["full_passes"]) < int(r["passes"]) and float(r["looked/pass"]) < int(r["n"])
        assert float(r["moves/pass"]) <= float(r["improving/pass"]) and float(r["rounds/pass"]) >= 1
        assert int(r["length"]) > 0 and int(r["classic_length"]) > 0
    assert "- settings: " in (tmp_path / "dlb_lists_quick.md").read_text()


def fake_run(lib, sense: str, cost: int, history: list[tuple[float, int]], best_known: int | None = None):
    """A Run of lib.runs around a stand-in result: its sense, value, best known and (time, global_best) rows."""
    from types import SimpleNamespace

    rows = [SimpleNamespace(time_s=t, global_best=best, island=0, ls_iterations=1, busy_s=1.0) for t, best in history]
    result = SimpleNamespace(sense=sense, cost=cost, best_known=best_known, history=rows, time_s=1.0,
                             search_iterations=1, generations=1, islands=[], device_loads=[])
    return lib.runs.Run("fake", 3, "LOP" if sense == "max" else "QAP", "c", "cpu-serial", None, 0, 1.0, result=result)


def test_gap_reference_and_time_to_cost_follow_the_sense(lib):
    """A maximisation's reference is the greatest value seen, its gaps are >= 0 below it and its
    target is reached from below; a minimisation's the other way round."""
    runs = lib.runs
    high = fake_run(lib, "max", 200, [(1.0, 150), (2.0, 198), (3.0, 200)])
    low = fake_run(lib, "max", 180, [(1.0, 180)])
    assert runs.reference([high, low]) == (200, "best seen")
    assert runs.reference([fake_run(lib, "max", 180, [], best_known=210)]) == (210, "bks")
    assert runs.gap_to(180, 200, "max") == pytest.approx(10.0) and runs.gap_to(200, 200, "max") == 0.0
    assert runs.gap_to(220, 200, "min") == pytest.approx(10.0)
    assert runs.time_to_cost(high.result, 198) == 2.0 and runs.time_to_cost(high.result, 201) is None
    assert runs.time_to_target(high.result, 200, 1.0) == 2.0  # 198 is within 1 % below 200
    row = runs.summarise([high, low], 200, "best seen", 1.0)
    assert row["best_cost"] == 200 and row["mean_gap_%"] == pytest.approx(5.0) and row["best_gap_%"] == 0.0
    assert row["reached"] == "1/2" and row["time_to_target_s"] == runs.NOT_REACHED  # median of 2.0 and never
    assert runs.summarise([high], 200, "best seen", 1.0)["time_to_target_s"] == 2.0
    fast = fake_run(lib, "min", 100, [(1.0, 130), (2.0, 101), (4.0, 100)])
    slow = fake_run(lib, "min", 120, [(1.0, 120)])
    assert runs.reference([fast, slow]) == (100, "best seen")
    assert runs.time_to_cost(fast.result, 101) == 2.0 and runs.time_to_target(fast.result, 100, 1.0) == 2.0
    assert runs.summarise([fast, slow], 100, "best seen", 1.0)["best_cost"] == 100


def test_a_maximisation_run_has_gaps_and_targets_in_its_sense(lib):
    """A real linear ordering run (maximised): its history holds values, it is the reference of
    its own table, at gap 0 and reaching the target."""
    run = lib.runs.solve_run("gen:lop:20", config="cpu-serial", strategy="cpu-serial", seconds=0.5, seed=0,
                             epoch_seconds=0.25, quiet=True)
    assert run.ok and run.result.sense == "max"
    assert max(row.global_best for row in run.result.history) == run.result.cost > 0
    (row,) = lib.runs.run_rows([run])
    assert row["reference"] == run.result.cost and row["gap_%"] == 0.0
    assert row["time_to_target_s"] != lib.runs.NOT_REACHED and row["time_to_best_s"] is not None


def test_cpu_islands_selects_the_configurations(lib, monkeypatch):
    """--cpu-islands K1,K2 runs cpu-serial, cpu-islands xK1, xK2, gpu and hybrid; without it
    cpu-islands x1 .. all cores, capped by --max-cores."""
    labels = [c.label for c in lib.strategies.strategy_configs(cores=4, gpus=0, islands=[16])]
    assert labels == ["cpu-serial", "cpu-islands x16", "gpu", "hybrid"]
    labels = [c.label for c in lib.strategies.strategy_configs(cores=4, gpus=0, max_cores=2)]
    assert labels == ["cpu-serial", "cpu-islands x1", "cpu-islands x2", "gpu", "hybrid"]
    import strategies

    args = strategies.parse_args(["--cpu-islands", "2,16", "--pfsp", "gen:pfsp:20:5", "--lop", "gen:lop:30"])
    assert args.cpu_islands == [2, 16] and args.target_gap_lop == 0.5 and args.target_gap_pfsp == 1.0
    assert strategies.instance_names(args)[-2:] == ["gen:pfsp:20:5", "gen:lop:30"]
    assert strategies.instance_names(strategies.parse_args(["--quick"])) == ["gen:qap:20", "gen:tsp:200"]
    with pytest.raises(SystemExit):
        strategies.parse_args(["--cpu-islands", "0"])


def test_engine_chains_quick(tmp_path, monkeypatch):
    """One core and a simulated GPU of 2 multiprocessors: per problem the one-core rows (classic,
    warp; the classic kernels' scans by warps too for the LOP over swaps, whose scans take pair
    deltas), then for each layout the GPU rows (one chain, the island's, one wave), the island's
    row judged against the target; the warp layout's flow-shop island runs more chains a
    multiprocessor than the classic one."""
    monkeypatch.setenv("METAHEUR_SIMULATED_GPUS", "1")
    monkeypatch.setenv("METAHEUR_SIMULATED_GPU_SMS", "2")
    run("engine_chains.py", tmp_path, timeout=180)
    rows = table(tmp_path, "engine_chains", {"problem", "n", "method", "kernel", "scan", "device", "chains",
                                             "chains_per_sm", "iterations", "seconds", "iters_per_s", "cores_worth",
                                             "target", "met"})
    problems = ["flow shop", "LOP", "LOP, swaps", "weighted tardiness (user)"]
    layouts = {p: [("classic", "row"), ("warp", "row")] + ([("classic", "warps")] if p == "LOP, swaps" else [])
               for p in problems}
    cpu = [(r["problem"], r["kernel"], r["scan"]) for r in rows if r["device"].startswith("cpu")]
    assert cpu == [(problem, *layout) for problem in problems for layout in layouts[problem]]
    for problem in problems:
        for kernel, scan in layouts[problem]:
            gpu = [r for r in rows if r["problem"] == problem and r["device"] == "cuda:0" and r["kernel"] == kernel
                   and r["scan"] == scan]
            chains = [int(r["chains"]) for r in gpu]
            assert chains[0] == 1 and len(chains) >= 2 and chains == sorted(set(chains)), gpu
            assert sum(r["met"] in ("yes", "no") for r in gpu) == 1
    island = {r["kernel"]: float(r["chains_per_sm"]) for r in rows if r["problem"] == "flow shop" and r["met"]}
    assert island["classic"] == 1 and island["warp"] > 1, island
    assert all(r["status"] == "ok" and int(r["iterations"]) > 0 and float(r["iters_per_s"]) > 0 for r in rows)
