"""Runs the runs of a sweep that still need running, through an executor, and keeps the
manifest up to date as each starts and ends.

A sweep that cannot work stops early: when the first ``FAIL_FAST_RUNS`` runs to end have all
failed for the same reason (their error lines equal once each run's own dir and id are taken
out: a worker that cannot import Podium, a model that is not there, a sandbox that cannot
start), no other run is launched, the runs in flight end as they would, and ``drive`` raises
``SweepFailedFast`` with that reason. The runs not launched stay pending: ``--resume`` (with
``--retry-failed``) takes the sweep up again once the cause is fixed.

Each run's outcome is read from its run dir (``summary.json``), never from the worker's exit
status alone, so a run stays resumable whatever killed it. An attempt that does not finish adds
its error to the entry's ``attempt_errors``, so a run that needed a second attempt still says
why after that one finished (``error`` is the current attempt's alone). Interrupting the
driver cancels the jobs in flight; each executor stops its run gracefully (SIGTERM: nodes in
flight are marked interrupted), and the manifest records them as interrupted for ``--resume``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from podium.errors import UserError
from podium.experiments.sweeps.executor import (
    EXIT_INTERRUPTED,
    EXIT_REFUSED,
    LOG_NAME,
    Executor,
    Job,
)
from podium.experiments.sweeps.hardware import cpu_share_env
from podium.experiments.sweeps.local_executor import tail
from podium.formats.sweep_dir import (
    Manifest,
    RunEntry,
    RunState,
    apply_summary,
    read_summary,
    save_manifest,
)
from podium.records import utcnow

FAIL_FAST_RUNS = 3  # this many first runs failing alike stop the sweep

EventCallback = Callable[[str, RunEntry], None]  # ("started" | "ended", the run's entry)
JobFactory = Callable[[RunEntry, Path], Job]


@dataclass
class Sweep:
    root: Path
    manifest: Manifest

    def run_dir(self, entry: RunEntry) -> Path:
        return self.root / entry.path

    def save(self) -> None:
        save_manifest(self.root, self.manifest)

    def todo(self, retry_failed: bool) -> list[RunEntry]:
        wanted = {RunState.PENDING, RunState.INTERRUPTED, RunState.RUNNING}
        if retry_failed:
            wanted.add(RunState.FAILED)
        return [e for e in self.manifest.runs if e.state in wanted]


class SweepFailedFast(UserError):
    """The sweep's first runs all failed for one reason: the rest were not launched."""

    exit_code = 1


@dataclass
class FailFast:
    """Watches the first ``runs`` runs to end: trips when every one of them failed with the
    same reason (``runs`` 0: never)."""

    runs: int
    reasons: list[str] = field(default_factory=list)
    watching: bool = True

    @property
    def tripped(self) -> bool:
        return self.runs > 0 and len(self.reasons) >= self.runs and len(set(self.reasons)) == 1

    def ended(self, entry: RunEntry, run_dir: Path) -> None:
        if not self.watching or self.runs <= 0 or entry.state is RunState.INTERRUPTED:
            return
        if entry.state is not RunState.FAILED:
            self.watching = False  # a run got somewhere: the others may too
            return
        self.reasons.append(same_reason(entry, run_dir))
        self.watching = len(self.reasons) < self.runs and len(set(self.reasons)) == 1

    def error(self, sweep: Sweep, not_started: int) -> SweepFailedFast:
        return SweepFailedFast(
            f"sweep stopped: its first {len(self.reasons)} runs all failed with "
            f'"{self.reasons[0]}" ({not_started} runs not started)',
            hint=f"see a run's {LOG_NAME}; once fixed: podium bench --resume {sweep.root} "
            "--retry-failed",
        )


def same_reason(entry: RunEntry, run_dir: Path) -> str:
    """A failed run's error line with what is its own (its dir, its id) taken out, so that
    runs failing for one cause read the same."""
    reason = entry.error or "no reason given"
    for own in sorted({str(run_dir), str(run_dir.resolve()), entry.path, entry.id}, key=len,
                      reverse=True):  # fmt: skip
        reason = reason.replace(own, "<run>")
    return reason


async def drive(
    sweep: Sweep,
    executor: Executor,
    make_job: JobFactory,
    on_event: EventCallback | None = None,
    retry_failed: bool = False,
    fail_fast: int = FAIL_FAST_RUNS,
) -> None:
    """Run every run still to do, at most ``executor.capacity()`` at once, in grid order;
    raise ``SweepFailedFast`` once the first ``fail_fast`` runs to end all failed alike (only
    when more runs than that are to do: else nothing would be saved)."""
    todo = sweep.todo(retry_failed)
    for entry in todo:  # a run left "running" by a killed driver is interrupted
        if entry.state is RunState.RUNNING:
            entry.state = RunState.INTERRUPTED
    parallel = executor.capacity()
    _begin_session(sweep, parallel)
    slots = asyncio.Semaphore(parallel)
    watch = FailFast(fail_fast if len(todo) > fail_fast else 0)
    not_started: list[RunEntry] = []

    async def one(entry: RunEntry) -> None:
        async with slots:
            if watch.tripped:
                not_started.append(entry)  # it stays as it was, for --resume
                return
            run_dir = sweep.run_dir(entry)
            job = with_cpu_share(make_job(entry, run_dir), parallel)
            await _run_one(sweep, executor, job, entry, on_event)
            watch.ended(entry, run_dir)

    await asyncio.gather(*(one(entry) for entry in todo))
    if watch.tripped:
        raise watch.error(sweep, len(not_started))


def _begin_session(sweep: Sweep, parallel: int) -> None:
    """Tell the manifest's live view where the sweep is, since when it runs and how many runs
    at once (the grid's elapsed time, ETA and steps read them)."""
    session = sweep.manifest.session
    session.sweep_dir, session.started, session.parallel = sweep.root, utcnow(), parallel


def with_cpu_share(job: Job, parallel: int) -> Job:
    """``job`` with its worker told its share of the CPUs (host.json records it)."""
    return replace(job, env={**job.env, **cpu_share_env(job.cpus, parallel)})


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
    """The attempt's outcome into its entry; an attempt that did not finish leaves its error
    among the entry's ``attempt_errors`` (the next attempt resets ``error``)."""
    entry.exit_code, entry.finished_at = code, utcnow()
    apply_summary(entry, run_dir)
    _settle_state(entry, run_dir, code)
    if entry.state is not RunState.FINISHED:
        entry.note_attempt_error(entry.error or f"{entry.state}, no error given")


def _settle_state(entry: RunEntry, run_dir: Path, code: int | None) -> None:
    """The state the attempt ended in: the run dir's word, or failed/interrupted by the
    worker's exit status when the run dir cannot say."""
    if code is None or code == EXIT_INTERRUPTED:
        if entry.state is not RunState.FINISHED:
            entry.state = RunState.INTERRUPTED
        return
    if entry.state is RunState.FINISHED:
        return
    if code == EXIT_REFUSED or read_summary(run_dir) is None or code != 0:
        entry.state = RunState.FAILED
        entry.error = entry.error or _reason(run_dir / LOG_NAME, code)


def _reason(log: Path, code: int) -> str:
    """The worker's last ``error:`` line, else its last line, else the exit status."""
    lines = [line.strip() for line in tail(log) if line.strip()]
    errors = [line for line in lines if line.startswith("error:")]
    if errors:
        return errors[-1].removeprefix("error:").strip()
    return lines[-1] if lines else f"the worker exited with status {code} and wrote nothing"
