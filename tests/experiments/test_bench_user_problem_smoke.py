"""experiments/bench_user_problem.py runs and writes its table (a quick run on a generated QAP)."""

from __future__ import annotations

import csv
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "experiments" / "bench_user_problem.py"


def test_the_benchmark_writes_its_table(tmp_path):
    proc = subprocess.run([sys.executable, str(SCRIPT), "--quick", "--instances", "gen:qap:12:1", "--out",
                           str(tmp_path)], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    with open(tmp_path / "bench_user_problem.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == 1 and rows[0]["n"] == "12"
    assert all(float(rows[0][f"{form}_iters_per_s"]) > 0 for form in ("builtin", "cached", "pair"))
    assert (tmp_path / "bench_user_problem.md").read_text().startswith("# Generic engine")
