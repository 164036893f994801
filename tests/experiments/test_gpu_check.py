"""experiments/gpu_check.sh, the GPU acceptance script, run on simulated devices with tiny sizes
(``--simulated --tiny``): every step passes and at most 8 files reach OUTDIR. Its timings are
those of the CPU build and are not checked."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "experiments" / "gpu_check.sh"
pytestmark = pytest.mark.gpusim


#: A tee that writes only once its input has ended, a moment later (a slow disk): a script that
#: returns before its log's tee has finished leaves the log incomplete or absent.
SLOW_TEE = """#!/bin/sh
buffer=$(mktemp)
cat > "$buffer"
sleep 0.5
"{tee}" "$@" < "$buffer"
rm -f "$buffer"
"""


def run(*args: str, timeout: float = 300, path: str | None = None, **kwargs) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("METAHEUR_SIMULATED")}
    env.pop("METAHEUR_NO_GPU", None)
    if path:
        env["PATH"] = path + os.pathsep + env.get("PATH", "")
    output = {"capture_output": True} if "stdout" not in kwargs else {}
    return subprocess.run(["bash", str(SCRIPT), *args], text=True, timeout=timeout,
                          env=env | {"PYTHON": sys.executable}, **output, **kwargs)


def test_the_simulated_acceptance_run_passes_every_step(tmp_path):
    """Every step passes; the log is complete when the script returns (its output here goes to a
    file, so nothing waits for the log's tee but the script itself), with the GPU's compute mode,
    the one-line compile and the slowest compilations submitted first."""
    out, bin_dir = tmp_path / "out", tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "tee").write_text(SLOW_TEE.format(tee=shutil.which("tee")))
    (bin_dir / "tee").chmod(0o755)
    with open(tmp_path / "stdout.txt", "w") as stdout:
        proc = run("--simulated", "--tiny", str(out), path=str(bin_dir), stdout=stdout, stderr=subprocess.STDOUT)
    printed = (tmp_path / "stdout.txt").read_text()
    assert proc.returncode == 0, printed[-5000:]
    log = (out / "gpu_check.log").read_text() if (out / "gpu_check.log").is_file() else ""
    assert log.rstrip().endswith("results in " + str(out)), log[-500:]
    assert "compute mode of GPU 0: Default (simulated)" in log
    assert "compile probe: a one-line kernel compiles and loads on cuda:0" in log
    assert "order: tsp/tsp_ils.cu, tsp/tsp_eax.cu, tsp/tsp_construct.cu, qap/qap_tabu.cu," in log
    files = sorted(p.name for p in out.iterdir())
    assert files == ["bench_kernels.md", "bench_search_gpu.md", "gpu_check.log", "gpu_tests.log", "solves.md",
                     "summary.md", "system.txt"]
    summary = (out / "summary.md").read_text()
    table = summary.split("## Steps")[1].split("## Targets")[0]
    steps = [line for line in table.splitlines() if line.startswith("| ")][1:]
    assert len(steps) == 13 and all("| ok |" in line for line in steps), summary
    assert "not measured" not in summary and "Simulated GPUs" in summary
    solves = [line for line in (out / "solves.md").read_text().splitlines() if line.startswith("| gen-")]
    assert len(solves) == 8 and all("cuda:0" in line for line in solves)
    assert "[simulated]" in (out / "system.txt").read_text()
    assert "2 passed" in (out / "gpu_tests.log").read_text()  # the gpu tests ran, on the simulated device


def test_usage_mistakes_exit_2(tmp_path):
    assert run().returncode == 2
    assert run("--tiny", str(tmp_path)).returncode == 2  # tiny sizes only on simulated devices
    assert run("--bogus", str(tmp_path)).returncode == 2
