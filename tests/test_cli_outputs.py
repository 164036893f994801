"""Output files of ``metaheur solve`` and ``metaheur plot``: checked before the search, written
one by one so that a failure loses nothing else, JSON and statistics on standard output, figure
formats by extension (issue 24, items 1 and 2)."""

from __future__ import annotations

import csv
import io
import json
import os
import socket
import stat
import subprocess

import pytest
from cliutil import QUICK, cpu_runner, ok, user_error, write_dat

from metaheur import plots
from metaheur.cli import cli
from metaheur.errors import MetaheurError
from metaheur.outputs import plan_outputs, safe_name


@pytest.fixture
def runner(monkeypatch, tmp_path):
    return cpu_runner(monkeypatch, tmp_path)


def leftovers(folder) -> list[str]:
    """Temporary or probe files left in ``folder``."""
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


# ------------------------------------------------------------------------ checked before the search


@pytest.mark.parametrize(("args", "fragments"), [
    (["--solution", "nodir/x.sln"], ("--solution nodir/x.sln", "no folder nodir")),
    (["--json", "."], ("--json .", "is a directory")),
    (["--plot", "out.gif"], ("--plot out.gif", "unknown figure format .gif", ".png, .svg, .pdf")),
    (["--plot", "out"], ("unknown figure format (no extension)",)),
    (["--json", "same.out", "--stats", "same.out"], ("--stats and --json would both write same.out",)),
    (["--checkpoint", "nodir/run.npz"], ("--checkpoint nodir/run.npz", "no folder nodir")),
    (["--json", "-", "--stats", "-"], ("--json and --stats both ask for standard output",)),
    (["--solution", "-"], ("--solution -: only --json and --stats write to standard output",)),
])
def test_a_bad_output_is_refused_before_the_search(runner, tmp_path, args, fragments):
    result = runner.invoke(cli, ["solve", "gen:qap:8", *QUICK, "--solution", "good.sln", *args])
    user_error(result, *fragments)
    assert result.stdout == ""  # no summary: nothing was solved
    assert not (tmp_path / "good.sln").exists()
    assert leftovers(tmp_path) == []


def test_several_instances_are_all_checked_before_the_first_search(runner, tmp_path):
    result = runner.invoke(cli, ["solve", "gen:qap:8", "gen:qap:9", *QUICK, "--json", "multi.json"])
    user_error(result, "--json", "{name}")
    assert result.stdout == "" and list(tmp_path.iterdir()) == []
    # two instances of one name (from two folders) would write the same file: refused before either is solved
    for folder, seed in (("a", 1), ("b", 2)):
        (tmp_path / folder).mkdir()
        write_dat(tmp_path / folder / "alpha.dat", 8, seed)
    (tmp_path / "out").mkdir()
    result = runner.invoke(cli, ["solve", "a/alpha.dat", "b/alpha.dat", *QUICK, "--json", "out/{name}.json"])
    user_error(result, "--json of alpha and --json of alpha would both write out/alpha.json")
    assert result.stdout == "" and list((tmp_path / "out").iterdir()) == []


def test_one_failed_output_loses_nothing_else(runner, tmp_path, monkeypatch):
    """A figure that fails while being written (a full disk): the JSON and the solution are
    written, the summary printed, no temporary file left, exit status 1."""
    def full_disk(result, path, problem=None, fmt=None):
        with open(path, "wb") as handle:
            handle.write(b"half a figure")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(plots, "save_result_figure", full_disk)
    result = runner.invoke(cli, ["solve", "gen:qap:10", *QUICK, "-q", "--json", "r.json", "--solution", "r.sln",
                                 "--plot", "r.png", "--stats", "r.csv"])
    assert result.exit_code == 1, result.output
    assert "cost        " in result.stdout  # the summary
    assert result.stderr.strip() == "metaheur: error: --plot r.png: No space left on device"
    data = json.loads((tmp_path / "r.json").read_text())
    assert (tmp_path / "r.sln").read_text().split()[1] == str(data["cost"])
    assert (tmp_path / "r.csv").is_file() and not (tmp_path / "r.png").exists()
    assert leftovers(tmp_path) == []


def test_outputs_get_the_permissions_of_new_files_and_keep_those_of_files_they_replace(runner, tmp_path):
    """The outputs are written through temporary files (owner-only permissions) and renamed: a new
    one gets what the umask gives a new file, a replaced one keeps its own."""
    import os
    import stat

    (tmp_path / "r.sln").write_text("old")
    os.chmod(tmp_path / "r.sln", 0o604)
    mask = os.umask(0o027)
    try:
        ok(runner.invoke(cli, ["solve", "gen:qap:10", *QUICK, "-q", "--json", "r.json", "--solution", "r.sln",
                               "--stats", "r.csv"]))
    finally:
        os.umask(mask)
    modes = {name: stat.S_IMODE((tmp_path / name).stat().st_mode) for name in ("r.json", "r.csv", "r.sln")}
    assert modes == {"r.json": 0o640, "r.csv": 0o640, "r.sln": 0o604}


