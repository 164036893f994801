"""Session-wide test configuration: the hypothesis profile, the ``instances_dir`` fixture and the
``simulated`` fixture (simulated CUDA devices; tests/gpu and the problems' GPU tests request it).

Helpers that test modules import live in ``tests/testutil.py`` (``from testutil import ...``),
not here: several folders have a conftest.py, so ``import conftest`` would be ambiguous.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import settings
from testutil import instances_dir

from metaheur.devices import gpu_devices
from metaheur.engine import simcuda
from metaheur.islands import operators

_LONG = os.environ.get("METAHEUR_FUZZ_EXAMPLES", "")
# Property-based tests take their number of examples from the profile: 120 in the test suite, drawn
# from a fixed seed so that a test run is reproducible; $METAHEUR_FUZZ_EXAMPLES fresh random ones in
# the long fuzzing runs of experiments/fuzz.py, which search for new failures.
settings.register_profile("suite", max_examples=120, deadline=None, derandomize=True)
settings.register_profile("long", max_examples=int(_LONG) if _LONG.isdigit() else 200, deadline=None)
settings.load_profile("long" if _LONG.isdigit() else "suite")


@pytest.fixture(name="instances_dir")
def _instances_dir_fixture() -> Path:
    """Fixture form of :func:`testutil.instances_dir` (request it as ``instances_dir``)."""
    return instances_dir()


# ---------------------------------------------------------------------------- simulated devices
# The ``simulated`` fixture: METAHEUR_SIMULATED_GPUS set for one test, every cache of devices,
# pools and per-process operators cleared before and after it. Its devices have 2 multiprocessors
# (METAHEUR_SIMULATED_GPU_SMS), so that a GPU island's wave of children stays small.

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
