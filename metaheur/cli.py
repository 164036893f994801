"""The ``metaheur`` command line (click).

A user mistake (bad file, impossible option, missing device) is one line on stderr and exit
status 2, never a traceback.
"""

from __future__ import annotations

import contextlib
import math
import os
import signal
import sys
import warnings

import click

from metaheur import __version__, signals, stdio
from metaheur.crashes import crash_line, exit_process
from metaheur.engine.user_source import MOVES
from metaheur.errors import MetaheurError
from metaheur.search.perm_search import METHODS


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
        except MemoryError:  # a memory limit (ulimit -v, a batch system's) that the command met
            raise UserError("out of memory: the command needs more memory than this process may take "
                            "(a limit such as ulimit -v?)") from None
        except OSError as exc:  # an output path that cannot be written, a full disk, ...
            target = f"{exc.filename}: " if exc.filename else ""
            raise UserError(f"{target}{exc.strerror or exc}") from None


class StrictInt(click.ParamType):
    """An integer option as files write integers: ASCII digits with an optional sign
    (:func:`metaheur.inputs.is_integer`; Python's int() also takes ``1_000`` and other scripts' digits)."""

    name = "integer"

    def convert(self, value, param, ctx) -> int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        from metaheur.inputs import is_integer

        text = str(value).strip()
        if not is_integer(text):
            self.fail(f"{value!r} is not an integer (ASCII digits with an optional sign)", param, ctx)
        return int(text)


INTEGER = StrictInt()

_python_warning = warnings.formatwarning


def _warning_line(message, category, filename, lineno, line=None) -> str:
    """A warning as the CLI prints it: metaheur's (``metaheur: ...``) as their one-line message,
    without Python's source location; the others as Python formats them."""
    if str(message).startswith("metaheur:"):
        return f"{message}\n"
    return _python_warning(message, category, filename, lineno, line)


def _print_json(data: dict) -> None:
    from metaheur.outputs import strict_json

    click.echo(strict_json(data))


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="metaheur")
def cli() -> None:
    """Hybrid metaheuristics for permutation problems (QAP, symmetric and asymmetric TSP, flow shop,
    linear ordering, and problems of your own) on CPU cores, GPUs and Dask clusters.

    INSTANCE arguments are a file path (QAPLIB .dat, TSPLIB .tsp or .atsp, Taillard or VRF flow
    shops, LOLIB linear ordering, or a file of another registered problem), a library name looked
    up under $METAHEUR_INSTANCES (tai30a, pr2392, ftv64, ta021, be75eec_150), or a built-in
    generated instance (gen:qap:50, gen:tsp:1000, gen:tsp-clustered:1000, gen:atsp:1000,
    gen:pfsp:50:10, gen:lop:300, with an optional :SEED). --problem NAME or module:Class says which
    problem reads the file (by default its extension or content does; `metaheur info` lists the
    problems).
    """
    warnings.formatwarning = _warning_line


_PROBLEM_HELP = ("The problem that reads INSTANCE: a registered name (qap, tsp, atsp, ...; see metaheur info) or "
                 "module:Class of your own (default: by the file's extension; a file without one, or .txt, by its "
                 "content; another extension needs --problem).")


@cli.command()
@click.argument("instance", required=False)
@click.option("--problem", "problem_name", help=_PROBLEM_HELP)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def info(instance: str | None, problem_name: str | None, as_json: bool) -> None:
    """Describe INSTANCE, or a registered PROBLEM (its files, islands and parameter sections), or
    without either list the registered problems, the devices and versions."""
    if instance is not None and problem_name is None and not os.path.exists(instance):
        from metaheur.describe import format_problem, problem_summary
        from metaheur.problem.registry import problem_class, registered_names

        if instance.lower() in registered_names():
            summary = problem_summary(problem_class(instance))
            _print_json(summary) if as_json else click.echo(format_problem(summary))
            return
    if instance is None:
        from metaheur.devices import format_system_report, system_report
        from metaheur.problem.registry import describe_problems

        report = system_report() | {"problems": describe_problems()}
        _print_json(report) if as_json else click.echo(format_system_report(report) + "\n" +
                                                       _problems_text(report["problems"]))
        return
    from metaheur.describe import format_summary, instance_summary
    from metaheur.problem import load_instance

    problem = load_instance(instance, problem_name)
    summary = instance_summary(problem)
    _print_json(summary) if as_json else click.echo(format_summary(summary, problem))