# ------------------------------------------------------------------------------- standard output


def test_json_to_standard_output(runner, tmp_path):
    result = runner.invoke(cli, ["solve", "gen:qap:10", *QUICK, "--json", "-"])
    ok(result)
    data = json.loads(result.stdout)  # nothing but the JSON on stdout
    assert data["instance"] == "gen-qap-10-s1" and data["stop_reason"] == "generations"
    assert f"cost        {data['cost']}" in result.stderr  # the summary and the status lines go to stderr
    assert "[generations]" in result.stderr
    assert not (tmp_path / "-").exists()


def test_stats_to_standard_output(runner, tmp_path):
    result = runner.invoke(cli, ["solve", "gen:qap:10", *QUICK, "-q", "--stats", "-", "--json", "r.json"])
    rows = list(csv.DictReader(io.StringIO(ok(result))))
    assert len(rows) == 2 and rows[0]["generations"] == "1" and rows[0]["search_steps"] == "0"
    assert json.loads((tmp_path / "r.json").read_text())["history"][0]["generations"] == 1


# ----------------------------------------------------------------------------------- figure formats


MAGIC = {"png": b"\x89PNG", "svg": b"<?xml", "pdf": b"%PDF", "jpg": b"\xff\xd8\xff"}


def test_figure_format_follows_the_extension(runner, tmp_path):
    ok(runner.invoke(cli, ["solve", "gen:tsp:30", *QUICK, "-q", "--json", "r.json", "--plot", "r.svg"]))
    assert (tmp_path / "r.svg").read_bytes().startswith(MAGIC["svg"])
    for ext, magic in MAGIC.items():
        out = json.loads(ok(runner.invoke(cli, ["plot", "r.json", f"again.{ext.upper()}", "--json"])))
        assert out["figure"] == f"again.{ext.upper()}" and out["panel"] == "tour"
        assert (tmp_path / f"again.{ext.upper()}").read_bytes().startswith(magic), ext
    user_error(runner.invoke(cli, ["plot", "r.json", "again.gif"]), "unknown figure format .gif")
    user_error(runner.invoke(cli, ["plot", "r.json", "nodir/again.png"]), "no folder nodir")
    assert leftovers(tmp_path) == []



# ------------------------------------------------------------------ special files, links, names


def test_a_symlink_to_a_device_is_written_through(runner, tmp_path):
    """Outputs through symlinks to /dev/null (``solve --json``, ``--plot``, ``plot FIGURE``): the
    links stay links and /dev/null a character device, written in place (as root, ``--json
    /dev/null`` used to replace the device by a file)."""
    for name in ("null.json", "null.png", "again.png"):
        (tmp_path / name).symlink_to("/dev/null")
    ok(runner.invoke(cli, ["solve", "gen:qap:8", *QUICK, "-q", "--json", "null.json", "--plot", "null.png",
                           "--stats", "r.csv"]))
    (tmp_path / "r.json").write_text(json.dumps({"instance": "x"}))
    ok(runner.invoke(cli, ["solve", "gen:qap:8", *QUICK, "-q", "--json", "r.json"]))
    ok(runner.invoke(cli, ["plot", "r.json", "again.png"]))
    for name in ("null.json", "null.png", "again.png"):
        assert (tmp_path / name).is_symlink() and os.readlink(tmp_path / name) == "/dev/null"
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)
    assert leftovers(tmp_path) == []


def test_a_fifo_output_reaches_its_reader(runner, tmp_path):
    """A named pipe is written in place: its reader gets the JSON. Checking the path before the
    run does not open it (that would wait for a reader)."""
    os.mkfifo(tmp_path / "out.json")
    assert plan_outputs({"--json": "out.json"}, ["x"]) == [{"--json": "out.json"}]  # no reader: not opened
    reader = subprocess.Popen(["cat", str(tmp_path / "out.json")], stdout=subprocess.PIPE)
    try:
        ok(runner.invoke(cli, ["solve", "gen:qap:8", *QUICK, "-q", "--json", "out.json"]))
        received = reader.communicate(timeout=30)[0]
    finally:
        reader.kill()
        reader.wait()
    assert json.loads(received)["instance"] == "gen-qap-8-s1"
    assert stat.S_ISFIFO(os.lstat(tmp_path / "out.json").st_mode)


def test_a_symlink_to_a_file_replaces_the_file_it_points_to(runner, tmp_path):
    """The file behind the link is replaced atomically (in its own folder); the link stays."""
    (tmp_path / "store").mkdir()
    (tmp_path / "store" / "latest.json").write_text("old")
    (tmp_path / "link.json").symlink_to(tmp_path / "store" / "latest.json")
    (tmp_path / "dangling.csv").symlink_to(tmp_path / "store" / "new.csv")
    ok(runner.invoke(cli, ["solve", "gen:qap:8", *QUICK, "-q", "--json", "link.json", "--stats", "dangling.csv"]))
    assert (tmp_path / "link.json").is_symlink() and (tmp_path / "dangling.csv").is_symlink()
    assert json.loads((tmp_path / "store" / "latest.json").read_text())["instance"] == "gen-qap-8-s1"
    assert (tmp_path / "store" / "new.csv").read_text().startswith("epoch,")
    assert leftovers(tmp_path) == [] and leftovers(tmp_path / "store") == []


