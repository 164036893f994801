"""``read_config``: TOML run configurations (``metaheur solve --config``)."""

from __future__ import annotations

import dataclasses

import pytest

from metaheur.config import SOLVE_KEYS, read_config
from metaheur.errors import InputFormatError, MetaheurError
from metaheur.islands.migration import MigrationParams
from metaheur.islands.params import GAParams
from metaheur.problems.qap.tabu import TabuParams
from metaheur.problems.tsp.ils import ILSParams
from metaheur.solve_params import RUN_KEYS, SolveParams

FULL = """\
# every section and every [solve] key
[solve]
time_limit = 12.5
generations = 40
target = "bks"
no_improvement = 7
seed = 3
strategy = "cpu-islands"
devices = ["cpu"]
islands = 2
tabu_islands = 1
sync = true
epoch_seconds = 0.5
epoch_generations = 4
scheduler = "tcp://127.0.0.1:8786"
dask_local = 2
stop_at_optimum = false

[ga]
population = 12
offspring = 6
crossover = "pmx"
mutation = 2
ls_budget = 300
restart_after = 9
restart = "full"

[tabu]
tenure = "uniform"
aspiration = 5000
scale = 3

[ils]
neighbours = 8
window = 30
kick = "double-bridge"
temperature = 0

[migration]
topology = "complete"
policy = "elite"
interval = 3
archive = 5
"""


@pytest.fixture
def write(tmp_path):
    def _write(text: str | bytes, name: str = "run.toml"):
        path = tmp_path / name
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(text)
        return path

    return _write


# ------------------------------------------------------------------------------------- valid


def test_full_config(write):
    cfg = read_config(write(FULL))
    assert set(cfg) == {"solve", "ga", "tabu", "ils", "migration"}
    assert cfg["solve"] == {
        "time_limit": 12.5, "generations": 40, "target": "bks", "no_improvement": 7, "seed": 3,
        "strategy": "cpu-islands", "devices": ["cpu"], "islands": 2, "ls_islands": 1, "sync": True,
        "epoch_seconds": 0.5, "epoch_generations": 4, "scheduler": "tcp://127.0.0.1:8786", "dask_local": 2,
        "stop_at_optimum": False}
    assert set(cfg["solve"]) == set(SOLVE_KEYS)
    assert cfg["ga"] == GAParams(population=12, offspring=6, crossover="pmx", mutation=2, ls_budget=300,
                                 restart_after=9, restart="full")
    assert cfg["tabu"] == TabuParams(tenure="uniform", aspiration=5000, scale=3)
    assert cfg["ils"] == ILSParams(neighbours=8, window=30, kick="double-bridge", temperature=0)
    assert cfg["migration"] == MigrationParams(topology="complete", policy="elite", interval=3, archive=5)


def test_empty_file_gives_defaults(write):
    assert read_config(write("")) == {"solve": {}}
    assert read_config(write("# only a comment\n\n")) == {"solve": {}}


def test_sections_are_optional_and_partial(write):
    cfg = read_config(write("[ga]\npopulation = 4\n"))
    assert cfg == {"solve": {}, "ga": GAParams(population=4)}
    cfg = read_config(write("[solve]\ntarget = 1234\n[migration]\n"))
    assert cfg["solve"] == {"target": 1234}
    assert cfg["migration"] == MigrationParams()


def test_integers_are_accepted_for_float_keys(write):
    cfg = read_config(write("[solve]\ntime_limit = 5\nepoch_seconds = 2\n[ils]\ntemperature = 1\n"))
    assert cfg["solve"]["time_limit"] == 5 and cfg["ils"].temperature == 1


def test_path_can_be_a_string(write):
    assert read_config(str(write("[ga]\noffspring = 3\n")))["ga"].offspring == 3


def assert_one_line_error(write, text: str, message: str) -> None:
    """The config ``text`` is refused with one line that names the file, then says ``message``."""
    path = write(text)
    with pytest.raises(InputFormatError, match=message) as info:
        read_config(path)
    assert str(info.value).startswith(f"{path}: ")
    assert "\n" not in str(info.value)


# ------------------------------------------------------------------------ unknown names


@pytest.mark.parametrize(("text", "message"), [
    ("[solver]\ntime_limit = 3\n",
     r"unknown section \[solver\] \(expected solve, ga, eax, ils, perm, tabu, migration\) \(did you mean solve\?\)"),
    ("[GA]\npopulation = 3\n", r"unknown section \[GA\]"),
    ("[solve]\ntimelimit = 3\n", r"unknown key\(s\) in \[solve\]: timelimit \(did you mean time_limit\?\); "
                                 r"its keys are time_limit, generations, "),
    ("[solve]\nb = 1\na = 2\n", r"unknown key\(s\) in \[solve\]: a, b"),
    ("[ga]\npopulaton = 3\n", r"unknown key\(s\) in \[ga\]: populaton \(did you mean population\?\); its keys are "
                              r"population, offspring, crossover, mutation, ls_budget, restart_after, restart, "
                              r"replacement$"),
    ("[tabu]\ntenures = 'cubic'\n", r"unknown key\(s\) in \[tabu\]: tenures"),
    ("[ils]\nkicks = 3\n", r"unknown key\(s\) in \[ils\]: kicks"),
    ("[migration]\ntopologie = 'ring'\n", r"unknown key\(s\) in \[migration\]: topologie"),
    ("[ga.extra]\nx = 1\n", r"unknown key\(s\) in \[ga\]: extra"),
    ("time_limit = 3\n", r"'time_limit' must be a \[section\]"),
])
def test_unknown_sections_and_keys(write, text, message):
    assert_one_line_error(write, text, message)


