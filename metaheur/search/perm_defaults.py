"""Defaults that follow the cost (issue 61): the generic engine's local search, its neighbourhood
and its budget per child, chosen from what the problem's device functions cost
(:mod:`metaheur.search.cost_probe`), so that an island's first generation (``population`` new
members and ``offspring`` children, each one search) ends within :data:`SHARE` of the time limit.

The rule (docs/problems.md, "Defaults that follow the cost"; constants measured in
docs/decisions/perm-defaults.md):

* Whatever a user or the problem's ``default_params()`` gave stays: a method other than
  ``auto``, a move, an ``ls_budget``. Only what is left open is chosen; with the method and the
  budget both given nothing is (``given``), unless the run is timed and they do not fit.
* A given method, move or budget whose first generation does not fit the allowance below is kept
  while it takes at most :data:`GIVEN_SHARE` of the time limit, else sized down
  (:func:`sized_down`) to the largest budget that does, at least one step (a descent for ``ils``,
  ignoring the minimum a chosen method has); where even that would take a first generation
  longer than the whole time limit, the run is refused in one line (it would end with no
  generation and a random permutation).
* The methods, in order (:func:`~metaheur.search.perm_search.method_order`): the iterated
  greedy where the problem defines ``partial_insert_row``; the tabu search over a swap,
  insertion or segment neighbourhood that the problem evaluates incrementally (a pair delta or a
  row function); last, descent plus kicks (``ils``). A cost-only neighbourhood never gets the tabu
  search, timed or not.
* Without timings (no time limit, or a ``--sync`` run with a generation budget, which must be
  reproducible for a seed), the first method with its size-based budget
  (:func:`~metaheur.islands.perm_operators.default_perm_budget`): ``structure``.
* With timings (``probe``; :data:`PROBE_SHARE` of the time limit, at most
  :data:`PROBE_SECONDS`, waited for :data:`PROBE_WAIT_SHARE` of the time limit, at most
  :data:`PROBE_WAIT_SECONDS`; a probe not back by then takes every function to cost the wait,
  said in a warning): a search of ``b`` steps is predicted to take ``fixed + b * step``
  seconds (:func:`search_model`, in full scans of the neighbourhood). The allowance of one search
  is ``SHARE * time_limit``, divided by the CPU islands sharing a core, over the first
  generation's ``population + offspring`` searches. Each method in order gets the largest budget
  up to its size-based one that fits, and is taken when that budget reaches its minimum
  (:func:`minimum_budget`: n tabu iterations, one greedy iteration); descent plus kicks, last,
  is always taken, with at least no kick (one descent), even where that overruns the allowance.
"""

from __future__ import annotations

import warnings
from dataclasses import asdict, dataclass, replace

from metaheur.errors import MetaheurError
from metaheur.islands.perm_operators import default_perm_budget
from metaheur.problem.registry import is_builtin
from metaheur.search.cost_probe import CostTimings, probe_within
from metaheur.search.perm_search import METHOD_NAMES, PermSearchParams, method_order

#: The first generation's share of the time limit.
SHARE = 0.05
#: The share of the time limit that a first generation of a given method, move or budget may take
#: before it is sized down (:func:`sized_down`): at least two generations.
GIVEN_SHARE = 0.5
#: The probe's share of the time limit, and its most seconds.
PROBE_SHARE, PROBE_SECONDS = 0.01, 0.5
#: How long the run waits for the probe: a share of the time limit, at least a second (the
#: probe's time and its answer from the worker process, on a loaded machine too) and at most
#: five (a function that never returns holds the run no longer than this).
PROBE_WAIT_SHARE, PROBE_WAIT_FLOOR, PROBE_WAIT_SECONDS = 0.05, 1.0, 5.0
#: Full scans of the neighbourhood that a first-improvement descent from a random start costs (the
#: start of an ILS or iterated-greedy search), that an ILS kick's descent costs and that the
#: descent after an iterated greedy's reinsertions costs: about the most measured on the
#: tardiness, its cost-only variant, the cost-only LOP, the LOP and a flow shop
#: (docs/decisions/perm-defaults.md), so that a first generation rather ends early than late.
DESCENT_SCANS, KICK_SCANS, GREEDY_SCANS = 15.0, 7.0, 2.0
#: A descent over samples of m moves (``PermSearchParams.sample``) stops at the first sample
#: without an improving move: from a random start it took 0.15 n to 2.1 n samples, an ILS kick's
#: 2 to 18 (m = n / 10 and n; docs/decisions/perm-defaults.md). The least sample chosen.
SAMPLED_DESCENT, SAMPLED_KICK, MIN_SAMPLE = 2.5, 25.0, 8


