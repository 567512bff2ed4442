"""Helpers shared by the tests: the toy task, scripted-model answers, fast toy solutions, and a
way to run the real CLI. Fixtures built on them live in ``conftest.py``."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

from podium.testing import (  # noqa: F401 - re-exported: the tests import them from here
    Received,
    Reply,
    code_answer,
    node_answers,
    review_answer,
    write_script,
)

REPO = Path(__file__).resolve().parent.parent
TOY_TASK = REPO / "tests" / "fixtures" / "tasks" / "toy"
TOY_SESSION = REPO / "tests" / "data" / "toy_session.jsonl"
MINI = REPO / "podium" / "benchmarks" / "mini"
TITANIC = MINI / "titanic"
MLEBENCH_FIXTURE = REPO / "tests" / "fixtures" / "mlebench"  # a registry + data, MLE-bench's layout
UNPRIVILEGED_USER = "podium-tester"  # made by scripts/unprivileged-venv when tests run as root


def task_module(folder: Path, name: str) -> ModuleType:
    """A task folder's script (``grade``, ``prepare``) as a module."""
    spec = importlib.util.spec_from_file_location(
        f"test_{folder.name}_{name}", folder / f"{name}.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def with_cell(frame: pd.DataFrame, row: int, column: str, value: Any) -> pd.DataFrame:
    """A copy of ``frame`` with one cell set to ``value`` of any type (the column becomes
    ``object``): how the graders' tests make a submission invalid in one place."""
    frame = frame.astype({column: "object"})
    frame.loc[row, column] = value
    return frame


def files_under(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` with its bytes, by relative path (to compare two preparations)."""
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


def grade_with(grade_module: ModuleType, submission: Any, answers: Any) -> float:
    """A task's own ``grade(submission, answers)`` as a float."""
    return float(grade_module.grade(submission, answers))


def exec_solution(code: str, public_dir: Path, workspace: Path) -> str:
    """Run a solution in this process (imports already warm), in a node-like workspace; return
    what it printed. Much faster than a kernel, for tests that run many generated solutions."""
    import contextlib
    import io

    (workspace / "submission").mkdir(parents=True, exist_ok=True)
    if not (workspace / "input").exists():
        (workspace / "input").symlink_to(public_dir)
    printed = io.StringIO()
    with contextlib.chdir(workspace), contextlib.redirect_stdout(printed):
        exec(compile(code, "solution.py", "exec"), {"__name__": "__main__"})
    return printed.getvalue()


def solution(
    metric: float | None = 0.9,
    *,
    submit: bool = True,
    error: str | None = None,
    sleep: float = 0.0,
    extra: str = "",
) -> str:
    """A fast toy solution (standard library only): optionally sleeps, raises, prints the
    metric line and writes a format-valid submission (a copy of the sample)."""
    lines = ["import shutil, time"]
    if sleep:
        lines.append(f"time.sleep({sleep})")
    if extra:
        lines.append(extra)
    if error:
        lines.append(f"raise {error}")
    if metric is not None:
        lines.append(f'print("VALIDATION_METRIC: {metric}")')
    if submit:
        lines.append('shutil.copy("input/sample_submission.csv", "submission/submission.csv")')
    return "\n".join(lines) + "\n"


# A solution held mid-execution: it marks its working directory, then waits until the test
# creates a file beside the mark (the only place a test can reach a sandboxed solution), so a
# test sees a node that is really running, for as long as it needs, with no sleep to guess.
HELD_BACKSTOP_S = 300  # never reached when the test releases it: bounds a broken test
WAITING, GO_ON, RELEASE = "waiting-for-release", "go-on", "release"


def waits_for(name: str) -> str:
    """Solution lines that block until the test creates ``name`` in the solution's cwd."""
    return (
        f"deadline = time.monotonic() + {HELD_BACKSTOP_S}\n"
        f"while not os.path.exists({name!r}) and time.monotonic() < deadline:\n"
        "    time.sleep(0.02)\n"
    )


def held_solution(printed: str, metric: float = 0.8) -> str:
    """A solution that runs ``printed`` (lines of code), marks itself waiting, waits for
    ``RELEASE``, then finishes as :func:`solution` does."""
    code = "import os, time\n" + printed + f"open({WAITING!r}, 'w').close()\n"
    return code + waits_for(RELEASE) + solution(metric)


def release_held(root: Path) -> None:
    """Let every held solution under ``root`` go on and finish."""
    for waiting in root.rglob(WAITING):
        for name in (GO_ON, RELEASE):
            (waiting.parent / name).touch()


def agent_responder(code: str | None = None) -> Callable[[Received], Reply]:
    """A fake server's responder playing a whole model: a code prompt gets ``code`` (default: a
    good toy solution) in a fenced block; a review prompt gets a ``submit_review`` call."""
    text = f"A plan.\n\n```python\n{code or solution(0.8)}```\n"

    def respond(received: Received) -> Reply:
        if received.forced_tool == "submit_review":
            args = {"is_bug": False, "summary": "Ran fine.", "metric": None}
            return Reply.tool_call("submit_review", args)
        return Reply.text(text)

    return respond


def run_config(
    script: Path, out: Path, data_dir: Path, steps: int = 3, **sections: Any
) -> dict[str, Any]:
    """A config dict for ``podium.run`` on the toy task with a scripted model.

    Kernels skip the default pre-imports (numpy, pandas, sklearn): toy solutions use the
    standard library, and a run's kernels become ready seconds sooner.
    """
    config: dict[str, Any] = {
        "task": str(TOY_TASK),
        "out": str(out),
        "data_dir": str(data_dir),
        "model": {"name": f"scripted:{script}"},
        "budget": {"steps": steps},
        "sandbox": {"preimports": []},
    }
    for key, value in sections.items():
        if isinstance(value, dict):
            config.setdefault(key, {}).update(value)
        else:
            config[key] = value
    return config


def cli_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PODIUM_")}
    env.update(extra)
    return env


def podium_cli(
    *args: str, env: Mapping[str, str] | None = None, timeout: float = 120, cwd: Path = REPO
) -> subprocess.CompletedProcess[str]:
    """Run the real ``podium`` command line in a subprocess."""
    return subprocess.run(
        [sys.executable, "-m", "podium", *args],
        capture_output=True,
        text=True,
        env=dict(env) if env is not None else cli_env(),
        timeout=timeout,
        cwd=cwd,
    )


def podium_popen(*args: str, env: Mapping[str, str] | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "podium", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(env) if env is not None else cli_env(),
        cwd=REPO,
    )


# --- processes on the host (kernels, bwrap, what solutions start) --------------------------


def process_gone(pid: int) -> bool:
    """True when ``pid`` no longer runs (absent, or a zombie nobody has reaped yet)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return True
    return bool(re.search(r"^State:\s+Z", status, re.MULTILINE))


def wait_gone(pid: int, within_s: float = 5.0) -> bool:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        if process_gone(pid):
            return True
        time.sleep(0.05)
    return process_gone(pid)


def processes() -> dict[int, tuple[int, list[str]]]:
    """Every process on the host: pid → (parent pid, argv)."""
    table = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            stat = Path(entry.path, "stat").read_text()
            argv = Path(entry.path, "cmdline").read_bytes().split(b"\0")[:-1]
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        table[int(entry.name)] = (ppid, [a.decode(errors="replace") for a in argv])
    return table


def descendants(root: int) -> dict[int, list[str]]:
    """The processes below ``root`` (pid → argv): a test counts its own, never the machine's."""
    table = processes()
    children: dict[int, list[int]] = {}
    for pid, (ppid, _) in table.items():
        children.setdefault(ppid, []).append(pid)
    found, stack = {}, list(children.get(root, []))
    while stack:
        pid = stack.pop()
        found[pid] = table[pid][1]
        stack.extend(children.get(pid, []))
    return found


# --- hostile trees ------------------------------------------------------------------------

DEEP = 3000  # past Python's recursion limit, and the path far past PATH_MAX


def make_deep(root: Path, levels: int, name: str = "a") -> None:
    """``levels`` nested directories below ``root``, made as a solution does (relative to a
    descriptor: the path is too long for any path-based call)."""
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    for _ in range(levels):
        os.mkdir(name, dir_fd=fd)
        child = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        os.close(fd)
        fd = child
    with open(os.open("hidden", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd), "wb") as f:
        f.write(b"x" * 1024 * 1024)
    os.close(fd)


def wait_until(condition: Callable[[], bool], timeout_s: float = 120.0) -> None:
    """Poll ``condition`` until it holds: for events with no notification to wait on (a process
    reaped by another). The generous deadline only bounds a test that would otherwise hang."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"still not true after {timeout_s:.0f} s: {condition}")
        time.sleep(0.05)


# --- time on a loaded machine ----------------------------------------------------------------


def time_scale() -> float:
    """How much slower than a quiet machine this one runs now: the one factor that every bound
    on elapsed time a test asserts (a deadline that must trigger, "stopped within N s") is
    multiplied by. ``PODIUM_TEST_TIME_SCALE`` when set (read at import: the fixtures clear
    PODIUM_* variables), else the load per core right now, at least 1 (4 at load 8 on 2 cores).
    Waits for an event use ``wait_until`` and a generous bound instead: they need no factor."""
    if _SCALE_SET is not None:
        return _SCALE_SET
    return max(1.0, os.getloadavg()[0] / (os.cpu_count() or 1))


def scaled(seconds: float) -> float:
    """``seconds`` on a quiet machine, as long as it may take on this one now."""
    return seconds * time_scale()


_SCALE_SET = (
    float(os.environ["PODIUM_TEST_TIME_SCALE"])
    if os.environ.get("PODIUM_TEST_TIME_SCALE")
    else None
)
