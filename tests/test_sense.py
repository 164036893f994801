"""A maximisation in its own sense everywhere a user sees a number: the gap below the best known,
targets "at least", a proven optimum from above, the result's JSON, summary, CSV and figure
caption; best-known tables by kind, so that names of different problems never collide."""

from __future__ import annotations

import dataclasses
import io
import itertools
import json
from dataclasses import dataclass, field

import numpy as np
import pytest
from testutil import solve_with

from metaheur import QAP, GAParams, Problem, Result
from metaheur.describe import evaluation, format_evaluation
from metaheur.errors import MetaheurError
from metaheur.plots import _caption, _island_curves
from metaheur.problem.best_known import TABLES, BestKnown, best_known, gap_percent, register_table
from metaheur.problem.fingerprint import fingerprint
from metaheur.problems import random_qap
from metaheur.progress import ProgressReporter
from metaheur.result import EpochRow, TracePoint
from metaheur.solver import _stop_rules
from metaheur.stopping import Progress, ProvenOptimum, StopRules, Target, TimeLimit
from metaheur.warm_start import initial_solutions


class Arrangement(Problem):
    """Maximise sum_i i * w[perm[i]]: the heaviest element last (the optimum sorts by weight)."""

    kind = "test-arrangement"
    title = "test arrangement (maximised)"
    sense = "max"

    def __init__(self, weights, name="arr"):
        self.weights = np.asarray(weights, dtype=np.int64)
        self.name, self.n, self.source = name, len(self.weights), None

    def evaluate(self, perms):
        return (self.weights[np.asarray(perms)] * np.arange(self.n)).sum(axis=1).astype(np.int64)

    def fingerprint(self):
        return fingerprint(f"{self.kind}:{self.name}", (self.weights,))

    def optimum(self) -> int:
        return int((np.sort(self.weights) * np.arange(self.n)).sum())


@pytest.fixture
def arrangement():
    """An instance named tai30a (as the QAP) with its proven optimum in the problem's own table."""
    problem = Arrangement(np.arange(30) % 7 + 1, name="tai30a")
    register_table(problem.kind, [BestKnown("tai30a", "test", 30, problem.optimum(), True)])
    yield problem
    TABLES.pop(problem.kind)


def test_a_problem_class_says_min_or_max():
    with pytest.raises(MetaheurError, match="Upward: sense must be 'min' or 'max', got 'maximise'"):
        type("Upward", (Arrangement,), {"sense": "maximise"})


def test_gap_is_above_for_a_minimisation_and_below_for_a_maximisation():
    assert gap_percent(110, 100) == pytest.approx(10.0) == gap_percent(110, 100, "min")
    assert gap_percent(90, 100, "max") == pytest.approx(10.0)
    assert gap_percent(100, 100, "max") == 0.0
    assert gap_percent(-110, -100, "max") == pytest.approx(10.0)  # (bks - value) / |bks|
    assert gap_percent(5, None, "max") is None and gap_percent(0, 0, "max") == 0.0


def test_best_known_tables_are_kind_aware(arrangement):
    assert best_known("tai30a", 30, kind="qap").value == 1818146
    assert best_known("tai30a", 30, kind=arrangement.kind).value == arrangement.optimum() != 1818146
    assert arrangement.best_known().library == "test"
    assert best_known("tai30a", 30, kind="tsp") is None
    assert best_known("tai30a", 30).library == "QAPLIB"  # no kind: the built-in tables first


def test_a_target_means_at_least_for_a_maximisation():
    at_least = Target(50, "max")
    assert [at_least(Progress(1.0, v, 1, 1, 0)) for v in (49, 50, 51)] == [False, True, True]
    assert [Target(50)(Progress(1.0, v, 1, 1, 0)) for v in (49, 50, 51)] == [True, True, False]
    assert at_least.engine_value == -50 and Target(50).engine_value == 50
    rules = StopRules((TimeLimit(1.0), Target(50, "max"), ProvenOptimum(60, "max")))
    assert rules.target == -50  # the largest engine cost that ends the run
    with pytest.raises(MetaheurError, match="sense must be 'min' or 'max'"):
        Target(5, "down")


