"""Every GPU launch the package makes in a solve uses a block shape of the kernel tables
(metaheur/engine/catalogue.py), the tables the resource check holds against an H200's limits."""

from __future__ import annotations

import pytest
from test_simulated_islands import QAP12, TSP40, sync_solve

from metaheur.engine import module
from metaheur.engine.catalogue import kernel_tables
from metaheur.islands.params import GAParams
from metaheur.problems.tsp.params import EAXParams

pytestmark = pytest.mark.gpusim


def _full(block) -> tuple[int, int, int]:
    dims = (block,) if isinstance(block, int) else tuple(int(d) for d in block)
    return dims + (1,) * (3 - len(dims))


def test_gpu_launches_use_the_launch_table(simulated, monkeypatch):
    seen: set[tuple[str, str, tuple]] = set()
    launch = module.Kernel.__call__

    def record(self, grid, block, args, **kw):
        if self.module.device.is_gpu:
            seen.add((self.module.source_name, self.name, _full(block)))
        return launch(self, grid, block, args, **kw)

    monkeypatch.setattr(module.Kernel, "__call__", record)
    sync_solve(QAP12, strategy="gpu", generations=2)
    sync_solve(TSP40, strategy="gpu", generations=2)
    sync_solve(TSP40, strategy="gpu", generations=1, ga=GAParams(population=8, crossover="eax"),
               eax=EAXParams(tries=4))
    assert {name for _, name, _ in seen} >= {"qap_tabu_run", "tsp_eax"}
    launches = kernel_tables().launches
    outside = [(src, name, block) for src, name, block in seen
               if block not in {_full(b) for b in launches.get((src, name), ())}]
    assert not outside, f"GPU launches with shapes outside the kernel tables: {outside}"
