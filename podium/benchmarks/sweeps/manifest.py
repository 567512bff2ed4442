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
from datetime import datetime
from enum import StrEnum
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from podium.benchmarks.sweeps.grid import Grid, run_id
from podium.errors import UserError
from podium.records import utcnow
from podium.scaffolds import RunDir, RunSummary

MANIFEST = "sweep.json"
FORMAT = "podium-sweep/1"
RUNS = "runs"


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

    def counts(self) -> dict[RunState, int]:
        counts = dict.fromkeys(RunState, 0)
        for run in self.runs:
            counts[run.state] += 1
        return counts


def new_runs(grid: Grid) -> list[RunEntry]:
    return [
        RunEntry(id=rid, task=task, strategy=strategy, model=model, seed=seed,
                 path=f"{RUNS}/{rid}")
        for task, strategy, model, seed in grid.cells()
        for rid in [run_id(task, strategy, model, seed)]
    ]  # fmt: skip


def save(sweep_dir: Path, manifest: Manifest) -> None:
    path = sweep_dir / MANIFEST
    tmp = path.with_name(MANIFEST + ".tmp")
    tmp.write_text(manifest.model_dump_json(indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def load(sweep_dir: Path) -> Manifest:
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
    """Make every entry agree with its run dir (after a crash of the driver, or a resume)."""
    for entry in manifest.runs:
        run_dir = sweep_dir / entry.path
        if entry.state is RunState.PENDING and not run_dir.exists():
            continue
        error = entry.error
        apply_summary(entry, run_dir)
        if entry.state is RunState.PENDING and entry.attempts:
            entry.state = RunState.FAILED if entry.exit_code else RunState.INTERRUPTED
            entry.error = error
