"""experiments/gpu_check.sh, the GPU acceptance script, run on simulated devices with tiny sizes
(``--simulated --tiny``): every step passes and at most 8 files reach OUTDIR. Its timings are
those of the CPU build and are not checked."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "experiments" / "gpu_check.sh"
pytestmark = pytest.mark.gpusim


def run(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("METAHEUR_SIMULATED")}
    env.pop("METAHEUR_NO_GPU", None)
    return subprocess.run(["bash", str(SCRIPT), *args], capture_output=True, text=True, timeout=timeout,
                          env=env | {"PYTHON": sys.executable})


def test_the_simulated_acceptance_run_passes_every_step(tmp_path):
    out = tmp_path / "out"
    proc = run("--simulated", "--tiny", str(out))
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    files = sorted(p.name for p in out.iterdir())
    assert files == ["bench_kernels.md", "bench_search_gpu.md", "gpu_check.log", "gpu_tests.log", "solves.md",
                     "summary.md", "system.txt"]
    summary = (out / "summary.md").read_text()
    table = summary.split("## Steps")[1].split("## Targets")[0]
    steps = [line for line in table.splitlines() if line.startswith("| ")][1:]
    assert len(steps) == 11 and all("| ok |" in line for line in steps), summary
    assert "not measured" not in summary and "Simulated GPUs" in summary
    solves = [line for line in (out / "solves.md").read_text().splitlines() if line.startswith("| gen-")]
    assert len(solves) == 6 and all("cuda:0" in line for line in solves)
    assert "[simulated]" in (out / "system.txt").read_text()
    assert "2 passed" in (out / "gpu_tests.log").read_text()  # the gpu tests ran, on the simulated device


def test_usage_mistakes_exit_2(tmp_path):
    assert run().returncode == 2
    assert run("--tiny", str(tmp_path)).returncode == 2  # tiny sizes only on simulated devices
    assert run("--bogus", str(tmp_path)).returncode == 2
