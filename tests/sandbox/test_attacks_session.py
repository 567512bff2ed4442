"""Attacks on a kernel kept across cells (an agentic node's ``KernelSession``), between cells.

A cell may start a thread or a process that goes on after the cell has ended, while the model
takes its turn (5 to 60 s). Before, nothing looked then: a background writer put 0.9-1.2 GiB
into a slot limited to 100 MiB during an 8 s gap, and a background burner used the CPU that no
cell's timeout counts. Each test starts such a process in a first cell, waits without a cell
as a model's turn would, and judges on the host: the slot's bytes on the disk (sampled all
along), the process's CPU time and resident memory from ``/proc``. Kernels are paused between
cells where their cgroup has a freezer (``frozen``) and watched otherwise (``watched``: the
freezer taken away, as on a machine without one); cold and forked kernels.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from podium.interfaces import KernelSession, Limits, Workspace
from podium.records import ExecResult, ExecStatus
from podium.sandbox import BwrapSandbox, cgroups
from podium.sandbox.bwrap import DISK_WATCH_EVERY_S
from podium.sandbox.kernel import WATCH_EVERY_S
from podium.sandbox.trees import disk_usage
from tests.sandbox.test_attacks import (
    BACKSTOP_S,
    MEMORY,
    OPTIONS,
    SLACK_S,
    WORKSPACE_BYTES,
    forked_pool,
    make_sandbox,
)
from tests.sandbox.test_attacks import pytestmark as attack_marks
from tests.support import REPO, cli_env, process_gone, processes, scaled, wait_until

pytestmark = attack_marks
MIB = 1024**2
CGROUPS = cgroups.detect()
GAP_S = 3.0  # a model's turn: no cell runs meanwhile
SAMPLE_S = 0.05  # how often the host looks at the slot's bytes
WRITE_RATE = 50 * MIB  # bytes a second the background writer writes, at most
# What a one-shot node may write past the workspace limit at that rate: until the watchdog's
# next look but one, on a machine as slow as this one is now.
DISK_SLACK = WRITE_RATE * (2 * DISK_WATCH_EVERY_S + SLACK_S)
ALLOC_RATE = 80 * MIB  # the background allocator's, after a first 448 MiB at once
MEMORY_SLACK = ALLOC_RATE * (2 * WATCH_EVERY_S + SLACK_S)

# ``{token}`` in each process's argv lets the host find it (and only it) in /proc.
_START = """
import subprocess, sys
WRITER = '''
import time
for i in range(256):  # 1 GiB at most, in 4 MiB files (each under RLIMIT_FSIZE)
    with open(f'working/fill-{{i}}', 'wb') as f:
        for _ in range(4):
            f.write(b'\\\\1' * 2**20)
            f.flush()
            time.sleep(0.02)
'''
ALLOCATOR = '''
import time
held = [b'\\\\1' * (448 * 2**20)]
while len(held) < 160:  # 1.5 GiB at most
    held.append(b'\\\\1' * (8 * 2**20))
    time.sleep(0.1)
time.sleep(3600)
'''
for name in {names!r}:
    code = {{'writer': WRITER, 'burner': 'while True: pass', 'allocator': ALLOCATOR}}[name]
    subprocess.Popen([sys.executable, '-c', code, '{token}-' + name], start_new_session=True)
print('started', flush=True)
"""


@pytest.fixture(params=["bwrap", "forked"])
def isolated(request: pytest.FixtureRequest) -> str:
    """Cold kernels, or kernels forked from a factory."""
    return str(request.param)


@pytest.fixture(params=["frozen", "watched"])
def pause(request: pytest.FixtureRequest) -> str:
    """``frozen``: the kernel's cgroup freezer stops it between cells; ``watched``: there is
    no freezer, and its guard watches it between cells as during one."""
    if request.param == "frozen" and CGROUPS.freezer is None:
        pytest.skip(f"no cgroup freezer here ({CGROUPS.describe()})")
    return str(request.param)


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    public = tmp_path / "public"
    public.mkdir()
    (public / "train.csv").write_text("id,y\n1,0\n")
    return Workspace(root=tmp_path / "node", input_dir=public)


class Peak:
    """The largest value ``measure`` gave, sampled every ``SAMPLE_S`` in a thread of the host."""

    def __init__(self, measure: Callable[[], int]) -> None:
        self.measure, self.most = measure, 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(SAMPLE_S):
            self.most = max(self.most, self.measure())

    @contextmanager
    def sampling(self) -> Iterator[Peak]:
        self._thread.start()
        try:
            yield self
        finally:
            self._stop.set()
            self._thread.join()
            self.most = max(self.most, self.measure())


def allocated(root: Path) -> int:
    """The bytes the host's disk holds under ``root`` (blocks, as ``du`` counts them)."""
    return disk_usage([root], None, None).bytes


