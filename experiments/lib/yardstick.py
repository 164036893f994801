"""The rots.c yardstick (Taillard's robust tabu search, shared/yardsticks/rots.c next to the
repository, or $METAHEUR_YARDSTICK): building it, running it, and its best of one run per core."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

from metaheur.devices import cpu_count
from metaheur.problems.qap.tabu import yardstick_start

YARDSTICK = Path(__file__).resolve().parents[3] / "shared" / "yardsticks" / "rots.c"


def find_yardstick() -> Path | None:
    """shared/yardsticks/rots.c (or $METAHEUR_YARDSTICK) when present."""
    source = Path(os.environ.get("METAHEUR_YARDSTICK", YARDSTICK))
    return source if source.is_file() else None


def build_rots(workdir: Path) -> Path:
    source = find_yardstick()
    if source is None:
        sys.exit(f"{Path(sys.argv[0]).stem}: yardstick {os.environ.get('METAHEUR_YARDSTICK', YARDSTICK)} not found "
                 "(set METAHEUR_YARDSTICK)")
    exe = workdir / "rots"
    subprocess.run(["gcc", "-O3", "-march=native", "-o", str(exe), str(source)], check=True)
    return exe


rots_start = yardstick_start  # the yardstick's start (kept under the name the scripts use)


def run_rots(exe: Path, path: str, iterations: int, seed: int) -> dict:
    out = subprocess.run([str(exe), path, str(iterations), str(seed)], capture_output=True, text=True, check=True)
    values = dict(re.findall(r"(\w+)=([\d.]+)", out.stdout))
    return {"best": int(values["best"]), "iters": int(values["iters"]), "seconds": float(values["seconds"])}


def rots_best_of_cores(exe: Path, path: str, seconds: float, seed: int, cores: int | None = None) -> dict:
    """rots.c once per core at the same time (seeds cores*seed+1 ...), each with the iterations it
    does in ``seconds`` at its measured speed (a 5000-iteration probe); the best of them."""
    from concurrent.futures import ThreadPoolExecutor

    cores = cores or cpu_count()
    probe = run_rots(exe, path, 5000, 1)
    iterations = max(1000, int(seconds * probe["iters"] / max(probe["seconds"], 1e-6)))
    t0 = time.perf_counter()
    with ThreadPoolExecutor(cores) as pool:
        seeds = [cores * seed + 1 + i for i in range(cores)]
        runs = list(pool.map(lambda s: run_rots(exe, path, iterations, s), seeds))
    wall = time.perf_counter() - t0
    return {"best": min(r["best"] for r in runs), "iters": sum(r["iters"] for r in runs), "wall_s": wall,
            "iterations_each": iterations, "runs": len(runs)}


def have_gcc() -> bool:
    return shutil.which("gcc") is not None