def test_stop_rules_of_a_maximisation(arrangement):
    best = arrangement.optimum()
    rules = _stop_rules(arrangement, None, 5.0, None, "bks", None, True)
    targets = [r for r in rules.rules if isinstance(r, Target)]
    assert [(type(r), r.value, r.sense) for r in targets] == [(Target, best, "max"), (ProvenOptimum, best, "max")]
    assert rules.fired(Progress(1.0, best, 1, 1, 0)) == "target"
    assert rules.fired(Progress(1.0, best - 1, 1, 1, 0)) is None
    with pytest.raises(MetaheurError, match=f"target {best + 1} is above the proven optimum {best}"):
        _stop_rules(arrangement, None, 5.0, None, best + 1, None, True)
    _stop_rules(arrangement, None, 5.0, None, best - 1, None, True)  # below the optimum: reachable


def test_the_engine_minimises_the_negated_values_of_a_maximisation(arrangement):
    perms = np.array([np.arange(30), np.argsort(arrangement.weights, kind="stable")])
    values = arrangement.evaluate(perms)
    assert arrangement.engine_sign == -1 and values[1] == arrangement.optimum() > values[0]
    assert list(arrangement.engine_costs(perms)) == [-values[0], -values[1]]
    assert arrangement.value(perms[1]) == arrangement.optimum()


def test_warm_starts_of_a_maximisation_come_best_first(arrangement):
    rng = np.random.default_rng(4)
    perms = np.array([rng.permutation(30) for _ in range(5)])
    out = initial_solutions(arrangement, perms)
    values = arrangement.evaluate(out)
    assert list(values) == sorted(values, reverse=True)


def test_an_evaluation_says_value_and_below(arrangement):
    perm = np.arange(30)
    ev = evaluation(arrangement, perm)
    assert ev["sense"] == "max" and ev["cost"] == arrangement.value(perm) < arrangement.optimum()
    assert ev["gap_percent"] == pytest.approx(100 * (arrangement.optimum() - ev["cost"]) / arrangement.optimum())
    text = format_evaluation(ev)
    assert f"value       {ev['cost']}" in text and "% below the best known" in text and "cost" not in text
    qap_text = format_evaluation(ev | {"sense": "min"})
    assert f"cost        {ev['cost']}" in qap_text and "below" not in qap_text


def _result(sense: str) -> Result:
    return Result(
        instance="tai30a", problem="TEST-ARRANGEMENT", n=3, permutation=[2, 0, 1], cost=90, best_known=100,
        gap_percent=10.0, sense=sense, stop_reason="generations", strategy="cpu-serial", seed=0, devices=["cpu"],
        time_s=1.0, compile_s=0.0, search_iterations=10, generations=2,
        history=[EpochRow(0, 0, "cpu", 0.5, 1, 5, 0.5, 80, 80, 0), EpochRow(1, 0, "cpu", 1.0, 1, 5, 0.5, 90, 90, 0)],
        trace=[TracePoint(0.1, 0, 70), TracePoint(0.5, 0, 80), TracePoint(0.9, 0, 90)])


def test_a_result_keeps_its_sense_through_json(tmp_path):
    result = _result("max")
    back = Result.from_json(result.to_json())
    assert back == result and back.sense == "max" and back.value == 90
    old = json.loads(_result("min").to_json())
    del old["sense"]  # a result written before the sense was kept
    assert Result.from_json(json.dumps(old)).sense == "min"


def test_summary_csv_and_caption_of_a_maximisation(tmp_path):
    result = _result("max")
    summary = result.summary()
    assert "value       90" in summary and "10.0000 % below the best known" in summary and "cost  " not in summary
    assert "cost        90" in _result("min").summary()
    header = result.stats_csv(tmp_path / "max.csv").splitlines()[0].split(",")
    assert "best_value" in header and "global_best_value" in header and "best_cost" not in header
    assert "best_cost" in _result("min").stats_csv().splitlines()[0]
    assert Result.read_stats_csv(tmp_path / "max.csv") == result.history
    assert "value 90" in _caption(result) and "10.000 % below" in _caption(result)
    assert "cost 90" in _caption(_result("min"))