def _problems_text(problems: list[dict]) -> str:
    """The lines of ``metaheur info`` that list the registered problems."""
    lines = ["problems"]
    for p in problems:
        files = ", ".join(p["extensions"]) or "no file extension"
        folder = f", library folder {p['folder']}/" if p["folder"] else ""
        sense = ", maximised" if p["sense"] == "max" else ""
        lines.append(f"  {p['kind']:<8} {p['title'] or p['class']} ({files}{folder}{sense})")
    return "\n".join(lines)


@cli.command()
@click.argument("instance")
@click.argument("solution_file", type=click.Path())
@click.option("--problem", "problem_name", help=_PROBLEM_HELP)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def evaluate(instance: str, solution_file: str, problem_name: str | None, as_json: bool) -> None:
    """Exact value of SOLUTION_FILE (.sln, .tour or a result .json) on INSTANCE, with the gap."""
    from metaheur.describe import evaluation, format_evaluation
    from metaheur.problem import load_instance, load_solution

    inst = load_instance(instance, problem_name)
    sol = load_solution(inst, solution_file)
    try:
        ev = evaluation(inst, sol.permutation, sol.stated_cost, sol.note)
    except MetaheurError:
        raise
    except Exception as exc:  # a user's problem whose evaluate fails
        why = " ".join(f"{type(exc).__name__}: {exc}".split())
        raise MetaheurError(f"the problem's evaluate failed: {why}") from None
    _print_json(ev) if as_json else click.echo(format_evaluation(ev))


def _expand_instances(patterns: tuple[str, ...]) -> list[str]:
    """Instance arguments with quoted patterns expanded (from the current directory, else under
    $METAHEUR_INSTANCES), in the order given."""
    from metaheur.problem.instances import expand_pattern, is_pattern

    out: list[str] = []
    for p in patterns:
        matches = expand_pattern(p) if is_pattern(p) else [p]
        if not matches:
            raise MetaheurError(f"{p}: no file matches")
        out.extend(matches)
    return out


def _load_all(specs: list[str], problem_name: str | None = None) -> list:
    """Every instance of a batch, loaded before any search (by ``problem_name``'s problem when
    given); one given twice is refused."""
    from metaheur.problem import load_instance

    problems, seen = [], {}
    for spec in specs:
        problem = load_instance(spec, problem_name)
        key = problem.fingerprint()
        if key in seen:
            raise MetaheurError(f"{spec}: the same instance as {seen[key]}, given twice")
        seen[key] = spec
        problems.append(problem)
    return problems


def _read_files(problems: list, problem_name: str | None) -> list[tuple[str, str]]:
    """The files a run reads its ``problems`` from, as ``(what, path)`` for
    :func:`~metaheur.outputs.plan_outputs`: each instance's file (of ``FILE#NAME``, the file) and
    the module file of a problem class that is not metaheur's own (the instances' and
    ``--problem``'s)."""
    import inspect

    from metaheur.problem import problem_class
    from metaheur.problem.textio import split_pick

    files = []
    classes = {type(p) for p in problems} | ({problem_class(problem_name)} if problem_name else set())
    for cls in classes:
        if not cls.__module__.startswith("metaheur."):
            with contextlib.suppress(TypeError, OSError):
                files.append(("--problem", inspect.getfile(cls)))
    for problem in problems:
        source = split_pick(problem.source or "")[0]
        if source and os.path.isfile(source):
            files.append(("INSTANCE", os.fspath(source)))
    return files