# ---------------------------------------------------------------------------------- bad TOML


BAD_TOML = [
    ("[solve]\ntime_limit = \n", 2),
    ("[ga]\npopulation = 3\noffspring = 4\ncrossover = ux\n", 4),
    ("[solve]\nseed = 1\nseed = 2\n", 3),
    ("[ga\npopulation = 3\n", 1),
    ("\n\n\n[solve]\nstrategy = \"cpu-serial\n", 5),
    ("[solve]\ntime_limit = 1\n[solve]\nseed = 2\n", 3),
]


@pytest.mark.parametrize(("text", "line"), BAD_TOML)
def test_bad_toml_is_a_one_line_error(write, text, line):
    path = write(text)
    with pytest.raises(InputFormatError, match="invalid TOML") as info:
        read_config(path)
    assert str(info.value).startswith(str(path))
    assert "\n" not in str(info.value)


@pytest.mark.parametrize(("text", "line"), BAD_TOML)
def test_bad_toml_names_the_line(write, text, line):
    path = write(text)
    with pytest.raises(InputFormatError) as info:
        read_config(path)
    err = info.value
    assert err.line == line
    assert str(err).startswith(f"{path}:{line}: invalid TOML")


def test_non_utf8_is_a_clean_error(write):
    with pytest.raises(InputFormatError, match="invalid TOML"):
        read_config(write(b"[solve]\nstrategy = \"\xff\xfe\"\n"))


def test_missing_file(tmp_path):
    with pytest.raises(InputFormatError, match="no such file") as info:
        read_config(tmp_path / "absent.toml")
    assert str(tmp_path / "absent.toml") in str(info.value)


def test_directory_is_a_clean_error(tmp_path):
    with pytest.raises(MetaheurError, match="not a regular file"):
        read_config(tmp_path)


# -------------------------------------------------------------------------------- bad values


@pytest.mark.parametrize(("text", "message"), [
    ("[ga]\npopulation = 0\ncrossover = \"ux\"\n",
     r"\[ga\] population must be at least 1 \(0, automatic, with eax\), got 0"),
    ("[ga]\noffspring = -1\n", r"\[ga\] offspring per generation must be at least 1"),
    ("[ga]\ncrossover = \"zz\"\n", r"\[ga\] unknown crossover 'zz'"),
    ("[ga]\nmutation = -3\n", r"\[ga\] mutation must be from 0 to 2147483647"),
    ("[ga]\nrestart_after = -1\n", r"\[ga\] restart_after must be >= 0"),
    ("[ga]\nrestart = \"half\"\n", r"\[ga\] unknown restart 'half': use one of best, full"),
    ("[ga]\nls_budget = -1\n", r"\[ga\] local-search budget must be >= 0"),
    ("[tabu]\ntenure = \"quadratic\"\n", r"\[tabu\] tenure rule must be one of cubic, uniform"),
    ("[tabu]\nscale = 0\n", r"\[tabu\] cubic tenure scale must be from 1 to 1048575, got 0"),
    ("[tabu]\naspiration = 0\n", r"\[tabu\] aspiration horizon must be at least 1"),
    ("[ils]\nneighbours = 99\n", r"\[ils\] neighbour lists hold 1 to 32 cities"),
    ("[ils]\nkick = \"earthquake\"\n", r"\[ils\] kick must be one of"),
    ("[ils]\ntemperature = -0.5\n", r"\[ils\] temperature must be >= 0"),
    ("[migration]\ntopology = \"star\"\n", r"\[migration\] topology must be one of ring, complete, random"),
    ("[migration]\npolicy = \"worst\"\n", r"\[migration\] migration policy must be one of"),
    ("[migration]\ninterval = -1\n", r"\[migration\] migration interval must be 0 \(never\)"),
    ("[migration]\narchive = 0\n", r"\[migration\] elite archive size must be at least 1"),
])
def test_bad_parameter_values(write, text, message):
    assert_one_line_error(write, text, message)


