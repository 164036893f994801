"""The linear ordering benchmark (experiments/bench_lop.py) made in parts: its plan, its resume and
its summary, in-process with a stand-in for the runs (no solve, no yardstick)."""

from __future__ import annotations

import sys
from pathlib import Path

EXPERIMENTS = Path(__file__).resolve().parents[2] / "experiments"
sys.path.insert(0, str(EXPERIMENTS))

from bench_lop import RUN_COLUMNS, earlier, run_in_parts, versus_plan, versus_summary  # noqa: E402
from lib.report import commit, cpu_model, write_table  # noqa: E402

BKS = {"a_150": {"set": "xLOLIB", "n": 150, "value": 1000}, "b_150": {"set": "xLOLIB", "n": 150, "value": 2000},
       "c_300": {"set": "xLOLIB2", "n": 300, "value": 4000}, "io": {"set": "IO", "n": 50, "value": 10}}


def _run(item) -> dict:
    seed, seconds, label, name = item
    best = BKS[name]["value"]
    ours, theirs = best - 1 - seed, best - 4
    return {"set": label, "instance": name, "n": BKS[name]["n"], "seconds": seconds, "seed": seed, "best_known": best,
            "metaheur": ours, "metaheur_gap_%": round(100 * (best - ours) / best, 4), "metaheur_wall_s": seconds,
            "lop_ils": theirs, "lop_ils_gap_%": round(100 * (best - theirs) / best, 4), "lop_ils_iterations": 1,
            "load": 1.0, "commit": "abc"}


def _key(item) -> tuple:
    return item[3], item[1], item[0]


def test_the_plan_runs_one_seed_of_every_set_and_time_first():
    plan = versus_plan(BKS, ["xLOLIB150", "xLOLIB2"], [10.0, 60.0], 2, None)
    assert len(plan) == 2 * 2 * 3
    assert [p[0] for p in plan] == [0] * 6 + [1] * 6
    assert plan[:3] == [(0, 10.0, "xLOLIB150", "a_150"), (0, 10.0, "xLOLIB150", "b_150"), (0, 10.0, "xLOLIB2", "c_300")]
    assert versus_plan(BKS, ["xLOLIB150"], [10.0], 1, ["b_150", "c_300"]) == [(0, 10.0, "xLOLIB150", "b_150")]


def test_a_resumed_table_runs_only_the_missing_runs_and_summarises_every_run_done(tmp_path):
    plan = versus_plan(BKS, ["xLOLIB150", "xLOLIB2"], [10.0, 60.0], 2, None)
    done: dict = {}
    saves = []
    run_in_parts(plan[:4], _key, _run, done, None, lambda: saves.append(len(done)))
    assert saves == [1, 2, 3, 4]
    assert {(r["commit"], r["cpu"]) for r in done.values()} == {(commit(), cpu_model())}
    write_table(list(done.values()), RUN_COLUMNS, "runs", ["settings: test"], tmp_path, "LOP", echo=False)

    again = earlier(tmp_path / "runs.csv", ("instance", "seconds", "seed"))
    assert set(again) == {_key(p) for p in plan[:4]}
    ran = []
    run_in_parts(plan[:6], _key, lambda item: ran.append(item) or _run(item), again, None, lambda: None)
    assert ran == plan[4:6]

    table = {(r["instance"], r["seconds"]): r for r in versus_summary(again, plan)}
    first = table["xLOLIB150", 10.0]
    assert (first["runs"], first["status"]) == ("2/4", "partial")
    assert first["metaheur_mean_gap_%"] == round((0.1 + 0.05) / 2, 4)
    assert first["lop_ils_mean_gap_%"] == round((0.4 + 0.2) / 2, 4)
    assert first["ratio"] == round(0.075 / 0.3, 3) and first["metaheur_at_bks"] == "0/2"
    assert (table["xLOLIB2", 60.0]["runs"], table["xLOLIB2", 60.0]["status"]) == ("1/2", "partial")
    assert table["xLOLIB2", 10.0]["status"] == "partial"
    assert "metaheur_mean_gap_%" not in versus_summary({}, plan)[0]
    assert versus_summary({}, plan)[0]["status"] == "missing"