def _table(results) -> str:
    head = f"{'instance':<14} {'n':>6} {'best known':>12} {'found':>12} {'gap %':>8} {'time s':>8}"
    rows = [head, "-" * len(head)]
    gaps = []
    for r in results:
        gap = "-" if r.gap_percent is None else f"{r.gap_percent:.3f}"
        if r.gap_percent is not None:
            gaps.append(r.gap_percent)
        bks = "-" if r.best_known is None else str(r.best_known)
        rows.append(f"{r.instance:<14} {r.n:>6} {bks:>12} {r.cost:>12} {gap:>8} {r.time_s:>8.1f}")
    mean_gap = f"{sum(gaps) / len(gaps):.3f}" if gaps else "-"
    mean_time = sum(r.time_s for r in results) / len(results)
    rows.append("-" * len(head))
    rows.append(f"{'mean':<14} {'':>6} {'':>12} {'':>12} {mean_gap:>8} {mean_time:>8.1f}")
    return "\n".join(rows)


@cli.command()
@click.argument("instances", nargs=-1)
@click.option("--time-limit", "-t", type=float,
              help="Seconds of search per instance (default 10 when no --generations).")
@click.option("--generations", "-g", type=INTEGER, help="Stop after this many generations on every island (GA "
              "generations; steps of a tabu or ILS island).")
@click.option("--target", help="Stop at this value or better (at most this cost; at least this value for a "
              "maximisation): a number, or 'bks' (the best-known value).")
@click.option("--no-improvement", type=INTEGER, help="Stop after this many epochs without a new best.")
@click.option("--stop-at-optimum/--no-stop-at-optimum", default=None,
              help="Stop on reaching a proven optimum of the built-in best-known table (default: stop).")
@click.option("--initial", "initial_paths", multiple=True, type=click.Path(dir_okay=False),
              help="Warm start: a solution file (the problem's own, or a result .json) seeding every "
              "island (repeatable).")
@click.option("--seed", "-s", type=INTEGER, default=None, help="Random seed (default 0).")
@click.option("--problem", "problem_name", help=_PROBLEM_HELP)
@click.option("--strategy", type=click.Choice(["auto", "cpu-serial", "cpu-islands", "gpu", "hybrid"]), default=None,
              help="Where the islands run (default auto: hybrid with a GPU, cpu-islands without).")
@click.option("--device", "devices", multiple=True, help="Restrict to these devices: cpu, cuda, cuda:N (repeatable).")
@click.option("--islands", type=INTEGER, help="Number of islands (default: one per core / GPU).")
@click.option("--ls-islands", type=INTEGER, help="CPU islands running the problem's local-search island (a continued "
              "local search each) instead of the GA (default: as the problem declares, see metaheur info PROBLEM); "
              "0: none, every island runs the problem's default method.")
@click.option("--tabu-islands", type=INTEGER, hidden=True, help="Earlier name of --ls-islands.")
@click.option("--walk-islands", type=INTEGER, hidden=True, help="Earlier name of --ls-islands.")
@click.option("--population", type=INTEGER, help="Individuals per island.")
@click.option("--offspring", type=INTEGER, help="Children per generation and island.")
@click.option("--crossover", help="The GA's crossover, one the problem offers (see metaheur info PROBLEM); 'none' for "
              "islands of continued local searches.")
@click.option("--ls-budget", type=INTEGER, help="Local search per child, in the unit of the problem's local search "
              "(tabu iterations, kicks, greedy rounds; see metaheur info PROBLEM).")
@click.option("--method", type=click.Choice(METHODS),
              help="The local search of a problem the generic engine searches (one without search sections of its "
                   "own, see metaheur info PROBLEM; docs/problems.md): tabu, ils (descent and kicks), "
                   "ig (iterated greedy: needs partial_insert_row), auto (chosen by what the problem's functions "
                   "cost: docs/problems.md).")
@click.option("--moves", type=click.Choice(MOVES),
              help="Its neighbourhood: swap, insert or reverse, among the problem's moves (default: its first).")
@click.option("--migration-interval", type=INTEGER,
              help="Epochs between migrations, 0 for none (default: as the problem chooses for the instance, "
                   "most often 1).")
