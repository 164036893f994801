"""Every input through one bounded path (metaheur/inputs.py): regular files only, a size cap per
kind of input, integers as files write them, strict JSON."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from cliutil import fifo

from metaheur.config import read_config
from metaheur.errors import InputFormatError, MetaheurError
from metaheur.inputs import (
    CONFIG,
    INSTANCE,
    LIMIT_VAR,
    LIMITS,
    SOLUTION,
    check_regular,
    is_integer,
    is_json_int,
    parse_json,
    read_bytes,
)
from metaheur.problems import load_instance


@pytest.mark.parametrize(("make", "kind"), [
    (lambda p: p.mkdir(), "a directory"),
    (lambda p: os.symlink("/dev/null", p), "a character device"),
])
def test_only_regular_files_are_read(tmp_path, make, kind):
    path = tmp_path / "input"
    make(path)
    with pytest.raises(InputFormatError) as info:
        read_bytes(path)
    assert str(info.value) == f"{path}: not a regular file ({kind})"


def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path):
    with fifo(tmp_path / "pipe"), pytest.raises(InputFormatError, match=r"pipe: not a regular file \(a FIFO\)"):
        read_bytes(tmp_path / "pipe")
    assert check_regular(__file__).st_size > 0  # a regular file passes, its status returned


def test_a_missing_file_and_a_symlink_to_a_regular_file(tmp_path):
    with pytest.raises(InputFormatError, match="absent: no such file"):
        read_bytes(tmp_path / "absent")
    (tmp_path / "real").write_bytes(b"12 34")
    (tmp_path / "link").symlink_to(tmp_path / "real")
    assert read_bytes(tmp_path / "link") == b"12 34"


def test_the_size_cap_and_its_variable(tmp_path, monkeypatch):
    path = tmp_path / "eleven"
    path.write_bytes(b"0123456789\n")
    monkeypatch.setenv(LIMIT_VAR, "11")
    assert read_bytes(path, SOLUTION) == b"0123456789\n"
    monkeypatch.setenv(LIMIT_VAR, "10")
    with pytest.raises(InputFormatError) as info:
        read_bytes(path, CONFIG)
    assert str(info.value) == f"{path}: larger than 10 bytes (set {LIMIT_VAR} to raise the limit)"
    for bad in ("1_000", "ten", "0", "-5"):
        monkeypatch.setenv(LIMIT_VAR, bad)
        with pytest.raises(MetaheurError, match=f"{LIMIT_VAR} must be a positive number of bytes"):
            read_bytes(path)


@pytest.mark.skipif(not Path("/proc/self/status").is_file(), reason="needs Linux's /proc")
def test_the_cap_holds_for_a_file_longer_than_it_says(monkeypatch):
    """/proc files are regular files of size 0: the cap is on what is read, not on the size stated."""
    assert os.stat("/proc/self/status").st_size == 0
    monkeypatch.setenv(LIMIT_VAR, "16")
    with pytest.raises(InputFormatError, match="larger than 16 bytes"):
        read_bytes("/proc/self/status")


def test_each_kind_has_its_cap(tmp_path):
    assert LIMITS[INSTANCE] == 2 << 30 and LIMITS[SOLUTION] < LIMITS[INSTANCE] and LIMITS[CONFIG] < LIMITS[SOLUTION]
    path = tmp_path / "big.toml"
    path.write_text("# " + "x" * LIMITS[CONFIG] + "\n")
    with pytest.raises(InputFormatError, match=rf"big\.toml: larger than {LIMITS[CONFIG]} bytes"):
        read_config(path)


def test_an_instance_file_over_the_cap_is_refused(tmp_path, monkeypatch):
    path = tmp_path / "t.dat"
    path.write_text("2\n0 1\n1 0\n0 4\n4 0\n")
    assert load_instance(path).n == 2
    monkeypatch.setenv(LIMIT_VAR, "8")
    with pytest.raises(InputFormatError, match=r"t\.dat: larger than 8 bytes"):
        load_instance(path)


@pytest.mark.parametrize(("token", "expected"), [
    ("12", True), ("-3", True), ("+4", True), ("007", True),
    ("1_000", False), ("\u0661\u0662", False), ("\u00b2", False), ("\uff11", False), ("", False), ("1.0", False),
    (" 1", False), ("0x1", False), ("--1", False), ("1e3", False),
])
def test_integers_are_ascii_digits_with_an_optional_sign(token, expected):
    assert is_integer(token) is expected


def test_digits_alone_when_unsigned():
    assert is_integer("12", signed=False) and not is_integer("+12", signed=False)


def test_json_booleans_are_not_integers():
    assert is_json_int(3) and is_json_int(-(2**70))
    assert not any(is_json_int(v) for v in (True, False, 3.0, "3", None))


@pytest.mark.parametrize(("text", "message"), [
    ('{"a": NaN}', "invalid JSON: NaN is not a JSON number"),
    ('{"a": -Infinity}', "invalid JSON: -Infinity is not a JSON number"),
    ("[" * 100_000 + "]" * 100_000, "invalid JSON: nested too deep"),
    ("9" * 5000, "invalid JSON: an integer too long to read"),
    ('{"a": 1,}', "invalid JSON: Expecting property name enclosed in double quotes"),
])
def test_json_is_read_strictly(text, message):
    with pytest.raises(InputFormatError) as info:
        parse_json(text, "r.json")
    assert str(info.value).startswith("r.json") and str(info.value).endswith(message)
    assert "\n" not in str(info.value)
