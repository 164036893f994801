"""Output files of a run (``--json``, ``--stats``, ``--solution``, ``--plot``, ``--checkpoint``):
checked before any search starts, and written so that one failure loses nothing else.

Before the search every path is expanded (``{name}`` per instance, by the instance's name made
one plain file name: :func:`safe_name`), and refused with one line when it could not be
written: a directory, a folder that does not exist or cannot be written in, a figure format
matplotlib cannot write, several instances without ``{name}``, two outputs on one file, an output on a file the run
reads (an instance, ``--config``, ``--initial``, the checkpoint resumed: an input is never
overwritten; symlinks and hard links are followed, :func:`file_key`). ``-``
sends the JSON or the statistics to standard output. At the end each output is written on its
own through a temporary file in its folder and a rename (a reader never sees half a file, a
failure leaves no temporary file); a failure is reported and the other outputs are still
written. A character device or a FIFO (``/dev/null``, a named pipe) is written in place, and a
symlink is written through: the file it points to is replaced, the link stays.
"""

from __future__ import annotations

import contextlib
import errno
import json
import math
import os
import re
import stat
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from metaheur import stdio
from metaheur.errors import MetaheurError
from metaheur.inputs import file_kind

STDOUT = "-"
CHECKPOINT = "--checkpoint"
STDOUT_OPTIONS = ("--json", "--stats")
_UNSAFE = re.compile(r"[^A-Za-z0-9._+-]")
_NAME_LIMIT = 200
FIGURE_FORMATS = {".png": "png", ".svg": "svg", ".pdf": "pdf", ".jpg": "jpeg", ".jpeg": "jpeg"}


def figure_format(path: str, option: str = "--plot") -> str:
    """The matplotlib format of a figure file, from its extension (PNG, SVG, PDF; JPEG when
    matplotlib's Pillow writer is there)."""
    suffix = Path(path).suffix.lower()
    fmt = FIGURE_FORMATS.get(suffix)
    if fmt is None:
        raise MetaheurError(f"{option} {path}: unknown figure format {suffix or '(no extension)'}; "
                            f"use {', '.join(FIGURE_FORMATS)}")
    if fmt == "jpeg":
        from matplotlib.backend_bases import FigureCanvasBase

        if "jpeg" not in FigureCanvasBase.get_supported_filetypes():
            raise MetaheurError(f"{option} {path}: this matplotlib cannot write JPEG (install Pillow), "
                                "use .png, .svg or .pdf")
    return fmt


def in_place(path: str | os.PathLike) -> bool:
    """Whether an output is written in place, opened and written as it is: a character device
    (``/dev/null``) or a FIFO, also through a symlink; a regular file is replaced instead."""
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return False
    return stat.S_ISCHR(mode) or stat.S_ISFIFO(mode)


def output_file(path: str | os.PathLike) -> str:
    """The file an output replaces: ``path``, or the file a symlink points to (the link is kept)."""
    return os.path.realpath(path) if os.path.islink(path) else os.fspath(path)


def check_writable(path: str, option: str) -> None:
    """Refuse a path that cannot be written: a directory, a block device or socket, a missing
    folder, a folder in which no file can be created (tried with a temporary file, so it holds
    for every user). A character device or FIFO is only checked for write permission (never
    opened: a FIFO would wait for its reader). A checkpoint (``--checkpoint``) is a regular file:
    a FIFO or device is refused for it (a run would wait on it, and it could not be read back).
    A path through a loop of symbolic links is refused."""
    try:
        os.stat(path)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise MetaheurError(f"{option} {path}: {exc.strerror}") from None
    if in_place(path):
        if option == CHECKPOINT:
            raise MetaheurError(f"{option} {path}: is {file_kind(os.stat(path).st_mode)}; a checkpoint is a "
                                "regular file")
        if not os.access(path, os.W_OK):
            raise MetaheurError(f"{option} {path}: the file is not writable")
        return
    target = Path(output_file(path))
    if target.exists() and not (target.is_file() or target.is_dir()):
        raise MetaheurError(f"{option} {path}: is {file_kind(target.stat().st_mode)}; give a file name")
    if target.is_dir():
        raise MetaheurError(f"{option} {path}: is a directory; give a file name")
    folder = target.parent
    if not folder.is_dir():
        raise MetaheurError(f"{option} {path}: no folder {folder}")
    try:
        with tempfile.NamedTemporaryFile(dir=folder, prefix=f".{target.name}.", suffix=".probe"):
            pass
    except OSError as exc:
        raise MetaheurError(f"{option} {path}: cannot write in {folder}: {exc.strerror or exc}") from None
    if target.exists() and not os.access(target, os.W_OK):
        raise MetaheurError(f"{option} {path}: the file is not writable")


