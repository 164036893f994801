"""Island epochs that misbehave on purpose, for the fault tests (importable by worker processes)."""

from __future__ import annotations

import os
import signal

from metaheur.islands.island import run_epoch


class OutOfMemoryError(Exception):
    """Stands in for cupy.cuda.memory.OutOfMemoryError (recognised by its name)."""


def killed_once(spec, state, *, marker: str, kills: int = 1, **budget):
    """The first ``kills`` calls in worker processes die by SIGKILL mid-epoch; later calls work.
    Each writes its pid to a marker file ``{marker}.{k}`` first, created atomically, so that
    exactly ``kills`` calls die however the workers race."""
    if budget.get("in_worker"):
        for k in range(kills):
            try:
                fd = os.open(f"{marker}.{k}", os.O_CREAT | os.O_EXCL | os.O_WRONLY)
            except FileExistsError:
                continue
            os.write(fd, str(os.getpid()).encode())
            os.close(fd)
            os.kill(os.getpid(), signal.SIGKILL)
    return run_epoch(spec, state, **budget)


def gpu_out_of_memory(spec, state, **budget):
    """An island on a (pretend) GPU always runs out of memory; on the CPU it works."""
    if spec.device != "cpu":
        raise OutOfMemoryError("out of memory allocating 1 GiB")
    return run_epoch(spec, state, **budget)


def fails_after_first_epoch(spec, state, **budget):
    """The second epoch of every island fails with a user-facing error."""
    from metaheur.errors import MetaheurError

    if state.generation > 0:
        raise MetaheurError("device lost")
    return run_epoch(spec, state, **budget)


def die_by(signum: int) -> None:
    """End this (worker) process by signal ``signum``, as a crash of native code would."""
    import faulthandler

    faulthandler.disable()  # no stack dump on the test's stderr
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)


def launch_failing_import(monkeypatch, exc: type[BaseException]) -> int:
    """Run the console script's entry point with ``exc`` raised by its import of the command line;
    the exit status it ends with."""
    import builtins

    import pytest

    import _metaheur_launch

    real_import = builtins.__import__

    def failing_import(name, *args, **kwargs):
        if name == "metaheur.cli":
            raise exc
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", failing_import)
    with pytest.raises(SystemExit) as stop:
        _metaheur_launch.main()
    return stop.value.code


def live_processes() -> dict[int, tuple[int, int]]:
    """Every live (not zombie) process: its (parent pid, process group) by pid (reads /proc)."""
    out = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if fields[0] != "Z":
                out[int(entry)] = (int(fields[1]), int(fields[2]))
    return out
