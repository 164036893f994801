"""Resuming with an instance file edited since the checkpoint (same name and size, other
content) says that its content changed, never "checkpoint of X (n = 12), not of X (n = 12)";
with the instance given, or read from where the checkpoint says it came from."""

from __future__ import annotations

import pytest
from cliutil import QUICK, cpu_runner, ok, user_error, write_dat

from metaheur.cli import cli


def _edit(path, how: str) -> None:
    lines = path.read_text().splitlines()
    if how == "one-value":
        row = lines[1].split()
        row[1] = str(int(row[1]) + 1)
        lines[1] = " ".join(row)
    elif how == "rows-swapped":
        lines[1], lines[2] = lines[2], lines[1]
    else:  # another instance of the same size under the same file name
        write_dat(path, 12, seed=99)
        return
    path.write_text("\n".join(lines) + "\n")


@pytest.mark.parametrize("given", [True, False], ids=["instance-given", "instance-from-checkpoint"])
@pytest.mark.parametrize("how", ["one-value", "rows-swapped", "replaced"])
def test_an_edited_instance_is_named_as_changed(monkeypatch, tmp_path, how, given):
    runner = cpu_runner(monkeypatch, tmp_path)
    write_dat(tmp_path / "my.dat", 12, seed=4)
    ok(runner.invoke(cli, ["solve", "my.dat", *QUICK, "-q", "--checkpoint", "c.npz"]))
    _edit(tmp_path / "my.dat", how)
    err = user_error(runner.invoke(cli, ["solve", *(["my.dat"] if given else []), "--resume", "c.npz"]),
                     "the content of instance my (n = 12) changed since the checkpoint was written")
    assert "not of" not in err
