"""A user's problem whose device code is at fault at run time (docs/problems.md, docs/long-runs.md):
a ``cost`` that never returns, one that is slow, one that crashes (a write through a null
pointer), at once or after a while, met by the cost probe, by worker islands or by islands of the
run's own process. Whatever the code does, the run ends within its time limit and a margin (a
crash in the run's own process at once, with one line), says what happened in lines of its own (no
traceback, no stack dump), writes its outputs where it has a solution and leaves no process behind.

The faulty problems are generated: one module (written to the test's folder) whose ``cost``
misbehaves as its instance file says, so that every fault shares one build of the kernels."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from fault_helpers import die_by, live_processes
from joblib.externals.loky import get_reusable_executor

from metaheur.crashes import CRASH_SIGNALS, crash_error

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")

MODULE = r'''
import numpy as np
import metaheur
from metaheur.problems import ProblemFormats

DEVICE_CODE = r"""
__device__ ll cost(const Data &d, const int *perm) {
  static long calls = 0;  // per process: the late faults come after the first members were built
  const bool now = ++calls > d.after;
  if (now && d.fault == 1) { volatile int spin = 1; while (spin) {} }
  if (now && d.fault == 2) { for (volatile long k = 0; k < 40000000; ++k) {} }
  if (now && d.fault == 3) *(volatile int *)0 = 1;
  ll t = 0, c = 0;
  for (int q = 0; q < d.n; ++q) {
    const int e = perm[q];
    t += d.p[e];
    if (t > d.due[e]) c += (ll)d.w[e] * (t - d.due[e]);
  }
  return c;
}
"""


def read(path):
    numbers = np.array(open(path).read().split(), dtype=np.int64)
    fault, after, n = (int(x) for x in numbers[:3])
    jobs = numbers[3:3 + 3 * n].reshape(n, 3)
    return Faulty(jobs[:, 0], jobs[:, 1], jobs[:, 2], fault, after)


class Faulty(metaheur.PermutationProblem):
    kind = "faulty"
    moves = ("swap",)
    device_code = DEVICE_CODE
    formats = ProblemFormats(extensions=(".faulty",), read=read)

    def __init__(self, p, w, due, fault, after):
        self.p, self.w, self.due = (np.asarray(x, dtype=np.int64) for x in (p, w, due))
        self.fault, self.after = fault, after
        super().__init__(name="faulty", n=len(self.p))

    def data(self):
        return {"p": self.p.astype(np.int32), "w": self.w.astype(np.int32), "due": self.due.astype(np.int32),
                "fault": self.fault, "after": self.after}

    def evaluate(self, perms):
        perms = np.asarray(perms)
        done = np.cumsum(self.p[perms], axis=1)
        return (self.w[perms] * np.maximum(0, done - self.due[perms])).sum(axis=1)

    def value_bound(self):
        return int(self.w.sum() * self.p.sum())
'''

FAULTS = {"hang": 1, "slow": 2, "crash": 3}
#: where the fault is met: the cost probe (the method left to auto; in a worker process, or on a
#: thread of the run's process with cpu-serial), worker islands, islands of the run's own process
#: (cpu-serial); given method and budget skip the probe
WHERE = {"probe": [], "probe_in_process": ["--strategy", "cpu-serial"],
         # given and untimed (--sync with a generation budget): no cost probe, the islands call the code
         "workers": ["--method", "ils", "--ls-budget", "10", "--sync", "-g", "1000000"],
         "main": ["--method", "ils", "--ls-budget", "10", "--sync", "-g", "1000000", "--strategy", "cpu-serial"]}
LIMIT = 3.0
MARGIN = 20.0  # start-up (imports, a cold kernel cache is built before the clock) and the islands' grace


def _instance(folder: Path, fault: str, after: int = 0, n: int = 30) -> Path:
    rng = np.random.default_rng(n)
    p, w = rng.integers(1, 20, n), rng.integers(1, 10, n)
    due = rng.integers(0, p.sum(), n)
    path = folder / f"{fault}.faulty"
    jobs = "\n".join(f"{a} {b} {c}" for a, b, c in zip(p, w, due, strict=True))
    path.write_text(f"{FAULTS[fault]} {after} {n}\n{jobs}\n")
    return path


def _start(folder: Path, instance: Path, *args: str) -> subprocess.Popen:
    (folder / "faulty_problem.py").write_text(MODULE)
    env = os.environ | {"PYTHONPATH": os.pathsep.join([str(folder), os.environ.get("PYTHONPATH", "")])}
    env.pop("PYTHONFAULTHANDLER", None)
    return subprocess.Popen([sys.executable, "-m", "metaheur.cli", "solve", "--problem", "faulty_problem:Faulty",
                             str(instance), "--json", "r.json", "-q", *args], cwd=folder, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)


def _group(pgid: int) -> set[int]:
    """The live (not zombie) processes of process group ``pgid``."""
    return {pid for pid, (_, group) in live_processes().items() if group == pgid}


def _finish(proc: subprocess.Popen, timeout: float) -> tuple[str, float]:
    """(stderr, seconds) of the run to its end; it must end within ``timeout`` and leave no process."""
    t0 = time.monotonic()
    try:
        _, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise AssertionError(f"the run outlived {timeout} s") from None
    seconds = time.monotonic() - t0
    deadline = time.monotonic() + 5.0
    while _group(proc.pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    left = _group(proc.pid)
    if left:
        os.killpg(proc.pid, signal.SIGKILL)
    assert not left, f"processes left behind: {left}"
    assert "Traceback" not in err and "Fatal Python error" not in err, err
    assert all(line.startswith("metaheur: ") for line in err.splitlines() if line.strip()), err
    return err, seconds


@pytest.mark.slow
@pytest.mark.parametrize("where", list(WHERE))
@pytest.mark.parametrize("fault", ["hang", "slow"])
def test_a_cost_that_hangs_or_is_slow_cannot_outlive_the_time_limit(tmp_path, fault, where):
    proc = _start(tmp_path, _instance(tmp_path, fault), "-t", str(LIMIT), *WHERE[where])
    err, _ = _finish(proc, LIMIT + MARGIN)
    assert proc.returncode == 0, err
    result = json.loads((tmp_path / "r.json").read_text())
    assert result["stop_reason"] == "time_limit"
    if where.startswith("probe"):  # a slow cost may finish the probe in its wait (at least a second)
        assert result["search_choice"]["by"] == "probe"
        assert fault == "slow" or "did not finish the cost probe" in err
    if fault == "hang":
        assert "before any island had a solution" in err


@pytest.mark.slow
@pytest.mark.parametrize("where", list(WHERE))
@pytest.mark.parametrize(("signum", "status"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_a_stop_signal_ends_a_run_whose_cost_never_returns(tmp_path, where, signum, status):
    proc = _start(tmp_path, _instance(tmp_path, "hang"), "-t", "200", *WHERE[where])
    deadline = time.monotonic() + 60.0  # the worker processes are up: the run is past its kernel builds
    while "in_process" not in where and where != "main" and len(_group(proc.pid)) < 2 and time.monotonic() < deadline:
        time.sleep(0.1)
    time.sleep(3.0)  # the cost is called (in the run's own process: after its imports)
    proc.send_signal(signum)
    err, seconds = _finish(proc, 30.0)
    assert proc.returncode == status, err
    assert seconds < 10.0


@pytest.mark.slow
@pytest.mark.parametrize(("where", "after"), [("probe", 0), ("workers", 0), ("workers", 30_000_000),
                                              ("probe_in_process", 0), ("main", 0)])
def test_device_code_that_crashes_is_one_line_and_keeps_the_best(tmp_path, where, after):
    """At once, in a worker (the cost probe's or an island's): no solution, status 2 and one error
    line naming the signal and the phase; in the run's own process (cpu-serial): one line and
    status 2 (nothing can be written). After the first members (some seconds of calls) in a
    worker: the run fails early (status 1) with its best solution written, whether an epoch had
    returned it or the crashed island had only reported it."""
    proc = _start(tmp_path, _instance(tmp_path, "crash", after), "-t", "20", *WHERE[where])
    err, _ = _finish(proc, 20 + MARGIN)
    if after == 0:
        assert proc.returncode == 2, err
        phase = {"probe": "in a worker process during the cost probe",
                 "workers": "in a worker process during an island's epoch"}.get(where, "the run's process crashed")
        assert err.strip().count("\n") == 0 and "(SIGSEGV)" in err and phase in err, err
        return
    assert proc.returncode == 1, err  # a failed run (docs/long-runs.md) whose best solution is written
    assert "crashed (SIGSEGV)" in err and "the best solution found was written" in err
    result = json.loads((tmp_path / "r.json").read_text())
    assert result["stop_reason"].startswith("failed") and sorted(result["permutation"]) == list(range(30))


@pytest.mark.parametrize("signum", [signal.SIGSEGV, signal.SIGBUS, signal.SIGFPE, signal.SIGILL, signal.SIGABRT,
                                    signal.SIGKILL, signal.SIGTERM])
def test_a_worker_killed_by_a_fault_signal_is_a_crash_and_any_other_death_is_not(signum):
    """A real worker process dies by each signal: the signals of a fault are a crash, named in
    one line (no rerun); a kill from outside (the out-of-memory killer, a user) is not."""
    executor = get_reusable_executor(max_workers=1)
    try:
        with pytest.raises(Exception) as info:
            executor.submit(die_by, int(signum)).result(timeout=60)
    finally:
        executor.shutdown(wait=True, kill_workers=True)
    crash = crash_error(info.value, "a test")
    if signal.Signals(signum).name in CRASH_SIGNALS:
        assert crash is not None and f"crashed ({signal.Signals(signum).name})" in str(crash)
        assert "\n" not in str(crash)
    else:
        assert crash is None
