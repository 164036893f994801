"""``solve()``: plan islands on the available processors, run the island model, report a Result.

Strategies (Van Luong, Taillard, Melab and Talbi 2012 compare the first four):
  cpu-serial   one island on one core, in this process;
  cpu-islands  one island per core (or ``islands``), in worker processes;
  gpu          one island per GPU (or ``islands`` spread over them), driven by one host core;
  hybrid       GPU islands plus CPU islands on the remaining cores, load-balanced;
  auto         hybrid when a GPU is present, cpu-islands otherwise (the default).
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import platform
import warnings
from collections.abc import Iterable
from dataclasses import replace

import numpy as np

from metaheur import isolation, signals
from metaheur.arguments import (
    BOOL,
    CALLBACKS,
    INT,
    NUMBER,
    PATH,
    STOP,
    STR,
    Takes,
    check_arguments,
    either,
    instance_of,
    plain,
)
from metaheur.callbacks import Callbacks
from metaheur.checkpoint import Checkpoint, Checkpointer, load_checkpoint
from metaheur.devices import Device, available_devices, cpu_count, cpu_device, parse_device
from metaheur.engine import compile_seconds_total
from metaheur.errors import MetaheurError
from metaheur.islands.balance import gpu_wave
from metaheur.islands.footprint import check_host_memory
from metaheur.islands.island import island_class, ls_only, run_counters
from metaheur.islands.memetic import MemeticIsland
from metaheur.islands.model import IslandModel, RunRecord
from metaheur.islands.params import GAParams, IslandParams, search_sections, searches_as_dicts
from metaheur.problem import load_instance
from metaheur.problem.best_known import beaten_optimum, gap_percent
from metaheur.problem.interface import Problem
from metaheur.problem.registry import registered_class
from metaheur.result import DeviceRow, IslandRow, MigrationRow, Result, TracePoint
from metaheur.run_settings import InstanceInfo, RunSettings
from metaheur.search.perm_defaults import RunBudget, SearchChoice
from metaheur.solve_params import SolveParams
from metaheur.stopping import ProvenOptimum, StopRule, StopRules, as_rule_list, built_in_rules
from metaheur.warm_start import initial_solutions

STRATEGIES = ("auto", "cpu-serial", "cpu-islands", "gpu", "hybrid")
MAX_ISLANDS_PER_CORE = 8


def plan_devices(strategy: str, devices: list[Device] | None, islands: int | None) -> tuple[str, list[Device]]:
    """(resolved strategy, one device per island)."""
    if strategy not in STRATEGIES:
        raise MetaheurError(f"unknown strategy {strategy!r}: use one of {', '.join(STRATEGIES)}")
    if islands is not None and islands < 1:
        raise MetaheurError(f"islands must be at least 1, got {islands}")
    pool = devices or available_devices()
    gpus = [d for d in pool if d.is_gpu]
    has_cpu = any(not d.is_gpu for d in pool)
    if strategy == "auto":
        strategy = "hybrid" if gpus and has_cpu else ("gpu" if gpus else "cpu-islands")
    if strategy in ("gpu", "hybrid") and not gpus:
        why = "none of the devices given is a GPU" if devices else "no GPU is available"
        raise MetaheurError(f"strategy {strategy} needs a GPU, but {why} (try --strategy cpu-islands)")
    if strategy in ("cpu-serial", "cpu-islands", "hybrid") and not has_cpu:
        raise MetaheurError(f"strategy {strategy} needs the cpu device")
    cores = cpu_count()
    if strategy == "cpu-serial":
        if islands not in (None, 1):
            raise MetaheurError("cpu-serial runs exactly one island")
        return strategy, [cpu_device()]
    if strategy == "cpu-islands":
        return strategy, [cpu_device()] * (islands or cores)
    if strategy == "gpu":
        count = islands or len(gpus)
        return strategy, [gpus[i % len(gpus)] for i in range(count)]
    cpu_islands = max(1, cores - len(gpus)) if islands is None else max(1, islands - len(gpus))
    return strategy, list(gpus) + [cpu_device()] * cpu_islands


def _precompile(problem: Problem, devices: list[Device]) -> None:
    """Build every kernel module variant the islands will load, before the clock starts (the disk
    cache then serves the worker processes): :meth:`Problem.precompile` on each device."""
    for dev in {d.name: d for d in devices}.values():
        problem.precompile(dev)


def _island_params(problem: Problem, dev: Device, ga: GAParams, searches: tuple, gpu_sized: bool,
                   default_ga: bool) -> IslandParams:
    """A GPU GA island (of the gpu and hybrid strategies) improves at least one wave of children a
    generation (:func:`gpu_wave`). An EAX island keeps its population size (automatic by default:
    sized from the time its first members took, which on a GPU is that of a whole batch). A GPU
    island of the problem's default chains (``default_ga``: no GA parameters given; an island of
    continued local searches) runs :meth:`Problem.gpu_chains` of them side by side."""
    params = IslandParams(ga, searches)
    if not (dev.is_gpu and gpu_sized):
        return params
    algorithm = island_class(problem, ga)
    if algorithm.sized_by_gpu_wave:
        size = gpu_wave(problem, dev)
        ga = replace(ga, offspring=max(ga.offspring, size), population=max(ga.population, size))
    elif default_ga and algorithm.local_search_only:
        chains = problem.gpu_chains(params, dev)
        ga = replace(ga, offspring=chains, population=chains) if chains > 1 else ga
    return replace(params, ga=ga)


def _searches(search: Problem, params: SolveParams, defaults: IslandParams) -> tuple:
    """The local searches' parameters of a run: those given (``SolveParams.searches``), else the
    instance's defaults, for every section the islands of ``search`` know
    (:func:`~metaheur.islands.params.search_sections`); a section given an object of another
    class is a one-line error."""
    out = []
    for name, cls in search_sections(search).items():
        given = params.search(cls)
        if given is not None and not isinstance(given, cls):
            raise MetaheurError(f"{name} takes {cls.__name__}, got {type(given).__name__}")
        out.append(given or defaults.search(cls))
    return tuple(out)


def _with_ls_islands(problem: Problem, params: list[IslandParams], devices: list[Device],
                     count: int | None) -> list[IslandParams]:
    """Islands of two kinds: ``count`` of the CPU islands run the problem's local-search island
    (:meth:`Problem.local_search_island`: the QAP's tabu island, a flow shop's or a user problem's
    chain) instead of the GA, for a problem that offers one; by default
    :meth:`Problem.default_local_search_islands` of them (QAP: half), none when the islands are not
    memetic GA islands (local-search islands already, crossover ``none``) or GA only (no local
    search of children). They are spread evenly over the CPU islands, the last one last
    (:func:`_ls_positions`)."""
    cpu = [i for i, d in enumerate(devices) if not d.is_gpu]
    offered = problem.local_search_island(params[0]) is not None
    if count is None:
        if not offered or island_class(problem, params[0].ga) is not MemeticIsland or params[0].ga.ls_budget == 0:
            return params
        count = problem.default_local_search_islands(len(cpu))
    elif not offered:
        raise MetaheurError(f"tabu islands (local-search islands beside GA islands) are not offered by the "
                            f"{problem.kind.upper()} problem: its local_search_island() gives none")
    elif not 0 <= count <= len(cpu):
        raise MetaheurError(f"tabu islands must be between 0 and the {len(cpu)} CPU island(s), got {count}")
    chosen = {cpu[k] for k in _ls_positions(len(cpu), count)}
    return [problem.local_search_island(p) if i in chosen else p for i, p in enumerate(params)]


def _ls_positions(cpu_islands: int, ls_islands: int) -> list[int]:
    """Which of ``cpu_islands`` CPU islands are the ``ls_islands`` local-search islands: evenly
    spread, so that while at most half are local-search islands each is followed by a GA island in
    the migration ring (a QAP tabu island takes no migrant, so one after another would drop its
    best): 1 of 2 -> [1], 2 of 4 -> [1, 3]."""
    return [(j + 1) * cpu_islands // ls_islands - 1 for j in range(ls_islands)]


@contextlib.contextmanager
def _dask(scheduler: str | None, local_workers: int | None):
    """A Dask client for joblib's dask backend (an existing scheduler, or a local cluster)."""
    if scheduler is None and local_workers is None:
        yield None
        return
    try:
        from distributed import Client
    except ImportError:
        raise MetaheurError("Dask is not installed: pip install 'metaheur[dask]'") from None
    cluster = None
    try:
        if scheduler is not None:
            _probe(scheduler)
            try:
                client = Client(scheduler, timeout="10s")
            except (OSError, TimeoutError) as exc:
                raise MetaheurError(f"cannot reach the Dask scheduler at {scheduler}: {exc}") from None
        else:
            if local_workers < 1:
                raise MetaheurError(f"--dask-local needs at least 1 worker, got {local_workers}")
            # a stop signal while the cluster starts takes effect once it is up (then it is closed):
            # a half-built cluster fails Dask's own closing at exit
            with isolation.isolated_helpers(), signals.held():
                cluster = local_cluster(local_workers)
            client = Client(cluster)
        with client:
            yield client
    finally:
        if cluster is not None:
            cluster.close()