@click.option("--topology", type=click.Choice(["ring", "complete", "random"]), help="Migration topology.")
@click.option("--migration-policy", type=click.Choice(["best-worst", "elite"]), help="What migrants replace.")
@click.option("--sync", is_flag=True, default=None, help="Synchronous epochs of --epoch-generations generations "
              "(reproducible for a seed).")
@click.option("--epoch-seconds", type=float, help="Length of an epoch in time mode (default 1 s).")
@click.option("--epoch-generations", type=INTEGER, help="Generations per epoch in --sync mode (default 5).")
@click.option("--config", "config_path", type=click.Path(dir_okay=False), help="TOML file of parameters.")
@click.option("--scheduler", help="Run the CPU islands on a Dask cluster: tcp://HOST:PORT.")
@click.option("--dask-local", type=INTEGER, help="Start a local Dask cluster with N workers for the CPU islands.")
@click.option("--checkpoint", "checkpoint_path", help="Write the run's state there regularly (resume with --resume; "
              "{name} for several instances).")
@click.option("--checkpoint-every", type=float, default=60.0, show_default=True,
              help="Seconds between checkpoints (written at epoch boundaries and at the end).")
@click.option("--resume", "resume_path", help="Continue the run saved in this checkpoint (INSTANCE optional).")
@click.option("--json", "json_path", help="Write the result as JSON ({name} for several instances; - for standard "
              "output, the summary then goes to standard error).")
@click.option("--stats", "stats_path", help="Write per-epoch statistics as CSV (- for standard output).")
@click.option("--solution", "solution_path", help="Write the solution in the problem's solution format (see "
              "metaheur info PROBLEM).")
@click.option("--plot", "plot_path", help="Write a figure of the run (convergence, and the problem's picture of the "
              "solution where it has one): "
              "PNG, SVG, PDF or JPEG by the file's extension.")
@click.option("-q", "--quiet", is_flag=True, help="No progress output.")
@click.option("-v", "--verbose", is_flag=True, help="More detail: how the local search of a problem of your own "
              "was chosen, islands and device loads.")