def test_convergence_curves_follow_the_sense():
    """A maximisation's island bests rise; read as a minimisation, only the first point is a best."""
    assert _island_curves(_result("max"))[0] == ([0.1, 0.5, 0.9], [70, 80, 90])
    assert _island_curves(dataclasses.replace(_result("max"), sense="min"))[0] == ([0.1], [70])


@dataclass(frozen=True, eq=False)
class NegatedQAP(QAP):
    """Maximise minus the QAP cost: the engine cost (minus the value) is the QAP cost, so the
    QAP's own operators and islands solve it unchanged; every number a user sees is negated."""

    kind: str = field(default="negqap", init=False)
    sense = "max"

    def evaluate(self, perms):
        return -super().evaluate(perms)

    def value(self, perm) -> int:
        return -self.cost(perm)


@pytest.fixture
def negated():
    qap = random_qap(7, seed=3)
    perms = np.array(list(itertools.permutations(range(7))))
    optimum = int(min(qap.cost(p) for p in perms))  # 5,040 permutations: the exact optimum
    problem = NegatedQAP(qap.name, qap.flow, qap.distance)
    register_table(problem.kind, [BestKnown(problem.name, "test", 7, -optimum, True)])
    yield problem, -optimum
    TABLES.pop(problem.kind)


RUN = {"strategy": "cpu-serial", "sync": True, "epoch_generations": 1, "seed": 1,
       "ga": GAParams(population=6, offspring=3, crossover="ux", ls_budget=40)}


def test_a_maximisation_solves_in_its_own_sense_and_stops_at_its_optimum(negated):
    problem, best = negated
    out = io.StringIO()
    reporter = ProgressReporter(best_known=best, time_limit=None, stream=out, live=False, interval=0.0)
    seen = []  # what a user's stop rule is shown: values in the problem's sense
    r = solve_with(problem, stop=[lambda p: seen.append(p.best_cost) or False], generations=30, callbacks=reporter,
                   **RUN)
    assert seen and seen == [row.global_best for row in r.history] and all(v < 0 for v in seen)
    assert (r.sense, r.problem, r.stop_reason) == ("max", "NEGQAP", "optimal")
    assert r.cost == r.value == best == problem.value(r.permutation) == -problem.cost(r.permutation)
    assert r.best_known == best and r.gap_percent == 0.0
    assert all(row.best_cost < 0 for row in r.islands) and all(p.cost < 0 for p in r.trace)
    assert [row.global_best for row in r.history] == sorted(row.global_best for row in r.history)  # rises
    assert f"best {best}" in out.getvalue().splitlines()[-1] and "gap 0.000%" in out.getvalue()
    assert "value       " in r.summary() and "0.0000 % below the best known" in r.summary()


def test_a_maximisation_target_means_at_least(negated):
    problem, _ = negated
    start = problem.value(np.arange(7))  # some value below the optimum
    r = solve_with(problem, generations=30, target=start, stop_at_optimum=False, **RUN)
    assert r.stop_reason == "target" and r.cost >= start


def test_live_reports_of_a_maximisation_show_values_and_keep_the_largest():
    """The islands' mid-epoch reports are engine costs (negated values): the progress line turns
    them into values and takes a report as a new best only when its value is larger."""
    from types import SimpleNamespace

    from metaheur.islands.model import LiveProgress

    out = io.StringIO()
    reporter = ProgressReporter(best_known=None, time_limit=10, stream=out, live=False, interval=0.0)
    reporter.sign, reporter.devices, reporter.kinds = -1, "cuda:0 x1", {"ga"}
    counters = {"generations": 1, "search_steps": 0, "search_iterations": 10}
    for engine_best in (-100, -90, -110):
        reporter.on_progress(SimpleNamespace(live=LiveProgress(best=engine_best, counters=counters)), 1.0)
    bests = [line.split("best ")[1].split()[0] for line in out.getvalue().splitlines()]
    assert bests == ["100", "100", "110"]
    assert [line.endswith("*") for line in out.getvalue().splitlines()] == [True, False, True]
