"""Builds of one kernel at once into one cold cache (processes and threads of them, as runs on
a shared machine and a run's islands do) each load a whole library: the cache never shows a
half-written one, and keeps no partial file (metaheur.engine.cpu_build._publish)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time

KERNEL = 'extern "C" __global__ void answer(int *out) { out[0] = 31827; }\n'

BUILDER = textwrap.dedent("""
    import sys, threading, time
    import numpy as np
    from metaheur.engine import cpu_build, load_module
    from metaheur.engine.source import load_source

    path, start = sys.argv[1], float(sys.argv[2])
    source = load_source(path)
    time.sleep(max(0.0, start - time.time()))  # every builder starts at once
    built = []
    threads = [threading.Thread(target=lambda: built.append(cpu_build.build(source, (), False)))
               for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    out = np.zeros(1, np.int32)
    load_module(path, "cpu").kernel("answer")(1, 1, (out,))
    print(len(built), len({b.path for b in built}), int(out[0]))
""")


def test_concurrent_builds_of_one_kernel_each_load_a_whole_library(tmp_path):
    kernel = tmp_path / "answer.cu"
    kernel.write_text(KERNEL)
    cache = tmp_path / "cache"
    start = time.time() + 3.0
    procs = [subprocess.Popen([sys.executable, "-c", BUILDER, str(kernel), str(start)], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env={**os.environ, "METAHEUR_CACHE_DIR": str(cache)})
             for _ in range(3)]
    for proc in procs:
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
        assert out.split() == ["2", "1", "31827"]
    files = sorted(p.name for p in (cache / "kernels").iterdir())
    assert len(files) == 1 and files[0].startswith("answer-") and files[0].endswith(".so"), files