def local_cluster(workers: int):
    """A Dask cluster of ``workers`` single-threaded worker processes on this machine, for
    ``--dask-local``. Its workers do not run Dask's statistical profiler (a thread that samples
    every thread's stack each 10 ms): an island keeps its core to itself, as in a loky worker.
    Nor do they get Dask's ``MALLOC_TRIM_THRESHOLD_=65536``: with it glibc hands every freed
    block over 64 KiB back to the system and faults it in again, which EAX islands' many large
    arrays pay for in kernel time (docs/decisions/dask-workers.md)."""
    import dask
    from distributed import LocalCluster

    with dask.config.set({"distributed.worker.profile.enabled": False,  # both read by the nannies at start
                          "distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": None}), \
            warnings.catch_warnings():
        # its HTTP server takes another port when another cluster has the usual one: nothing to tell
        warnings.filterwarnings("ignore", message="Port .* is already in use", category=UserWarning)
        return LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                            dashboard_address=None, host="127.0.0.1")


HANDSHAKE_SECONDS = 5.0  # how long a scheduler's address gets to answer Dask's handshake


def _probe(address: str) -> None:
    """Fail at once, not after the client's time-out, when nothing listens at the scheduler's
    address, and within :data:`HANDSHAKE_SECONDS` when what listens there (``tcp://``) does not
    speak Dask."""
    import socket
    from urllib.parse import urlparse

    url = urlparse(address if "://" in address else f"tcp://{address}")
    try:
        host, port = url.hostname, url.port
    except ValueError:
        host = port = None
    if url.scheme not in ("tcp", "tls") or not host or not port:
        raise MetaheurError(f"bad scheduler address {address!r}: use tcp://HOST:PORT")
    try:
        socket.create_connection((host, port), timeout=5).close()
    except OSError as exc:
        raise MetaheurError(f"cannot reach the Dask scheduler at {address}: {exc.strerror or exc}") from None
    if url.scheme == "tcp":
        _handshake(f"tcp://{host}:{port}", address)


