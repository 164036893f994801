"""The figures of a result (metaheur.plots): what each panel shows, read back from the axes."""

from __future__ import annotations

import json

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pytest
from click.testing import CliRunner
from cliutil import fifo, user_error

from metaheur.cli import cli
from metaheur.plots import plot_convergence, plot_devices, result_figure
from metaheur.problems import TSP, random_qap
from metaheur.problems.tsp.picture import plot_tour
from metaheur.result import DeviceRow, EpochRow, IslandRow, Result, TracePoint

BEST_KNOWN = 900


def make_result(**changes) -> Result:
    """Two islands whose first solutions come long before the first epoch ends (at 1 s)."""
    fields = dict(
        instance="toy", problem="QAP", n=5, permutation=[0, 1, 2, 3, 4], cost=950, best_known=BEST_KNOWN,
        gap_percent=5.56, stop_reason="time_limit", strategy="cpu-islands", seed=0, devices=["cpu"], time_s=4.0,
        compile_s=0.0, search_iterations=1000, generations=20,
        islands=[IslandRow(i, "cpu", 10, 500, 950 + 10 * i, 0, 6, 3, "GA (ux)") for i in range(2)],
        device_loads=[DeviceRow("cpu", islands=2, busy_s=6.0, idle_s=2.0, utilisation=0.75, ls_iterations=1000,
                                ls_iterations_per_s=125.0)],
        history=[EpochRow(epoch=e, island=i, device="cpu", time_s=float(e + 1), generations=5, ls_iterations=100,
                          busy_s=0.8 - 0.4 * i, best_cost=950 + 10 * i, global_best=950,
                          migrants_in=1 if (e, i) == (2, 1) else 0)
                 for e in range(4) for i in range(2)],
        trace=[TracePoint(0.05, 0, 1400), TracePoint(0.3, 0, 1000), TracePoint(2.5, 0, 950), TracePoint(0.08, 1, 1300),
               TracePoint(0.6, 1, 960)],
    )
    return Result(**(fields | changes))


@pytest.fixture
def ax():
    fig, ax = plt.subplots()
    yield ax
    plt.close(fig)


def lines_labelled(ax, prefix: str):
    return [line for line in ax.get_lines() if line.get_label().startswith(prefix)]


def test_convergence_starts_at_the_first_solution_not_the_first_epoch(ax):
    plot_convergence(make_result(), ax)
    left, right = ax.get_xlim()
    assert left == pytest.approx(0.05) and right == pytest.approx(4.0)
    run_best = lines_labelled(ax, "run best")[0]
    assert list(run_best.get_ydata())[:4] == [1400, 1300, 1000, 960]  # every island's improvements, merged
    assert run_best.get_ydata()[-1] == 950


def test_convergence_marks_the_best_known_value(ax):
    plot_convergence(make_result(), ax)
    (line,) = lines_labelled(ax, "best known")
    assert set(line.get_ydata()) == {BEST_KNOWN}
    assert ax.get_ylim()[0] <= BEST_KNOWN
    assert not lines_labelled(plot_convergence(make_result(best_known=None), plt.subplots()[1]), "best known")


def test_convergence_offers_a_log_time_axis(ax):
    plot_convergence(make_result(), ax, log_time=True)
    assert ax.get_xscale() == "log"
    assert ax.get_xlim()[0] == pytest.approx(0.05)
    assert "log" in ax.get_xlabel()


def test_convergence_without_a_trace_falls_back_to_the_epochs(ax):
    plot_convergence(make_result(trace=[]), ax)
    assert ax.get_xlim()[0] == pytest.approx(1.0)
    assert {line.get_label() for line in ax.get_lines()} >= {"island 0 (cpu)", "island 1 (cpu)", "run best"}


def test_migrants_are_marked_where_they_arrived(ax):
    plot_convergence(make_result(), ax)
    marks = [line for line in ax.get_lines() if line.get_marker() == "v"]
    assert len(marks) == 1 and list(marks[0].get_xdata()) == [3.0]


def test_device_panel_shows_the_busy_share_with_the_throughput_written_on_it(ax):
    plot_devices(make_result(), ax)
    busy, idle = ax.patches
    assert busy.get_width() == pytest.approx(75.0) and idle.get_width() == pytest.approx(25.0)
    assert ax.get_xlim() == (0.0, 100.0)
    (text,) = ax.texts
    assert "2 islands" in text.get_text() and "125 ls it/s" in text.get_text() and "75 % busy" in text.get_text()


def test_device_panel_from_the_history_when_there_are_no_loads(ax):
    plot_devices(make_result(device_loads=[]), ax)
    busy = ax.patches[0].get_width()
    assert busy == pytest.approx(100 * 4.8 / 6.4)  # island 1 waits 0.4 s an epoch for island 0


