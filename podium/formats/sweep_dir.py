"""``sweep.json``: the grid of a sweep and the state of each of its runs.

The manifest is the driver's notebook, not the truth about a run: the truth is the run dir
(``summary.json``, the journal). So a driver killed with SIGKILL, which leaves runs marked
``running``, loses nothing: :func:`reconcile` re-reads every run dir before a sweep continues.
The file is replaced atomically, so it is always either the old or the new version.

This module owns the sweep dir's layout (``sweep.json``, ``runs/<id>/``); a run dir's files are
named and read by :class:`podium.scaffolds.RunDir`, as for any run.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError

from podium.errors import UserError
from podium.formats.run_files import RunSummary
from podium.formats.rundir import RunDir
from podium.formats.sweep_grid import Grid, run_id
from podium.records import utcnow

MANIFEST = "sweep.json"
FORMAT = "podium-sweep/1"
RUNS = "runs"
REPORT_DIR = "report"  # SWEEP/report/: what podium compare writes, unless told otherwise
ATTEMPT_ERRORS_KEPT = 5  # errors of a run's unfinished attempts kept in its entry
ERROR_CHARS = 300  # each cut to this


class RunState(StrEnum):
    PENDING = "pending"
    RUNNING = "running"
    FINISHED = "finished"
    FAILED = "failed"
    INTERRUPTED = "interrupted"


class RunEntry(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    id: str
    task: str
    strategy: str
    model: str
    seed: int
    path: str  # relative to the sweep dir
    state: RunState = RunState.PENDING
    attempts: int = 0
    exit_code: int | None = None
    medal: str | None = None
    score: float | None = None
    error: str | None = None
    started_at: datetime | None = None
    finished_at: datetime | None = None
    elapsed_s: float | None = None
    # Why each attempt that did not finish ended, oldest first (the last ATTEMPT_ERRORS_KEPT);
    # an older manifest has none recorded.
    attempt_errors: list[str] = Field(default_factory=list)

    def note_attempt_error(self, error: str) -> None:
        """Keep why an attempt did not finish: ``error`` itself is reset when the next attempt
        starts, so without this a run that failed, then finished, would look clean. Bounded:
        the last ``ATTEMPT_ERRORS_KEPT``, each cut to ``ERROR_CHARS``."""
        kept = [*self.attempt_errors, clip(error)][-ATTEMPT_ERRORS_KEPT:]
        self.attempt_errors = kept

    @property
    def last_error(self) -> str | None:
        """The latest error of any attempt (this one's, else an earlier one's)."""
        return self.error or (self.attempt_errors[-1] if self.attempt_errors else None)


def clip(text: str, chars: int = ERROR_CHARS) -> str:
    """``text`` on one line, cut to ``chars`` (an ellipsis marks the cut)."""
    line = " ".join(text.split())
    return line if len(line) <= chars else line[: chars - 3] + "..."


@dataclass
class Session:
    """What the process driving a sweep knows that ``sweep.json`` does not: where the sweep is,
    since when this process has been driving it and how many runs it runs at once (for the
    live grid's elapsed time, ETA and steps). Not part of the manifest's value: never saved,
    and ignored when two manifests are compared."""

    sweep_dir: Path | None = field(default=None, compare=False)
    started: datetime | None = field(default=None, compare=False)
    parallel: int | None = field(default=None, compare=False)


class Manifest(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    format: str = FORMAT
    created_at: datetime = Field(default_factory=utcnow)
    podium_version: str
    tasks_spec: str
    grid: Grid
    run_options: dict[str, Any] = Field(default_factory=dict)  # dotted config keys
    overrides: list[str] = Field(default_factory=list)  # -o values, verbatim
    config_file: str | None = None
    plugins: list[str] = Field(default_factory=list)
    allow_unsandboxed: bool = False
    executor: dict[str, Any] = Field(default_factory=dict)
    hardware: dict[str, Any] = Field(default_factory=dict)
    runs: list[RunEntry]
    _session: Session = PrivateAttr(default_factory=Session)

    @property
    def session(self) -> Session:
        """This process's view of the sweep it drives (see :class:`Session`)."""
        return self._session

    def counts(self) -> dict[RunState, int]:
        counts = dict.fromkeys(RunState, 0)
        for run in self.runs:
            counts[run.state] += 1
        return counts


def lenient_entry(data: Any) -> RunEntry | None:
    """A run entry as read from any manifest (an older or newer Podium's): fields this one does
    not know, or that do not fit, are left out; None when what names the run does not fit."""
    if not isinstance(data, dict):
        return None
    fields = {k: v for k, v in data.items() if k in RunEntry.model_fields}
    while True:
        try:
            return RunEntry.model_validate(fields)
        except ValidationError as exc:
            bad = {err["loc"][0] for err in exc.errors() if err["loc"]}
            optional = {k for k in bad if not RunEntry.model_fields[str(k)].is_required()}
            if not optional or bad - optional:
                return None
            fields = {k: v for k, v in fields.items() if k not in optional}


def new_runs(grid: Grid) -> list[RunEntry]:
    return [
        RunEntry(id=rid, task=task, strategy=strategy, model=model, seed=seed,
                 path=f"{RUNS}/{rid}")
        for task, strategy, model, seed in grid.cells()
        for rid in [run_id(task, strategy, model, seed)]
    ]  # fmt: skip


def save_manifest(sweep_dir: Path, manifest: Manifest) -> None:
    path = sweep_dir / MANIFEST
    tmp = path.with_name(MANIFEST + ".tmp")
    tmp.write_text(manifest.model_dump_json(indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def load_manifest(sweep_dir: Path) -> Manifest:
    path = sweep_dir / MANIFEST
    if not path.is_file():
        raise UserError(
            f"{sweep_dir} is not a sweep directory (no {MANIFEST})",
            hint="start one with: podium bench --tasks ... --out DIR",
        )
    try:
        manifest = Manifest.model_validate_json(path.read_text(encoding="utf-8"))
    except (ValidationError, ValueError) as exc:
        first = exc.errors()[0]["msg"] if isinstance(exc, ValidationError) else str(exc)
        raise UserError(f"{path} is damaged: {first}") from None
    if manifest.format != FORMAT:
        raise UserError(f"{path}: unknown format {manifest.format!r} (this Podium reads {FORMAT})")
    return manifest


def read_summary(run_dir: Path) -> RunSummary | None:
    """A run's ``summary.json``, or None when there is none (never started) or it is damaged."""
    return RunDir(run_dir).read_summary()


def state_of(run_dir: Path) -> RunState:
    """What a run dir says about its run. A summary still marked ``running`` means its process
    died without a word (SIGKILL, power loss): the journal makes it resumable, so: interrupted."""
    summary = read_summary(run_dir)
    if summary is None:
        started = RunDir(run_dir).journal.exists()
        return RunState.INTERRUPTED if started else RunState.PENDING
    status = summary.status
    if status == "finished":
        return RunState.FINISHED
    if status == "failed":
        return RunState.FAILED
    return RunState.INTERRUPTED


def apply_summary(entry: RunEntry, run_dir: Path) -> None:
    """Copy a run's outcome (state, medal, score, time) from its run dir into its entry."""
    entry.state = state_of(run_dir)
    summary = read_summary(run_dir) or RunSummary()
    grade = summary.grade
    entry.medal = grade.medal if grade else None
    entry.score = grade.score if grade else None
    entry.elapsed_s = summary.elapsed_s
    if summary.error:
        entry.error = summary.error


def reconcile(sweep_dir: Path, manifest: Manifest) -> None:
    """Make every entry agree with its run dir (after a crash of the driver, or a resume). An
    attempt a killed driver left ``running`` that did not finish is noted among the entry's
    attempt errors, as the driver notes the attempts it sees end."""
    for entry in manifest.runs:
        run_dir = sweep_dir / entry.path
        if entry.state is RunState.PENDING and not run_dir.exists():
            continue
        error, was_running = entry.error, entry.state is RunState.RUNNING
        apply_summary(entry, run_dir)
        if entry.state is RunState.PENDING and entry.attempts:
            entry.state = RunState.FAILED if entry.exit_code else RunState.INTERRUPTED
            entry.error = error
        if was_running and entry.state is not RunState.FINISHED:
            entry.note_attempt_error(
                entry.error or f"the sweep's driver stopped during this attempt ({entry.state})"
            )
