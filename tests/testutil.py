"""Helpers shared by test modules (importable as ``testutil``: pytest puts tests/ on the path).

Benchmark-instance tests read the QAPLIB/TSPLIB files from the directory named by
``METAHEUR_INSTANCES`` (subfolders ``qaplib/`` and ``tsplib/``, each with a ``bks.csv``) and skip
with a message when it is not set. The files are never copied into the repository.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

INSTANCES_ENV = "METAHEUR_INSTANCES"
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