def solve(instances, time_limit, generations, target, no_improvement, stop_at_optimum, initial_paths, seed,
          problem_name, strategy, devices, islands, ls_islands, tabu_islands, walk_islands, population,
          offspring, crossover, ls_budget, method, moves, migration_interval, topology, migration_policy, sync,
          epoch_seconds,
          epoch_generations, config_path, scheduler, dask_local, checkpoint_path, checkpoint_every, resume_path,
          json_path, stats_path, solution_path, plot_path, quiet, verbose) -> None:
    """Solve INSTANCE(s) with memetic islands on the CPU cores (and GPUs when present).

    Several instances or a glob are solved in turn and summarised in a table.
    """
    from dataclasses import replace

    from metaheur.config import read_config
    from metaheur.outputs import plan_outputs

    signals.forget()
    from metaheur.solve_params import SolveParams
    from metaheur.solver import solve as run_solve

    config = read_config(config_path) if config_path else {"solve": {}}
    base = config["solve"]

    def pick(value, key, default=None):
        return value if value is not None else base.get(key, default)

    for name, value in (("--time-limit", time_limit), ("--epoch-seconds", epoch_seconds),
                        ("--checkpoint-every", checkpoint_every)):
        if value is not None and not value > 0:
            raise MetaheurError(f"{name} must be positive, got {value}")
        if value == math.inf:
            raise MetaheurError(f"{name} must be a finite number of seconds, got {value}")
    templates = {"--json": json_path, "--stats": stats_path, "--solution": solution_path, "--plot": plot_path}
    flags = {"strategy": strategy, "devices": list(devices) or None, "islands": islands,
             "ls_islands": next((v for v in (ls_islands, tabu_islands, walk_islands) if v is not None), None),
             "sync": sync,
             "epoch_seconds": epoch_seconds,
             "epoch_generations": epoch_generations, "scheduler": scheduler, "dask_local": dask_local,
             "stop_at_optimum": stop_at_optimum}
    if resume_path is not None:
        _refuse_on_resume({"--seed": seed, "--strategy": strategy, "--device": devices, "--islands": islands,
                           "--ls-islands": ls_islands, "--tabu-islands": tabu_islands, "--walk-islands": walk_islands,
                           "--population": population,
                           "--offspring": offspring, "--crossover": crossover, "--ls-budget": ls_budget,
                           "--method": method, "--moves": moves,
                           "--migration-interval": migration_interval, "--topology": topology,
                           "--migration-policy": migration_policy, "--sync": sync, "--epoch-seconds": epoch_seconds,
                           "--epoch-generations": epoch_generations, "--config": config_path,
                           "--initial": initial_paths})
        stop = {"time_limit": time_limit, "generations": generations, "target": target,
                "no_improvement": no_improvement, "stop_at_optimum": stop_at_optimum}
        run = {"checkpoint_every": checkpoint_every, "scheduler": scheduler, "dask_local": dask_local}
        _resume(instances, resume_path, problem_name, stop, run, templates | {"--checkpoint": checkpoint_path},
                quiet, verbose)
        return
    params = replace(SolveParams.from_config(config), **{k: v for k, v in flags.items() if v is not None})
    if not instances:
        raise MetaheurError("give at least one INSTANCE (or --resume CHECKPOINT)")
    specs = _expand_instances(instances)
    with _unless_quiet(quiet, f"loading {specs[0]}" if len(specs) == 1 else f"loading {len(specs)} instances"):
        problems = _load_all(specs, problem_name)
    many = len(problems) > 1
    if initial_paths and many:
        raise MetaheurError("--initial seeds one instance: give one INSTANCE")
    inputs = [*_read_files(problems, problem_name), *(("--config", path) for path in [config_path] if path),
              *(("--initial", path) for path in initial_paths)]
    plans = plan_outputs(templates | {"--checkpoint": checkpoint_path}, [p.name for p in problems], inputs)
    results, failed = [], []
    echo = _echo_for(plans)
    for problem, plan in zip(problems, plans, strict=True):
        ga = _ga_params(problem, config, crossover, population, offspring, ls_budget)
        mig = _migration_params(config, migration_interval, topology, migration_policy)
        tl = pick(time_limit, "time_limit")
        gens = pick(generations, "generations")
        reporter = None if quiet else _reporter(problem.best_known(), tl if tl is not None or gens is not None
                                                else 10.0, problem.name if many else None)
        target_value = pick(target, "target")
        if isinstance(target_value, str) and target_value.lower() != "bks":
            target_value = _int_target(target_value)
        try:
            with crash_line():  # a crash of device code in this process (cpu-serial) is one line
                result = run_solve(
                    problem, seed=pick(seed, "seed", 0),
                    params=replace(_engine_search(problem, params, method, moves), ga=ga, migration=mig),
                    initial=list(initial_paths) or None, callbacks=reporter, checkpoint=plan.get("--checkpoint"),
                    checkpoint_every=checkpoint_every, time_limit=tl, generations=gens, target=target_value,
                    no_improvement=pick(no_improvement, "no_improvement"))
        except KeyboardInterrupt:  # before the run had a solution (a kernel build, the cost probe)
            _stopped_before_a_solution(problem.name, plan, results, echo if many else None)
        with signals.deferred():  # a stop signal now: every output is still written
            failed += _write_outputs(problem, result, plan) + _checkpoint_failure(result)
            results.append(result)
            echo(result.summary())
            if verbose:
                _echo_details(result, echo)
            if many:
                echo("")
        if result.stop_reason == "interrupted" or signals.received():
            break
    if many:
        echo(_table(results))
    _exit_status(results[-1] if results else None, failed)


def _stopped_before_a_solution(name: str, plan: dict, results: list, table) -> None:
    """A stop signal before the run of ``name`` had any solution (while its kernels were built or
    its cost probed): one line saying so and naming its outputs, which cannot be written; the
    table of the batch's earlier instances (``table``: their outputs are written); 128 + the
    signal's number."""
    outputs = ", ".join(option for option, path in plan.items() if path is not None)
    unwritten = f": {outputs} not written" if outputs else ""
    click.echo(f"metaheur: interrupted before the run of {name} had a solution{unwritten}", err=True)
    if table is not None and results:
        table(_table(results))
    sys.exit(signals.exit_status())


