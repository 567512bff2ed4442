"""The driver against an executor that writes run dirs the way the worker would."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from podium.benchmarks.sweeps import (
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_REFUSED,
    LOG_NAME,
    Job,
    Manifest,
    RunEntry,
    RunState,
    Sweep,
    drive,
)
from tests.benchmarks.sweeps.conftest import write_summary

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
    return Job(run_id=entry.id, run_dir=run_dir)


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
