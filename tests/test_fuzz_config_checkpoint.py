"""Property-based tests of the config (TOML) and checkpoint (npz) readers: whatever the bytes, they
return a valid result or raise the user-facing error, never anything else."""

from __future__ import annotations

import io

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from metaheur.checkpoint import load_checkpoint
from metaheur.config import read_config
from metaheur.errors import MetaheurError
from metaheur.solve_params import SolveParams
from metaheur.solver import resumed_instance, solve

VALID_TOML = b"""
[solve]
time_limit = 5.0
seed = 3
strategy = "cpu-islands"

[ga]
population = 12
offspring = 6
crossover = "cx"

[tabu]
tenure = "uniform"

[migration]
topology = "complete"
interval = 2
"""


def test_valid_config_is_read(tmp_path):
    path = tmp_path / "run.toml"
    path.write_bytes(VALID_TOML)
    cfg = read_config(path)
    assert cfg["solve"] == {"time_limit": 5.0, "seed": 3, "strategy": "cpu-islands"}
    assert (cfg["ga"].population, cfg["ga"].crossover, cfg["tabu"].tenure) == (12, "cx", "uniform")
    assert (cfg["migration"].topology, cfg["migration"].interval) == ("complete", 2)


@settings(deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_corrupted_config_gives_a_clean_error(tmp_path, data):
    raw = bytearray(VALID_TOML)
    for _ in range(data.draw(st.integers(1, 6))):
        kind = data.draw(st.sampled_from(["flip", "delete", "insert", "truncate"]))
        at = data.draw(st.integers(0, max(0, len(raw) - 1)))
        if kind == "flip" and raw:
            raw[at] = data.draw(st.integers(0, 255))
        elif kind == "delete" and raw:
            del raw[at : at + data.draw(st.integers(1, 20))]
        elif kind == "insert":
            raw[at:at] = data.draw(st.binary(min_size=1, max_size=12))
        else:
            del raw[at:]
    path = tmp_path / "fuzz.toml"
    path.write_bytes(bytes(raw))
    try:
        cfg = read_config(path)
    except MetaheurError:
        return
    assert set(cfg) <= {"solve", "ga", "tabu", "ils", "migration"}


@pytest.fixture(scope="module")
def checkpoint_bytes(tmp_path_factory):
    path = tmp_path_factory.mktemp("ckpt") / "run.npz"
    solve("gen:qap:12", seed=1, params=SolveParams(strategy="cpu-serial", sync=True, epoch_generations=1),
          checkpoint=str(path), generations=2)
    return path.read_bytes()


def test_checkpoint_round_trip(checkpoint_bytes, tmp_path):
    path = tmp_path / "c.npz"
    path.write_bytes(checkpoint_bytes)
    cp = load_checkpoint(path)
    cp.validate(resumed_instance(cp))
    assert cp.settings.problem.n == 12
    assert cp.record.next_epoch == 2
    assert all(s.population is not None and s.best_cost is not None for s in cp.states)


@settings(deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_corrupted_checkpoint_gives_a_clean_error(checkpoint_bytes, tmp_path, data):
    raw = bytearray(checkpoint_bytes)
    for _ in range(data.draw(st.integers(1, 4))):
        kind = data.draw(st.sampled_from(["flip", "truncate", "zero"]))
        at = data.draw(st.integers(0, len(raw) - 1))
        if kind == "flip":
            raw[at] ^= data.draw(st.integers(1, 255))
        elif kind == "zero":
            raw[at : at + 64] = bytes(len(raw[at : at + 64]))
        else:
            del raw[at:]
            if not raw:
                break
    path = tmp_path / "fuzz.npz"
    path.write_bytes(bytes(raw))
    try:
        cp = load_checkpoint(path)
        cp.validate(resumed_instance(cp))
    except MetaheurError:
        return
    assert len(cp.states) == len(cp.params) and all(s.population is not None for s in cp.states)


def test_checkpoint_of_a_header_without_islands_is_refused(tmp_path):
    buf = io.BytesIO()
    np.savez(buf, header=np.array('{"format": 1, "metaheur": "0.0.0"}'))
    path = tmp_path / "other.npz"
    path.write_bytes(buf.getvalue())
    with pytest.raises(MetaheurError, match=r"metaheur 0\.0\.0"):
        load_checkpoint(path)
