"""The warm pool: kernels ready (imports done) before a node asks, each used by one node only."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from podium.interfaces import Limits, Workspace
from podium.records import ExecResult, ExecStatus
from podium.sandbox import BwrapSandbox, SandboxOptions
from tests.support import descendants, processes, scaled, wait_until

pytestmark = pytest.mark.slow

PROBE = """
import sys
print("SEEN_BEFORE", hasattr(sys, "_podium_test_seen"))
sys._podium_test_seen = True
print("PANDAS_LOADED", "pandas" in sys.modules)
print("NAMES", sorted(n for n in dir() if not n.startswith("_") and n not in ("In", "Out")))
open("submission/submission.csv", "w").write("id\\n")
"""


def bwrap_processes(marker: Path) -> int:
    """Sandboxes whose bwrap command line mentions ``marker`` (the pool's scratch dir).

    Each sandbox is two bwrap processes (outside, and pid 1 inside); the outer one is counted.
    """
    found = {
        pid: ppid
        for pid, (ppid, argv) in processes().items()
        if argv and argv[0].endswith("bwrap") and any(str(marker) in a for a in argv)
    }
    return sum(1 for ppid in found.values() if ppid not in found)


def forked_kernels() -> int:
    """Kernels forked by a factory: two processes each (init and kernel), beside the
    factory and its supervisor, all with the factory's command line."""
    found = [argv for argv in descendants(os.getpid()).values() if
             len(argv) > 1 and argv[1].endswith("/zygote.py")]  # fmt: skip
    return max(0, len(found) - 2) // 2


async def run_nodes(
    tmp_path: Path, nodes: int, kernels: int, fork: bool
) -> tuple[list[ExecResult], int, int]:
    public = tmp_path / "public"
    public.mkdir()
    scratch = tmp_path / "run" / ".sandbox"
    sandbox = BwrapSandbox(SandboxOptions(preimports=("pandas",), fork=fork))
    await sandbox.warm_up(scratch, public, kernels)
    await sandbox.settle()  # started and pre-imported

    def count() -> int:
        return forked_kernels() if fork else bwrap_processes(scratch)

    pooled = count()
    results = []
    try:
        for i in range(nodes):
            ws = Workspace(tmp_path / "run" / "nodes" / str(i), public)
            results.append(await sandbox.execute(PROBE, ws, Limits(60)))
    finally:
        await sandbox.aclose()
    return results, pooled, count() + bwrap_processes(scratch)


@pytest.mark.parametrize("fork", [False, True], ids=["cold", "forked"])
def test_pool_kernels_are_pre_imported_fresh_per_node_and_gone_after_close(
    tmp_path: Path, fork: bool
) -> None:
    results, pooled, left = asyncio.run(run_nodes(tmp_path, nodes=3, kernels=2, fork=fork))
    assert pooled == 2  # the pool size follows the number of workers
    for i, result in enumerate(results):
        assert result.status is ExecStatus.OK, result.output
        assert "SEEN_BEFORE False" in result.output  # never a second node in one kernel
        assert "PANDAS_LOADED True" in result.output  # the pre-import happened
        names = result.output.split("NAMES ")[1].splitlines()[0]
        assert "pandas" not in names and "podium" not in names  # ...binding no name
        # Its own pages: a forked kernel shares the factory's until it writes them.
        assert result.peak_memory_bytes and result.peak_memory_bytes > (5 if fork else 50) * 2**20
        assert (tmp_path / "run" / "nodes" / str(i) / "submission.csv").is_file()
    assert results[0].kernel_start_s < scaled(0.3)  # ready before it was asked for
    assert left == 0
    assert not (tmp_path / "run" / ".sandbox").exists()  # no slot left behind


def test_closing_while_kernels_are_still_starting_leaves_none_behind(tmp_path: Path) -> None:
    """An unused kernel is killed, not waited for (the pool's contract): on a loaded machine
    its bwrap may still be exiting when ``aclose`` returns, so the test waits for them to go;
    one that was never killed would still be there when the wait gives up."""
    scratch = tmp_path / ".sandbox"

    async def go() -> None:
        public = tmp_path / "public"
        public.mkdir()
        sandbox = BwrapSandbox(SandboxOptions())
        await sandbox.warm_up(scratch, public, 2)
        await asyncio.sleep(0.3)  # launched, not yet answering or still importing
        await sandbox.aclose()

    asyncio.run(go())
    wait_until(lambda: bwrap_processes(scratch) == 0)
    assert not (tmp_path / ".sandbox").exists()