def _handshake(url: str, address: str) -> None:
    """Refuse, within :data:`HANDSHAKE_SECONDS`, a listener that does not speak Dask: the
    client's own time-out bounds its connection, not the handshake that follows (a server that
    accepts and says nothing holds the client for good; one that sends junk fails it oddly)."""
    import asyncio

    from distributed.comm import connect

    async def shake() -> None:
        comm = await connect(url, timeout=HANDSHAKE_SECONDS)
        await comm.close()

    try:
        asyncio.run(asyncio.wait_for(shake(), HANDSHAKE_SECONDS))
    except Exception as exc:  # a time-out, a closed connection, junk that does not decode
        why = (f"no Dask handshake within {HANDSHAKE_SECONDS:g} s" if isinstance(exc, TimeoutError)
               else f"what listens there does not speak Dask ({type(exc).__name__})")
        raise MetaheurError(f"cannot reach the Dask scheduler at {address}: {why}") from None


def _versions() -> dict:
    from metaheur.devices import system_report

    report = system_report()
    return {k: report[k] for k in ("metaheur", "python", "numpy", "cupy", "cuda_runtime", "c_compiler",
                                   "simulated_gpus")} | {
        "platform": platform.platform()}


# The types the API takes (their ranges are checked where they are used, as for the CLI's options).
_STOPS = {"stop": STOP, "callbacks": CALLBACKS, "checkpoint": PATH.or_none(), "checkpoint_every": NUMBER,
          "time_limit": NUMBER.or_none(), "generations": INT.or_none(), "target": either(INT, STR).or_none(),
          "no_improvement": INT.or_none()}