@dataclass(frozen=True)
class RunBudget:
    """What the choice is sized for: the run's ``time_limit`` (seconds, or None); ``timed``:
    whether the problem may be timed (a time limit, and not a ``--sync`` run with a generation
    budget, which must stay reproducible for a seed); ``islands_per_core``: CPU islands sharing
    one core; ``in_process``: the run starts no worker processes (``cpu-serial``), so the probe
    runs on a thread of its process."""

    time_limit: float | None
    timed: bool
    islands_per_core: int = 1
    in_process: bool = False  # the run starts no worker processes (cpu-serial): nor does the probe


@dataclass(frozen=True)
class SearchChoice:
    """The local search chosen (``method``, ``move``, ``ls_budget``, ``sample``: moves a descent
    step samples, 0 for all), ``by`` what (``probe``: timed; ``structure``: the problem's
    functions alone; ``given``: nothing left open), why (``reason``), the first generation's
    predicted and allowed seconds and the probe's timings."""

    method: str
    move: str
    ls_budget: int
    by: str
    reason: str
    predicted_s: float | None = None
    allowed_s: float | None = None
    timings: dict | None = None
    sample: int = 0

    def as_dict(self) -> dict:
        return asdict(self)


def minimum_budget(method: str, n: int) -> int:
    """The least budget a method is taken with: n tabu iterations (shorter, a tabu search is a
    descent whose memory, tenures up to ``tenure_scale`` n, never acts), one greedy iteration, no
    kick (a descent)."""
    return {"tabu": n, "ig": 1}.get(method, 0)


def search_model(method: str, move: str, t: CostTimings, perm: PermSearchParams, n: int) -> tuple[float, float]:
    """(fixed, per step) seconds of one search: tabu, one scan an iteration; ILS, a descent from
    the start (:data:`DESCENT_SCANS`) then per kick the kicked solution's cost and a descent
    (:data:`KICK_SCANS`); iterated greedy, the descent from the start over insertions, then per
    iteration ``destruct`` ``partial_insert_row`` calls and a descent (:data:`GREEDY_SCANS`).
    Sampled (``perm.sample`` m > 0), a scan is m pair deltas, a descent from the start
    :data:`SAMPLED_DESCENT` n of them and a kick's (or a greedy iteration's) :data:`SAMPLED_KICK`."""
    scanned = "insert" if method == "ig" else move
    if perm.sample:
        scan = perm.sample * t.pair[scanned]
        start, again = SAMPLED_DESCENT * n, SAMPLED_KICK
    else:
        scan = t.scan(scanned, perm.granular)
        start, again = DESCENT_SCANS, KICK_SCANS if method == "ils" else GREEDY_SCANS
    if method == "tabu":
        return t.cost, scan
    kick = perm.destruct * t.partial if method == "ig" else t.cost
    return start * scan, kick + again * scan


def fitted_sample(move: str, t: CostTimings, n: int, seconds: float) -> int:
    """The largest sample m, :data:`MIN_SAMPLE` to n, whose descent from a random start fits
    ``seconds`` (:func:`search_model`); at least :data:`MIN_SAMPLE`."""
    return max(MIN_SAMPLE, min(n, int(seconds / (SAMPLED_DESCENT * n * t.pair[move]))))


