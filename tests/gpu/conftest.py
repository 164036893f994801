"""The ``simulated`` fixture: METAHEUR_SIMULATED_GPUS set for one test, every cache of devices,
pools and per-process operators cleared before and after it."""

from __future__ import annotations

import pytest

from metaheur.devices import gpu_devices
from metaheur.engine import simcuda
from metaheur.islands import operators


def _forget() -> None:
    gpu_devices.cache_clear()
    simcuda.reset()
    operators._CACHE.clear()


@pytest.fixture
def simulated(monkeypatch):
    """Two simulated GPUs (``simulated(n, memory=...)`` for others); returns their devices."""

    def configure(count: int = 2, memory: str | None = None):
        monkeypatch.setenv("METAHEUR_SIMULATED_GPUS", str(count))
        if memory is None:
            monkeypatch.delenv("METAHEUR_SIMULATED_GPU_MEMORY", raising=False)
        else:
            monkeypatch.setenv("METAHEUR_SIMULATED_GPU_MEMORY", memory)
        monkeypatch.delenv("METAHEUR_NO_GPU", raising=False)
        _forget()
        return gpu_devices()

    configure.devices = configure()
    yield configure
    monkeypatch.undo()
    _forget()
