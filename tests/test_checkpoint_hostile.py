"""Hostile checkpoints (the hardening issue, its checkpoint part): a checkpoint is data, checked
whole before any island, kernel or worker sees it. A crafted array or cost, a header of the
wrong types, a member too large or unknown, a FIFO or a device is refused in one line (exit
status 2); a checkpoint never imports the code it names; the options --resume cannot apply are
refused, the others applied; a checkpoint that cannot be written warns once and the run goes on.
A mutation fuzzer resumes every mutant of tiny checkpoints (QAP GA and tabu islands with an
elite archive, flow-shop chains, TSP EAX): each is refused in one line or resumes to a correct
result, never another exception."""

from __future__ import annotations

import errno
import json
import os
import sys
import tracemalloc
import warnings
import zipfile
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from testutil import instances_dir

from metaheur import checkpoint as checkpoint_module
from metaheur import solver as solver_module
from metaheur.checkpoint import Checkpoint, Checkpointer, load_checkpoint
from metaheur.cli import cli
from metaheur.devices import cpu_device
from metaheur.errors import InputFormatError, MetaheurError
from metaheur.islands.ils import ILSIsland
from metaheur.islands.island import IslandState
from metaheur.islands.migration import MigrationParams, Migrator
from metaheur.islands.model import RunRecord
from metaheur.islands.params import GAParams
from metaheur.problems import QAP, random_qap, uniform_tsp
from metaheur.problems.pfsp import random_pfsp
from metaheur.problems.qap import tabu
from metaheur.problems.qap.tabu_island import TabuIsland
from metaheur.result import Result
from metaheur.run_settings import InstanceInfo, RunSettings
from metaheur.solve_params import SolveParams
from metaheur.solver import resume, solve

QAP12 = random_qap(12, seed=1)
SHOP = random_pfsp(8, 3, seed=2)
TOUR = uniform_tsp(20, seed=3)
TINY_GA = GAParams(population=6, offspring=3, ls_budget=20)


@pytest.fixture(autouse=True)
def cpu_only(monkeypatch):
    monkeypatch.setattr(solver_module, "available_devices", lambda: [cpu_device()])


def members(path: Path) -> tuple[dict[str, np.ndarray], dict]:
    """A checkpoint's arrays and its header."""
    with np.load(path, allow_pickle=False) as data:
        arrays = {k: data[k] for k in data.files}
    return arrays, json.loads(str(arrays.pop("header")))


def write(path: Path, arrays: dict[str, np.ndarray], header) -> Path:
    np.savez(path, header=np.array(json.dumps(header)), **arrays)
    return path


def build(kind: str, folder: Path) -> Path:
    """A checkpoint after 2 synchronous generations: ``qap``, a GA island and a tabu island with an
    elite archive, run in this process (its header says so: no worker starts on resuming);
    ``pfsp``, one island of iterated-greedy chains; ``tsp``, one EAX island."""
    path = folder / f"{kind}.npz"
    if kind == "qap":
        params = SolveParams(strategy="cpu-islands", islands=2, ls_islands=1, sync=True, epoch_generations=1,
                             migration=MigrationParams(policy="elite", interval=1), ga=TINY_GA)
        with pytest.MonkeyPatch.context() as patch:  # both islands in this process (no worker to start)
            patch.setattr(solver_module, "RunSettings", lambda **kw: RunSettings(**kw | {"in_process": True}))
            solve(QAP12, seed=1, params=params, checkpoint=path, generations=2)
        return path
    problem = {"pfsp": SHOP, "tsp": TOUR}[kind]
    solve(problem, seed=1, params=SolveParams(strategy="cpu-serial", sync=True, epoch_generations=1),
          checkpoint=path, generations=2)
    return path