def fitted_budget(fixed: float, step: float, seconds: float, cap: int) -> int:
    """The largest budget b <= cap with ``fixed + b * step <= seconds`` (-1: not even b = 0)."""
    if fixed > seconds:
        return -1
    return cap if step <= 0 else min(cap, int((seconds - fixed) / step))


def choose(problem, perm: PermSearchParams, ls_budget: int | None, members: int,
           budget: RunBudget, timings: CostTimings | None,
           given: bool | None = None) -> SearchChoice:
    """The choice of the module docstring for ``problem`` (its ``perm`` section and ``ls_budget``
    as given, ``members`` searches a first generation); ``timings`` None: the structural rule.
    ``given``: whether the user gave the method, move or budget (None: any that is not left open;
    a problem's own defaults are not given: they are chosen, never refused by :func:`sized_down`)."""
    n, move = problem.n, perm.move or problem.moves[0]
    methods = method_order(problem, perm.method, move)
    if timings is None or budget.time_limit is None:
        method = methods[0]
        size = default_perm_budget(method, n) if ls_budget is None else ls_budget
        why = "a run without a time limit" if budget.time_limit is None else "a reproducible run (--sync, generations)"
        return SearchChoice(method, move, size, "structure", f"{_what(perm.method, methods)}; not timed: {why}",
                            sample=perm.sample)
    allowed = SHARE * budget.time_limit / max(1, budget.islands_per_core)
    if given is None:
        given = perm.method != "auto" or perm.move is not None or ls_budget is not None
    notes = []
    for k, method in enumerate(methods):
        last = k == len(methods) - 1
        if ls_budget is None:
            floor = minimum_budget(method, n)
            used, fixed, step, size = _largest(method, move, timings, perm, n, allowed / members, last, notes)
            fits, size = size >= floor, max(size, floor)
        else:
            used, (fixed, step), size = perm, search_model(method, move, timings, perm, n), ls_budget
            fits = size >= minimum_budget(method, n) and members * (fixed + size * step) <= allowed
        if last and not fits and given:
            size = sized_down(method, move, members, (fixed, step), size, budget, notes, timings.measured)
        predicted = members * (fixed + size * step)
        if fits or last:
            scan = (f"{used.sample} sampled {move} moves a descent step" if used.sample
                    else f"a full {move} scan {_ms(timings.scan(move, used.granular))}")
            reason = (f"{_what(perm.method, methods)}; {scan}, {members} searches a first generation, "
                      f"{_ms(allowed)} allowed ({SHARE:.0%} of {budget.time_limit:g} s)"
                      + "".join(f"; {note}" for note in notes))
            by = "given" if perm.method != "auto" and size == ls_budget else "probe"
            return SearchChoice(method, move, size, by, reason, round(predicted, 6), round(allowed, 6),
                                timings.as_dict(), used.sample)
        notes.append(f"{method} not taken: {size} steps would take {_ms(predicted)}")
    raise MetaheurError("internal error: no local search chosen")  # the last method is always taken


def sized_down(method: str, move: str, members: int, model: tuple[float, float], size: int, budget: RunBudget,
               notes: list[str], refuse: bool = True) -> int:
    """The budget of a given method, move or budget (``size`` steps) that the allowance of a
    chosen one does not fit: ``size`` where a first generation takes at most :data:`GIVEN_SHARE`
    of the time limit (divided by the CPU islands sharing a core), else the largest budget that
    does (:func:`fitted_budget`), at least one step (a descent for ``ils``), said in ``notes``.
    Refused in one line where even that takes a first generation longer than the whole time
    limit (the run would end with no generation), when ``refuse`` (timings measured, not the
    lower bounds of a late probe: then the run goes on with the least budget)."""
    fixed, step = model
    least, sharing = (0 if method == "ils" else 1), max(1, budget.islands_per_core)
    fitted = max(least, fitted_budget(fixed, step, GIVEN_SHARE * budget.time_limit / sharing / members, size))
    if fitted < size:
        notes.append(f"{size} steps would take {_ms(members * (fixed + size * step))}, more than "
                     f"{GIVEN_SHARE:.0%} of the time limit: sized down to {fitted}")
    predicted = members * (fixed + fitted * step) * sharing  # islands sharing a core take turns
    if refuse and predicted > budget.time_limit:
        raise MetaheurError(f"the {METHOD_NAMES[method]} over {move} moves cannot finish a first generation in "
                            f"{budget.time_limit:g} s: {members} searches of {fitted} step{'s' if fitted != 1 else ''} "
                            f"take about {_ms(predicted)} on this machine; give a longer time limit (-t), a cheaper "
                            f"--method or --moves, or fewer --population and --offspring")
    return fitted


