"""Session-wide test configuration: the hypothesis profile and the ``instances_dir`` fixture.

Helpers that test modules import live in ``tests/testutil.py`` (``from testutil import ...``),
not here: several folders have a conftest.py, so ``import conftest`` would be ambiguous.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import settings
from testutil import instances_dir

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
