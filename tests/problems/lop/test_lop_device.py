"""The LOP's device code on simulated GPUs with the fiber thread simulation: blocks of threads run
insert_row's and partial_insert_row's block scans (in several thread orders, which would reveal a
missing barrier), compared with numpy by check_problem."""

from __future__ import annotations

import numpy as np
import pytest

from metaheur.problem.permutation_check import check_problem
from metaheur.problems.lop import LOP, random_lop

pytestmark = pytest.mark.gpusim


@pytest.mark.parametrize("order", ["forward", "reverse", "random:3"])
@pytest.mark.parametrize("n", [5, 70, 130])
def test_lop_device_code_on_simulated_gpus(simulated, monkeypatch, n, order):
    monkeypatch.setenv("METAHEUR_SIMULATED_THREADS", "1")
    monkeypatch.setenv("METAHEUR_SIM_ORDER", order)
    lop = random_lop(n, n) if n != 5 else LOP(np.random.default_rng(0).integers(-9, 9, size=(5, 5)))
    report = check_problem(lop, devices=["cuda:0"], trials=3, seed=n)
    assert any(line.startswith("cuda:0: insert_row") for line in report.checks)
    assert any(line.startswith("cuda:0: partial_insert_row") for line in report.checks)


@pytest.mark.gpu
@pytest.mark.parametrize("n", [2, 33, 300])
def test_lop_device_code_on_a_real_gpu(n):
    """The NVRTC build of the LOP's device code (blocks of 64 threads) against numpy."""
    from metaheur.devices import gpu_devices

    gpus = [g for g in gpu_devices() if not g.simulated]
    if not gpus:
        pytest.skip("no CUDA device visible to CuPy (metaheur.devices.gpu_devices() is empty)")
    report = check_problem(random_lop(n, n), devices=[gpus[0].name], trials=6, seed=n)
    assert any(": insert_row" in line for line in report.checks)
