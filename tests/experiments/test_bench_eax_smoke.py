"""Smoke test of experiments/bench_eax.py --quick (GA-EAX and the ILS baseline, 1 s each): it runs
and writes the CSV and the Markdown table."""

from __future__ import annotations

import csv
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "experiments" / "bench_eax.py"


def test_bench_eax_quick(tmp_path):
    proc = subprocess.run([sys.executable, str(SCRIPT), "--quick", "--budget", "1", "--out", str(tmp_path),
                           "--name", "smoke", "--methods", "metaheur", "ga", "ils"], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = list(csv.DictReader((tmp_path / "smoke.csv").open()))
    assert {r["method"] for r in rows} == {"metaheur", "ga", "ils"}
    assert all(r["best"] for r in rows if float(r["seconds"]) >= 1 and r["method"] != "metaheur")
    md = (tmp_path / "smoke.md").read_text()
    assert "- command:" in md and "- machine:" in md and "| ga |" in md and "| ils |" in md
    assert "| metaheur |" in md


def test_bench_eax_runs_the_eax_kernels_side_by_side(tmp_path):
    proc = subprocess.run([sys.executable, str(SCRIPT), "--quick", "--budget", "1", "--out", str(tmp_path),
                           "--name", "kernels", "--methods", "ga", "ils", "--eax-kernel", "classic", "fused"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = list(csv.DictReader((tmp_path / "kernels.csv").open()))
    assert {r["method"] for r in rows} == {"ga[classic]", "ga[fused]", "ils"}
    md = (tmp_path / "kernels.md").read_text()
    assert "| ga[classic] |" in md and "| ga[fused] |" in md and "freq_s" in md