def _ga_params(problem, config: dict, crossover, population, offspring, ls_budget):
    """The GA parameters of ``problem``: the config file's ``[ga]`` or the instance's defaults,
    with ``--crossover`` (and the sizes it needs) and the size options on top; None (the solver's
    defaults, sized for each device) when none of them is given."""
    from dataclasses import replace

    from metaheur.islands.params import with_crossover

    if config.get("ga") is None and crossover is None and population is None and offspring is None \
            and ls_budget is None:
        return None
    ga = config.get("ga") or problem.default_params().ga
    if crossover is not None:
        ga = with_crossover(ga, crossover, problem)
    return replace(ga, **{k: v for k, v in (("population", population), ("offspring", offspring),
                                            ("ls_budget", ls_budget)) if v is not None})


def _engine_search(problem, params, method: str | None, moves: str | None):
    """``params`` with ``--method`` and ``--moves`` on the generic engine's local search
    (PermSearchParams: the config file's ``[perm]``, else the problem's defaults); a problem with
    searches of its own (the QAP's tabu search, the TSP's ILS: ``Problem.search_params``) takes
    neither."""
    from dataclasses import replace

    from metaheur.search.perm_search import PermSearchParams

    if method is None and moves is None:
        return params
    search = problem.search_form().problem
    if search.search_params:
        own = ", ".join(f"[{cls.section}]" for cls in search.search_params)
        raise MetaheurError(f"--method and --moves choose the generic engine's search (of problems without "
                            f"search sections of their own); the {problem.kind.upper()} has its own ({own} in a "
                            "config file)")
    base = params.search(PermSearchParams) or search.default_params().search(PermSearchParams)
    chosen = replace(base, **{k: v for k, v in (("method", method), ("move", moves)) if v is not None})
    return replace(params, searches=(*params.searches, chosen))


def _migration_params(config: dict, interval, topology, policy):
    """The config file's ``[migration]`` with the migration options on top; None (the solver's
    default for the instance) when neither is given."""
    from dataclasses import replace

    from metaheur.islands.migration import MigrationParams

    options = {k: v for k, v in (("interval", interval), ("topology", topology), ("policy", policy)) if v is not None}
    mig = config.get("migration")
    if mig is None and not options:
        return None
    return replace(mig or MigrationParams(), **options)


def _echo_details(result, echo) -> None:
    """``--verbose``: how the local search was chosen (a user problem's, :mod:`metaheur.search.perm_defaults`),
    every island's work (GA generations, or steps of a local-search-only island) and every device's load."""
    choice = result.search_choice
    if choice:
        sampled = f" ({choice['sample']} sampled a step)" if choice.get("sample") else ""
        echo(f"  local search {choice['method']} over {choice['move']}{sampled}, {choice['ls_budget']} steps a search, "
             f"chosen by {choice['by']}: {choice['reason']}")
    for isl in result.islands:
        steps = f"{isl.generations} generations" if isl.algorithm.startswith("GA") else f"{isl.search_steps} steps"
        echo(f"  island {isl.island} on {isl.device} ({isl.algorithm}): {steps}, "
             f"{isl.ls_iterations:,} ls iterations, best {isl.best_cost}")
    for load in result.device_loads:
        echo(f"  {load.device}: utilisation {load.utilisation:.0%}, idle {load.idle_s} s")


def _exit_status(result, failed: list[str]) -> None:
    """128 + the signal's number after a stop signal (130 for Ctrl-C), also one that came while the
    outputs were written; 1 when an output or the run's last checkpoint could not be written (the
    others were) or a run had to stop on an error (its best was still written)."""
    for message in failed:
        click.echo(f"metaheur: error: {message}", err=True)
    if (result is not None and result.stop_reason == "interrupted") or signals.received():
        sys.exit(signals.exit_status())
    if result is not None and result.stop_reason.startswith("failed"):
        click.echo(f"metaheur: warning: the run {result.stop_reason}; the best solution found was written", err=True)
        sys.exit(1)
    if failed:
        sys.exit(1)