def _largest(method: str, move: str, t: CostTimings, perm: PermSearchParams, n: int, seconds: float, last: bool,
             notes: list[str]) -> tuple[PermSearchParams, float, float, int]:
    """(the parameters searched with, the model's fixed and step seconds, the largest budget up to
    the usual one whose search fits ``seconds``, -1 for none); the last method, descent plus
    kicks, where one descent over every move does not fit and none was given, over the largest
    sample that fits (:func:`fitted_sample`), when that is cheaper (said in ``notes``)."""
    fixed, step = search_model(method, move, t, perm, n)
    size = fitted_budget(fixed, step, seconds, default_perm_budget(method, n))
    if last and size < 0 and method == "ils" and not perm.sample:
        sampled = replace(perm, sample=fitted_sample(move, t, n, seconds))
        fixed_s, step_s = search_model(method, move, t, sampled, n)
        if fixed_s < fixed:
            notes.append(f"one descent over every move would take {_ms(fixed)} a search")
            return sampled, fixed_s, step_s, fitted_budget(fixed_s, step_s, seconds, default_perm_budget(method, n))
    return perm, fixed, step, size


def choose_for(problem, perm: PermSearchParams, ls_budget: int | None, members: int,
               budget: RunBudget, given: bool | None = None) -> SearchChoice:
    """:func:`choose` with the probe's timings where the run is ``timed`` (a given method and
    budget too: sized down where they do not fit, :func:`sized_down`); untimed, with the method
    and the budget both given, the choice is theirs (``given``). A probe that does not finish
    within its wait takes every function to cost at least the wait (a warning says so)."""
    if budget.timed and budget.time_limit is not None:
        move = perm.move or problem.moves[0]  # and the insertions of the iterated greedy's descents
        moves = (move, "insert") if move != "insert" and problem.user_code().has("partial_insert_row") else (move,)
        wait = min(PROBE_WAIT_SECONDS, max(PROBE_WAIT_FLOOR, PROBE_WAIT_SHARE * budget.time_limit))
        # metaheur's own problems are probed on a thread of this process (their code is ours: no
        # worker process to start); a user's in a worker of its own, which a crash cannot take down
        in_process = budget.in_process or is_builtin(type(problem))
        timings = probe_within(problem, min(PROBE_SECONDS, PROBE_SHARE * budget.time_limit), wait, moves,
                               in_process=in_process)
        late = None
        if timings is None:
            late = (f"the problem's device functions did not finish the cost probe in {_ms(wait)}: each is taken "
                    f"to cost at least that a call, and the search is sized for it")
            warnings.warn(f"metaheur: {late}", RuntimeWarning, stacklevel=2)
            timings = CostTimings.at_least(problem, moves, wait)
        choice = choose(problem, perm, ls_budget, members, budget, timings, given)
        return choice if late is None else replace(choice, reason=f"{choice.reason}; {late}")
    if perm.method != "auto" and ls_budget is not None:
        return SearchChoice(perm.method, perm.move or problem.moves[0], ls_budget, "given", "method and budget given",
                            sample=perm.sample)
    return choose(problem, perm, ls_budget, members, budget, None)


def _what(method: str, methods: tuple[str, ...]) -> str:
    return f"method {method} given" if method != "auto" else "auto: " + ", ".join(methods) + " in order"


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.3g} ms" if seconds < 1 else f"{seconds:.3g} s"
