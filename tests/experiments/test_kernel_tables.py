"""The resource and expected-speed tables (experiments/kernel_resources.py, experiments/gpu_model.py):
each script runs and writes its table; the model's bound is the smallest of its bounds."""

from __future__ import annotations

import csv
import subprocess
import sys
from pathlib import Path

import pytest

from metaheur.engine import sm90
from metaheur.engine.catalogue import kernel_tables

EXPERIMENTS = Path(__file__).resolve().parents[2] / "experiments"
pytestmark = pytest.mark.gpusim


def _run(script: str, out: Path) -> list[dict]:
    proc = subprocess.run([sys.executable, str(EXPERIMENTS / script), "--quick", "--out", str(out)],
                          capture_output=True, text=True, timeout=1800)
    assert proc.returncode == 0, proc.stderr[-3000:]
    stem = Path(script).stem
    assert (out / f"{stem}.md").read_text().startswith("# ")
    with open(out / f"{stem}.csv", newline="") as handle:
        return list(csv.DictReader(handle))


def test_gpu_model_table(tmp_path):
    rows = _run("gpu_model.py", tmp_path)
    kernels = {r["kernel"] for r in rows}
    # every kernel a GPU island launches in a search step is modelled
    assert {"qap_delta_update", "qap_tabu_run", "qap_tabu_stream", "qap_delta_update_stream", "tsp_2opt_cand",
            "tsp_oropt_cand", "tsp_2opt_full", "tsp_oropt_full", "tsp_apply_best", "tsp_best_at", "tsp_apply_disjoint",
            "tsp_dlb_best_at", "tsp_dlb_apply",
            "tsp_eax", "tsp_ils_run"} <= kernels
    for r in rows:
        bounds = [float(r[c]) for c in ("bw_bound_per_s", "int_bound_per_s", "fp64_bound_per_s", "latency_bound_per_s")
                  if r[c] != "-"]
        assert float(r["bound_per_s"]) == min(bounds), r["kernel"]
        if r["memory"] == "DRAM":
            assert float(r["bw_bound_per_s"]) == pytest.approx(4.8e12 / float(r["bytes"]), rel=1e-2)


def test_kernel_resources_table(tmp_path):
    kind, detail, _ = sm90.gpu_compiler()
    if not kind:
        pytest.skip(detail)
    rows = _run("kernel_resources.py", tmp_path)
    launched = {(r["file"], r["kernel"]) for r in rows if "(tests)" not in r["largest_block"]}
    assert launched == set(kernel_tables().launches)
    for r in rows:
        if r["registers"]:  # a kernel the compiler reported on
            assert r["occupancy"] != "does not fit", r