_SOLVE_TAKES = {"problem": either(instance_of(Problem, "a Problem"), PATH), "seed": INT,
                "params": instance_of(SolveParams, "a SolveParams").or_none(),
                "initial": Takes("a permutation, a list of them, a solution file's path, a list of them or None",
                                 lambda v: v is None or isinstance(v, (str, os.PathLike))
                                 or (hasattr(v, "__iter__") and not isinstance(v, (bytes, dict)))),
                **_STOPS}
_RESUME_TAKES = {"path": PATH, **_STOPS,
                 "problem": Takes("a Problem, a path or name, a Problem class or None",
                                  lambda v: v is None or isinstance(v, (Problem, str, os.PathLike))
                                  or (isinstance(v, type) and issubclass(v, Problem))),
                 "stop_at_optimum": BOOL.or_none(), "scheduler": STR.or_none(), "dask_local": INT.or_none()}


def solve(problem: Problem | str | os.PathLike, stop: StopRule | Iterable[StopRule] | None = None, seed: int = 0,
          params: SolveParams | None = None, initial=None, callbacks: Callbacks | None = None,
          checkpoint: str | os.PathLike | None = None, checkpoint_every: float = 60.0, *,
          time_limit: float | None = None, generations: int | None = None, target: int | str | None = None,
          no_improvement: int | None = None) -> Result:
    """Solve a problem instance (a :class:`~metaheur.problem.Problem`: QAP, TSP, ATSP or a
    user's) with memetic islands on the available processors.

    ``problem``: an instance, a path, a library name or a ``gen:`` name. ``stop``: a stop rule
    (any callable ``rule(progress) -> bool``, :mod:`metaheur.stopping`) or a list of them; the run
    stops when any fires. The shortcuts add built-in rules: ``time_limit`` seconds,
    ``generations`` (per island), ``target`` (a number or ``"bks"``: the best-known value; "this
    value or better" in the problem's sense: at most for a minimisation, at least for a
    maximisation), ``no_improvement`` epochs. Among all rules there must be a time limit or a
    generation budget; with no rule at all the run takes 10 s. ``params``: how the run goes
    (:class:`SolveParams`; its ``stop_at_optimum`` ends the run at a proven optimum of the
    problem's best-known table).
    ``initial``: warm starts (a permutation, a list of them, or ``.sln`` / ``.tour`` paths) that
    seed every island's first population; the result is never worse than the best of them.
    ``checkpoint``: write the run's complete state there every ``checkpoint_every`` seconds and
    at the end (continue it with :func:`resume`). The returned value is recomputed from scratch.
    """
    if problem is None:
        raise MetaheurError("give an instance to solve (or resume a checkpoint with metaheur.resume)")
    check_arguments("solve()", _SOLVE_TAKES, locals())
    seed, checkpoint_every = plain(seed), plain(checkpoint_every)
    params = params or SolveParams()
    problem = load_instance(problem)
    if not 0 <= seed < 2**63:
        raise MetaheurError(f"seed must be from 0 to 2^63 - 1, got {seed}")
    stop_rules_ = _stop_rules(problem, stop, time_limit, generations, target, no_improvement, params.stop_at_optimum)
    seeds = initial_solutions(problem, initial)
    device_list = [parse_device(d) for d in params.devices] if params.devices else None
    if device_list is not None and len({d.name for d in device_list}) != len(device_list):
        raise MetaheurError("a device is listed twice")
    strategy, island_devices = plan_devices(params.strategy, device_list, params.islands)
    _check_island_count(len(island_devices), params.scheduler, params.dask_local)
    search = problem.search_form().problem
    search.preflight()
    if type(search).operators is Problem.operators:
        raise MetaheurError(f"the {problem.kind.upper() or type(problem).__name__} problem has no island operators to "
                            "solve it with: derive it from metaheur.PermutationProblem or give it operators()")
    defaults = problem.default_params()
    ga = (params.ga or defaults.ga).check_for(problem)
    compile_before = compile_seconds_total()  # the probe of the choice below may build kernels
    tuned, choice = search.choose_search(IslandParams(ga, _searches(search, params, defaults)),
                                         _run_budget(stop_rules_, params.sync, island_devices,
                                                     strategy == "cpu-serial"))
    ga, searches = tuned.check_for(problem).ga, tuned.searches
    migration = params.migration or problem.default_migration()
    island_params = [_island_params(search, d, ga, searches, strategy in ("hybrid", "gpu"), params.ga is None)
                     for d in island_devices]
    island_params = _with_ls_islands(search, island_params, island_devices, params.ls_islands)
    search.check_memory(island_devices)
    check_host_memory(search.n, island_params)
    settings = RunSettings(
        problem=InstanceInfo(problem.fingerprint(), problem.name, problem.n, problem.kind, problem.source,
                             _class_name(type(problem))),
        strategy=strategy, seed=seed, devices=tuple(d.name for d in island_devices), migration=migration,
        sync=params.sync, epoch_seconds=params.epoch_seconds, epoch_generations=params.epoch_generations,
        stop=stop_rules_.built_in(), stop_at_optimum=params.stop_at_optimum,
        in_process=strategy == "cpu-serial" or (strategy == "cpu-islands" and len(island_devices) == 1))
    return _run(problem, settings, island_params, stop_rules_, callbacks, checkpoint, checkpoint_every,
                params.scheduler, params.dask_local, None, seeds, choice, compile_before)


