"""The files a user hands over (instances, solution files, result JSON, configuration files):
every reader opens them here, and reads regular files only, and at most a size cap each.

A FIFO, a device, a directory or a socket is refused in one line (``X: not a regular file``)
before it is opened (a FIFO is never opened, so a run never waits on one, and nothing is read
from ``/dev/zero``); a file beyond the cap of its kind is refused in one line (``X: larger than
N bytes``) after reading at most N + 1 bytes. A read allocates what the file holds, never the
cap (a run under a memory limit reads a small file). The caps (:data:`LIMITS`): 2 GiB for an
instance, 256 MiB for a solution file or a result JSON, 1 MiB for a configuration file; the
environment variable ``METAHEUR_MAX_INPUT_BYTES``, when set, is the cap of every kind. Gzipped
files are not read (no reader takes them).

Integers in files are ASCII digits with an optional sign (:func:`is_integer`): Python's
``int()`` also takes ``1_000`` and other scripts' digits (``١٢``), and JSON's ``true`` is an
``int`` to Python (:func:`is_json_int`); no file format means them as integers.
"""

from __future__ import annotations

import json
import os
import re
import stat
from typing import BinaryIO

from metaheur.errors import InputFormatError, MetaheurError

LIMIT_VAR = "METAHEUR_MAX_INPUT_BYTES"
INSTANCE, SOLUTION, CONFIG = "instance", "solution", "config"
#: The size cap of each kind of input, in bytes (``METAHEUR_MAX_INPUT_BYTES`` overrides them all).
LIMITS = {INSTANCE: 2 << 30, SOLUTION: 256 << 20, CONFIG: 1 << 20}
_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))
_INTEGER = re.compile(r"[+-]?[0-9]+")
_DIGITS = re.compile(r"[0-9]+")
_CHUNK = 1 << 20  # what a read asks for once the size fstat gave is read (a file that grows)


def input_limit(kind: str) -> int:
    """The size cap of an input of ``kind`` (:data:`LIMITS`, or ``METAHEUR_MAX_INPUT_BYTES``)."""
    value = os.environ.get(LIMIT_VAR)
    if not value:
        return LIMITS[kind]
    if not is_integer(value.strip()) or int(value) < 1:
        raise MetaheurError(f"{LIMIT_VAR} must be a positive number of bytes, got {value!r}")
    return int(value)


def file_kind(mode: int) -> str:
    """What a file of this ``st_mode`` is, in words ("a FIFO"; "a special file" when none fits)."""
    return next((words for test, words in _KINDS if test(mode)), "a special file")


def check_regular(path: str | os.PathLike) -> os.stat_result:
    """The status of ``path`` (symlinks followed) when it is a regular file; a missing file,
    a directory, FIFO, device or socket is a one-line :class:`InputFormatError` (nothing opened)."""
    try:
        status = os.stat(path)
    except FileNotFoundError:
        raise InputFormatError(path, "no such file") from None
    except (OSError, ValueError) as exc:  # ValueError: a NUL in the path
        raise InputFormatError(path, f"cannot read: {getattr(exc, 'strerror', None) or exc}") from None
    if not stat.S_ISREG(status.st_mode):
        raise InputFormatError(path, f"not a regular file ({file_kind(status.st_mode)})")
    return status


def open_regular(path: str | os.PathLike) -> BinaryIO:
    """``path`` open for binary reading when it is a regular file: checked before it is opened
    (:func:`check_regular`) and again once open (a path swapped in between), never waiting on a FIFO."""
    check_regular(path)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    except OSError as exc:
        raise InputFormatError(path, f"cannot read: {exc.strerror or exc}") from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise InputFormatError(path, f"not a regular file ({file_kind(mode)})")
    os.set_blocking(fd, True)
    return os.fdopen(fd, "rb")


def too_large(path: str | os.PathLike, limit: int) -> InputFormatError:
    """The error of a file beyond its cap."""
    return InputFormatError(path, f"larger than {limit} bytes (set {LIMIT_VAR} to raise the limit)")


def read_bytes(path: str | os.PathLike, kind: str = INSTANCE) -> bytes:
    """The content of the regular file ``path``, refused beyond the cap of ``kind``. Only what the
    file holds is allocated: its size (fstat) and one byte, then chunks while it grows, never
    more than the cap and one byte (a run under a memory limit reads a small file)."""
    limit = input_limit(kind)
    with open_regular(path) as handle:
        size = os.fstat(handle.fileno()).st_size
        if size > limit:
            raise too_large(path, limit)
        parts, total, want = [], 0, size + 1
        try:
            while total <= limit:
                ask = min(want, limit + 1 - total)
                parts.append(handle.read(ask))
                total += len(parts[-1])
                if len(parts[-1]) < ask:  # the end of the file
                    break
                want = _CHUNK
        except OSError as exc:
            raise InputFormatError(path, f"cannot read: {exc.strerror or exc}") from None
    if total > limit:
        raise too_large(path, limit)
    return b"".join(parts)


def read_utf8(path: str | os.PathLike, kind: str) -> str:
    """:func:`read_bytes` as UTF-8 text (JSON, TOML, CSV); other bytes are a one-line error."""
    try:
        return read_bytes(path, kind).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputFormatError(path, f"not UTF-8 text (byte {exc.start})") from None


def is_integer(token: str, signed: bool = True) -> bool:
    """Whether ``token`` is an integer as files write one: ASCII digits with an optional sign
    (``signed``), or digits alone."""
    return (_INTEGER if signed else _DIGITS).fullmatch(token) is not None


def parse_int(token: str) -> int:
    """``token`` as an int when :func:`is_integer`; a ValueError otherwise."""
    if not is_integer(token):
        raise ValueError(f"{token!r} is not an integer")
    return int(token)


def is_json_int(value: object) -> bool:
    """Whether a value read from JSON is an integer (``true`` and ``false`` are not)."""
    return isinstance(value, int) and not isinstance(value, bool)


def parse_json(text: str, path: str | os.PathLike | None) -> object:
    """JSON ``text`` (of the file ``path``) as Python values, strictly: ``NaN`` and ``Infinity``,
    nesting too deep for Python and integers too long for it are one-line errors too."""
    def refuse(constant: str):
        raise InputFormatError(path, f"invalid JSON: {constant} is not a JSON number")

    try:
        return json.loads(text, parse_constant=refuse)
    except json.JSONDecodeError as exc:
        raise InputFormatError(path, f"invalid JSON: {exc.msg}", exc.lineno) from None
    except RecursionError:
        raise InputFormatError(path, "invalid JSON: nested too deep") from None
    except ValueError:  # Python's limit on the digits of an integer read from text
        raise InputFormatError(path, "invalid JSON: an integer too long to read") from None
