"""The output so far, told while a solution runs (``Workspace.on_output``), with real kernels:
cold ones in bubblewrap, forked ones, and local ones.

A solution prints, then blocks until the test releases it by creating a file in its working
directory (the only place a kernel can write, and so the only place the test can reach it):
what the listener was told before the release is what a reader of a running node sees.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from podium.interfaces import Limits, Workspace
from podium.records import ExecResult, ExecStatus
from podium.sandbox import BwrapSandbox, KernelSandbox, LocalSandbox, SandboxOptions, bwrap_problem

pytestmark = pytest.mark.slow

OPTIONS = SandboxOptions(preimports=(), warm_pool=False, interrupt_grace_s=1.0)
BACKSTOP_S = 300.0  # never reached when the output is told: bounds a broken test's wait
WAITING, RELEASE = "waiting-for-release", "release"
# Prints, says where it waits (a file in its cwd, which the test finds), waits, prints again.
BLOCKS = f"""
import os, time
{{before}}
open("{WAITING}", "w").close()
deadline = time.monotonic() + {BACKSTOP_S}
while not os.path.exists("{RELEASE}") and time.monotonic() < deadline:
    time.sleep(0.02)
print("after the release")
"""


def blocking(before: str) -> str:
    return BLOCKS.format(before=before)


@pytest.fixture(params=["bwrap", "forked", "local"])
def kind(request: pytest.FixtureRequest) -> str:
    """Every way a builtin sandbox runs a kernel (``container`` runs them as ``local`` does)."""
    if request.param != "local" and bwrap_problem() is not None:
        pytest.skip(f"no bwrap: {bwrap_problem()}")
    return str(request.param)


@pytest.fixture
def public(tmp_path: Path) -> Path:
    data = tmp_path / "public"
    data.mkdir()
    (data / "train.csv").write_text("id,y\n1,0\n")
    return data


async def sandbox_for(kind: str, tmp_path: Path, public: Path) -> KernelSandbox:
    """A sandbox of ``kind``; ``forked``: its pool served by a kernel factory."""
    if kind == "local":
        return LocalSandbox(OPTIONS)
    if kind == "bwrap":
        return BwrapSandbox(OPTIONS)
    sandbox = BwrapSandbox(dataclasses.replace(OPTIONS, warm_pool=True, fork=True))
    if sandbox.forking.problem is not None:
        pytest.skip(f"no forked kernels here: {sandbox.forking.problem}")
    await sandbox.warm_up(tmp_path / "run" / ".sandbox", public, 1)
    await sandbox.forking.settled()
    assert sandbox.forking.current is not None, sandbox.forking.problem
    return sandbox


@dataclasses.dataclass
class Told:
    """What a listener was told, and when the test let the solution go on."""

    texts: list[str] = dataclasses.field(default_factory=list)
    at: list[float] = dataclasses.field(default_factory=list)
    released: int | None = None  # how many texts had been told at the release


async def execute_blocking(
    kind: str,
    tmp_path: Path,
    public: Path,
    code: str,
    ready: Callable[[str], bool],
    max_output_bytes: int = 256 * 1024,
) -> tuple[ExecResult, Told]:
    """Run ``code`` (which blocks until released) with a listener; release it once the
    listener was told a text ``ready`` accepts. Returns the result and what was told."""
    told, seen = Told(), asyncio.Event()

    def listen(text: str) -> None:
        told.texts.append(text)
        told.at.append(time.monotonic())
        if ready(text):
            seen.set()

    sandbox = await sandbox_for(kind, tmp_path, public)
    workspace = Workspace(tmp_path / "run" / "nodes" / "1", public, on_output=listen)
    try:
        running = asyncio.create_task(
            sandbox.execute(code, workspace, Limits(BACKSTOP_S, max_output_bytes))
        )
        waited = asyncio.create_task(seen.wait())
        await asyncio.wait([running, waited], return_when=asyncio.FIRST_COMPLETED)
        assert not running.done(), f"it ended before the release: {running.result().output}"
        told.released = len(told.texts)
        release(tmp_path)
        result = await running
    finally:
        await sandbox.aclose()
    return result, told


def release(tmp_path: Path) -> None:
    """Create the release file beside the one the waiting solution made in its cwd."""
    waiting = next(tmp_path.rglob(WAITING), None)
    assert waiting is not None, "the solution said it prints before it waits"
    (waiting.parent / RELEASE).touch()


def test_the_first_line_is_told_while_the_solution_still_runs(
    kind: str, tmp_path: Path, public: Path
) -> None:
    code = blocking('print("the first line")')
    result, told = asyncio.run(
        execute_blocking(kind, tmp_path, public, code, lambda t: "the first line\n" in t)
    )
    assert result.status is ExecStatus.OK, result.output
    assert told.released is not None and told.released >= 1
    before = told.texts[: told.released]
    assert before[-1] == "the first line\n"  # told although the solution then went silent
    assert all("after the release" not in text for text in before)
    assert told.texts[-1] == result.output == "the first line\nafter the release\n"


def test_what_is_told_is_capped_as_the_result_and_told_about_once_a_second(
    kind: str, tmp_path: Path, public: Path
) -> None:
    cap = 4096
    chatty = "for i in range(300):\n    print(f'line {i:05d} ' + 'x' * 90)\n    time.sleep(0.01)"
    code = blocking(chatty)
    started = time.monotonic()
    result, told = asyncio.run(
        execute_blocking(kind, tmp_path, public, code, lambda t: "line 00299" in t, cap)
    )
    elapsed = time.monotonic() - started
    assert result.status is ExecStatus.OK, result.output
    assert result.output_truncated
    assert told.texts[-1] == result.output
    head = result.output.split("\n[... ")[0]
    for text in told.texts:
        assert len(text.encode()) <= cap + len("\n[... 99999 bytes of output omitted ...]\n")
        assert text.startswith(head) or head.startswith(text)  # the same head, always
    truncated = [t for t in told.texts if "bytes of output omitted ...]" in t]
    assert truncated and "line 00299" in truncated[-1]  # the tail so far, while it waited
    # At most about once a second (first output at once, and the final one, on top).
    assert len(told.texts) <= elapsed / 1.0 + 3, (len(told.texts), elapsed)
    gaps = [b - a for a, b in zip(told.at[:-2], told.at[1:-1], strict=True)]
    assert all(gap >= 0.9 for gap in gaps), gaps


def test_a_listener_that_raises_changes_nothing(
    kind: str, tmp_path: Path, public: Path, caplog: pytest.LogCaptureFixture
) -> None:
    calls: list[str] = []

    def broken(text: str) -> None:
        calls.append(text)
        raise OSError(28, "No space left on device")

    async def go() -> ExecResult:
        sandbox = await sandbox_for(kind, tmp_path, public)
        code = "import time\nprint('one')\ntime.sleep(1.5)\nprint('two')\nraise ValueError('x')\n"
        workspace = Workspace(tmp_path / "run" / "nodes" / "1", public, on_output=broken)
        try:
            return await sandbox.execute(code, workspace, Limits(BACKSTOP_S))
        finally:
            await sandbox.aclose()

    with caplog.at_level(logging.WARNING):
        result = asyncio.run(go())
    assert result.status is ExecStatus.ERROR and result.error_name == "ValueError"
    assert result.output.startswith("one\ntwo\n")
    assert len(calls) >= 2 and calls[-1] == result.output  # it was called, and went on being
    failures = [r for r in caplog.records if "live output listener failed" in r.getMessage()]
    assert len(failures) == 1, [r.getMessage() for r in failures]
    assert (tmp_path / "run" / "nodes" / "1").is_dir()  # the hand-over happened as usual