def pids_of(token: str) -> list[int]:
    """The host's processes this test started (its ``token`` in their argv)."""
    return [pid for pid, (_, argv) in processes().items() if any(token in a for a in argv)]


def proc_fields(pid: int) -> tuple[float, int]:
    """(CPU seconds, resident bytes) of ``pid`` on the host; (0, 0) once it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        pages = int(Path(f"/proc/{pid}/statm").read_text().split()[1])
    except (OSError, IndexError, ValueError):
        return 0.0, 0
    ticks = int(fields[11]) + int(fields[12])  # utime + stime
    return ticks / os.sysconf("SC_CLK_TCK"), pages * os.sysconf("SC_PAGE_SIZE")


def cpu_s(token: str) -> float:
    return sum(proc_fields(pid)[0] for pid in pids_of(token))


async def until_stopped(session: KernelSession, within_s: float) -> bool:
    """Whether the session's kernel is stopped (``alive`` False) within ``within_s``."""
    deadline = time.monotonic() + within_s
    while session.alive:
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(SAMPLE_S)
    return True


def in_session(
    kind: str,
    ws: Workspace,
    pause: str,
    body: Callable[[KernelSession], Awaitable[None]],
    memory_cgroup: bool = True,
) -> None:
    """Run ``body`` on a session of a fresh sandbox (without a freezer where ``pause`` is
    ``watched``; without a memory cgroup unless ``memory_cgroup``), closed after."""

    async def go() -> None:
        sandbox = make_sandbox(kind, OPTIONS)
        assert isinstance(sandbox, BwrapSandbox)
        if pause == "watched":
            sandbox.cgroups = dataclasses.replace(sandbox.cgroups, freezer=None)
        if not memory_cgroup:
            sandbox.cgroups = dataclasses.replace(sandbox.cgroups, memory=None)
        try:
            await forked_pool(sandbox, ws)
            session = await sandbox.open_session(ws, Limits(BACKSTOP_S))
            try:
                await body(session)
            finally:
                await session.close()
        finally:
            await sandbox.aclose()

    asyncio.run(go())


def start(token: str, *names: str) -> str:
    return _START.format(names=list(names), token=token)


def stopped_by(result: ExecResult, reason: str) -> None:
    assert result.status is ExecStatus.DIED, result.output
    assert result.killed_reason == reason, result.output


def test_a_background_writer_never_takes_the_slot_past_its_limit_between_cells(
    isolated: str, ws: Workspace, pause: str, tmp_path: Path
) -> None:
    """Frozen: it writes nothing while the model thinks, and is stopped in the next cell once
    it writes again. Watched: it is stopped between cells, and the next cell says why."""
    token = f"podium-writer-{uuid.uuid4().hex}"
    limit = f"workspace size limit ({WORKSPACE_BYTES // MIB} MiB)"
    told: dict[str, float] = {}

    async def body(session: KernelSession) -> None:
        first = await session.run_cell(start(token, "writer", "burner"), BACKSTOP_S)
        assert first.status is ExecStatus.OK and "started" in first.output, first.output
        if pause == "frozen":
            await asyncio.sleep(0.5)  # the model's turn has begun: the kernel is frozen
            written, burnt = allocated(tmp_path), cpu_s(token)
            await asyncio.sleep(GAP_S)
            told["grown"] = allocated(tmp_path) - written
            told["cpu"] = cpu_s(token) - burnt
            assert session.alive
            second = await session.run_cell("import time\ntime.sleep(600)\n", BACKSTOP_S)
        else:
            took = WORKSPACE_BYTES / WRITE_RATE + scaled(2 * DISK_WATCH_EVERY_S + SLACK_S)
            with Peak(lambda: cpu_s(token)).sampling() as burnt:  # the last look before death
                assert await until_stopped(session, took), "still running between cells"
            told["cpu"] = burnt.most
            second = await session.run_cell("print('ran')\n", BACKSTOP_S)
            assert "ran\n" not in second.output
            assert "did not run" in second.output
            assert session.stopped_between_cells is not None
        stopped_by(second, limit)
        assert not session.alive

    with Peak(lambda: allocated(tmp_path)).sampling() as peak:
        in_session(isolated, ws, pause, body)
    past = peak.most - WORKSPACE_BYTES
    print(f"{isolated} {pause}: {past / MIB:.0f} MiB past the limit at most, {told}")
    assert past < scaled(DISK_SLACK), f"{peak.most / MIB:.0f} MiB on the host's disk"
    if pause == "frozen":
        assert told["grown"] <= MIB, f"{told['grown'] / MIB:.1f} MiB written while frozen"
        assert told["cpu"] < 0.05, f"{told['cpu']:.2f} CPU s used while frozen"
    assert pids_of(token) == []  # every process of the kernel died with it