def test_a_socket_is_refused_before_the_search(runner, tmp_path):
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(tmp_path / "s.json"))
        user_error(runner.invoke(cli, ["solve", "gen:qap:8", *QUICK, "--json", "s.json"]),
                   "--json s.json: is a socket; give a file name")
    assert stat.S_ISSOCK(os.lstat(tmp_path / "s.json").st_mode)


def test_instance_names_cannot_leave_the_output_folder(runner, tmp_path):
    """``{name}`` is the instance's name made one plain file name: a TSPLIB NAME or an OR-Library
    ``instance`` line of ``../../x`` or ``/etc/passwd`` writes under the folder given, nowhere else."""
    coords = "NODE_COORD_SECTION\n1 0 0\n2 10 0\n3 10 10\n4 0 10\n5 5 15\nEOF\n"
    for file, name in (("up.tsp", "../../x"), ("abs.tsp", "/etc/passwd")):
        (tmp_path / file).write_text(f"NAME: {name}\nTYPE: TSP\nDIMENSION: 5\nEDGE_WEIGHT_TYPE: EUC_2D\n{coords}")
    (tmp_path / "shop.txt").write_text("instance ../../trav\nthree jobs\n3 2\n0 5 1 3\n0 6 1 2\n0 1 1 9\n")
    (tmp_path / "res" / "sub").mkdir(parents=True)
    before = sorted(tmp_path.iterdir())
    ok(runner.invoke(cli, ["solve", "up.tsp", "abs.tsp", "shop.txt", *QUICK, "-q", "--json", "res/sub/{name}.json"]))
    assert sorted(tmp_path.iterdir()) == before
    written = sorted(p.name for p in (tmp_path / "res" / "sub").iterdir())
    assert written == ["_.._trav.json", "_.._x.json", "_etc_passwd.json"]
    assert json.loads((tmp_path / "res" / "sub" / "_.._x.json").read_text())["instance"] == "../../x"


@pytest.mark.parametrize(("name", "safe"), [
    ("tai12a", "tai12a"), ("a\x00b", "a_b"), ("line\nbreak", "line_break"), ("..", "instance"), ("", "instance"),
    (".hidden", "hidden"), ("caf\u00e9 1+2", "caf__1+2"), ("x" * 300, "x" * 200),
])
def test_safe_names(name, safe):
    assert safe_name(name) == safe


def test_names_that_come_out_alike_are_refused(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(MetaheurError, match=r"--json of a_b and --json of a_b would both write a_b\.json"):
        plan_outputs({"--json": "{name}.json"}, ["a/b", "a\nb"])


@pytest.mark.parametrize(("args", "message"), [
    (["-t", "inf", "-g", "1"], "--time-limit must be a finite number of seconds, got inf"),
    (["-t", "nan"], "--time-limit must be positive, got nan"),
    (["-g", "1", "--epoch-seconds", "inf"], "--epoch-seconds must be a finite number of seconds, got inf"),
])
def test_non_finite_seconds_are_refused(runner, tmp_path, args, message):
    """``-t inf`` used to write ``"time_limit": Infinity``, which is not JSON."""
    user_error(runner.invoke(cli, ["solve", "gen:qap:8", *QUICK[2:], *args, "--json", "r.json"]), message)
    assert not (tmp_path / "r.json").exists()


def test_a_checkpoint_on_a_fifo_and_a_symlink_loop_are_refused(monkeypatch, tmp_path):
    """A run would wait for ever on a FIFO with no reader, and a checkpoint is read back: a
    FIFO is refused for --checkpoint; a loop of symbolic links is refused for any output."""
    runner = cpu_runner(monkeypatch, tmp_path)
    os.mkfifo(tmp_path / "ck.fifo")
    user_error(runner.invoke(cli, ["solve", "gen:qap:12", *QUICK, "--checkpoint", "ck.fifo"]), "a checkpoint is a "
                                                                                                "regular file")
    os.symlink("lb", tmp_path / "la")
    os.symlink("la", tmp_path / "lb")
    user_error(runner.invoke(cli, ["solve", "gen:qap:12", *QUICK, "--json", "la"]), "symbolic links")
    assert (tmp_path / "la").is_symlink()


def test_a_name_cannot_start_with_a_dash():
    from metaheur.outputs import safe_name

    assert safe_name("-rf") == "rf" and safe_name("--x") == "x" and safe_name("-") == "instance"


def test_a_seed_beyond_64_bits_is_refused(monkeypatch, tmp_path):
    result = cpu_runner(monkeypatch, tmp_path).invoke(cli, ["solve", "gen:qap:12", "-g", "1", "--seed",
                                                            str(2**64)])
    user_error(result, "seed must be from 0 to 2^63 - 1")
