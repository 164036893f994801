"""Fixtures of the problems' tests: the best-known rows of QAPLIB and TSPLIB (bks.csv)."""

from __future__ import annotations

import pytest
from library_files import _bks


@pytest.fixture
def qaplib_bks(instances_dir):
    return _bks(instances_dir, "qaplib")


@pytest.fixture
def tsplib_bks(instances_dir):
    return _bks(instances_dir, "tsplib")