def safe_name(name: str) -> str:
    """An instance name as it replaces ``{name}`` in a path: one plain file name, whatever the
    instance file says (``NAME: ../../x``): every character but ``A-Z a-z 0-9 . _ + -`` becomes
    ``_``, leading dots and dashes go (no ``..``, no hidden file, nothing a command takes for an
    option), at most 200 characters, ``instance`` for nothing left."""
    return _UNSAFE.sub("_", name).lstrip(".-")[:_NAME_LIMIT] or "instance"


def file_key(path: str | os.PathLike) -> tuple:
    """What identifies the file ``path`` names: its device and inode when it exists (the same for
    a symlink or a hard link to it), else its real path (links in its folders resolved)."""
    try:
        status = os.stat(path)
    except (OSError, ValueError):
        return ("path", os.path.realpath(path))
    return ("inode", status.st_dev, status.st_ino)


def plan_outputs(templates: dict[str, str | None], names: list[str],
                 inputs: list[tuple[str, str | os.PathLike]] = (), continues: dict[str, str] | None = None
                 ) -> list[dict[str, str]]:
    """For each instance (``names``, in order) the paths of its outputs, ``{option: path}``, all
    checked; ``templates``: the options as given (``None``: not asked for). No output may replace
    a file that another output writes (a device or a FIFO takes any number of them) or a file the
    run reads, ``inputs`` (``(what, path)``: the instance files, ``--config``, ``--initial``, the
    checkpoint resumed), through symlinks and hard links too (:func:`file_key`); ``continues``
    (``{option: what}``) names the one output that may rewrite an input, as ``--checkpoint``
    does with the checkpoint it resumes."""
    given = {option: t for option, t in templates.items() if t is not None}
    many = len(names) > 1
    to_stdout = [option for option, t in given.items() if t == STDOUT]
    for option in to_stdout:
        if option not in STDOUT_OPTIONS:
            raise MetaheurError(f"{option} -: only {' and '.join(STDOUT_OPTIONS)} write to standard output")
        if many:
            raise MetaheurError(f"{option} -: standard output takes one instance's output; with several "
                                "instances put {name} in a path")
    if len(to_stdout) > 1:
        raise MetaheurError(f"{' and '.join(to_stdout)} both ask for standard output; give one of them a file")
    read: dict[tuple, tuple[str, str]] = {}  # file key -> the input read from it: (what, path)
    for what, path in inputs:
        read.setdefault(file_key(path), (what, os.fspath(path)))
    continues = continues or {}
    plans: list[dict[str, str]] = []
    writers: dict[tuple, str] = {}  # file key -> the output that writes it
    for name in map(safe_name, names):
        plan: dict[str, str] = {}
        for option, template in given.items():
            if template == STDOUT:
                plan[option] = STDOUT
                continue
            if many and "{name}" not in template:
                raise MetaheurError(f"{option}: with several instances, put {{name}} in the path "
                                    f"(e.g. out/{{name}}{Path(template).suffix or '.json'})")
            path = template.replace("{name}", name)
            check_writable(path, option)
            plan[option] = path
            if not in_place(path):  # several outputs may go to /dev/null or a pipe, which no input is
                key = file_key(path)
                who = f"{option} of {name}" if many else option
                if key in read and read[key][0] != continues.get(option):
                    raise MetaheurError(f"{who} {path} would overwrite an input of the run "
                                        f"({' '.join(read[key])}); give another file")
                if key in writers:
                    raise MetaheurError(f"{who} and {writers[key]} would both write {path}")
                writers[key] = who
            if option == "--plot":
                figure_format(path)
        plans.append(plan)
    return plans


