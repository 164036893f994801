"""The ``metaheur`` console script's entry point: imports the command line (numpy, the solver,
the problems: a few tenths of a second) inside the handling of Ctrl-C, so that a Ctrl-C while
the command starts is one line and status 130, never a Python traceback (docs/long-runs.md).
A memory limit too tight for those imports (``ulimit -v``) is one line and status 2 as well.
A top-level module of its own, since importing anything of the package runs all of it."""

import sys


def main() -> None:
    try:
        from metaheur.cli import main as cli_main
    except KeyboardInterrupt:
        sys.stderr.write("metaheur: interrupted\n")
        sys.exit(130)
    except MemoryError:
        if sys.stderr is not None:  # None: standard error was closed
            sys.stderr.write("metaheur: error: out of memory while starting: the command needs more memory than "
                             "this process may take (a limit such as ulimit -v?)\n")
        sys.exit(2)
    cli_main()