def _run_budget(rules: StopRules, sync: bool, devices: list[Device], in_process: bool) -> RunBudget:
    """What the problem's choice of its local search is sized for (:meth:`Problem.choose_search`):
    the time limit, whether the problem may be timed (not in a ``sync`` run with a generation
    budget, which is reproducible for a seed: timings would make its result depend on the
    machine's speed; docs/decisions/perm-defaults.md), the CPU islands a core runs and whether the
    run starts no worker processes (``in_process``: ``cpu-serial``)."""
    stop = rules.built_in()
    time_limit = stop.get("time_limit")
    cpu = sum(not d.is_gpu for d in devices)
    return RunBudget(time_limit, time_limit is not None and not (sync and "generations" in stop),
                     max(1, -(-cpu // cpu_count())), in_process)


def _check_island_count(islands: int, scheduler: str | None, dask_local: int | None) -> None:
    """Without a Dask cluster, at most :data:`MAX_ISLANDS_PER_CORE` islands a core."""
    if scheduler is None and dask_local is None and islands > MAX_ISLANDS_PER_CORE * cpu_count():
        raise MetaheurError(f"{islands} islands are more than this machine can run ({cpu_count()} cores, "
                            f"at most {MAX_ISLANDS_PER_CORE * cpu_count()} islands); use a Dask cluster for more")


def resume(path: str | os.PathLike, stop: StopRule | Iterable[StopRule] | None = None, *,
           problem: Problem | str | os.PathLike | type[Problem] | None = None, callbacks: Callbacks | None = None,
           checkpoint: str | os.PathLike | None = None, checkpoint_every: float = 60.0,
           time_limit: float | None = None, generations: int | None = None, target: int | str | None = None,
           no_improvement: int | None = None, stop_at_optimum: bool | None = None, scheduler: str | None = None,
           dask_local: int | None = None) -> Result:
    """Continue the run saved in the checkpoint at ``path`` with its own settings, writing the
    checkpoint there again (or to ``checkpoint``). ``problem``: the instance (a Problem, a path
    or a name) when the checkpoint's record of where it came from does not reach it, or the
    problem class that reads it: a checkpoint names its problem by registered kind, never code
    to import, so the run of a problem of your own is resumed by giving it
    (:func:`resumed_instance`). The checkpoint is checked whole against the instance first
    (:meth:`~metaheur.checkpoint.Checkpoint.validate`). Stop rules given here (``stop`` and the
    shortcuts, as in :func:`solve`) replace the saved ones; without any, the saved built-in rules
    apply (a user's callable cannot be saved: a run whose budget was one must be given rules);
    ``stop_at_optimum`` replaces the saved one."""
    check_arguments("resume()", _RESUME_TAKES, locals())
    checkpoint_every, dask_local = plain(checkpoint_every), plain(dask_local)
    saved = load_checkpoint(path)
    instance, kind = (None, problem) if isinstance(problem, type) else (problem, None)
    problem = resumed_instance(saved, instance, kind)
    saved.validate(problem)
    problem.search_form().problem.preflight()
    _check_island_count(len(saved.states), scheduler, dask_local)
    shortcuts = {"time_limit": time_limit, "generations": generations, "target": target,
                 "no_improvement": no_improvement}
    if stop is None and all(v is None for v in shortcuts.values()):
        shortcuts = dict.fromkeys(shortcuts) | saved.settings.stop
        if shortcuts["time_limit"] is None and shortcuts["generations"] is None:
            raise MetaheurError(f"{path}: the run's time or generation budget was a stop rule of your own, which "
                                "a checkpoint cannot hold: give stop rules to resume it")
    at_optimum = saved.settings.stop_at_optimum if stop_at_optimum is None else stop_at_optimum
    rules = _stop_rules(problem, stop, stop_at_optimum=at_optimum, **shortcuts)
    settings = dataclasses.replace(saved.settings, stop=rules.built_in(), stop_at_optimum=at_optimum)
    island_params = saved.island_params(problem.search_form().problem)
    return _run(problem, settings, island_params, rules, callbacks, checkpoint or path, checkpoint_every,
                scheduler, dask_local, saved, None)


def resumed_instance(saved: Checkpoint, instance: Problem | str | os.PathLike | None = None,
                     kind: str | type[Problem] | None = None) -> Problem:
    """The instance the checkpoint ``saved`` resumes: ``instance`` (a Problem, or a path or name),
    else the file it was read from, read by ``kind`` (a registered name, ``module:Class`` or a
    class: what ``--problem`` says), else by the registered problem the checkpoint names
    (:func:`_registered_class`; a problem of the user's own must be given). A given path or name
    that the checkpoint's problem cannot read is read as ``metaheur solve`` reads it, so that
    the fingerprint check says whose checkpoint it is. Refused unless it is the checkpoint's
    instance."""
    info = saved.settings.problem
    if isinstance(instance, Problem):
        problem = load_instance(instance, kind)
    elif kind is not None:
        problem = load_instance(_saved_source(saved) if instance is None else instance, kind)
    else:
        cls = _registered_class(info)
        if cls is None:
            raise MetaheurError(f"{saved.path}: the checkpoint's problem {info.problem_class or info.kind} is not "
                                "registered here: give it with --problem module:Class (problem= in Python)")
        problem = _read_given(instance, cls) if instance is not None else load_instance(_saved_source(saved), cls)
    if problem.fingerprint() != info.key or problem.n != info.n:
        if (problem.name, problem.n, problem.kind) == (info.name, info.n, info.kind):
            raise MetaheurError(f"{saved.path}: the content of instance {info.name} (n = {info.n}) changed since "
                                "the checkpoint was written (its fingerprint differs); give the instance the run "
                                "began with")
        ours, theirs = (f"{k.upper()} " if k and info.kind != problem.kind else "" for k in (info.kind, problem.kind))
        raise MetaheurError(f"{saved.path}: checkpoint of {ours}instance {info.name} (n = {info.n}), not of "
                            f"{theirs}{problem.name} (n = {problem.n})")
    return problem


def _saved_source(saved: Checkpoint) -> str:
    """Where the checkpoint's instance was read from (a path, a library or ``gen:`` name)."""
    if not saved.settings.problem.source:
        raise MetaheurError(f"{saved.path}: the checkpoint does not say where its instance is; give the instance")
    return saved.settings.problem.source


def _read_given(instance: str | os.PathLike, cls: type[Problem]) -> Problem:
    """The instance given to resume, read by the checkpoint's problem ``cls``, else (another
    problem's file or name) as ``metaheur solve`` reads it."""
    try:
        return load_instance(instance, cls)
    except MetaheurError:
        return load_instance(instance)


def _registered_class(info: InstanceInfo) -> type[Problem] | None:
    """The registered problem of the checkpoint's kind when it is the class that wrote it (an
    older checkpoint names no class), else None; nothing the registry does not name is imported."""
    cls = registered_class(info.kind)
    if cls is None or info.problem_class not in (None, _class_name(cls)):
        return None
    return cls


def _class_name(cls: type[Problem]) -> str:
    """A problem class as a checkpoint names it, ``module:Class`` (never imported from there)."""
    return f"{cls.__module__}:{cls.__qualname__}"


def _stop_rules(problem: Problem, stop, time_limit, generations, target, no_improvement,
                stop_at_optimum: bool) -> StopRules:
    """The run's rules: ``stop``, then the shortcuts' built-in rules (10 s when there is no rule at
    all), then the proven optimum of the problem's best-known table when ``stop_at_optimum``;
    targets in the problem's sense."""
    rules = as_rule_list(stop)
    entry = problem.best_known()
    if isinstance(target, str):
        if target.lower() != "bks":
            raise MetaheurError(f"target must be a number or 'bks', got {target!r}")
        if entry is None:
            raise MetaheurError(f"--target bks: no best-known value for {problem.name} (n = {problem.n})")
        target = entry.value
    sign = problem.engine_sign
    if target is not None and entry is not None and entry.optimal and sign * target < sign * entry.value:
        side = "below" if sign > 0 else "above"
        raise MetaheurError(f"target {target} is {side} the proven optimum {entry.value} of {problem.name}: "
                            "it can never be reached")
    if not rules and time_limit is None and generations is None:
        time_limit = 10.0
    rules += built_in_rules(time_limit=time_limit, generations=generations, target=target,
                            no_improvement=no_improvement, sense=problem.sense)
    if stop_at_optimum and entry is not None and entry.optimal:
        rules.append(ProvenOptimum(entry.value, problem.sense))
    return StopRules(tuple(rules))


def _run(problem, settings: RunSettings, params: list[IslandParams], stop: StopRules, callbacks, checkpoint,
         checkpoint_every: float, scheduler, dask_local, saved, seeds: np.ndarray | None,
         choice: SearchChoice | None = None, compile_before: float | None = None) -> Result:
    """The run; ``choice``: how its local search was chosen (:meth:`Problem.choose_search`),
    reported in the result; ``compile_before``: the compile counter before that choice's probe."""
    island_devices = [parse_device(d) for d in settings.devices]
    checkpointer = Checkpointer(checkpoint, checkpoint_every, settings) if checkpoint else None
    compile_before = compile_seconds_total() if compile_before is None else compile_before
    form = problem.search_form()
    search = form.problem
    _precompile(search, island_devices)
    compile_s = compile_seconds_total() - compile_before
    with _dask(scheduler, dask_local) as client:
        model = IslandModel(search, island_devices, params, seed=settings.seed, migration=settings.migration,
                            sync=settings.sync, epoch_seconds=settings.epoch_seconds,
                            epoch_generations=settings.epoch_generations, in_process=settings.in_process,
                            backend="dask" if client is not None else None, callbacks=callbacks,
                            balance=settings.strategy == "hybrid",
                            initial=None if seeds is None else form.to_search(seeds))
        resume = None
        if saved is not None:
            model.migrator.restore(saved.migrator_state, saved.archive)
            resume = saved.record
            resume.specs = [dataclasses.replace(s, params=p) for s, p in zip(model.specs, params, strict=True)]
        record = model.run(stop, resume=resume, checkpoint=checkpointer)
    ga = params[0].ga
    with signals.deferred():  # the run has ended: a stop signal does not cost it its result
        return _result(problem, form, record, settings.strategy, settings.seed, compile_s, choice, {
                       "ga": dataclasses.asdict(ga),
                       **searches_as_dicts(params[0], search_sections(search)),
                       "migration": dataclasses.asdict(settings.migration),
                       "sync": settings.sync, "epoch_seconds": settings.epoch_seconds,
                       "epoch_generations": settings.epoch_generations, "islands": len(island_devices),
                       "stop": stop.built_in(), "stop_at_optimum": settings.stop_at_optimum,
                       "initial": 0 if seeds is None else len(seeds),
                       "dask": scheduler or (f"local:{dask_local}" if dask_local else None),
                       "checkpoint": checkpoint, "resumed": saved is not None,
                       "checkpoint_error": checkpointer.error if checkpointer else None})


def _best_or_identity(problem: Problem, form, record: RunRecord) -> tuple[np.ndarray, int]:
    """The run's best solution mapped back from the search form and its exact value (the tracked
    engine cost must be ``engine_sign`` times it). A run stopped (a signal, the time limit) before
    any island had a solution gives the identity permutation, with a warning."""
    found = record.best_solution()
    if found is None:
        if record.stop_reason not in ("interrupted", "time_limit"):
            raise MetaheurError("internal error: the run ended without a solution")
        warnings.warn("metaheur: the run stopped before any island had a solution; the result is the identity "
                      "permutation (give more time to build the first members)", RuntimeWarning, stacklevel=3)
        best = np.arange(problem.n, dtype=np.int64)
        return best, problem.value(best)
    best, tracked, _ = found
    best = form.from_search(best)
    value = problem.value(best)
    if problem.engine_sign * value != tracked:
        raise MetaheurError(f"internal error: a search tracked cost {tracked} for a solution of exact value {value}")
    return best, value


def _no_generation(islands: list[IslandRow], stop_reason: str) -> list[str]:
    """A run stopped by its time (limit, signal) in which no island finished a generation (or a
    local-search island a step) says so (the result's ``warnings`` and summary): its result is
    the best first member, a start and at most one search, not a solution of the islands'
    search. One that reached its target or a proven optimum first has nothing to say."""
    if stop_reason not in ("time_limit", "interrupted") or any(isl.generations or isl.search_steps
                                                                for isl in islands):
        return []
    return ["no island finished a generation in the run: the result is the best first member, not a searched "
            "solution; give more time (-t), or a cheaper --method, --moves or --ls-budget"]


def _result(problem: Problem, form, record: RunRecord, strategy: str, seed: int, compile_s: float,
            choice: SearchChoice | None, parameters: dict) -> Result:
    """The run's result in the problem's sense: the best solution mapped back from the search form
    (whose maps keep values, so the tracked engine cost must be ``engine_sign`` times its exact
    value), and every cost of the rows turned from engine costs to values; ``choice``: how the
    local search was chosen."""
    best, value = _best_or_identity(problem, form, record)
    sign = problem.engine_sign
    entry = problem.best_known()
    bks = entry.value if entry and not beaten_optimum(entry, value, problem.sense) else None

    def shown(cost):
        return None if cost is None else sign * cost

    islands = [IslandRow(island=spec.index, device=spec.device, generations=0 if ls_only(spec) else st.generation,
                         ls_iterations=st.ls_iterations, best_cost=shown(st.best_cost), restarts=st.restarts,
                         population=0 if st.population is None else int(st.population.shape[0]),
                         offspring=spec.params.ga.offspring,
                         algorithm=spec.algorithm.label(spec),
                         search_steps=st.generation if ls_only(spec) else 0)
               for spec, st in zip(record.specs, record.states, strict=True)]
    return Result(
        instance=problem.name, problem=problem.kind.upper(), n=problem.n, permutation=[int(x) for x in best],
        cost=int(value), best_known=bks, gap_percent=gap_percent(value, bks, problem.sense), sense=problem.sense,
        stop_reason=record.stop_reason,
        strategy=strategy, seed=seed, devices=sorted({s.device for s in record.specs}),
        time_s=round(record.seconds, 4), compile_s=round(compile_s, 4),
        **run_counters(record.specs, record.states), islands=islands,
        device_loads=[DeviceRow(**load) for load in record.loads],
        history=[replace(r, best_cost=shown(r.best_cost), global_best=shown(r.global_best)) for r in record.epochs],
        migrations=[MigrationRow(e, m.source, m.target, shown(m.cost)) for e, m in record.migrations],
        trace=[TracePoint(t, i, shown(c)) for t, i, c in record.trace],
        setup_s=round(record.setup_seconds, 4), search_choice=choice.as_dict() if choice else None,
        warnings=_no_generation(islands, record.stop_reason),
        parameters=parameters | {"retries": record.retries, "rebalanced": record.resized}, versions=_versions(),
        source=problem.source)