def test_memory_grown_between_cells_is_stopped_by_the_rss_watchdog(
    isolated: str, ws: Workspace
) -> None:
    """Where no memory cgroup (and no freezer) holds a kernel, its RSS watchdog does, between
    cells too."""
    token = f"podium-allocator-{uuid.uuid4().hex}"

    def rss() -> int:
        return sum(proc_fields(pid)[1] for pid in pids_of(token))

    async def body(session: KernelSession) -> None:
        first = await session.run_cell(start(token, "allocator"), BACKSTOP_S)
        assert first.status is ExecStatus.OK, first.output
        took = MEMORY / ALLOC_RATE + scaled(2 * WATCH_EVERY_S + SLACK_S)
        assert await until_stopped(session, took), "still running between cells"
        second = await session.run_cell("print('ran')\n", BACKSTOP_S)
        stopped_by(second, f"memory limit ({MEMORY // MIB} MiB, watchdog)")

    with Peak(rss).sampling() as peak:
        in_session(isolated, ws, "watched", body, memory_cgroup=False)
    past = peak.most - MEMORY
    print(f"{isolated}: {past / MIB:.0f} MiB past the memory limit at most")
    assert past < scaled(MEMORY_SLACK), f"{peak.most / MIB:.0f} MiB resident"
    assert pids_of(token) == []


# A Podium (this script, in a process of its own) whose session's kernel is frozen between
# cells, a process of the kernel's own beside it; it says FROZEN and waits to be killed.
_PODIUM = """
import asyncio, sys
from pathlib import Path
from podium.interfaces import Limits, Workspace
from podium.sandbox import BwrapSandbox, ResourceLimits, SandboxOptions

kind, cell, root = sys.argv[1], sys.argv[2], Path(sys.argv[3])
forked = kind == 'forked'
options = SandboxOptions(preimports=(), warm_pool=forked, fork=forked,
                         limits=ResourceLimits(max_processes=64))

async def main():
    sandbox = BwrapSandbox(options)
    public = root / 'public'
    public.mkdir()
    ws = Workspace(root / 'node', public)
    if forked:
        await sandbox.warm_up(root / '.pool', public, 1)
        await sandbox.forking.settled()
    session = await sandbox.open_session(ws, Limits(60))
    await session.run_cell(cell, 60)
    while not session.prepared.guard.group.frozen():
        await asyncio.sleep(0.01)
    print('FROZEN', flush=True)
    await asyncio.sleep(3600)

asyncio.run(main())
"""


def frozen_groups(podium: int) -> list[Path]:
    """The kernel groups of the Podium of pid ``podium`` that are frozen now."""
    assert CGROUPS.freezer is not None
    groups = CGROUPS.freezer.glob(f"podium-{podium}-*")
    if CGROUPS.version == "v2":
        return [g for g in groups if "frozen 1" in (g / "cgroup.events").read_text().split("\n")]
    return [g for g in groups if (g / "freezer.state").read_text().strip() != "THAWED"]


def test_a_kernel_frozen_between_cells_dies_with_a_killed_podium(
    isolated: str, tmp_path: Path
) -> None:
    """cgroup v1 holds a frozen process's SIGKILL until it is thawed: a Podium killed during a
    model's turn must not leave its kernel frozen, holding its memory, until some later Podium
    sweeps it. Its warden thaws it before it exits (a sweep by another test's Podium meanwhile
    could only hide a failure, never make one)."""
    if CGROUPS.freezer is None:
        pytest.skip(f"no cgroup freezer here ({CGROUPS.describe()})")
    token = f"podium-frozen-{uuid.uuid4().hex}"
    podium = subprocess.Popen(
        [sys.executable, "-c", _PODIUM, isolated, start(token, "burner"), str(tmp_path)],
        cwd=REPO, env=cli_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert podium.stdout is not None
        said = podium.stdout.readline()
        assert said == "FROZEN\n", said + podium.communicate(timeout=BACKSTOP_S)[1][-3000:]
        assert frozen_groups(podium.pid)
        wardens = [p for p, (up, argv) in processes().items() if up == podium.pid and "-S" in argv]
        assert len(wardens) == 1
        podium.kill()
        podium.wait()
        wait_until(lambda: process_gone(wardens[0]), BACKSTOP_S)
        assert frozen_groups(podium.pid) == []  # the warden thawed them before it left
        wait_until(lambda: not pids_of(token), BACKSTOP_S)
    finally:
        podium.kill()
        podium.wait()
        cgroups.sweep_leftovers(CGROUPS)  # a failed test leaves nothing frozen behind
        for pid in pids_of(token):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
