"""No kernel outlives a SIGKILLed Podium, whenever the kill lands.

A real sandbox in a subprocess (the "Podium") is SIGKILLed at the moments that used to leave a
bwrap + ipykernel pair alive and at random ones: the instant bwrap has cloned the sandbox's
init (which arms its parent-death signal only once the sandbox is laid out), right after a
kernel's process is launched (the ``kernel.launched`` failpoint), and at random times while
the factory, the kernels and a solution with a child of its own start and run. Then every
process of that Podium must go: its bwraps and kernels, found by a marker in their argv (this
test's own directory, which every bind names, and Podium's ipc prefix, which its warden and
its kernels' connection files carry), and whatever they started. Other tests' processes are
never looked at: nothing without the marker, or not below a process with it, is counted.
"""

from __future__ import annotations

import contextlib
import os
import random
import signal
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from podium.sandbox import bwrap_problem
from tests.support import REPO, cli_env, process_gone, processes, wait_until

_BWRAP_PROBLEM = bwrap_problem()
pytestmark = pytest.mark.skipif(_BWRAP_PROBLEM is not None, reason=f"no bwrap: {_BWRAP_PROBLEM}")

GONE_WITHIN_S = 120.0  # only bounds a test that would otherwise hang: it takes < 1 s

_PODIUM = """
import asyncio, os, signal, sys, threading, time
from pathlib import Path
from podium.interfaces import Limits, Workspace
from podium.sandbox import BwrapSandbox, ResourceLimits, SandboxOptions

kind, moment, marker, root, public = sys.argv[1:]
forked = kind == "forked"
options = SandboxOptions(preimports=(), warm_pool=forked, fork=forked,
                         limits=ResourceLimits(max_processes=64))
sandbox = BwrapSandbox(options)  # its probe's bwrap has run: the next bwrap is a kernel's

def children(pid):
    try:
        return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []

def marked(pid):
    try:
        return marker.encode() in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False

def die_once_cloned():
    while True:
        if any(children(bwrap) for bwrap in children(os.getpid()) if marked(bwrap)):
            print("cloned", flush=True)
            os.kill(os.getpid(), signal.SIGKILL)
        time.sleep(0.0005)

if moment == "cloned":
    threading.Thread(target=die_once_cloned, daemon=True).start()
elif moment != "failpoint":
    threading.Timer(float(moment), os.kill, (os.getpid(), signal.SIGKILL)).start()

async def main():
    if forked:
        await sandbox.warm_up(Path(root).parent / ".pool", Path(public), 1)
    code = "import subprocess, time\\nsubprocess.Popen(['sleep', '300'])\\ntime.sleep(300)\\n"
    await sandbox.execute(code, Workspace(Path(root), Path(public)), Limits(timeout_s=300))
asyncio.run(main())
"""


def left_behind(marker: str, podium: int) -> dict[int, list[str]]:
    """Live processes with the marker or Podium's ipc prefix in their argv, and all below."""
    table = processes()
    prefix = f"podium-{podium}-"
    found = {
        pid for pid, (_, argv) in table.items() if any(marker in a or prefix in a for a in argv)
    }
    grown = True
    while grown:
        below = {pid for pid, (ppid, _) in table.items() if ppid in found} - found
        found |= below
        grown = bool(below)
    return {pid: table[pid][1][:3] for pid in found if not process_gone(pid)}


def kill_podium_at(kind: str, moment: str, tmp_path: Path) -> str:
    """Run the Podium until ``moment`` kills it; wait until nothing of it is left. Returns
    what it printed (``cloned`` once it died at that instant)."""
    marker = f"orphans-{uuid.uuid4().hex[:12]}"
    root, public = tmp_path / marker / "node", tmp_path / marker / "public"
    root.mkdir(parents=True)
    public.mkdir()
    extra = {"PODIUM_FAILPOINTS": "kernel.launched:1"} if moment == "failpoint" else {}
    podium = subprocess.Popen(
        [sys.executable, "-c", _PODIUM, kind, moment, marker, str(root), str(public)],
        cwd=REPO, env=cli_env(**extra), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        printed, errors = podium.communicate(timeout=GONE_WITHIN_S)
        assert podium.returncode == -signal.SIGKILL, errors[-2000:]
        try:
            wait_until(lambda: not left_behind(marker, podium.pid), GONE_WITHIN_S)
        except AssertionError:
            raise AssertionError(f"left alive: {left_behind(marker, podium.pid)}") from None
    finally:
        if podium.poll() is None:
            podium.kill()
            podium.wait()
        for pid in left_behind(marker, podium.pid):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
    return printed


@pytest.mark.parametrize("kind", ["bwrap", "forked"])
def test_killed_as_bwrap_clones_the_sandbox_init_leaves_nothing(kind: str, tmp_path: Path) -> None:
    """The window that left a bwrap + ipykernel pair (4 of 5 kills before the fix): the
    outer bwrap dies with Podium before the init it cloned has armed its signal."""
    assert kill_podium_at(kind, "cloned", tmp_path).split() == ["cloned"]


def test_killed_right_after_a_kernel_is_launched_leaves_nothing(tmp_path: Path) -> None:
    kill_podium_at("bwrap", "failpoint", tmp_path)


@pytest.mark.parametrize(("kind", "attempt"), [("bwrap", 0), ("bwrap", 1), ("forked", 0)])
def test_killed_at_a_random_moment_leaves_nothing(kind: str, attempt: int, tmp_path: Path) -> None:
    """From the sandbox's creation (0 s) to a solution running with a child (~1.5 s)."""
    moment = random.uniform(0.0, 2.0)
    print(f"killed after {moment:.3f} s")  # shown with a failure
    kill_podium_at(kind, f"{moment:.3f}", tmp_path)
