"""experiments/perm_defaults.py, the measurement of the user problems' defaults (the perm tests'
problems: tests/perm/perm_problems.py and cost_only.py), runs and writes its tables."""

from __future__ import annotations

import pytest


@pytest.mark.slow
def test_the_measurement_script_runs(tmp_path):
    """experiments/perm_defaults.py --quick writes both tables (no time is asserted: it measures them)."""
    import csv
    import subprocess
    import sys
    from pathlib import Path

    script = Path(__file__).resolve().parents[2] / "experiments" / "perm_defaults.py"
    done = subprocess.run([sys.executable, str(script), "--quick", "--out", str(tmp_path)], capture_output=True,
                          text=True, timeout=240)
    assert done.returncode == 0, done.stderr[-3000:]
    for stem, column in (("perm_defaults_scans", "step_units"), ("perm_defaults_choice", "first_gen_cpu_s")):
        with open(tmp_path / f"{stem}.csv", newline="") as handle:
            rows = list(csv.DictReader(handle))
        assert rows and all(float(row[column]) == float(row[column]) for row in rows)  # numbers, not NaN
        assert "- command: perm_defaults.py --quick" in (tmp_path / f"{stem}.md").read_text()
    assert {row["method"] for row in rows} >= {"ils"}
