"""Attacks through what the Linux kernel counts per uid, not per process or namespace.

inotify instances and watches, ``RLIMIT_NPROC``'s count, pipe buffers, locked and message-queue
memory are each one budget per uid, whatever namespaces a process is in. Kernels that shared a
uid shared those budgets: one kernel holding every inotify instance its uid may have made every
other kernel's ``inotify_init()`` fail with EMFILE, in the same run or another on the machine.
Each kernel of a root Podium now has a uid of its own (``identity.py``), cold or forked.
"""

from __future__ import annotations

import asyncio
import errno
import os
from pathlib import Path

import pytest

from podium.interfaces import Limits, Workspace
from podium.records import ExecResult, ExecStatus
from podium.sandbox import KernelSandbox, bwrap_problem
from tests.sandbox.test_attacks import (  # the `isolated` fixture: cold and forked kernels
    BACKSTOP_S,
    forked_pool,
    isolated,  # noqa: F401
    make_sandbox,
)

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(bwrap_problem() is not None, reason=f"no bwrap: {bwrap_problem()}"),
    pytest.mark.skipif(
        os.getuid() != 0,
        reason="as an ordinary user every kernel is that user (the only uid it can have)",
    ),
]

INSTANCES = int(Path("/proc/sys/fs/inotify/max_user_instances").read_text())
# Takes every inotify instance its uid may have, says so with its uid in working/full, and
# holds them until the host writes working/go.
HOARD = r"""
import ctypes, os, resource, time
limit = int(open('/proc/sys/fs/inotify/max_user_instances').read())
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, limit + 256), hard))
libc = ctypes.CDLL(None, use_errno=True)
held = []
while (fd := libc.inotify_init1(0)) >= 0:
    held.append(fd)
failed = ctypes.get_errno()
open('working/full.tmp', 'w').write(f'{os.getuid()} {len(held)} {failed}')
os.rename('working/full.tmp', 'working/full')
while not os.path.exists('working/go'):
    time.sleep(0.01)
"""
PROBE = r"""
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
fd = libc.inotify_init1(0)
print('PROBE', os.getuid(), fd >= 0, ctypes.get_errno() if fd < 0 else 0)
"""


def _inotify_instances_of(uid: int) -> int:
    """The inotify instances that processes of ``uid`` hold, seen from the host's /proc."""
    count = 0
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            if f"\nUid:\t{uid}\t" not in Path(entry.path, "status").read_text():
                continue
            links = [str(Path(fd.path).readlink()) for fd in os.scandir(Path(entry.path, "fd"))]
        except OSError:
            continue
        count += links.count("anon_inode:inotify")
    return count


async def _until_written(marker_under: Path, hoarder: asyncio.Future[ExecResult]) -> Path:
    """The hoarder's ``working/full``, once written (an event, waited for; BACKSTOP_S is a
    hang), or the hoarder's end if it ended first."""
    for _ in range(int(BACKSTOP_S / 0.01)):
        found = next(marker_under.rglob("working/full"), None)
        if found is not None:
            return found
        assert not hoarder.done(), hoarder.result().output
        await asyncio.sleep(0.01)
    raise AssertionError("the hoarding kernel never said it was full")


def _run_dir(tmp_path: Path, name: str) -> Workspace:
    """A node of a run of its own (its own pool and factory), as two runs on one machine."""
    public = tmp_path / name / "public"
    public.mkdir(parents=True)
    (public / "train.csv").write_text("id,y\n1,0\n")
    return Workspace(tmp_path / name / "nodes" / "n", public)


@pytest.mark.skipif(INSTANCES > 8192, reason=f"max_user_instances {INSTANCES}: too many to hoard")
def test_a_kernel_holding_its_uids_inotify_instances_leaves_another_kernel_its_own(
    isolated: str,  # noqa: F811
    tmp_path: Path,
) -> None:
    first, second = _run_dir(tmp_path, "run-1"), _run_dir(tmp_path, "run-2")

    async def go() -> tuple[ExecResult, ExecResult, list[int]]:
        boxes: list[KernelSandbox] = [make_sandbox(isolated), make_sandbox(isolated)]
        try:
            for box, ws in zip(boxes, (first, second), strict=True):
                await forked_pool(box, ws)
            limits = Limits(BACKSTOP_S)
            hoarder = asyncio.ensure_future(boxes[0].execute(HOARD, first, limits))
            marker = await _until_written(tmp_path / "run-1", hoarder)
            uid, held, failed = (int(x) for x in marker.read_text().split())
            seen = [uid, held, failed, _inotify_instances_of(uid)]
            try:
                probe = await boxes[1].execute(PROBE, second, limits)  # while they are held
            finally:
                (marker.parent / "go").touch()
            return await hoarder, probe, seen
        finally:
            for box in boxes:
                await box.aclose()

    hoarded, probe, (uid, held, failed, seen_by_host) = asyncio.run(go())
    assert hoarded.status is ExecStatus.OK, hoarded.output
    # The first kernel really held its uid's every instance: the per-uid limit stopped it.
    assert (held, failed) == (INSTANCES, errno.EMFILE)
    assert seen_by_host == INSTANCES
    # The other kernel, alive at the same time, has instances of its own: it is another uid.
    assert probe.status is ExecStatus.OK, probe.output
    words = probe.output.split("PROBE ", 1)[1].split()
    assert words[1:] == ["True", "0"], probe.output
    assert int(words[0]) != uid
