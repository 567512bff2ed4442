"""A sweep as the viewer serves it (``podium view SWEEP``): its grid, live, and its runs' dirs.

The viewer cannot read a sweep's manifest itself (the sweeps are the benchmarks' room, a
neighbour on its layer), so this layer joins the two: :class:`SweepView` is the viewer's
``SweepSource``. What it reports of each run comes from the run dir when there is one (the
manifest is the driver's notebook; the run dir is the truth: ``manifest.state_of``), and a run
whose lock is held is *running* whatever its summary says yet.

SweepJSON (docs/viewer.md)::

    {"format": "podium-sweep-view/1", "version": "<sha1>",
     "sweep": {"name", "dir", "status", "counts": {state: n}, "medals", "tasks_spec"},
     "axes": {"tasks": [...], "strategies": [...], "models": [...], "seeds": [...]},
     "runs": [{"id", "task", "strategy", "model", "seed", "state", "live", "medal", "graded",
               "score", "best_metric", "steps", "elapsed_s", "attempts", "error", "href"}]}
"""

from __future__ import annotations

import hashlib
import json
import math
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from podium.benchmarks.sweeps import MANIFEST, RunEntry, RunState, load_manifest, state_of
from podium.scaffolds import RunDir
from podium.viewer import run_is_live

FORMAT = "podium-sweep-view/1"
RECENT_S = 30.0  # a manifest written this recently: its driver is still at work


@dataclass(frozen=True)
class SweepView:
    """A sweep directory, read afresh on every ``grid()`` (the page polls it while it runs)."""

    root: Path

    def grid(self) -> dict[str, Any]:
        manifest = load_manifest(self.root)
        runs = [self._run(entry) for entry in manifest.runs]
        counts = {state.value: 0 for state in RunState}
        for run in runs:
            counts[run["state"]] += 1
        data: dict[str, Any] = {
            "sweep": {
                "name": self.root.name,
                "dir": str(self.root),
                "status": self._status(runs),
                "counts": counts,
                "medals": sum(1 for r in runs if r["medal"]),
                "tasks_spec": manifest.tasks_spec,
            },
            "axes": {
                "tasks": _ordered(e.task for e in manifest.runs),
                "strategies": _ordered(e.strategy for e in manifest.runs),
                "models": _ordered(e.model for e in manifest.runs),
                "seeds": sorted({e.seed for e in manifest.runs}),
            },
            "runs": runs,
        }
        text = json.dumps(data, sort_keys=True, default=str, allow_nan=False)
        return {"format": FORMAT, "version": hashlib.sha1(text.encode()).hexdigest(), **data}

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

    def _run(self, entry: RunEntry) -> dict[str, Any]:
        run_dir = self._inside(entry)
        if run_dir is not None and not run_dir.is_dir():
            run_dir = None
        live = run_dir is not None and run_is_live(run_dir) is True
        summary = RunDir(run_dir).read_summary() if run_dir is not None else None
        state = entry.state if run_dir is None else state_of(run_dir)
        if live:
            state = RunState.RUNNING
        grade = summary.grade if summary else None
        return {
            "id": entry.id,
            "task": entry.task,
            "strategy": entry.strategy,
            "model": entry.model,
            "seed": entry.seed,
            "state": state.value,
            "live": live,
            "medal": grade.medal if grade else None,
            "graded": grade is not None,
            "score": _finite(grade.score if grade else None),
            "best_metric": _finite(summary.best_metric if summary else None),
            "steps": summary.steps if summary else None,
            "elapsed_s": _finite(summary.elapsed_s if summary else entry.elapsed_s),
            "attempts": entry.attempts,
            "error": _clipped(summary.error if summary and summary.error else entry.error),
            "href": f"runs/{entry.id}/",
        }

    def _status(self, runs: list[dict[str, Any]]) -> str:
        """running (a run is live, or the driver wrote the manifest moments ago), finished
        (every run ended), else stopped (the driver is gone; ``podium bench --resume``)."""
        if any(r["live"] for r in runs):
            return "running"
        if all(r["state"] in (RunState.FINISHED, RunState.FAILED) for r in runs):
            return "finished"
        try:
            age = time.time() - (self.root / MANIFEST).stat().st_mtime
        except OSError:
            return "stopped"
        return "running" if age < RECENT_S else "stopped"


def _finite(value: float | None) -> float | None:
    """None for NaN and infinities (a grader may return NaN; JSON has no such numbers and the
    page could not parse them)."""
    return value if value is not None and math.isfinite(value) else None


def _clipped(text: str | None, limit: int = 500) -> str | None:
    return text if text is None or len(text) <= limit else text[:limit] + "…"


def _ordered(values: Any) -> list[str]:
    return list(dict.fromkeys(values))
