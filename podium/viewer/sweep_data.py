"""A sweep as the viewer serves it (``podium view SWEEP``): its grid, live, and its runs' dirs.

The manifest is a file of the sweep dir (:mod:`podium.formats`), so the viewer reads it as it
reads a run dir: :class:`SweepView` is the server's ``SweepSource``. What it reports of each
run comes from the run dir when there is one (the manifest is the driver's notebook; the run
dir is the truth: ``sweep_dir.state_of``), and a run whose lock is held is *running* whatever
its summary says yet.

The grid is :class:`podium.viewer.schema.SweepJSON` (docs/viewer.md).
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from podium.formats import MANIFEST, RunDir, RunEntry, RunState, load_manifest, state_of
from podium.viewer.run_data import run_is_live
from podium.viewer.schema import SweepAxes, SweepHeader, SweepJSON, SweepRun

RECENT_S = 30.0  # a manifest written this recently: its driver is still at work


@dataclass(frozen=True)
class SweepView:
    """A sweep directory, read afresh on every ``grid()`` (the page polls it while it runs)."""

    root: Path

    def grid(self) -> SweepJSON:
        """SweepJSON: the sweep's header, its axes and every run of the manifest, in order."""
        manifest = load_manifest(self.root)
        runs = [self._run(entry) for entry in manifest.runs]
        counts = dict.fromkeys(RunState, 0)
        for run in runs:
            counts[run.state] += 1
        sweep = SweepHeader(
            name=self.root.name,
            dir=str(self.root),
            status=self._status(runs),
            counts=counts,
            medals=sum(1 for r in runs if r.medal),
            tasks_spec=manifest.tasks_spec,
        )
        axes = SweepAxes(
            tasks=_ordered(e.task for e in manifest.runs),
            strategies=_ordered(e.strategy for e in manifest.runs),
            models=_ordered(e.model for e in manifest.runs),
            seeds=sorted({e.seed for e in manifest.runs}),
        )
        return SweepJSON(version="", sweep=sweep, axes=axes, runs=runs).stamped()

    def run_dir(self, run_id: str) -> Path | None:
        """The run's directory, found by its id in the manifest (never a path from a URL) and
        only if it lies inside the sweep and holds a journal. The first entry of an id wins."""
        for entry in load_manifest(self.root).runs:
            if entry.id == run_id:
                path = self._inside(entry)
                return path if path is not None and RunDir(path).journal.is_file() else None
        return None

    def _inside(self, entry: RunEntry) -> Path | None:
        """The entry's run dir, resolved, if it lies inside the sweep (a manifest edited to point
        elsewhere, or a symlink under runs/, names a run the viewer does not read)."""
        path = (self.root / entry.path).resolve()
        return path if path.is_relative_to(self.root.resolve()) else None

    def _run(self, entry: RunEntry) -> SweepRun:
        run_dir = self._inside(entry)
        if run_dir is not None and not run_dir.is_dir():
            run_dir = None
        live = run_dir is not None and run_is_live(run_dir) is True
        summary = RunDir(run_dir).read_summary() if run_dir is not None else None
        state = entry.state if run_dir is None else state_of(run_dir)
        if live:
            state = RunState.RUNNING
        grade = summary.grade if summary else None
        return SweepRun(
            id=entry.id,
            task=entry.task,
            strategy=entry.strategy,
            model=entry.model,
            seed=entry.seed,
            state=state,
            live=live,
            medal=grade.medal if grade else None,
            graded=grade is not None,
            score=grade.score if grade else None,
            best_metric=summary.best_metric if summary else None,
            steps=summary.steps if summary else None,
            elapsed_s=summary.elapsed_s if summary else entry.elapsed_s,
            attempts=entry.attempts,
            error=_clipped(summary.error if summary and summary.error else entry.error),
            href=f"runs/{entry.id}/",
        )

    def _status(self, runs: list[SweepRun]) -> Literal["running", "finished", "stopped"]:
        """running (a run is live, or the driver wrote the manifest moments ago), finished
        (every run ended), else stopped (the driver is gone; ``podium bench --resume``)."""
        if any(r.live for r in runs):
            return "running"
        if all(r.state in (RunState.FINISHED, RunState.FAILED) for r in runs):
            return "finished"
        try:
            age = time.time() - (self.root / MANIFEST).stat().st_mtime
        except OSError:
            return "stopped"
        return "running" if age < RECENT_S else "stopped"


def _clipped(text: str | None, limit: int = 500) -> str | None:
    return text if text is None or len(text) <= limit else text[:limit] + "…"


def _ordered(values: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(values))