@pytest.mark.parametrize(("text", "message"), [
    ("[ga]\npopulation = \"20\"\n", r"\[ga\] population must be int, got '20'"),
    ("[ga]\npopulation = 2.5\n", r"\[ga\] population must be int"),
    ("[ga]\npopulation = true\n", r"\[ga\] population must be int, got True"),
    ("[ga]\ncrossover = 3\n", r"\[ga\] crossover must be str"),
    ("[tabu]\naspiration = \"many\"\n", r"\[tabu\] aspiration must be int"),
    ("[ils]\ntemperature = \"hot\"\n", r"\[ils\] temperature must be int or float"),
    ("[migration]\ninterval = [1]\n", r"\[migration\] interval must be int"),
    ("[solve]\ntime_limit = true\n", r"\[solve\] time_limit must be int or float, got True"),
    ("[solve]\ntime_limit = \"10\"\n", r"\[solve\] time_limit must be int or float"),
    ("[solve]\nseed = 1.0\n", r"\[solve\] seed must be int"),
    ("[solve]\nsync = \"yes\"\n", r"\[solve\] sync must be bool"),
    ("[solve]\nsync = 1\n", r"\[solve\] sync must be bool"),
    ("[solve]\ntarget = 1.5\n", r"\[solve\] target must be int or str"),
    ("[solve]\ndevices = \"cpu\"\n", r"\[solve\] devices must be list"),
    ("[solve]\ndevices = [0, 1]\n", r"\[solve\] devices must be a list of names"),
    ("[solve]\nstrategy = [\"gpu\"]\n", r"\[solve\] strategy must be str"),
    ("[solve]\nislands = 2.0\n", r"\[solve\] islands must be int"),
])
def test_values_of_the_wrong_type(write, text, message):
    assert_one_line_error(write, text, message)


@pytest.mark.parametrize(("text", "message"), [
    ("[solve]\ntime_limit = inf\n", r"\[solve\] time_limit must be a finite number, got inf"),
    ("[solve]\nepoch_seconds = nan\n", r"\[solve\] epoch_seconds must be a finite number, got nan"),
    ("[ils]\ntemperature = -inf\n", r"\[ils\] temperature must be a finite number, got -inf"),
])
def test_non_finite_numbers(write, text, message):
    """TOML has inf and nan; no parameter means them (a time limit of inf wrote Infinity in the JSON)."""
    assert_one_line_error(write, text, message)


@pytest.mark.parametrize(("text", "message"), [
    ("a = " + "[" * 100_000 + "]" * 100_000 + "\n", "invalid TOML: nested too deep"),
    ("[solve]\nseed = " + "9" * 5000 + "\n", "invalid TOML: an integer too long to read"),
])
def test_what_python_cannot_hold_is_one_line(write, text, message):
    assert_one_line_error(write, text, message)


def test_the_first_error_is_reported_once(write):
    path = write("[ga]\npopulation = 0\noffspring = 0\n")
    with pytest.raises(InputFormatError) as info:
        read_config(path)
    assert str(info.value).count("must be at least 1") == 1


def test_the_deprecated_walk_islands_key_reads_as_ls_islands(write):
    assert read_config(write("[solve]\nwalk_islands = 1\n"))["solve"] == {"ls_islands": 1}


def test_solve_params_from_the_cli_config_file(write):
    """SolveParams.from_file reads the file the CLI reads; solve()'s own keys are named in a warning."""
    with pytest.warns(UserWarning, match="time_limit, generations, target, no_improvement, seed are arguments"):
        params = SolveParams.from_file(write(FULL))
    assert params == SolveParams(
        strategy="cpu-islands", devices=("cpu",), islands=2, ls_islands=1, sync=True, epoch_seconds=0.5,
        epoch_generations=4, scheduler="tcp://127.0.0.1:8786", dask_local=2, stop_at_optimum=False,
        ga=GAParams(population=12, offspring=6, crossover="pmx", mutation=2, ls_budget=300, restart_after=9,
                    restart="full"),
        searches={"tabu": TabuParams(tenure="uniform", aspiration=5000, scale=3),
                  "ils": ILSParams(neighbours=8, window=30, kick="double-bridge", temperature=0)},
        migration=MigrationParams(topology="complete", policy="elite", interval=3, archive=5))
    assert {f.name for f in dataclasses.fields(SolveParams)} - {"ga", "searches", "migration"} \
        == set(SOLVE_KEYS) - set(RUN_KEYS)


def test_keys_a_section_took_over_are_read_there_with_a_warning(write):
    """``[ga] tries`` (before the TSP's [eax] section) is read as ``[eax] tries``; a key given in
    both places keeps the new section's."""
    with pytest.warns(FutureWarning, match=r"\[ga\] tries -> \[eax\], \[ga\] starts -> \[eax\]: read there"):
        cfg = read_config(write("[ga]\npopulation = 8\ntries = 7\nstarts = 'random'\n[eax]\nstarts = 'curve'\n"))
    assert cfg["ga"] == GAParams(population=8)
    assert (cfg["eax"].tries, cfg["eax"].starts) == (7, "curve")
    assert SolveParams.from_config(cfg).eax == cfg["eax"]


def test_solve_params_from_file_validates_as_the_cli_does(write):
    with pytest.raises(MetaheurError, match=r"\[solve\] stop_at_optimum must be bool"):
        SolveParams.from_file(write('[solve]\nstop_at_optimum = "no"\n'))
    with pytest.raises(MetaheurError, match="unknown key"):
        SolveParams.from_file(write("[ga]\npopulaton = 3\n"))
    assert SolveParams.from_file(write("[solve]\nislands = 3\n")) == SolveParams(islands=3)
