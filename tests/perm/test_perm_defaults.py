"""Defaults that follow the cost (metaheur/search/perm_defaults.py, cost_probe.py; issue 61): the
chooser's rule on synthetic timings, the probe's measurements, an expensive cost-only problem's
choice and first generation in a timed run, explicit choices winning, the flow shop's and the
LOP's own defaults kept, the choice in the result, its JSON and the ``-v`` line, seeded runs
reproducible."""

from __future__ import annotations

from dataclasses import replace

import pytest
from cost_only import cost_only_lop, cost_only_tardiness
from perm_problems import random_latency, random_tardiness
from test_tutorial import tutorial  # noqa: F401  (the fixture: docs/problems.md's module and instance)
from testutil import solve_with

from metaheur import PermSearchParams, Result
from metaheur import solver as solver_module
from metaheur.cli import _echo_details
from metaheur.devices import cpu_device
from metaheur.errors import MetaheurError
from metaheur.islands.perm_operators import default_perm_budget
from metaheur.problem.permutation_check import segment_valid
from metaheur.problems.lop.generator import random_lop
from metaheur.problems.pfsp import random_pfsp
from metaheur.search.cost_probe import CostTimings, neighbourhood, probe_costs
from metaheur.search.perm_defaults import (
    DESCENT_SCANS,
    GIVEN_SHARE,
    KICK_SCANS,
    MIN_SAMPLE,
    SHARE,
    RunBudget,
    choose,
    choose_for,
    fitted_budget,
    search_model,
)
from metaheur.search.perm_search import method_order

MEMBERS = 30  # the default GA's first generation: 20 members and 10 children


@pytest.fixture(autouse=True)
def cpu_only(monkeypatch):
    monkeypatch.setattr(solver_module, "available_devices", lambda: [cpu_device()])


def timings(n: int, scan: float, partial: float | None = None, cost: float = 1e-7) -> CostTimings:
    """Synthetic timings: every move's full scan takes ``scan`` seconds (rows for insertions)."""
    size = {m: neighbourhood(m, n) for m in ("insert", "swap")}
    pair = {m: scan / size[m][1] for m in size}
    return CostTimings(n, cost, pair, {"insert": scan / n}, partial, 0.0, size)


def check_largest(choice, problem, t: CostTimings, limit: float, islands_per_core: int = 1) -> None:
    """The chosen budget fits the allowance, one more would not (unless it is the size-based cap)."""
    allowed = SHARE * limit / islands_per_core
    fixed, step = search_model(choice.method, choice.move, t, PermSearchParams(sample=choice.sample), problem.n)
    assert choice.allowed_s == pytest.approx(allowed)
    assert MEMBERS * (fixed + choice.ls_budget * step) <= allowed
    if choice.ls_budget < default_perm_budget(choice.method, problem.n):
        assert MEMBERS * (fixed + (choice.ls_budget + 1) * step) > allowed


def test_the_methods_in_order_follow_the_problems_functions():
    wt = random_tardiness(12, 1)  # partial_insert_row, insert_row; swaps by cost
    assert method_order(wt, "auto", "insert") == ("ig", "tabu", "ils")
    assert method_order(wt, "auto", "swap") == ("ig", "ils")  # a cost-only swap: never a tabu scan
    assert method_order(cost_only_tardiness(12, 1), "auto", "insert") == ("ils",)
    assert method_order(wt, "tabu", "swap") == ("tabu",)  # a given method alone
    assert PermSearchParams().resolved(cost_only_lop(12, 1)) == ("ils", "insert")


def test_a_cheap_problem_keeps_the_size_based_search():
    wt = random_tardiness(50, 1)
    choice = choose(wt, PermSearchParams(), None, MEMBERS, RunBudget(60.0, True), timings(50, 1e-6, 1e-7))
    assert (choice.method, choice.move, choice.ls_budget, choice.by) == ("ig", "insert", 25, "probe")
    assert choice.predicted_s <= choice.allowed_s


def test_tabu_only_when_a_full_scan_is_cheap():
    wt = random_tardiness(50, 1)
    slow_greedy = timings(50, 1e-5, partial=10.0)  # the iterated greedy cannot fit one iteration
    choice = choose(wt, PermSearchParams(), None, MEMBERS, RunBudget(60.0, True), slow_greedy)
    assert (choice.method, choice.ls_budget) == ("tabu", 500)  # 10 n tabu iterations fit
    assert "ig not taken" in choice.reason
    # scans so dear that n tabu iterations (n = 50 > DESCENT_SCANS + KICK_SCANS) no longer fit, but
    # descent plus one kick does
    slow = timings(50, SHARE * 60.0 / (MEMBERS * (DESCENT_SCANS + KICK_SCANS)), partial=10.0)
    choice = choose(wt, PermSearchParams(), None, MEMBERS, RunBudget(60.0, True), slow)
    assert choice.method == "ils" and "tabu not taken" in choice.reason
    check_largest(choice, wt, slow, 60.0)


