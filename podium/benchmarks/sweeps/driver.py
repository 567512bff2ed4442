"""Runs the runs of a sweep that still need running, through an executor, and keeps the
manifest up to date as each starts and ends.

Each run's outcome is read from its run dir (``summary.json``), never from the worker's exit
status alone, so a run stays resumable whatever killed it. Interrupting the driver cancels the
jobs in flight; each executor stops its run gracefully (SIGTERM: nodes in flight are marked
interrupted), and the manifest records them as interrupted for ``--resume``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from podium.benchmarks.sweeps import manifest as mf
from podium.benchmarks.sweeps.executor import (
    EXIT_INTERRUPTED,
    EXIT_REFUSED,
    LOG_NAME,
    Executor,
    Job,
)
from podium.benchmarks.sweeps.local_executor import tail
from podium.benchmarks.sweeps.manifest import Manifest, RunEntry, RunState
from podium.records import utcnow

EventCallback = Callable[[str, RunEntry], None]  # ("started" | "ended", the run's entry)
JobFactory = Callable[[RunEntry, Path], Job]


@dataclass
class Sweep:
    root: Path
    manifest: Manifest

    def run_dir(self, entry: RunEntry) -> Path:
        return self.root / entry.path

    def save(self) -> None:
        mf.save(self.root, self.manifest)

    def todo(self, retry_failed: bool) -> list[RunEntry]:
        wanted = {RunState.PENDING, RunState.INTERRUPTED, RunState.RUNNING}
        if retry_failed:
            wanted.add(RunState.FAILED)
        return [e for e in self.manifest.runs if e.state in wanted]


async def drive(
    sweep: Sweep,
    executor: Executor,
    make_job: JobFactory,
    on_event: EventCallback | None = None,
    retry_failed: bool = False,
) -> None:
    """Run every run still to do, at most ``executor.capacity()`` at once, in grid order."""
    todo = sweep.todo(retry_failed)
    for entry in todo:  # a run left "running" by a killed driver is interrupted
        if entry.state is RunState.RUNNING:
            entry.state = RunState.INTERRUPTED
    slots = asyncio.Semaphore(executor.capacity())

    async def one(entry: RunEntry) -> None:
        async with slots:
            await _run_one(sweep, executor, make_job(entry, sweep.run_dir(entry)), entry, on_event)

    await asyncio.gather(*(one(entry) for entry in todo))


async def _run_one(
    sweep: Sweep, executor: Executor, job: Job, entry: RunEntry, on_event: EventCallback | None
) -> None:
    entry.state, entry.attempts = RunState.RUNNING, entry.attempts + 1
    entry.started_at, entry.finished_at, entry.exit_code, entry.error = utcnow(), None, None, None
    sweep.save()
    if on_event:
        on_event("started", entry)
    code: int | None = None
    try:
        code = await executor.execute(job)
    finally:  # cancelled too: the run dir came back; record what it says
        _record_outcome(entry, job.run_dir, code)
        sweep.save()
        if on_event:
            on_event("ended", entry)


def _record_outcome(entry: RunEntry, run_dir: Path, code: int | None) -> None:
    entry.exit_code, entry.finished_at = code, utcnow()
    mf.apply_summary(entry, run_dir)
    if code is None or code == EXIT_INTERRUPTED:
        if entry.state is not RunState.FINISHED:
            entry.state = RunState.INTERRUPTED
        return
    if entry.state is RunState.FINISHED:
        return
    if code == EXIT_REFUSED or mf.read_summary(run_dir) is None or code != 0:
        entry.state = RunState.FAILED
        entry.error = entry.error or _reason(run_dir / LOG_NAME, code)


def _reason(log: Path, code: int) -> str:
    """The worker's last ``error:`` line, else its last line, else the exit status."""
    lines = [line.strip() for line in tail(log) if line.strip()]
    errors = [line for line in lines if line.startswith("error:")]
    if errors:
        return errors[-1].removeprefix("error:").strip()
    return lines[-1] if lines else f"the worker exited with status {code} and wrote nothing"
