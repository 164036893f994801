"""Registers, spills and shared memory of every kernel variant on sm_90, and what they allow on an
H200 at the largest block the package launches (docs/gpu-model.md).

Each variant of the kernel tables (:func:`metaheur.engine.catalogue.kernel_tables`: the engine's
and every registered problem's) is compiled with the GPU build's options for
sm_90 with ptxas's verbose report (metaheur/engine/sm90.py: CuPy's NVRTC, else nvcc; compiles are
cached on disk, so a second run reads the logs). For each kernel: registers per thread, spill
stores + loads and stack frame (bytes per thread), static shared memory (bytes per block), its
launch bounds, the largest block the tables' launches name (kernels the package
does not launch: the largest block of the GPU tests, marked "tests"), and at that block the
resident blocks per SM, the occupancy (resident warps / 64), the share of those warps' lanes the
block uses (1 of 32 for one working thread), and what limits the resident blocks.

    python experiments/kernel_resources.py [--quick] [--out FOLDER]

The CSV table is package data, metaheur/engine/kernel_resources.csv (simulated devices answer
occupancy queries from it, installed or not: metaheur.engine.sm90.RESOURCE_TABLE); the Markdown
table goes to experiments/results/kernel_resources.md, where the docs show it. ``--out``: both
into FOLDER; ``--quick``: the first variant of each file only, into a temporary folder unless
``--out``.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "engine"))
sys.path.insert(1, str(Path(__file__).resolve().parents[1] / "tests"))  # kernel_helpers, which test_gpu imports
# the numpy oracles test_gpu imports (tests/problems/qap/qap_reference.py, tests/problems/tsp/tsp_reference.py)
sys.path.insert(2, str(Path(__file__).resolve().parents[1] / "tests" / "problems" / "qap"))
sys.path.insert(3, str(Path(__file__).resolve().parents[1] / "tests" / "problems" / "tsp"))

from lib.report import header, out_folder, write_table

from metaheur.engine import sm90
from metaheur.engine.catalogue import kernel_tables
from metaheur.engine.module import _normalise_defines
from metaheur.engine.shapes import threads
from metaheur.engine.source import load_source

#: The package's resource table in this checkout (metaheur.engine.sm90.RESOURCE_TABLE when installed).
PACKAGE_TABLE = Path(__file__).resolve().parents[1] / "metaheur" / "engine" / "kernel_resources.csv"
COLUMNS = ["kernel", "file", "variant", "registers", "spill_bytes", "stack_bytes", "shared_bytes", "launch_bounds",
           "largest_block", "blocks_per_sm", "occupancy", "lanes_used", "limited_by"]


def _test_blocks() -> dict[str, list]:
    from test_gpu import GPU_TSP_BLOCKS

    return {"tsp/tsp_moves.cu": GPU_TSP_BLOCKS}


def _limiter(res: sm90.KernelResources, nt: int) -> str:
    """Which per-SM limit sets the resident blocks (first of equals: threads, registers, shared)."""
    lim = sm90.LIMITS
    warps = -(-nt // 32)
    per_warp = -(-max(res.registers, 1) * 32 // lim.register_unit) * lim.register_unit
    counts = {"threads": lim.threads_per_sm // (warps * 32), "registers": lim.registers_per_sm // per_warp // warps,
              "shared": lim.shared_per_sm // (res.shared + lim.shared_reserved_per_block),
              "blocks": lim.blocks_per_sm}
    return min(counts, key=counts.get)


def rows(quick: bool) -> list[dict]:
    tests = _test_blocks()
    table = kernel_tables()
    out = []
    for name, variants in sorted(table.variants.items()):
        source = load_source(name)
        for defines in variants[:1] if quick else variants:
            label = " ".join(_normalise_defines(defines)) or "-"
            ok, log = sm90.compile_for_gpu(name, _normalise_defines(defines))
            found = sm90.resources(log) if ok else {}
            for kernel in sorted(source.signatures):
                row = {"kernel": kernel, "file": name, "variant": label}
                res = found.get(kernel)
                if res is None:
                    row["limited_by"] = "absent: " + (log.strip().splitlines()[-1] if log.strip() else "no report")
                    out.append(row)
                    continue
                blocks = table.launches.get((name, kernel))
                where = ""
                if not blocks:
                    blocks, where = tests.get(name, [(1,)]), " (tests)"
                largest = max(blocks, key=threads)
                nt = threads(largest)
                bounds = source.max_threads[kernel]
                fits = not sm90.launch_problems(kernel, res, bounds, [largest])
                row.update(registers=res.registers, spill_bytes=res.spill_stores + res.spill_loads,
                           stack_bytes=res.stack, shared_bytes=res.shared, launch_bounds=bounds,
                           largest_block="x".join(map(str, largest)) + where,
                           blocks_per_sm=sm90.blocks_per_sm(res, nt) if fits else 0,
                           occupancy=f"{sm90.occupancy(res, nt):.0%}" if fits else "does not fit",
                           lanes_used=f"{nt / (-(-nt // 32) * 32):.0%}",
                           limited_by=_limiter(res, nt) if fits else "; ".join(sm90.launch_problems(
                               kernel, res, bounds, [largest])))
                out.append(row)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="the first variant of each kernel file only")
    ap.add_argument("--out", type=Path, default=None,
                    help="folder of both tables (default: the CSV into metaheur/engine/, the Markdown into "
                         "experiments/results/)")
    args = ap.parse_args(argv)
    kind, detail, version = sm90.gpu_compiler()
    if not kind:
        print(f"kernel_resources: {detail}", file=sys.stderr)
        return 2
    lim = sm90.LIMITS
    head = header(f"compiler: {kind} ({version}), -arch={sm90.ARCH} {sm90.PTXAS_VERBOSE}; H200 per SM: "
                  f"{lim.registers_per_sm} registers, {lim.threads_per_sm} threads, {lim.blocks_per_sm} blocks, "
                  f"{lim.shared_per_sm // 1024} KB shared; occupancy = resident warps / 64")
    folder = out_folder(args.out, args.quick)
    csv_path, _ = write_table(rows(args.quick), COLUMNS, "kernel_resources", head, folder,
                              title="Kernel resources on sm_90 (H200)")
    if not args.out and not args.quick:  # the table the package reads
        os.replace(csv_path, PACKAGE_TABLE)
        print(f"kernel_resources: wrote {PACKAGE_TABLE}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
