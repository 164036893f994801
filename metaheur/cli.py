"""The ``metaheur`` command line (click).

A user mistake (bad file, impossible option, missing device) is one line on stderr and exit
status 2, never a traceback.
"""

from __future__ import annotations

import json
import sys

import click

from metaheur import __version__
from metaheur.errors import MetaheurError


class UserError(click.ClickException):
    """A :class:`MetaheurError` on its way out of the CLI: one line, exit status 2."""

    exit_code = 2

    def show(self, file=None) -> None:
        click.echo(f"metaheur: error: {self.message}", err=True)


class _Group(click.Group):
    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except MetaheurError as exc:
            raise UserError(str(exc)) from None
        except OSError as exc:  # an output path that cannot be written, a full disk, ...
            target = f"{exc.filename}: " if exc.filename else ""
            raise UserError(f"{target}{exc.strerror or exc}") from None


def _print_json(data: dict) -> None:
    click.echo(json.dumps(data, indent=2))


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="metaheur")
def cli() -> None:
    """Hybrid metaheuristics for QAP and TSP on CPU cores, GPUs and Dask clusters.

    INSTANCE arguments are a file path (QAPLIB .dat, TSPLIB .tsp), a library name looked up under
    $METAHEUR_INSTANCES (tai30a, pr2392), or a built-in generated instance (gen:qap:50,
    gen:tsp:1000, gen:tsp-clustered:1000, with an optional :SEED).
    """


@cli.command()
@click.argument("instance", required=False)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def info(instance: str | None, as_json: bool) -> None:
    """Describe INSTANCE, or without one list the devices and versions."""
    if instance is None:
        from metaheur.devices import format_system_report, system_report

        report = system_report()
        _print_json(report) if as_json else click.echo(format_system_report(report))
        return
    from metaheur.describe import format_summary, instance_summary
    from metaheur.problems import load_instance

    summary = instance_summary(load_instance(instance))
    _print_json(summary) if as_json else click.echo(format_summary(summary))


@cli.command()
@click.argument("instance")
@click.argument("solution_file", type=click.Path())
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def evaluate(instance: str, solution_file: str, as_json: bool) -> None:
    """Exact cost of SOLUTION_FILE (.sln, .tour or a result .json) on INSTANCE, with the gap."""
    from metaheur.describe import evaluation, format_evaluation
    from metaheur.problems import load_instance, load_solution

    inst = load_instance(instance)
    sol = load_solution(inst, solution_file)
    ev = evaluation(inst, sol.permutation, sol.stated_cost, sol.note)
    _print_json(ev) if as_json else click.echo(format_evaluation(ev))


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point."""
    try:
        cli.main(args=argv, prog_name="metaheur")
    except KeyboardInterrupt:
        click.echo("metaheur: interrupted", err=True)
        sys.exit(130)


if __name__ == "__main__":
    main()
