"""The ``metaheur`` console script's entry point: imports the command line (numpy, the solver,
the problems: a few tenths of a second) with every stop signal (Ctrl-C, SIGTERM, SIGHUP) already
handled, so that one while the command starts is one line and status 128 + its number, never a
Python traceback nor a silent death (docs/long-runs.md). A memory limit too tight for those
imports (``ulimit -v``) is one line and status 2 as well. A top-level module of its own, since
importing anything of the package runs all of it."""

import signal
import sys

STOP_SIGNALS = [getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name)]


def main() -> None:
    received: list[int] = []

    def stop(signum: int, frame) -> None:
        received.append(signum)
        raise KeyboardInterrupt

    for signum in STOP_SIGNALS:
        signal.signal(signum, stop)
    try:
        from metaheur.cli import main as cli_main

        cli_main()  # installs its own handling first thing
    except KeyboardInterrupt:
        sys.stderr.write("metaheur: interrupted\n")
        sys.exit(128 + (received[0] if received else signal.SIGINT))
    except MemoryError:
        if sys.stderr is not None:  # None: standard error was closed
            sys.stderr.write("metaheur: error: out of memory while starting: the command needs more memory than "
                             "this process may take (a limit such as ulimit -v?)\n")
        sys.exit(2)