@pytest.fixture(scope="module")
def saved(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("saved")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(solver_module, "available_devices", lambda: [cpu_device()])
        return {kind: build(kind, folder) for kind in ("qap", "pfsp", "tsp")}


def read(path: Path, problem) -> Checkpoint:
    """The checkpoint at ``path`` with its arrays read for ``problem``."""
    checkpoint = load_checkpoint(path)
    checkpoint.validate(problem)
    return checkpoint


def one_line_error(done) -> str:
    assert done.exit_code == 2, (done.output, done.exception)
    err = done.stderr.strip()
    assert err.startswith("metaheur: error: ") and "\n" not in err, err
    return err


# ------------------------------------------------------------------------------ crafted arrays and costs


def crafted(arrays: dict, header: dict, change: str) -> None:
    """The campaign's edits of a QAP checkpoint."""
    if change == "entry":
        arrays["population_0"][0, 0] = 10 ** 6
    elif change == "columns":
        arrays["population_0"] = arrays["population_0"][:, :10]
    elif change == "costs":
        arrays["costs_0"][0] = 1
    elif change == "best":
        header["islands"][0]["best_cost"] = 1
    elif change == "run best":
        header["progress"]["best"] = 1
    elif change == "saved search":
        arrays["searches_perm_1"][0, 0] = 10 ** 6
    elif change == "saved best cost":
        arrays["searches_stats_1"][0, 1] = 1
    else:
        header["migrator"]["archive_costs"][0] = 1


@pytest.mark.parametrize("change", ["entry", "columns", "costs", "best", "run best", "saved search",
                                    "saved best cost", "archive cost"])
def test_a_crafted_array_or_cost_is_refused_before_any_island_runs(saved, tmp_path, monkeypatch, change):
    """A value out of range or a population cut short reached the kernels (a segfault, four
    times, then exit 1); an edited cost ended the run with an internal error and no outputs."""
    arrays, header = members(saved["qap"])
    crafted(arrays, header, change)
    bad = write(tmp_path / "bad.npz", arrays, header)
    with pytest.raises(InputFormatError, match="damaged checkpoint") as caught:
        resume(bad, problem=QAP12, generations=3)
    assert "\n" not in str(caught.value)
    monkeypatch.chdir(tmp_path)
    assert "damaged checkpoint" in one_line_error(CliRunner().invoke(cli, ["solve", "--resume", "bad.npz", "-g", "3"]))


def test_the_saved_searches_layout_is_the_islands_own(saved):
    """What the checkpoint checks of a tabu island's snapshot and of chains is what they save."""
    snapshot, chains = TabuIsland.saved_searches, ILSIsland.saved_searches
    assert set(snapshot.shapes) == set(tabu.SAVED_SEARCH) and snapshot.shapes["stats"] == ("S", tabu.N_STATS)
    assert snapshot.costs == {("stats", tabu.COST): "perm", ("stats", tabu.BEST): "best"}
    assert set(read(saved["qap"], QAP12).states[1].searches) == set(snapshot.shapes)
    assert set(read(saved["pfsp"], SHOP).states[0].searches) == set(chains.shapes)


# ------------------------------------------------------------------------------ no code imported


class OwnQAP(QAP):
    """A problem of the user's own (not registered)."""


def test_a_checkpoint_never_imports_the_code_it_names(saved, tmp_path, monkeypatch):
    (tmp_path / "evil_problem.py").write_text("open(__file__ + '.ran', 'w').close()\nclass Evil: pass\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    arrays, header = members(saved["qap"])
    header["settings"]["problem"]["problem_class"] = "evil_problem:Evil"
    bad = write(tmp_path / "bad.npz", arrays, header)
    with pytest.raises(MetaheurError, match="evil_problem:Evil is not registered here: give it with --problem"):
        resume(bad, generations=3)
    assert not (tmp_path / "evil_problem.py.ran").exists() and "evil_problem" not in sys.modules
    rest = resume(bad, problem=QAP12, generations=3)  # the instance given: it resumes
    assert rest.cost == QAP12.value(rest.permutation)
    monkeypatch.chdir(tmp_path)
    err = one_line_error(CliRunner().invoke(cli, ["solve", "--resume", "bad.npz", "-g", "3"]))
    assert "give it with --problem" in err and not (tmp_path / "evil_problem.py.ran").exists()


def test_a_problem_of_ones_own_is_resumed_by_giving_it(tmp_path):
    own = OwnQAP(QAP12.name, QAP12.flow, QAP12.distance)
    path = tmp_path / "own.npz"
    solve(own, seed=1, params=SolveParams(strategy="cpu-serial", sync=True, ga=TINY_GA), checkpoint=path,
          generations=2)
    with pytest.raises(MetaheurError, match=r"test_checkpoint_hostile:OwnQAP is not registered here"):
        resume(path, generations=3)
    rest = resume(path, problem=own, generations=3)
    assert rest.cost == own.value(rest.permutation)


# ------------------------------------------------------------------------------ what is read


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_a_device_or_a_directory_is_refused_unopened(tmp_path, monkeypatch):
    os.mkfifo(tmp_path / "fifo.npz")
    for path, kind in ((tmp_path / "fifo.npz", "a FIFO"), (tmp_path, "a directory"),
                       (Path("/dev/zero"), "a character device")):
        if path.exists():
            with pytest.raises(InputFormatError, match=f"not a regular file \\({kind}\\)"):
                load_checkpoint(path)
    monkeypatch.chdir(tmp_path)
    assert "not a regular file (a FIFO)" in one_line_error(CliRunner().invoke(cli, ["solve", "--resume", "fifo.npz"]))


def zero_member(path: Path, name: str, size: int, header: bytes = b"") -> None:
    """Add member ``name`` of ``header`` and then zeros up to ``size`` bytes, deflated (small on disk)."""
    with zipfile.ZipFile(path, "a", compression=zipfile.ZIP_DEFLATED) as archive, \
            archive.open(name, "w", force_zip64=True) as member:
        member.write(header)
        chunk = bytes(1 << 20)
        for at in range(len(header), size, len(chunk)):
            member.write(chunk[: min(len(chunk), size - at)])


def npy_header(shape: tuple, dtype="<i8") -> bytes:
    """A .npy header (format 1.0) of an array of ``shape``."""
    text = f"{{'descr': '{dtype}', 'fortran_order': False, 'shape': {shape}, }}".encode()
    text += b" " * (63 - (len(text) + 10) % 64) + b"\n"
    return b"\x93NUMPY\x01\x00" + len(text).to_bytes(2, "little") + text


def peak_while(load) -> tuple[int, object]:
    """The peak of Python's allocations while ``load()`` runs, and what it returned."""
    tracemalloc.start()
    try:
        value = load()
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    return peak, value


def test_a_member_the_format_does_not_name_is_refused_unread(saved, tmp_path):
    """A 14 MB checkpoint with an unused 3 GiB deflated member took 3.2 GB: every member was read."""
    arrays, head = members(saved["qap"])
    path = write(tmp_path / "big.npz", arrays, head)
    zero_member(path, "junk.npy", 96 << 20)
    assert path.stat().st_size < 2 << 20

    def load():
        with pytest.raises(InputFormatError, match=r"unknown member junk\.npy"):
            load_checkpoint(path)

    assert peak_while(load)[0] < 8 << 20


def no_array_is_read(monkeypatch) -> None:
    """Make reading the data of any member but the header fail the test (its .npy header, which
    declares its shape and type, may be read)."""
    real = checkpoint_module._Members.read

    def read(self, name, declared):
        assert name == "header", f"{name} was read"
        return real(self, name, declared)

    monkeypatch.setattr(checkpoint_module._Members, "read", read)


def member_variants(arrays: dict, variant: str):
    """(member, its replacement) for every array member of a checkpoint: each dimension declared
    huge (times 2**30) or large (times 1000) over 1 KiB of zeros (a .npy header of that shape:
    ``("declared", shape, dtype, bytes)``), its own shape over 8 MiB of zeros, each dimension one
    longer with its data, another type (floats, booleans, text)."""
    for name, a in arrays.items():
        if variant == "trailing data":
            yield name, ("declared", a.shape, a.dtype.str, 8 << 20)
        elif variant in ("declared huge", "declared large", "one longer"):
            for axis in range(a.ndim):
                shape = list(a.shape)
                if variant == "one longer":
                    yield name, np.concatenate([a, np.take(a, [0], axis=axis)], axis=axis)
                else:
                    shape[axis] *= (1 << 30) if variant == "declared huge" else 1000
                    yield name, ("declared", tuple(shape), a.dtype.str, 1 << 10)
        else:
            yield name, a.astype(variant)


def with_member(path: Path, arrays: dict, header: dict, name: str, replacement) -> Path:
    """The checkpoint of ``arrays`` with member ``name`` replaced (:func:`member_variants`)."""
    if isinstance(replacement, np.ndarray):
        return write(path, arrays | {name: replacement}, header)
    write(path, {k: v for k, v in arrays.items() if k != name}, header)
    _, shape, dtype, size = replacement
    zero_member(path, f"{name}.npy", size, npy_header(shape, dtype))
    return path


@pytest.mark.parametrize("kind", ["qap", "pfsp", "tsp"])
@pytest.mark.parametrize("variant", ["declared huge", "declared large", "trailing data", "one longer", "float64",
                                     "bool", "str"])
def test_an_array_member_of_another_shape_or_type_is_refused_before_any_is_read(saved, tmp_path, monkeypatch,
                                                                               kind, variant):
    """A checkpoint whose member declared a 1.5 GB array was read in full (the cap followed from
    the size the checkpoint claims). Now every member's declared shape and type is checked
    against what a run of the instance writes (population (1..most, n), costs, best, archive,
    the saved searches of its island's layout) before any array is read: one line naming the
    checkpoint and the member, through the API and the CLI."""
    problem = {"qap": QAP12, "pfsp": SHOP, "tsp": TOUR}[kind]
    arrays, header = members(saved[kind])
    no_array_is_read(monkeypatch)
    monkeypatch.chdir(tmp_path)
    failures = []
    for name, replacement in member_variants(arrays, variant):
        path = with_member(tmp_path / "bad.npz", arrays, header, name, replacement)

        def refused(name=name, path=path):
            with pytest.raises(InputFormatError) as caught:
                resume(path, problem=problem, generations=3)
            return str(caught.value)

        peak, message = peak_while(refused)
        err = one_line_error(CliRunner().invoke(cli, ["solve", "--resume", "bad.npz", "-g", "3"]))
        if not (message.startswith(f"{path}: damaged checkpoint: ") and name in message and "\n" not in message):
            failures.append(f"{name} {replacement[1:] if isinstance(replacement, tuple) else ''}: {message}")
        elif peak >= 8 << 20 or err != f"metaheur: error: bad.npz: {message.removeprefix(f'{path}: ')}":
            failures.append(f"{name}: peak {peak} bytes, CLI {err}")
    assert not failures, "\n".join(failures)


def test_a_checkpoint_claiming_a_larger_instance_is_refused_before_its_arrays_are_read(saved, tmp_path,
                                                                                      monkeypatch):
    """A checkpoint whose header claims n = 1000 and holds a population of 1000 columns: refused
    as another instance's (its size and fingerprint are not the instance's) before any array."""
    arrays, header = members(saved["qap"])
    header["settings"]["problem"]["n"] = 1000
    path = write(tmp_path / "big.npz", {k: v for k, v in arrays.items() if k != "population_0"}, header)
    zero_member(path, "population_0.npy", 96 << 20, npy_header(((96 << 20) // 8000, 1000)))
    no_array_is_read(monkeypatch)
    with pytest.raises(MetaheurError, match=r"\(n = 1000\), not of .*\(n = 12\)"):
        resume(path, problem=QAP12, generations=3)


@pytest.mark.parametrize(("size", "dtype"), [(96 << 20, f"<U{(96 << 20) // 4}"), (1 << 10, f"<U{1 << 28}"),
                                            (96 << 20, "<i8")], ids=["large-entry", "large-shape", "large-array"])
def test_a_header_that_inflates_beyond_its_cap_is_refused_before_it_is_inflated(saved, tmp_path, size, dtype):
    """A 1 MB checkpoint whose header member inflated to 1 GiB took 2.1 GB on --resume. The
    header is capped (HEADER_LIMIT, 64 MiB) by its zip entry and by its .npy shape before it is
    read, and never copied."""
    arrays, _ = members(saved["qap"])
    path = tmp_path / "bomb.npz"
    np.savez(path, **arrays)
    zero_member(path, "header.npy", size, npy_header((), dtype) if dtype.startswith("<U") else npy_header((size // 8,)))

    def load():
        with pytest.raises(InputFormatError, match=r"header holds \d+ bytes, more than|header is of type"):
            load_checkpoint(path)

    assert peak_while(load)[0] < 8 << 20


# ------------------------------------------------------------------------------ header fields


@pytest.mark.parametrize(("edit", "fragment"), [
    (lambda h: [1, 2], "its header is not a JSON object"),
    (lambda h: h["settings"].update(seed=-5) or h, "the seed -5 is negative"),
    (lambda h: h.update(settings=[]) or h, "settings is not an object"),
    (lambda h: h.update(islands={}) or h, "no islands"),
    (lambda h: h["progress"].update(best="x") or h, "progress.best is x"),
    (lambda h: h["islands"][0].update(generation=-1) or h, "island 0.generation is negative"),
    (lambda h: h["settings"]["problem"].update(n=True) or h, "settings.problem.n is True"),
    (lambda h: h.update(epochs=None) or h, "the epochs are not a list"),
    (lambda h: h["settings"].update(sync=float("nan")) or h, "NaN is not a JSON number"),
    (lambda h: h.update(format=True) or h, "checkpoint format True is not supported"),
    (lambda h: h["islands"][0].update(ls_iterations=2**63 - 1) or h, "island 0.ls_iterations is out of range"),
    (lambda h: h["progress"].update(next_epoch=2**62) or h, "progress.next_epoch is out of range"),
    (lambda h: h["island_params"][0]["ga"].update(mutation=2**62) or h, "mutation must be from 0 to"),
    (lambda h: h["island_params"][1]["tabu"].update(scale=2**62) or h, "cubic tenure scale must be from 1 to"),
])
def test_a_header_of_the_wrong_types_or_out_of_range_is_one_line(saved, tmp_path, monkeypatch, edit, fragment):
    arrays, header = members(saved["qap"])
    write(tmp_path / "bad.npz", arrays, edit(header))
    monkeypatch.chdir(tmp_path)
    assert fragment in one_line_error(CliRunner().invoke(cli, ["solve", "--resume", "bad.npz", "-g", "3"]))


# ------------------------------------------------------------------------------ options on --resume


@pytest.mark.parametrize("option", [["--seed", "5"], ["--islands", "1"], ["--population", "50"],
                                    ["--offspring", "4"], ["--crossover", "cx"], ["--strategy", "cpu-serial"],
                                    ["--device", "cpu"], ["--tabu-islands", "0"], ["--sync"],
                                    ["--epoch-seconds", "2"], ["--epoch-generations", "3"],
                                    ["--migration-interval", "2"], ["--topology", "complete"],
                                    ["--migration-policy", "elite"], ["--ls-budget", "10"],
                                    ["--config", "run.toml"], ["--initial", "x.sln"]])
def test_resume_refuses_the_settings_it_cannot_change(saved, tmp_path, monkeypatch, option):
    monkeypatch.chdir(tmp_path)
    Path("run.toml").write_text("[solve]\nseed = 3\n")
    done = CliRunner().invoke(cli, ["solve", "--resume", str(saved["qap"]), "-g", "3", *option])
    assert f"{option[0]} cannot change on --resume" in one_line_error(done)


def test_resume_applies_the_options_it_can(saved, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    done = CliRunner().invoke(cli, ["solve", "--resume", str(saved["qap"]), "-g", "3", "-v", "--no-stop-at-optimum",
                                    "--checkpoint", "next.npz", "--checkpoint-every", "5", "--json", "r.json"])
    assert done.exit_code == 0, (done.output, done.exception)
    assert "island 1 on cpu (tabu search)" in done.stdout and Path("next.npz").is_file()
    assert json.loads(Path("r.json").read_text())["parameters"]["stop_at_optimum"] is False
    assert load_checkpoint("next.npz").settings.stop_at_optimum is False


def test_the_trace_so_far_is_kept_and_an_older_checkpoint_has_none(tmp_path):
    options = {"seed": 1, "params": SolveParams(strategy="cpu-serial", sync=True, epoch_generations=1, ga=TINY_GA)}
    path = tmp_path / "run.npz"
    first = solve(QAP12, checkpoint=path, generations=2, **options)
    rest = resume(path, generations=4)
    assert first.trace and rest.trace[: len(first.trace)] == first.trace
    arrays, header = members(path)
    del header["trace"]
    older = resume(write(tmp_path / "older.npz", arrays, header), generations=4)
    assert older.cost == QAP12.value(older.permutation)


def test_a_checkpoint_of_another_problem_says_whose_it_is(tmp_path, monkeypatch):
    """``--resume pfsp.npz tai12a`` answered "tai12a: no such file ... (did you mean tai12a?)": the
    library name was looked up among the flow shop's files only."""
    monkeypatch.setenv("METAHEUR_INSTANCES", str(instances_dir()))
    monkeypatch.chdir(tmp_path)
    solve(SHOP, params=SolveParams(strategy="cpu-serial"), checkpoint="pfsp.npz", generations=1)
    err = one_line_error(CliRunner().invoke(cli, ["solve", "--resume", "pfsp.npz", "tai12a", "-g", "2"]))
    assert f"checkpoint of PFSP instance {SHOP.name} (n = 8), not of QAP tai12a (n = 12)" in err


# ------------------------------------------------------------------------------ a checkpoint that cannot be written


def full_disk(monkeypatch) -> None:
    def refuse(path, write):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr("metaheur.checkpoint.write_atomically", refuse)


def test_a_checkpoint_that_cannot_be_written_warns_once_and_the_run_goes_on(tmp_path, monkeypatch):
    """With a full disk the run stopped at once (exit 2, "No space left on device" without a path)
    and wrote none of its outputs."""
    monkeypatch.chdir(tmp_path)
    full_disk(monkeypatch)
    with pytest.warns(RuntimeWarning) as caught:
        done = CliRunner().invoke(cli, ["solve", "gen:qap:12", "-g", "4", "--sync", "--epoch-generations", "1",
                                        "--strategy", "cpu-serial", "--checkpoint", "c.npz", "--checkpoint-every",
                                        "0.001", "--json", "ok.json", "--solution", "ok.sln", "-q"])
    assert done.exit_code == 1, (done.output, done.exception)
    alarms = [str(w.message) for w in caught if "checkpoint" in str(w.message)]
    assert alarms == [f"metaheur: cannot write the checkpoint c.npz: {os.strerror(errno.ENOSPC)}; the run goes on "
                      "without it"]
    assert done.stderr.strip() == f"metaheur: error: --checkpoint c.npz: {os.strerror(errno.ENOSPC)}"
    result = Result.from_json(Path("ok.json").read_text())
    assert result.generations == 4 and Path("ok.sln").is_file() and not Path("c.npz").exists()


def test_a_later_write_that_succeeds_clears_the_failure(tmp_path, monkeypatch):
    writes = iter([OSError(errno.ENOSPC, "full"), OSError(errno.EIO, "bad"), None])

    def flaky(path, write):
        failure = next(writes)
        if failure:
            raise failure

    monkeypatch.setattr("metaheur.checkpoint.write_atomically", flaky)
    checkpointer = Checkpointer(tmp_path / "c.npz", 60, RunSettings(InstanceInfo("k", "x", 3, "qap"), "cpu-serial",
                                                                     0, ("cpu",)))
    record, migrator = RunRecord([IslandState(0)], []), Migrator(MigrationParams(), 0)
    with pytest.warns(RuntimeWarning, match="c.npz: full; the run goes on") as caught:
        checkpointer(record, migrator, True)
        checkpointer(record, migrator, True)
    assert len(caught) == 1 and checkpointer.error == f"{tmp_path / 'c.npz'}: bad"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        checkpointer(record, migrator, True)
    assert checkpointer.error is None


# ------------------------------------------------------------------------------ the mutation fuzzer


def paths(node, at=()):
    """Every path into a JSON value (an object's keys, a list's indices) below its root."""
    items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    for key, value in items:
        yield (*at, key)
        yield from paths(value, (*at, key))


def fields(header: dict) -> list[tuple]:
    """The paths of every field of the header, one of each (the first island's, epoch row's...)."""
    kinds = {tuple("[]" if isinstance(key, int) else key for key in path): path for path in paths(header)}
    return list(dict.fromkeys(kinds.values()))


DROP = object()
VALUES = (None, -1, 1 << 70, 2.5, "x", [], {}, True, float("nan"), DROP, 0, "cpu")


def set_at(header, path: tuple, value):
    node = header
    for key in path[:-1]:
        node = node[key]
    if value is DROP:
        del node[path[-1]]
    else:
        node[path[-1]] = value


def header_mutants(header: dict):
    """Every field of the header (:func:`fields`, the containers too), each given two of
    :data:`VALUES` in turn: of another type, out of range, absent."""
    for k, path in enumerate(fields(header)):
        for value in (VALUES[k % len(VALUES)], VALUES[(k + 5) % len(VALUES)]):
            mutant = json.loads(json.dumps(header))
            set_at(mutant, path, value)
            yield f"header{list(path)} = {value if value is not DROP else 'dropped'}", mutant


def first(value):
    def put(a):
        a = a.copy()
        a.flat[0] = np.array(value).astype(a.dtype)
        return a
    return put


def swap(a):
    a = a.copy()
    a.flat[0], a.flat[1] = a.flat[1], a.flat[0]
    return a


ARRAY_MUTATIONS = {
    "dropped": None, "float": lambda a: a.astype(np.float64), "int8": lambda a: a.astype(np.int8),
    "uint64": lambda a: a.astype(np.uint64), "bool": lambda a: a.astype(bool), "first -1": first(-1),
    "first n": first(12), "first 10**6": first(10 ** 6), "swapped": swap, "plus one": lambda a: a + 1,
    "column dropped": lambda a: a[..., :-1], "row added": lambda a: np.concatenate([a, a[:1]]),
    "one row": lambda a: a[:1], "flat": np.ravel, "scalar": lambda a: np.array(a.flat[0]),
    "transposed": np.transpose, "empty": lambda a: a[:0],
}


def array_mutants(arrays: dict):
    """Every array: values changed, another dtype, another shape, dropped."""
    for name in arrays:
        for label, mutate in ARRAY_MUTATIONS.items():
            if arrays[name].ndim == 0 or (label == "swapped" and arrays[name].size < 2):
                continue
            mutant = dict(arrays)
            if mutate is None:
                del mutant[name]
            else:
                mutant[name] = mutate(arrays[name])
            yield f"{name} {label}", mutant


def outcome(path: Path, problem) -> str | None:
    """None when the checkpoint at ``path`` is refused in one line or resumes to a correct
    result; else what went wrong."""
    try:
        result = resume(path, problem=problem, generations=3, checkpoint=path.with_name("out.npz"))
    except MetaheurError as exc:
        return None if "\n" not in str(exc) and "internal error" not in str(exc) else str(exc)
    except Exception as exc:  # what the fuzzer is for
        return f"{type(exc).__name__}: {exc}"
    if result.stop_reason.startswith("failed"):
        return result.stop_reason
    return None if result.cost == problem.value(result.permutation) else "a wrong cost"


@pytest.mark.parametrize("kind", ["qap", "pfsp", "tsp"])
def test_every_mutant_of_a_checkpoint_is_refused_in_one_line_or_resumes_correctly(saved, tmp_path, kind):
    problem = {"qap": QAP12, "pfsp": SHOP, "tsp": TOUR}[kind]
    arrays, header = members(saved[kind])
    mutants = [(label, mutant, header) for label, mutant in array_mutants(arrays)]
    if kind == "qap":  # the header is the same for every problem
        mutants += [(label, arrays, mutant) for label, mutant in header_mutants(header)]
    failures, path = [], tmp_path / "mutant.npz"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for label, mutant_arrays, mutant_header in mutants:
            wrong = outcome(write(path, mutant_arrays, mutant_header), problem)
            if wrong is not None:
                failures.append(f"{label}: {wrong}")
    assert not failures, "\n".join(failures)
