"""Fixtures of the generic engine's tests."""

import pytest

from metaheur.devices import gpu_devices


@pytest.fixture
def simulated_gpus(monkeypatch):
    """Two simulated CUDA devices (METAHEUR_SIMULATED_GPUS) for the test, the device list read anew."""
    monkeypatch.setenv("METAHEUR_SIMULATED_GPUS", "2")
    gpu_devices.cache_clear()
    yield
    monkeypatch.undo()
    gpu_devices.cache_clear()