def _echo_for(plans: list[dict[str, str]]):
    """Where the summary goes: standard output, or standard error when an output takes standard output."""
    from metaheur.outputs import STDOUT

    err = any(path == STDOUT for plan in plans for path in plan.values())
    return lambda text: click.echo(text, err=err)


def _unless_quiet(quiet: bool, line: str):
    """:func:`metaheur.progress.when_slow` of ``line``, or nothing with ``-q``."""
    from metaheur.progress import when_slow

    return contextlib.nullcontext() if quiet else when_slow(line)


def _reporter(entry, time_limit: float | None, label: str | None):
    """The progress reporter of a run (``entry``: the instance's best-known value or None)."""
    from metaheur.progress import ProgressReporter

    return ProgressReporter(best_known=entry.value if entry else None, optimal=bool(entry and entry.optimal),
                            time_limit=time_limit, label=label)


def _refuse_on_resume(given: dict[str, object]) -> None:
    """Refuse the options of ``given`` (option -> value; None or empty: not given) that a resumed
    run cannot take: it continues with the checkpoint's settings."""
    for option, value in given.items():
        if value is not None and value != ():
            raise MetaheurError(f"{option} cannot change on --resume: a resumed run continues with the "
                                "checkpoint's settings (stop options, outputs, --checkpoint, --scheduler and "
                                "--dask-local may change)")


def _resume(instances, resume_path: str, problem_name: str | None, stop: dict, run: dict,
            templates: dict[str, str | None], quiet: bool, verbose: bool) -> None:
    """``solve --resume``: continue the checkpoint's run (INSTANCE optional; ``--problem`` for a
    problem of the user's own, which a checkpoint never names) with the ``stop`` options, the
    ``run`` options (checkpoint interval, Dask) and the outputs of ``templates`` given here."""
    from metaheur.checkpoint import load_checkpoint
    from metaheur.outputs import check_writable, plan_outputs
    from metaheur.solver import resume, resumed_instance

    if len(instances) > 1:
        raise MetaheurError("--resume continues one run: give at most one INSTANCE")
    problem = resumed_instance(load_checkpoint(resume_path), instances[0] if instances else None, problem_name)
    plan = plan_outputs(templates, [problem.name], [("--resume", resume_path), *_read_files([problem], problem_name)],
                        continues={"--checkpoint": "--resume"})[0]
    check_writable(plan.get("--checkpoint", resume_path), "--checkpoint")
    reporter = None if quiet else _reporter(problem.best_known(), stop["time_limit"], None)
    target = stop["target"]
    if target is not None and target.lower() != "bks":
        stop = stop | {"target": _int_target(target)}
    with crash_line():  # a crash of device code in this process (cpu-serial) is one line
        result = resume(resume_path, problem=problem, callbacks=reporter, checkpoint=plan.get("--checkpoint"),
                        **stop, **run)
    with signals.deferred():  # a stop signal now: every output is still written
        failed = _write_outputs(problem, result, plan) + _checkpoint_failure(result)
        echo = _echo_for([plan])
        echo(result.summary())
        if verbose:
            _echo_details(result, echo)
    _exit_status(result, failed)


def _checkpoint_failure(result) -> list[str]:
    """The run's last checkpoint, when it could not be written (a warning said so as it happened)."""
    error = result.parameters.get("checkpoint_error")
    return [f"--checkpoint {error}"] if error else []


def _int_target(text: str) -> int:
    from metaheur.inputs import is_integer

    if not is_integer(text.strip()):
        raise MetaheurError(f"--target must be a number or 'bks', got {text!r}")
    return int(text)