def test_tour_keeps_its_aspect_ratio(ax):
    xy = np.array([[0, 0], [1000, 0], [1000, 100], [0, 100]], dtype=float)  # ten times wider than high
    tsp = TSP(name="wide", weight_type="EUC_2D", coords=xy, display=xy)
    plot_tour(tsp, [0, 1, 2, 3], ax)
    ax.figure.canvas.draw()
    origin, unit = ax.transData.transform([(0, 0), (100, 100)])
    dx, dy = unit - origin
    assert dx == pytest.approx(dy, rel=1e-6)


def test_figure_has_the_problem_panel(tmp_path):
    qap = random_qap(5, seed=1)
    fig = result_figure(make_result(), qap, log_time=True)
    titles = [a.get_title() for a in fig.axes]
    assert any("cost of each pair" in t for t in titles) and any("devices" in t for t in titles)
    assert fig.axes[0].get_xscale() == "log"
    plt.close(fig)


def test_plot_command_takes_log_time(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    make_result().to_json("r.json")
    out = CliRunner().invoke(cli, ["plot", "r.json", "r.png", "--log-time"])
    assert out.exit_code == 0, out.output
    assert (tmp_path / "r.png").stat().st_size > 1000


# ------------------------------------------------------------------------ hostile result files


def _result_text(**changes) -> str:
    """A result JSON with the top-level ``changes`` written over it (values as JSON text)."""
    data = json.loads(make_result().to_json())
    text = json.dumps({k: v for k, v in data.items() if k not in changes})
    return text[:-1] + "".join(f', "{k}": {v}' for k, v in changes.items()) + "}"


@pytest.mark.parametrize(("text", "fragment"), [
    ('{"instance": ' + "[" * 100_000 + "]" * 100_000 + "}", "invalid JSON: nested too deep"),
    (_result_text(cost="9" * 5000), "invalid JSON: an integer too long to read"),
    (_result_text(permutation="[999, 1, 2, 3, 4]"), "permutation is not a permutation of 0..4 (n = 5)"),
    (_result_text(permutation="[0, 1, 2, 3]"), "permutation is not a permutation of 0..4"),
    (_result_text(trace='[{"time_s": 1e308, "island": 0, "cost": 5}]'),
     "trace[0].time_s = 1e+308 is out of 0 .. 1e+09"),
    (_result_text(trace='[{"time_s": 0.5, "island": 0, "cost": 1e308}]'), "trace[0].cost must be a 64-bit integer"),
    (_result_text(time_s="1e999"), "time_s must be a finite number"),
    (_result_text(time_s="NaN"), "invalid JSON: NaN is not a JSON number"),
    (_result_text(cost="true"), "cost must be a 64-bit integer, got true"),
    (_result_text(n="5.0"), "n must be a 64-bit integer, got 5.0"),
    (_result_text(best_known=str(2**64)), "best_known must be a 64-bit integer"),
    (_result_text(devices='"cpu"'), "devices must be a list of strings"),
    (_result_text(history="[1, 2]"), "history must be a list of objects"),
    (_result_text(device_loads='[{"utilisation": 1e308}]'), "device_loads[0].utilisation = 1e+308 is out of 0 .. 1"),
    (_result_text(sense='"up"'), 'sense must be min or max, got "up"'),
])
def test_plot_of_a_hostile_result_is_one_line(tmp_path, monkeypatch, text, fragment):
    """Result.from_json checks every field (types, ranges, the permutation): what no run writes is
    one line naming the field, never a traceback from the JSON parser or from matplotlib."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "r.json").write_text(text)
    user_error(CliRunner().invoke(cli, ["plot", "r.json", "r.png"]), "r.json: ", fragment)
    assert not (tmp_path / "r.png").exists()


def test_plot_reads_no_special_file(tmp_path, monkeypatch):
    """A device (``/dev/zero`` would fill the memory; ``/dev/null`` checks it safely) or a FIFO
    (which would wait for a writer) is refused before it is read."""
    monkeypatch.chdir(tmp_path)
    with fifo(tmp_path / "pipe.json"):
        for source, kind in (("/dev/null", "a character device"), ("pipe.json", "a FIFO")):
            user_error(CliRunner().invoke(cli, ["plot", source, "r.png"]), f"{source}: not a regular file ({kind})")


def test_a_result_round_trips_through_strict_json(tmp_path):
    """No NaN or Infinity in what is written (a time limit of inf from the API is null), and
    what is read back equals what was written."""
    result = make_result(parameters={"time_limit": float("inf")})
    text = result.to_json(tmp_path / "r.json")
    assert "Infinity" not in text and json.loads(text)["parameters"]["time_limit"] is None
    assert Result.from_json(tmp_path / "r.json") == make_result(parameters={"time_limit": None})
