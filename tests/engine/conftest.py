"""Fixtures of the kernel-engine tests (helpers shared by the modules are in tests/kernel_helpers.py)."""

from __future__ import annotations

import pytest


@pytest.fixture
def write_kernel(tmp_path):
    """``write_kernel(name, text) -> str``: a kernel file in tmp_path, as a path for load_module."""

    def write(name: str, text: str) -> str:
        path = tmp_path / name
        path.write_text(text)
        return str(path)

    return write