def _write_outputs(problem, result, plan: dict[str, str]) -> list[str]:
    """Write the outputs of ``plan``; returns what failed (the others are written)."""
    from metaheur.outputs import Output, figure_format, save

    outputs = []
    if "--json" in plan:
        outputs.append(Output("--json", plan["--json"], text=lambda: result.to_json() + "\n"))
    if "--stats" in plan:
        outputs.append(Output("--stats", plan["--stats"], text=result.stats_csv))
    if "--solution" in plan:
        writer = problem.formats.write_solution if problem.formats else None
        if writer is None:
            raise MetaheurError(f"--solution: the {problem.kind.upper()} writes no solution files (use --json)")
        outputs.append(Output("--solution", plan["--solution"],
                              write=lambda path: writer(problem, path, result.permutation)))
    if "--plot" in plan:
        from metaheur.plots import save_result_figure

        fmt = figure_format(plan["--plot"])
        outputs.append(Output("--plot", plan["--plot"],
                              write=lambda path: save_result_figure(result, path, problem, fmt)))
    return save(outputs, lambda text: click.echo(text, nl=False))


@cli.command()
@click.argument("result_json", type=click.Path(dir_okay=False))
@click.argument("figure")
@click.option("--instance", help="The instance, when the result's source path is not at hand (for the tour).")
@click.option("--log-time", is_flag=True, help="A logarithmic time axis for the convergence panel.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object (the figure written) instead of a line.")
def plot(result_json: str, figure: str, instance: str | None, log_time: bool, as_json: bool) -> None:
    """Redraw the figure of a saved RESULT_JSON into FIGURE (.png, .svg, .pdf or .jpg)."""
    from metaheur.outputs import figure_format, plan_outputs, write_atomically
    from metaheur.plots import save_result_figure
    from metaheur.problem import load_instance
    from metaheur.result import Result

    inputs = [("RESULT_JSON", result_json), *(("--instance", path) for path in [instance] if path)]
    plan_outputs({"FIGURE": figure}, ["figure"], inputs)
    fmt = figure_format(figure, "FIGURE")
    result = Result.from_json(result_json)
    problem = None
    for spec in (instance, result.source, result.instance):
        if spec:
            try:
                candidate = load_instance(spec)
            except MetaheurError:
                continue
            if candidate.n == result.n and candidate.kind.upper() == result.problem:
                problem = candidate
                break
    write_atomically(figure, lambda path: save_result_figure(result, path, problem, fmt, log_time=log_time))
    panel = None if problem is None else problem.picture
    if as_json:
        _print_json({"figure": figure, "format": fmt, "instance": result.instance, "panel": panel})
    else:
        click.echo(f"wrote {figure}" + ("" if problem else " (instance not found: no tour/assignment panel)"))


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point. Ctrl-C, SIGTERM and SIGHUP (:mod:`metaheur.signals`) stop a
    run with its best solution written; outside a run they end the command with one line. The
    exit status after a stop signal is 128 + its number (130, 143, 129)."""
    stdio.prepare()
    status = 0
    for s in signals.STOP_SIGNALS:  # what the handling below leaves behind, however the command ends
        signal.signal(s, signal.SIG_IGN)  # (a status, sys.exit): a late signal does not interrupt the exit
    try:
        with signals.handling(signals.interrupt):
            status = _run_cli(argv)
    except KeyboardInterrupt:
        click.echo("metaheur: interrupted", err=True)
        status = signals.exit_status()
    except SystemExit as exc:  # a command that ends with its own status (a stopped run: 128 + the signal)
        status = exc.code if isinstance(exc.code, int) else int(exc.code is not None)
    exit_process(status)  # without finalization while a given-up island is still in device code


def _run_cli(argv: list[str] | None) -> int:
    """Click's main without its own handling of Ctrl-C ("Aborted!", status 1); returns the exit status."""
    try:
        cli.main(args=argv, prog_name="metaheur", standalone_mode=False)
    except click.exceptions.Abort:  # click turns a KeyboardInterrupt inside its prompts into this
        raise KeyboardInterrupt from None
    except click.ClickException as exc:
        exc.show()
        return exc.exit_code
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except SystemExit as exc:  # a command's own exit status (_exit_status): the process ends in main
        return exc.code if isinstance(exc.code, int) else int(exc.code is not None)
    return 0


if __name__ == "__main__":
    main()
