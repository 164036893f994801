"""Smoke test of experiments/bench_kernels.py --quick: it runs, and writes a CSV and a Markdown table
with a header and rows for the CPU build and numpy."""

from __future__ import annotations

import csv
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "experiments" / "bench_kernels.py"


def test_bench_kernels_quick(tmp_path):
    proc = subprocess.run([sys.executable, str(SCRIPT), "--quick", "--out", str(tmp_path), "--label", "smoke"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    csv_path, md_path = tmp_path / "bench_kernels_smoke.csv", tmp_path / "bench_kernels_smoke.md"
    lines = csv_path.read_text().splitlines()
    header = [ln for ln in lines if ln.startswith("#")]
    assert any(ln.startswith("# command:") for ln in header) and any("numpy:" in ln for ln in header)
    assert any("compiler:" in ln for ln in header) and any(ln.startswith("# machine:") for ln in header)
    rows = list(csv.DictReader(ln for ln in lines if not ln.startswith("#")))
    backends = {r["backend"] for r in rows}
    assert {"cpu-1", "numpy"} <= backends
    kernels = {r["kernel"] for r in rows}
    assert {"qap_delta_full", "qap_delta_update", "qap_best_move", "tsp_2opt_cand", "tsp_oropt_cand",
            "tsp_2opt_full", "tsp_2opt_cached", "tsp_oropt_full", "tsp_oropt_cached", "neighbours"} <= kernels
    cached = [r for r in rows if r["kernel"].endswith("_cached")]  # the variants note their blocks a tour
    assert cached and all(r["note"].startswith("1 block(s) a tour") for r in cached)
    for r in rows:
        assert float(r["moves_per_s"]) > 0
        assert float(r["moves_per_s"]) * float(r["seconds_per_launch"]) == pytest.approx(
            float(r["moves_per_launch"]))
    md = md_path.read_text()
    assert "| kernel |" in md and "qap_delta_update" in md
    assert "wrote" in proc.stdout