def test_an_expensive_problem_gets_a_descent_and_islands_sharing_a_core_less():
    wt = cost_only_tardiness(50, 1)
    t = timings(50, SHARE * 60.0 / (MEMBERS * (DESCENT_SCANS + 3 * KICK_SCANS)))
    choice = choose(wt, PermSearchParams(), None, MEMBERS, RunBudget(60.0, True), t)
    assert choice.method == "ils" and choice.ls_budget == 2  # 3 kicks, less their kicked solutions' cost
    check_largest(choice, wt, t, 60.0)
    shared = choose(wt, PermSearchParams(), None, MEMBERS, RunBudget(60.0, True, islands_per_core=2), t)
    assert shared.ls_budget < choice.ls_budget
    check_largest(shared, wt, t, 60.0, islands_per_core=2)
    # one descent over every move does not fit: descents over samples, as large as fit (at most n)
    t = timings(50, 1e-2)
    sampled = choose(wt, PermSearchParams(), None, MEMBERS, RunBudget(60.0, True), t)
    assert (sampled.method, sampled.sample) == ("ils", 50) and "one descent over every move" in sampled.reason
    assert sampled.ls_budget > 0
    check_largest(sampled, wt, t, 60.0)
    smaller = choose(wt, PermSearchParams(), None, MEMBERS, RunBudget(60.0, True), timings(50, 4e-2))
    assert MIN_SAMPLE < smaller.sample < 50 and smaller.predicted_s <= smaller.allowed_s
    # nothing fits: one descent a search (no kick) over the least sample, reported as over its allowance
    none = choose(wt, PermSearchParams(), None, MEMBERS, RunBudget(1.0, True), timings(50, 1.0))
    assert (none.method, none.ls_budget, none.sample) == ("ils", 0, MIN_SAMPLE) and none.predicted_s > none.allowed_s


def test_given_parts_stay():
    wt = random_tardiness(50, 1)
    t = timings(50, 1e-2, partial=10.0)
    forced = choose(wt, PermSearchParams(method="tabu", move="swap"), None, MEMBERS, RunBudget(60.0, True), t)
    assert (forced.method, forced.move, forced.ls_budget) == ("tabu", "swap", 50)  # at least n: within half of 60 s
    budget = choose(wt, PermSearchParams(), 7, MEMBERS, RunBudget(60.0, True), t)
    assert budget.ls_budget == 7 and budget.method == "ils"  # 7 steps fit a tabu search, but 7 < n
    untimed = choose(wt, PermSearchParams(), None, MEMBERS, RunBudget(None, False), None)
    assert (untimed.method, untimed.ls_budget, untimed.by) == ("ig", default_perm_budget("ig", 50), "structure")


@pytest.mark.parametrize("given", ["method", "method and budget", "budget"])
def test_what_is_given_is_sized_down_to_the_limit_or_refused(given):
    """Issue 70: a given method or budget whose first generation takes more than GIVEN_SHARE of
    the time limit is sized down to the largest budget that fits it; where one step's generation
    overruns the whole time limit, one line refuses the run (it would end with no generation and
    a random permutation)."""
    wt = random_tardiness(50, 1)
    perm = PermSearchParams(method="tabu" if "method" in given else "auto")
    ls_budget = 64 if "budget" in given else None
    t = timings(50, 1e-2, partial=10.0)  # a scan 10 ms: 30 tabu searches of 64 steps 19 s
    choice = choose(wt, perm, ls_budget, MEMBERS, RunBudget(20.0, True), t)
    fixed, step = search_model(choice.method, choice.move, t, PermSearchParams(), wt.n)
    allowed = GIVEN_SHARE * 20.0
    assert MEMBERS * (fixed + choice.ls_budget * step) <= allowed < MEMBERS * (fixed + (choice.ls_budget + 1) * step)
    assert choice.by == "probe" and "sized down to" in choice.reason
    with pytest.raises(MetaheurError) as info:
        choose(wt, perm, ls_budget, MEMBERS, RunBudget(0.2, True), t)
    assert "cannot finish a first generation in 0.2 s" in str(info.value) and "give a longer time limit" in \
        str(info.value)


def test_a_given_method_and_budget_that_fit_stay_given():
    wt = random_tardiness(50, 1)
    choice = choose(wt, PermSearchParams(method="tabu"), 3, MEMBERS, RunBudget(60.0, True), timings(50, 1e-4))
    assert (choice.method, choice.ls_budget, choice.by) == ("tabu", 3, "given")
    untimed = choose_for(wt, PermSearchParams(method="tabu"), 3, MEMBERS, RunBudget(60.0, False))
    assert (untimed.ls_budget, untimed.by, untimed.timings) == (3, "given", None)  # --sync -g: not timed