def _new_file_mode() -> int:
    """The permissions of a file created now: read and write for all, less the umask (read from
    /proc/self/status on Linux; elsewhere set and restored, which briefly changes it)."""
    try:
        with open("/proc/self/status") as status:
            mask = next(int(ln.split()[1], 8) for ln in status if ln.startswith("Umask:"))
    except (OSError, StopIteration, ValueError, IndexError):
        mask = os.umask(0o022)
        os.umask(mask)
    return 0o666 & ~mask


def write_atomically(path: str | os.PathLike, write: Callable[[str], None]) -> None:
    """``write(temporary path)`` in the target's folder, then rename it over the target; on any
    failure the temporary file is removed and the error raised. The target is ``path``, or for a
    symlink the file it points to (the link stays a link); a character device or a FIFO
    (:func:`in_place`) is written in place, ``write(path)``. The file gets the permissions a new
    file gets under the umask (the temporary file's are the owner's only), or keeps those of the
    file it replaces."""
    if in_place(path):
        write(os.fspath(path))
        return
    target = Path(output_file(path))
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    os.close(fd)
    try:
        write(tmp)
        try:
            mode = stat.S_IMODE(target.stat().st_mode)
        except FileNotFoundError:  # also one that another run removed meanwhile
            mode = _new_file_mode()
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def write_text_atomically(path: str | os.PathLike, text: str) -> None:
    """:func:`write_atomically` of a text."""
    write_atomically(path, lambda tmp: Path(tmp).write_text(text))


def finite(data: object) -> object:
    """JSON-ready ``data`` with every non-finite float as None (a time limit of ``inf`` given to
    the API, which means none, is written as null)."""
    if isinstance(data, float):
        return data if math.isfinite(data) else None
    if isinstance(data, dict):
        return {k: finite(v) for k, v in data.items()}
    if isinstance(data, (list, tuple)):
        return [finite(v) for v in data]
    return data


def strict_json(data: object) -> str:
    """``data`` as strict JSON (indented): no NaN or Infinity, which are not JSON (:func:`finite`)."""
    return json.dumps(finite(data), indent=2, allow_nan=False)


@dataclass(frozen=True)
class Output:
    """One output to write: ``text()`` (may go to standard output) or ``write(path)`` (a file)."""

    option: str
    path: str
    text: Callable[[], str] | None = None
    write: Callable[[str], None] | None = None


def save(outputs: list[Output], echo: Callable[[str], None]) -> list[str]:
    """Write every output (``echo`` prints to standard output); returns one message per output
    that failed, the others written all the same. Files first, then standard output, devices and
    FIFOs (which may wait for a reader): an output that a stop signal interrupts while it waits
    (the second signal, :func:`metaheur.signals.deferred`), that runs out of memory or beyond a
    file-size limit, or asks for a closed standard output, is a failure; the others are written."""
    failed = []
    for out in sorted(outputs, key=lambda o: o.path == STDOUT or in_place(o.path)):
        try:
            if out.path == STDOUT:
                if stdio.closed(1):
                    failed.append(f"{out.option} -: standard output is closed")
                    continue
                echo(out.text())
            elif out.text is not None:
                write_text_atomically(out.path, out.text())
            else:
                write_atomically(out.path, out.write)
        except (OSError, MetaheurError) as exc:
            why = exc.strerror or str(exc) if isinstance(exc, OSError) else str(exc)
            failed.append(f"{out.option} {out.path}: {why}")
        except MemoryError:
            failed.append(f"{out.option} {out.path}: out of memory")
        except KeyboardInterrupt:
            failed.append(f"{out.option} {out.path}: interrupted")
    return failed
