"""experiments/gpu_session.sh, the prepared GPU session, rehearsed on a simulated device with tiny
sizes (``--simulated --tiny``): every part runs and writes its table, ncu's part runs through a
stand-in ncu (no CPU machine has one), and at most 8 files reach OUTDIR, as a device call
brings back. Its timings are those of the CPU build and are not checked."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "experiments" / "gpu_session.sh"
pytestmark = pytest.mark.gpusim

#: ncu as the session calls it, standing in for Nsight Compute: it runs the profiled command
#: (everything from the Python on) and prints a report line, so the part's commands are rehearsed
FAKE_NCU = """#!/bin/sh
if [ "$1" = "--version" ]; then echo "NVIDIA (R) Nsight Compute Command Line Profiler (stand-in)"; exit 0; fi
kernel=""
while [ $# -gt 0 ] && [ "$1" != "$PYTHON" ]; do
    [ "$1" = "--kernel-name" ] && kernel=$2
    shift
done
[ $# -gt 0 ] || { echo "stand-in ncu: no command" >&2; exit 2; }
"$@" || exit $?
echo "==PROF== stand-in profile of $kernel"
"""


def run(*args: str, bin_dir: Path | None = None, cache: Path | None = None,
        timeout: float = 600) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("METAHEUR_SIMULATED")}
    env.pop("METAHEUR_NO_GPU", None)
    if bin_dir is not None:
        env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    if cache is not None:
        env["GPU_SESSION_CACHE"] = str(cache)
    return subprocess.run(["bash", str(SCRIPT), *args], text=True, timeout=timeout, capture_output=True,
                          env=env | {"PYTHON": sys.executable})


def test_the_rehearsal_runs_every_part_and_writes_every_table(tmp_path):
    out, bin_dir = tmp_path / "out", tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "ncu").write_text(FAKE_NCU)
    (bin_dir / "ncu").chmod(0o755)
    proc = run("--simulated", "--tiny", str(out), bin_dir=bin_dir, cache=tmp_path / "cache")
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-5000:]
    files = sorted(p.name for p in out.iterdir())
    assert files == ["chains.md", "kernels.md", "ncu.txt", "parts.md", "session.log", "strategies.md", "system.md",
                     "targets.md"]
    parts = [ln for ln in (out / "parts.md").read_text().splitlines() if ln.startswith("| ")][1:]
    assert len(parts) == 7 and all("| ok |" in ln for ln in parts), parts
    assert "Simulated GPUs" in (out / "parts.md").read_text()
    log = (out / "session.log").read_text()
    assert log.rstrip().endswith("results in " + str(out)), log[-500:]
    system = (out / "system.md").read_text()
    assert "[simulated]" in system and "ncu: " in system and "stand-in" in system
    ncu = (out / "ncu.txt").read_text()
    assert "stand-in profile of regex:qap_tabu" in ncu and "stand-in profile of regex:tsp_2opt_full" in ncu
    assert "stand-in profile of regex:tsp_2opt_cached" in ncu
    kernels = (out / "kernels.md").read_text()
    for kernel in ("classic", "stream"):  # the tabu kernels side by side
        assert f"| cuda:0 | {kernel} | gen:qap:12 | 12 | 8 |" in kernels
    for kernel in ("tsp_2opt_full", "tsp_2opt_cached"):  # the 2-opt kernels side by side, at the given tour counts
        assert any(ln.startswith(f"| {kernel} |") and "| cuda:0 |" in ln for ln in kernels.splitlines()), kernel
    for kernel in ("classic", "fused", "block"):  # the EAX generations side by side, the same populations
        assert f"| {kernel} | cuda:0 | 200 | 8 | 30 | 4 |" in kernels and kernels.count("| yes |") >= 3
    strategies = (out / "strategies.md").read_text()
    for instance in ("gen:qap:12", "gen:tsp:200", "gen:pfsp:20:5", "gen:lop:30"):
        for config in ("cpu-serial", "cpu-islands x2", "gpu", "hybrid"):
            assert any(instance in ln and f"| {config} |" in ln and "| ok |" in ln for ln in strategies.splitlines()), (
                instance, config)
    targets = [ln for ln in (out / "targets.md").read_text().splitlines() if ln.startswith("| ")][1:]
    assert len(targets) == 9 and all(ln.endswith(("| yes |", "| no |")) for ln in targets), targets
    assert not any("not measured" in ln for ln in targets), targets
    assert any((tmp_path / "cache" / "metaheur").rglob("*.so"))  # the caches are where the session said


def test_usage_mistakes_exit_2(tmp_path):
    assert run().returncode == 2
    assert run("--tiny", str(tmp_path)).returncode == 2
    assert run("--bogus", str(tmp_path)).returncode == 2
