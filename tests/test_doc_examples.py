"""The examples of README.md and docs/ run as written.

Every fenced block with a line that starts with ``metaheur`` (a shell example) runs as a bash
script (``set -e``), and every ``python`` block runs too, the Python blocks of a page one after
the other in one interpreter (a later block may use an earlier one's names). Each page runs in a
fresh folder of its own with the benchmark libraries under ``METAHEUR_INSTANCES`` (an ``export``
of that variable in a block is left out). Every run has a time limit: an example that fails or
hangs fails the test, naming its page and line.

A comment on the line before a block marks it:

- ``<!-- example: long -->``: the test shortens it, every time limit set to one second
  (``-t N``, ``--time-limit N``; ``time_limit=N``, ``TimeLimit(N)`` in Python);
- ``<!-- example: skip REASON -->``: not run (it needs a GPU, a cluster, a download), reported
  as skipped with the reason.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import warnings
from dataclasses import dataclass
from pathlib import Path

import pytest
from testutil import instances_dir

pytestmark = pytest.mark.slow  # every example runs the CLI or the API end to end

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
SHELL_SECONDS = 90  # per shell block (a long one shortened)
PYTHON_SECONDS = 120  # per page's Python blocks together
SHORT_LIMIT = "1"
_FENCE = re.compile(r"^```([\w-]*)\s*$")
_MARK = re.compile(r"^<!--\s*example:\s*(long|skip)\b\s*(.*?)\s*-->\s*$")


@dataclass(frozen=True)
class Example:
    page: Path
    line: int  # of the opening fence, 1-based
    language: str  # "shell" or "python"
    code: str
    mark: str | None  # "long", "skip" or None
    reason: str = ""

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def _is_shell_example(code: str) -> bool:
    """A block with a ``metaheur`` command that is not a synopsis (``metaheur solve INSTANCE... [options]``)."""
    commands = [line for line in code.splitlines() if re.match(r"\s*(\$\s+)?metaheur\s", line)]
    return bool(commands) and not any("[options]" in c.lower() or "..." in c for c in commands)


def examples(page: Path) -> list[Example]:
    """The shell and Python examples of a Markdown page, in order, with their marks."""
    lines = page.read_text().splitlines()
    found, k = [], 0
    while k < len(lines):
        fence = _FENCE.match(lines[k])
        if not fence:
            k += 1
            continue
        end = next((j for j in range(k + 1, len(lines)) if lines[j].startswith("```")), len(lines))
        code = "\n".join(lines[k + 1:end])
        before = next((lines[j] for j in range(k - 1, -1, -1) if lines[j].strip()), "")
        mark = _MARK.match(before.strip())
        info = fence.group(1).lower()
        language = "python" if info in ("python", "py") else (
            "shell" if info in ("", "sh", "bash", "shell", "console") and _is_shell_example(code) else None)
        if language:
            found.append(Example(page, k + 1, language, code, mark.group(1) if mark else None,
                                 mark.group(2) if mark else ""))
        k = end + 1
    return found


def shortened(example: Example) -> str:
    """The example's code as run: a long one with every time limit set to one second; shell
    prompts and exports of METAHEUR_INSTANCES left out."""
    code = example.code
    if example.language == "shell":
        code = "\n".join(re.sub(r"^\s*\$\s+", "", line) for line in code.splitlines()
                         if not re.match(r"\s*export\s+METAHEUR_INSTANCES=", line))
    if example.mark == "long":
        if example.language == "shell":
            code = re.sub(r"(\s(?:-t|--time-limit))(\s+|=)[\d.]+", rf"\1\g<2>{SHORT_LIMIT}", code)
        else:
            code = re.sub(r"\btime_limit\s*=\s*[\d_.]+", f"time_limit={SHORT_LIMIT}", code)
            code = re.sub(r"\bTimeLimit\(\s*[\d_.]+\s*\)", f"TimeLimit({SHORT_LIMIT})", code)
    return code


def _env(library: Path) -> dict:
    env = dict(os.environ, METAHEUR_INSTANCES=str(library), MPLBACKEND="Agg", PYTHONUNBUFFERED="1")
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"  # this environment's metaheur
    return env


def _run(args: list[str], cwd: Path, env: dict, timeout: float, where: str) -> str | None:
    """None when the example ran, else what went wrong. The example runs in a session of its own,
    ended with everything it started (a server an example starts, a run past its time)."""
    proc = subprocess.Popen(args, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)
    try:
        output, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _end_session(proc)
        output, _ = proc.communicate()
        return f"{where}: the example ran past {timeout} s:\n{output[-3000:]}"
    finally:
        _end_session(proc)
    if proc.returncode != 0:
        return f"{where}: the example failed (exit status {proc.returncode}):\n{output[-3000:]}"
    return None


def _end_session(proc: subprocess.Popen) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)


def _fail_on(failure: str | None) -> None:
    if failure:
        pytest.fail(failure, pytrace=False)


SHELL = [e for page in PAGES for e in examples(page) if e.language == "shell"]
PYTHON_PAGES = [p for p in PAGES if any(e.language == "python" for e in examples(p))]


@pytest.fixture(scope="module")
def page_folders(tmp_path_factory) -> dict:
    """One fresh folder per page, shared by its examples in order (a later one may read what an
    earlier one wrote)."""
    return {page: tmp_path_factory.mktemp(page.stem) for page in PAGES}


@pytest.mark.parametrize("example", SHELL, ids=lambda e: e.where)
def test_shell_example_runs(example: Example, page_folders: dict) -> None:
    if example.mark == "skip":
        pytest.skip(f"marked not to run: {example.reason}")
    env = _env(instances_dir())
    script = "set -e\n" + shortened(example)
    _fail_on(_run(["bash", "-c", script], page_folders[example.page], env, SHELL_SECONDS, example.where))


@pytest.mark.parametrize("page", PYTHON_PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_python_examples_run(page: Path, page_folders: dict) -> None:
    """The page's Python blocks in order, in one interpreter; a failure names its block. A block
    marked to skip is left out (with a warning naming it); a page whose blocks are all marked skips."""
    env = _env(instances_dir())
    blocks = [e for e in examples(page) if e.language == "python"]
    run = [e for e in blocks if e.mark != "skip"]
    for e in blocks:
        if e.mark == "skip":
            warnings.warn(f"{e.where}: marked not to run: {e.reason}", stacklevel=1)
    if not run:
        pytest.skip("every Python example of the page is marked not to run")
    for e in run:
        try:
            compile(shortened(e), e.where, "exec")
        except SyntaxError as exc:
            pytest.fail(f"{e.where}: not Python ({exc.msg}); mark a signature <!-- example: skip a signature -->",
                        pytrace=False)
    program = "\n".join(f"print({e.where!r}, file=__import__('sys').stderr)\n{shortened(e)}" for e in run)
    _fail_on(_run([sys.executable, "-c", program], page_folders[page], env, PYTHON_SECONDS,
                  str(page.relative_to(ROOT))))


def test_marks_and_blocks_are_found(tmp_path: Path) -> None:
    """The extraction itself: shell blocks are those with a metaheur command, marks apply to the
    block that follows, a long example's time limits are shortened."""
    page = tmp_path / "page.md"
    page.write_text("text\n\n```\npip install metaheur\n```\n\n<!-- example: long -->\n```sh\n$ metaheur solve x -t 60"
                    " --time-limit=30\n```\n\n<!-- example: skip needs a GPU -->\n```python\nprint(1)\n```\n\n"
                    "```python\nsolve(p, time_limit=20, stop=TimeLimit(5))\n```\n")
    found = examples(page)
    assert [(e.language, e.line, e.mark) for e in found] == [("shell", 8, "long"), ("python", 13, "skip"),
                                                             ("python", 17, None)]
    assert found[1].reason == "needs a GPU"
    assert shortened(found[0]) == "metaheur solve x -t 1 --time-limit=1"
    assert shortened(found[2]) == found[2].code  # not marked long: as written
    assert shortened(Example(page, 1, "python", found[2].code, "long")) == "solve(p, time_limit=1, stop=TimeLimit(1))"
