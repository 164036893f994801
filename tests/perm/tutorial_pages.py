"""A tutorial page of docs/ taken as a user takes it: its fenced code blocks, its module and its
instance saved in a folder of their own (not problems/) and imported from there."""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from joblib.externals.loky import get_reusable_executor

DOCS = Path(__file__).resolve().parents[2] / "docs"


def blocks(page: Path, lang: str) -> list[str]:
    """The code blocks of ``page`` fenced as ``lang``, in order."""
    return re.findall(rf"```{lang}\n(.*?)```", page.read_text(), re.S)


def tutorial_fixture(page: Path, module: str, instance: str):
    """A fixture ``tutorial``: the page's module and instance in the test's tmp_path (:func:`save_tutorial`)."""

    @pytest.fixture
    def tutorial(tmp_path, monkeypatch):
        yield from save_tutorial(page, tmp_path, monkeypatch, module, instance)

    return tutorial


def save_tutorial(page: Path, folder: Path, monkeypatch, module: str, instance: str) -> Iterator[Path]:
    """The page's first Python block saved as ``module``.py and its first text block as
    ``instance`` in ``folder``, importable and the current folder; the module forgotten at the
    end (a fixture's body)."""
    (folder / f"{module}.py").write_text(blocks(page, "python")[0])
    (folder / instance).write_text(blocks(page, "text")[0])
    monkeypatch.syspath_prepend(str(folder))
    monkeypatch.chdir(folder)
    # worker processes started by earlier tests have the old sys.path, without the module: new ones
    get_reusable_executor().shutdown(wait=True)
    yield folder
    sys.modules.pop(module, None)


def run_check_and_solve(page: Path, capsys) -> tuple[dict, str]:
    """The page's check_problem block and its solve block (Python blocks 2 and 3) run in one
    scope, as a user runs them one after the other: (that scope, what they printed)."""
    scope: dict = {}
    for block in blocks(page, "python")[1:3]:
        exec(block, scope)
    return scope, capsys.readouterr().out
