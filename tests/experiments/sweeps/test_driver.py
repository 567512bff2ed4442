"""The driver against an executor that writes run dirs the way the worker would."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from podium.experiments.sweeps import (
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_REFUSED,
    LOG_NAME,
    Job,
    Sweep,
    drive,
)
from podium.experiments.sweeps.driver import FAIL_FAST_RUNS, SweepFailedFast
from podium.experiments.sweeps.hardware import CPU_SHARE_ENV
from podium.formats import Grid, Manifest, RunEntry, RunState, new_runs
from tests.formats.conftest import write_summary

# What each run does, by run id: (exit status, summary status or None, medal, log line)
OUTCOMES = {
    "a.greedy.baseline.s0": (0, "finished", "gold", ""),
    "a.greedy.baseline.s1": (EXIT_FAILED, "failed", None, "error: the model said no"),
    "b.greedy.baseline.s0": (EXIT_REFUSED, None, None, "error: refusing to sweep unsandboxed: x"),
    "b.greedy.baseline.s1": (EXIT_INTERRUPTED, "interrupted", None, ""),
}


class WritingExecutor:
    """Writes each run's outcome into its run dir, as the worker would; counts concurrency."""

    name = "test"

    def __init__(self, capacity: int) -> None:
        self.slots, self.running, self.peak, self.seen = capacity, 0, 0, []  # type: ignore[var-annotated]

    def capacity(self) -> int:
        return self.slots

    def describe(self) -> dict[str, object]:
        return {"name": self.name}

    async def execute(self, job: Job) -> int:
        self.running += 1
        self.peak = max(self.peak, self.running)
        self.seen.append(job.run_id)
        await asyncio.sleep(0.05)
        self.running -= 1
        code, status, medal, line = OUTCOMES[job.run_id]
        job.run_dir.mkdir(parents=True, exist_ok=True)
        (job.run_dir / LOG_NAME).write_text(f"step 1\n{line}\n")
        if status:
            write_summary(
                job.run_dir,
                status,
                medal,
                error="the model said no" if code == EXIT_FAILED else None,
            )
        return code

    async def aclose(self) -> None:
        return None


def make_job(entry: RunEntry, run_dir: Path) -> Job:
    return Job(run_id=entry.id, run_dir=run_dir, worker="unused")


def test_every_run_ends_in_the_state_its_run_dir_says(tmp_path: Path, manifest: Manifest) -> None:
    sweep = Sweep(tmp_path, manifest)
    executor = WritingExecutor(capacity=2)
    events: list[tuple[str, str, RunState]] = []
    asyncio.run(drive(sweep, executor, make_job, lambda k, e: events.append((k, e.id, e.state))))
    states = {e.id: (e.state, e.medal, e.error, e.exit_code, e.attempts) for e in manifest.runs}
    assert states == {
        "a.greedy.baseline.s0": (RunState.FINISHED, "gold", None, 0, 1),
        "a.greedy.baseline.s1": (RunState.FAILED, None, "the model said no", EXIT_FAILED, 1),
        "b.greedy.baseline.s0": (RunState.FAILED, None, "refusing to sweep unsandboxed: x",
                                 EXIT_REFUSED, 1),
        "b.greedy.baseline.s1": (RunState.INTERRUPTED, None, None, EXIT_INTERRUPTED, 1),
    }  # fmt: skip
    assert executor.peak == 2  # bounded by the executor's capacity
    assert [k for k, *_ in events].count("started") == 4 and len(events) == 8
    saved = json.loads((tmp_path / "sweep.json").read_text())
    assert [r["state"] for r in saved["runs"]] == ["finished", "failed", "failed", "interrupted"]


@pytest.mark.parametrize(("retry_failed", "rerun"), [(False, 1), (True, 3)])
def test_a_second_pass_runs_only_what_is_left(
    tmp_path: Path, manifest: Manifest, retry_failed: bool, rerun: int
) -> None:
    sweep = Sweep(tmp_path, manifest)
    asyncio.run(drive(sweep, WritingExecutor(4), make_job))
    again = WritingExecutor(4)
    asyncio.run(drive(sweep, again, make_job, retry_failed=retry_failed))
    assert len(again.seen) == rerun and "a.greedy.baseline.s0" not in again.seen
    assert "b.greedy.baseline.s1" in again.seen  # the interrupted run, always


def test_cancelling_the_sweep_records_runs_in_flight_as_interrupted(
    tmp_path: Path, manifest: Manifest
) -> None:
    class Hanging(WritingExecutor):
        async def execute(self, job: Job) -> int:
            job.run_dir.mkdir(parents=True, exist_ok=True)
            write_summary(job.run_dir, "running")
            await asyncio.sleep(60)
            return 0

    async def main() -> None:
        task = asyncio.ensure_future(drive(Sweep(tmp_path, manifest), Hanging(2), make_job))
        await asyncio.sleep(0.2)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    assert [e.state for e in manifest.runs] == [RunState.INTERRUPTED] * 2 + [RunState.PENDING] * 2


