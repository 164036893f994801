"""The ``simulated`` fixture: METAHEUR_SIMULATED_GPUS set for one test, every cache of devices,
pools and per-process operators cleared before and after it. Its devices have 2 multiprocessors
(METAHEUR_SIMULATED_GPU_SMS), so that a GPU island's wave of children stays small."""

from __future__ import annotations

import pytest

from metaheur.devices import gpu_devices
from metaheur.engine import simcuda
from metaheur.islands import operators

SMS = 2


def _forget() -> None:
    gpu_devices.cache_clear()
    simcuda.reset()
    operators._CACHE.clear()


@pytest.fixture
def simulated(monkeypatch):
    """Two simulated GPUs (``simulated(n, memory=...)`` for others); returns their devices."""

    def configure(count: int = 2, memory: str | None = None):
        monkeypatch.setenv("METAHEUR_SIMULATED_GPUS", str(count))
        monkeypatch.setenv("METAHEUR_SIMULATED_GPU_SMS", str(SMS))
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