def test_fitted_budget():
    assert fitted_budget(1.0, 0.5, 3.0, 100) == 4
    assert fitted_budget(1.0, 0.5, 3.0, 2) == 2
    assert fitted_budget(4.0, 0.5, 3.0, 100) == -1


def test_the_probe_times_every_function():
    wt = random_tardiness(30, 1)
    t = probe_costs(wt, 0.2)
    assert set(t.pair) == {"insert", "swap"} and set(t.row) == {"insert"}
    assert t.partial is not None and min(t.cost, t.partial, *t.pair.values(), *t.row.values()) > 0
    assert t.scan("insert") == 30 * t.row["insert"]  # the row function
    assert t.scan("swap") == 30 * 29 // 2 * t.pair["swap"]  # pairs, by cost after the move
    assert t.size == {"insert": (30, 30 * 29), "swap": (30, 30 * 29 // 2)}
    assert set(t.as_dict()) == {"cost_s", "probe_s", "insert_scan_s", "swap_scan_s", "partial_insert_s"}
    only = probe_costs(cost_only_lop(20, 1), 0.1)
    assert only.row == {} and only.partial is None and only.scan("insert") == 20 * 19 * only.pair["insert"]


def test_the_probe_scans_segments_and_candidate_lists():
    """Segment moves (Or-opt) counted as the searches scan them (every valid row code and
    destination, enumerated), and a problem's candidate lists making its scans granular."""
    pb = random_latency(12, 1)  # segment, reverse, insert, swap; 4 candidates an element
    t = probe_costs(pb, 0.2, moves=("segment", "insert"))
    longest = pb.segment_length
    codes = [c for c in range(12 * longest * 2) if any(segment_valid(c, j, 12, longest, True) for j in range(12))]
    moves = sum(segment_valid(c, j, 12, longest, True) for c in codes for j in range(12))
    assert t.size == {"segment": (len(codes), moves), "insert": (12, 132)} and t.candidates == 4
    assert t.scan("segment") == len(codes) * 2 * 4 * t.pair["segment"]  # granular: 2 k pairs a row
    assert t.scan("segment", granular=False) == len(codes) * t.row["segment"]  # every move, by the row
    assert t.scan("insert", granular=False) == 132 * t.pair["insert"]  # no insert_row: pairs


def test_an_expensive_cost_only_problem_gets_ils_and_an_early_first_generation(tmp_path):
    # an O(n^2) cost, every move scored by cost after it: one descent over every insertion takes
    # some 3,500 costs, 30 of them some ten times the first generation's 0.15 s
    pb = cost_only_lop(60, 2)
    r = solve_with(pb, time_limit=3, seed=1, islands=1)
    choice = r.search_choice
    assert (choice["method"], choice["move"], choice["by"]) == ("ils", "insert", "probe")
    assert MIN_SAMPLE <= choice["sample"] <= pb.n and "one descent over every move" in choice["reason"]
    assert r.parameters["perm"]["method"] == "ils" and r.parameters["perm"]["sample"] == choice["sample"]
    assert r.parameters["ga"]["ls_budget"] == choice["ls_budget"]
    # the first generation took a small share of the run: many more followed it
    assert r.generations >= 5
    assert r.value == pb.value(r.permutation)
    path = tmp_path / "r.json"
    r.to_json(path)
    assert Result.from_json(path).search_choice == choice
    lines = []
    _echo_details(r, lines.append)
    assert lines[0].startswith(f"  local search ils over insert ({choice['sample']} sampled a step), "
                               f"{choice['ls_budget']} steps a search, chosen by probe: auto: ils in order; ")


def test_explicit_choices_win():
    pb = random_tardiness(30, 1)
    ga = replace(pb.default_params().ga, ls_budget=7)
    r = solve_with(pb, time_limit=2, generations=1, seed=1, islands=1, ga=ga,
                   perm=PermSearchParams(method="tabu", move="swap"))
    assert r.search_choice["by"] == "given" and r.parameters["ga"]["ls_budget"] == 7
    assert (r.parameters["perm"]["method"], r.parameters["perm"]["move"]) == ("tabu", "swap")
    r = solve_with(pb, time_limit=2, generations=1, seed=1, islands=1, perm=PermSearchParams(method="tabu"))
    assert r.search_choice["by"] == "probe" and r.parameters["perm"]["method"] == "tabu"
    assert r.parameters["ga"]["ls_budget"] == r.search_choice["ls_budget"] >= pb.n


def test_the_flow_shops_and_the_lops_own_defaults_stay():
    shop = random_pfsp(20, 5, seed=1)
    r = solve_with(shop, time_limit=2, generations=1, seed=1, islands=1)
    assert (r.search_choice["method"], r.search_choice["ls_budget"], r.search_choice["by"]) == ("ig", 1000, "given")
    assert r.islands[0].algorithm == "iterated greedy chains"
    lop = random_lop(30, 1)
    r = solve_with(lop, time_limit=2, generations=1, seed=1, islands=1)
    assert (r.search_choice["method"], r.search_choice["move"], r.search_choice["ls_budget"]) == ("ils", "insert", 0)
    assert r.search_choice["by"] == "given"


def same_run(a: Result, b: Result) -> bool:
    """The same solution, new bests and local-search work (times aside)."""
    return (a.permutation == b.permutation and a.search_iterations == b.search_iterations
            and [(p.island, p.cost) for p in a.trace] == [(p.island, p.cost) for p in b.trace])


def test_seeded_runs_repeat_with_the_recorded_choice():
    """A timed run's choice depends on the machine; a --sync run with a generation budget is not
    timed (the structural rule), and the choice a timed run recorded, given back, repeats."""
    pb = random_tardiness(25, 3)
    sync = [solve_with(pb, time_limit=60, generations=3, seed=4, islands=1, sync=True) for _ in range(2)]
    assert sync[0].search_choice["by"] == "structure"
    assert same_run(*sync)
    timed = solve_with(pb, time_limit=1, seed=4, islands=1).search_choice
    assert timed["by"] == "probe"
    ga = replace(pb.default_params().ga, ls_budget=timed["ls_budget"])
    perm = PermSearchParams(method=timed["method"], move=timed["move"])
    again = [solve_with(pb, generations=3, seed=4, islands=1, sync=True, ga=ga, perm=perm) for _ in range(2)]
    assert again[0].search_choice["by"] == "given"
    assert same_run(*again)


@pytest.mark.usefixtures("tutorial")
def test_the_cli_reports_the_choice_and_a_config_file_wins(tmp_path):
    """docs/problems.md's tutorial from the command line: ``-v`` says what was chosen and why; the
    JSON holds it; ``--ls-budget`` stays, and a config file's ``[perm]`` and ``[ga]`` choose all."""
    from click.testing import CliRunner

    from metaheur.cli import cli

    base = ["solve", "--problem", "wt_tutorial:Tardiness", "small.wt", "-t", "2", "-g", "1", "--islands", "1", "-q"]
    done = CliRunner().invoke(cli, [*base, "-v", "--ls-budget", "3", "--json", "r.json"])
    assert done.exit_code == 0, done.output
    choice = Result.from_json(tmp_path / "r.json").search_choice
    assert (choice["ls_budget"], choice["by"]) == (3, "probe") and choice["method"] in ("ig", "tabu", "ils")
    assert f"  local search {choice['method']} over {choice['move']}, 3 steps a search, chosen by probe: auto: " \
           "ig, tabu, ils in order" in done.output
    (tmp_path / "c.toml").write_text('[perm]\nmethod = "tabu"\nmove = "swap"\n\n[ga]\nls_budget = 5\n')
    done = CliRunner().invoke(cli, [*base, "--config", "c.toml", "--json", "c.json"])
    assert done.exit_code == 0, done.output
    given = Result.from_json(tmp_path / "c.json")
    assert (given.search_choice["method"], given.search_choice["move"], given.search_choice["by"]) == \
           ("tabu", "swap", "given")
    assert given.parameters["ga"]["ls_budget"] == 5


@pytest.mark.gpusim
@pytest.mark.usefixtures("simulated_gpus")
def test_gpu_islands_take_the_choice_timed_on_the_cpu_build(monkeypatch):
    """On (simulated) GPUs the probe times the CPU build; the GPU islands search with its choice."""
    from metaheur.devices import available_devices

    monkeypatch.setattr(solver_module, "available_devices", available_devices)
    pb = cost_only_tardiness(30, 2)
    r = solve_with(pb, strategy="gpu", time_limit=2, generations=1, seed=1)
    assert r.search_choice["by"] == "probe" and r.search_choice["method"] == "ils"
    assert all(d.startswith("cuda") for d in r.devices) and r.value == pb.value(r.permutation)
    assert r.parameters["ga"]["ls_budget"] == r.search_choice["ls_budget"]


def test_the_numpy_route_has_nothing_to_time_and_keeps_its_budget():
    from perm_problems import Tardiness

    class NumpyOnly(Tardiness):
        kind = "npwtd"
        device_code = None

    base = random_tardiness(44, 1)
    pb = NumpyOnly(base.p, base.w, base.due)
    with pytest.warns(RuntimeWarning, match="numpy-only route"):
        r = solve_with(pb, time_limit=2, generations=1, seed=1, islands=1)
    assert r.search_choice is None and r.parameters["ga"]["ls_budget"] == default_perm_budget("ils", 44) == 22