class Failing(WritingExecutor):
    """Every run fails; ``why`` says with what error line (its run dir in it, as a real
    worker's traceback-free error names its own paths)."""

    def __init__(self, capacity: int, why: Callable[[Job], str]) -> None:
        super().__init__(capacity)
        self.why = why

    async def execute(self, job: Job) -> int:
        self.seen.append(job.run_id)
        await asyncio.sleep(0.01)
        job.run_dir.mkdir(parents=True, exist_ok=True)
        (job.run_dir / LOG_NAME).write_text(f"starting\nerror: {self.why(job)}\n")
        return EXIT_REFUSED


def six_runs() -> Manifest:
    grid = Grid(tasks=("mini/a", "mini/b", "mini/c"), strategies=("greedy",),
                models=("baseline",), seeds=(0, 1))  # fmt: skip
    return Manifest(podium_version="test", tasks_spec="mini", grid=grid, runs=new_runs(grid))


def test_a_sweep_whose_first_runs_fail_alike_stops_launching_and_says_why(tmp_path: Path) -> None:
    manifest = six_runs()
    sweep = Sweep(tmp_path, manifest)
    executor = Failing(1, lambda job: f"cannot import name '__version__' ({job.run_dir}/x)")
    with pytest.raises(SweepFailedFast) as stopped:
        asyncio.run(drive(sweep, executor, make_job))
    assert len(executor.seen) == FAIL_FAST_RUNS == 3  # then nothing more was launched
    assert stopped.value.exit_code == 1
    assert stopped.value.message == (
        "sweep stopped: its first 3 runs all failed with "
        "\"cannot import name '__version__' (<run>/x)\" (3 runs not started)"
    )
    assert stopped.value.hint is not None and f"--resume {tmp_path}" in stopped.value.hint
    assert [e.state for e in manifest.runs] == [RunState.FAILED] * 3 + [RunState.PENDING] * 3
    saved = json.loads((tmp_path / "sweep.json").read_text())
    assert [r["state"] for r in saved["runs"]].count("pending") == 3  # for --resume


def test_runs_failing_for_different_reasons_or_too_few_runs_do_not_stop_a_sweep(
    tmp_path: Path, manifest: Manifest
) -> None:
    (tmp_path / "distinct").mkdir()
    (tmp_path / "few").mkdir()
    distinct = Sweep(tmp_path / "distinct", six_runs())
    executor = Failing(2, lambda job: f"task {job.run_id.split('.')[0]} is broken")
    asyncio.run(drive(distinct, executor, make_job))
    assert len(executor.seen) == 6
    few = Sweep(tmp_path / "few", manifest)  # no more runs than fail_fast: nothing to save
    asyncio.run(drive(few, Failing(1, lambda job: "the same"), make_job, fail_fast=4))
    assert all(e.state is RunState.FAILED for e in manifest.runs)


class FailingOnce(WritingExecutor):
    """A run's first attempt fails (an error in its summary); every later one finishes."""

    async def execute(self, job: Job) -> int:
        self.seen.append(job.run_id)
        job.run_dir.mkdir(parents=True, exist_ok=True)
        if self.seen.count(job.run_id) == 1:
            write_summary(job.run_dir, "failed", error=f"CUDA out of memory in {job.run_id}")
            return EXIT_FAILED
        write_summary(job.run_dir, "finished", "bronze")
        return 0


def test_a_run_that_failed_then_finished_keeps_the_failed_attempts_error(
    tmp_path: Path, manifest: Manifest
) -> None:
    sweep, executor = Sweep(tmp_path, manifest), FailingOnce(2)
    asyncio.run(drive(sweep, executor, make_job, fail_fast=0))
    first = manifest.runs[0]
    assert (first.state, first.attempts) == (RunState.FAILED, 1)
    assert first.attempt_errors == [first.error]
    asyncio.run(drive(sweep, executor, make_job, retry_failed=True))
    saved = json.loads((tmp_path / "sweep.json").read_text())["runs"][0]
    assert (saved["state"], saved["attempts"], saved["error"]) == ("finished", 2, None)
    assert saved["attempt_errors"] == ["CUDA out of memory in a.greedy.baseline.s0"]


class EnvRecording(WritingExecutor):
    """Finishes every run, remembering the environment each job would give its worker."""

    def __init__(self, capacity: int) -> None:
        super().__init__(capacity)
        self.envs: dict[str, dict[str, str]] = {}

    async def execute(self, job: Job) -> int:
        self.envs[job.run_id] = dict(job.env)
        write_summary(job.run_dir, "finished")
        return 0


@pytest.mark.parametrize(("capacity", "share"), [(2, "1.5"), (1, "all")])
def test_each_worker_is_told_its_share_of_the_cpus(
    tmp_path: Path, manifest: Manifest, capacity: int, share: str
) -> None:
    executor = EnvRecording(capacity)

    def job(entry: RunEntry, run_dir: Path) -> Job:
        return Job(run_id=entry.id, run_dir=run_dir, worker="unused", cpus=1.5, env={"KEEP": "1"})

    asyncio.run(drive(Sweep(tmp_path, manifest), executor, job))
    assert executor.envs["a.greedy.baseline.s0"] == {"KEEP": "1", CPU_SHARE_ENV: share}
    assert manifest.session.sweep_dir == tmp_path and manifest.session.parallel == capacity
