"""The local executor with real worker processes (stand-in scripts)."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from podium.errors import UserError
from podium.experiments.sweeps import LOG_NAME, LocalExecutor
from tests.experiments.sweeps.conftest import ScriptJob, script
from tests.support import REPO, scaled, wait_gone, wait_until

# A worker that waits for SIGTERM, says so in a marker file, and exits as the real one does.
WAITS_FOR_SIGTERM = """
marker = pathlib.Path(sys.argv[2]) if len(sys.argv) > 2 else run_dir / "stopped"
def stop(signum, frame):
    marker.write_text("SIGTERM")
    sys.exit(130)
signal.signal(signal.SIGTERM, stop)
(run_dir / "pid").write_text(str(os.getpid()))
time.sleep(60)
"""


def job(tmp_path: Path, name: str, worker: Path, gpus: int = 0) -> ScriptJob:
    run_dir = tmp_path / name
    run_dir.mkdir()
    return ScriptJob(run_id=name, run_dir=run_dir, gpus=gpus, script=worker)


def test_a_job_runs_in_its_run_dir_with_its_output_logged(tmp_path: Path) -> None:
    worker = script(tmp_path, "print('hello from', run_dir.name)\nsys.exit(3)\n")
    first = job(tmp_path, "r1", worker)
    (first.run_dir / LOG_NAME).write_text("earlier attempt\n")
    code = asyncio.run(LocalExecutor(parallel=1).execute(first))
    assert code == 3
    assert (first.run_dir / LOG_NAME).read_text() == "earlier attempt\nhello from r1\n"


def test_each_run_is_pinned_to_its_own_gpus(tmp_path: Path) -> None:
    worker = script(tmp_path, """
(run_dir / "gpus").write_text(os.environ.get("CUDA_VISIBLE_DEVICES", "unset"))
time.sleep(0.5)
""")  # fmt: skip
    executor = LocalExecutor(cpus_per_run=0.1, gpus_per_run=2, gpus=["0", "1", "5", "7"])
    assert executor.capacity() == 2  # 4 GPUs / 2 per run, though CPUs would allow more

    async def three() -> None:
        jobs = [job(tmp_path, f"r{i}", worker, gpus=2) for i in range(3)]
        slots = asyncio.Semaphore(executor.capacity())

        async def one(j: ScriptJob) -> int:
            async with slots:
                return await executor.execute(j)

        assert await asyncio.gather(*(one(j) for j in jobs)) == [0, 0, 0]

    asyncio.run(three())
    seen = [(tmp_path / f"r{i}" / "gpus").read_text() for i in range(3)]
    assert sorted(seen[:2]) == ["0,1", "5,7"]  # the two at once never share a GPU
    assert seen[2] in ("0,1", "5,7")  # the third got a pair back
    assert executor.describe()["gpus"] == ["0", "1", "5", "7"]


def test_asking_for_more_gpus_than_there_are_is_one_clear_error() -> None:
    with pytest.raises(UserError, match="--gpus-per-run 2: this machine has 1 usable GPU"):
        LocalExecutor(gpus_per_run=2, gpus=["0"])


def test_cancelling_a_job_stops_its_worker_with_sigterm(tmp_path: Path) -> None:
    sleeper = job(tmp_path, "r1", script(tmp_path, WAITS_FOR_SIGTERM))

    async def cancel_soon() -> None:
        task = asyncio.ensure_future(LocalExecutor(parallel=1).execute(sleeper))
        while not (sleeper.run_dir / "pid").exists():
            await asyncio.sleep(0.05)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    started = time.monotonic()
    asyncio.run(cancel_soon())
    assert time.monotonic() - started < scaled(20)
    assert (sleeper.run_dir / "stopped").read_text() == "SIGTERM"
    assert wait_gone(int((sleeper.run_dir / "pid").read_text()), within_s=60)


DRIVER = """
import asyncio, sys
from pathlib import Path
from podium.experiments.sweeps import LocalExecutor
from tests.experiments.sweeps.conftest import ScriptJob
run_dir, worker = Path(sys.argv[1]), Path(sys.argv[2])
asyncio.run(LocalExecutor(parallel=1).execute(ScriptJob("r", run_dir, script=worker)))
"""


def test_workers_stop_when_the_driver_is_killed(tmp_path: Path) -> None:
    """SIGKILL gives the driver no chance to clean up: the kernel itself tells each worker."""
    sleeper = job(tmp_path, "r1", script(tmp_path, WAITS_FOR_SIGTERM))
    driver = subprocess.Popen(
        [sys.executable, "-c", DRIVER, str(sleeper.run_dir), str(sleeper.script)], cwd=REPO
    )
    pid_file = sleeper.run_dir / "pid"
    wait_until(pid_file.exists)
    os.kill(driver.pid, signal.SIGKILL)
    driver.wait()
    assert wait_gone(int(pid_file.read_text()), within_s=60)
    assert (sleeper.run_dir / "stopped").read_text() == "SIGTERM"
