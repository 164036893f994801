"""The run's worker processes do not depend on the working folder or on plenty of memory
(metaheur.isolation, docs/long-runs.md): a file there named like a standard or installed module
is not what they import, and workers that cannot start are one line, never a traceback."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

SHADOWING = ["zipfile", "json", "signal", "numpy", "pickle", "threading"]


def _solve(tmp_path, *args: str, timeout: float = 180) -> subprocess.CompletedProcess:
    # -P: the run's own process does not import from the working folder either, as with the
    # console script (python -m puts it first, before any code of metaheur runs)
    return subprocess.run([sys.executable, "-P", "-m", "metaheur.cli", "solve", *args], cwd=tmp_path,
                          capture_output=True, text=True, timeout=timeout)


@pytest.mark.skipif(sys.version_info < (3, 11), reason="PYTHONSAFEPATH and -P are Python 3.11's")
@pytest.mark.parametrize("name", SHADOWING)
def test_a_module_named_like_a_standard_one_in_the_working_folder_is_not_imported_by_workers(tmp_path, name):
    (tmp_path / f"{name}.py").write_text('raise ImportError("the working folder\'s module was imported")\n')
    proc = _solve(tmp_path, "gen:qap:16", "-g", "3", "--strategy", "cpu-islands", "--islands", "2", "-q",
                  "--json", "r.json")
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr and "worker" not in proc.stderr
    result = json.loads((tmp_path / "r.json").read_text())
    assert result["stop_reason"] == "generations" and result["generations"] >= 3


@pytest.mark.skipif(sys.version_info < (3, 11), reason="PYTHONSAFEPATH and -P are Python 3.11's")
def test_a_users_problem_module_in_the_working_folder_still_imports_in_the_workers(tmp_path):
    """The working folder stays on the workers' ``sys.path``, last: a user's ``module:Class``
    (docs/problems.md's) imports there, beside a ``json.py`` that is not imported."""
    from perm.tutorial_pages import DOCS, blocks

    page = DOCS / "problems.md"
    (tmp_path / "wt_tutorial.py").write_text(blocks(page, "python")[0])
    (tmp_path / "small.wt").write_text(blocks(page, "text")[0])
    (tmp_path / "json.py").write_text('raise ImportError("the working folder\'s module was imported")\n')
    proc = _solve(tmp_path, "--problem", "wt_tutorial:Tardiness", "small.wt", "-g", "2", "--strategy",
                  "cpu-islands", "--islands", "2", "-q", "--solution", "best.order")
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr and "worker" not in proc.stderr
    assert (tmp_path / "best.order").is_file()
