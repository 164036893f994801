"""Shared test helpers.

Benchmark-instance tests read the QAPLIB/TSPLIB files from the directory named by
``METAHEUR_INSTANCES`` (subfolders ``qaplib/`` and ``tsplib/``, each with a ``bks.csv``) and skip
with a message when it is not set. The files are never copied into the repository.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import settings

INSTANCES_ENV = "METAHEUR_INSTANCES"

_LONG = os.environ.get("METAHEUR_FUZZ_EXAMPLES", "")
# Property-based tests take their number of examples from the profile: 120 in the test suite,
# $METAHEUR_FUZZ_EXAMPLES in the long fuzzing runs of experiments/fuzz.py.
settings.register_profile("suite", max_examples=120, deadline=None)
settings.register_profile("long", max_examples=int(_LONG) if _LONG.isdigit() else 200, deadline=None)
settings.load_profile("long" if _LONG.isdigit() else "suite")
SKIP_MESSAGE = "METAHEUR_INSTANCES not set: benchmark-instance tests skipped"


def instances_dir() -> Path:
    """The benchmark-instance directory from ``METAHEUR_INSTANCES``; skips the test when unset/missing."""
    value = os.environ.get(INSTANCES_ENV)
    if not value:
        pytest.skip(SKIP_MESSAGE)
    path = Path(value).expanduser()
    if not path.is_dir():
        pytest.skip(f"{SKIP_MESSAGE} ({INSTANCES_ENV}={value} is not a directory)")
    return path


@pytest.fixture(name="instances_dir")
def _instances_dir_fixture() -> Path:
    """Fixture form of :func:`instances_dir` (request it as ``instances_dir``)."""
    return instances_dir()
