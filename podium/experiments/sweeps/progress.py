"""What a sweep shows while it runs: the grid, one cell per (task, strategy/model), one mark
per seed, a line of totals (done / running / failed, medals so far), the time (elapsed since this
process began driving the sweep, and an ETA) and each running run's steps so far.

Marks: ``G`` ``S`` ``B`` a medal, ``+`` finished without a medal, ``>`` running, ``.`` waiting,
``~`` interrupted, ``x`` failed. Plain ASCII, so logs and any terminal show the same thing, and
every line but the table's fits ``WIDTH`` columns.

:func:`grid_table` gives a renderable that is drawn afresh each time it is rendered: a live
display (rich's ``Live``) redraws it a few times a second, so the clock and the steps move
between the events that replace it. The steps come from each running run's ``summary.json``
(refreshed by the run after every node), read again only when the file changed; a missing,
half-written or damaged file shows as no steps yet, never as an error.
"""

from __future__ import annotations

import functools
from collections import Counter
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from podium.formats import RunDir
from podium.formats.sweep_dir import Manifest, RunEntry, RunState
from podium.formats.sweep_grid import count, task_slug
from podium.records import utcnow

MEDAL_MARKS = {"gold": "G", "silver": "S", "bronze": "B"}
STATE_MARKS = {
    RunState.PENDING: ".",
    RunState.RUNNING: ">",
    RunState.INTERRUPTED: "~",
    RunState.FAILED: "x",
}
WIDTH = 100  # the lines under the table fit this many columns
TASK_WIDTH = 32  # a longer task name is cut in the middle, leaving room for the marks
RUNNING_SHOWN = 8  # running runs listed with their steps; the others are counted
LEFT = (RunState.PENDING, RunState.RUNNING, RunState.INTERRUPTED)  # still to run


def mark(entry: RunEntry) -> str:
    if entry.state is RunState.FINISHED:
        return MEDAL_MARKS.get(entry.medal or "", "+")
    return STATE_MARKS[entry.state]


def grid_table(manifest: Manifest, now: datetime | None = None) -> RenderableType:
    """The sweep's progress, drawn from ``manifest`` when rendered (at ``now``, else the time
    of rendering): the grid, :func:`totals_line`, :func:`time_line`, :func:`running_lines`."""
    return _Progress(manifest, now)


@dataclass(frozen=True)
class _Progress:
    manifest: Manifest
    now: datetime | None

    def __rich__(self) -> RenderableType:
        now = self.now or utcnow()
        lines = [totals_line(self.manifest), time_line(self.manifest, now),
                 *running_lines(self.manifest, now)]  # fmt: skip
        # Text, not a caption: a caption would wrap to the table's width.
        return Group(_table(self.manifest), *(Text(line) for line in lines))


def _table(manifest: Manifest) -> Table:
    grid = manifest.grid
    columns = [(s, m) for s in grid.strategies for m in grid.models]
    table = Table(box=None, pad_edge=False, show_edge=False)
    table.add_column("task", overflow="fold")  # fold, not rich's ellipsis: ASCII
    for strategy, model in columns:
        name = strategy if len(grid.models) == 1 else f"{strategy}/{model}"
        table.add_column(name, overflow="fold")
    cells: dict[tuple[str, str, str], list[str]] = {}
    for entry in manifest.runs:
        cells.setdefault((entry.task, entry.strategy, entry.model), []).append(mark(entry))
    for task in grid.tasks:
        row = ["".join(cells.get((task, s, m), [])) for s, m in columns]
        table.add_row(_clip(task_slug(task), TASK_WIDTH), *row)
    return table


def totals_line(manifest: Manifest) -> str:
    """``5/32 done, 2 running, 1 failed; medals 4 (gold 1, silver 2, bronze 1)``: failed and
    interrupted only when there are some, so the line fits a terminal."""
    counts = manifest.counts()
    medals = Counter(e.medal for e in manifest.runs if e.state is RunState.FINISHED and e.medal)
    parts = [f"{counts[RunState.FINISHED]}/{len(manifest.runs)} done",
             f"{counts[RunState.RUNNING]} running"]  # fmt: skip
    parts += [
        f"{counts[s]} {s.value}" for s in (RunState.FAILED, RunState.INTERRUPTED) if counts[s]
    ]
    return (
        f"{', '.join(parts)}; medals {sum(medals.values())} "
        f"(gold {medals['gold']}, silver {medals['silver']}, bronze {medals['bronze']})"
    )


def time_line(manifest: Manifest, now: datetime) -> str:
    """``elapsed 12m03s; ETA 40m00s (6 runs left, a run takes 20m00s, 3 at a time)``.

    Elapsed: since this process began driving the sweep (``-`` before). The ETA is the mean
    duration of the finished runs times the runs left, over the runs at once (no more than are
    left); unknown until a run has finished.
    """
    started = manifest.session.started
    elapsed = duration((now - started).total_seconds()) if started else "-"
    left = sum(e.state in LEFT for e in manifest.runs)
    if not left:
        return f"elapsed {elapsed}; no run left to do"
    took = [d for e in manifest.runs if (d := run_duration(e)) is not None]
    if not took:
        return f"elapsed {elapsed}; ETA unknown (no run finished yet, {count(left, 'run')} left)"
    mean = sum(took) / len(took)
    at_once = min(left, max(1, manifest.session.parallel or _parallel(manifest)))
    return (
        f"elapsed {elapsed}; ETA {duration(mean * left / at_once)} ({count(left, 'run')} left, "
        f"a run takes {duration(mean)}, {at_once} at a time)"
    )


def run_duration(entry: RunEntry) -> float | None:
    """How long a finished run's last attempt took, as the driver saw it (its summary's
    ``elapsed_s`` when the manifest lacks the times); None for a run that has not finished."""
    if entry.state is not RunState.FINISHED:
        return None
    if entry.started_at and entry.finished_at:
        return max(0.0, (entry.finished_at - entry.started_at).total_seconds())
    return entry.elapsed_s


def _parallel(manifest: Manifest) -> int:
    """The executor's parallelism as the manifest recorded it (1 when it did not)."""
    value = manifest.executor.get("parallel")
    return value if isinstance(value, int) else 1


def running_lines(manifest: Manifest, now: datetime) -> list[str]:
    """``> titanic.greedy.baseline.s0: step 3/20, 4m10s`` per running run (the first
    ``RUNNING_SHOWN``; the others counted), its steps read from its run dir."""
    running = [e for e in manifest.runs if e.state is RunState.RUNNING]
    root = manifest.session.sweep_dir
    lines = []
    for entry in running[:RUNNING_SHOWN]:
        steps = _steps_text(run_steps(root / entry.path) if root else None)
        took = duration((now - entry.started_at).total_seconds()) if entry.started_at else "-"
        tail = f": {steps}, {took}"
        lines.append(f"> {_clip(entry.id, WIDTH - 2 - len(tail))}{tail}")
    if len(running) > RUNNING_SHOWN:
        lines.append(f"  and {len(running) - RUNNING_SHOWN} more running")
    return lines


def _steps_text(steps: tuple[int | None, int | None] | None) -> str:
    done, budget = steps or (None, None)
    if done is None:
        return "no steps yet"
    return f"step {done}/{budget}" if budget else count(done, "step")


def run_steps(run_dir: Path) -> tuple[int | None, int | None]:
    """(steps done, the steps budget) from the run's ``summary.json``; None for what it does not
    say. Cheap: a stat, and a read only when the file changed since the last one."""
    path = RunDir(run_dir).summary
    try:
        stat = path.stat()
    except OSError:
        return None, None
    return _read_steps(path, stat.st_mtime_ns, stat.st_size)


@functools.lru_cache(maxsize=256)
def _read_steps(path: Path, mtime_ns: int, size: int) -> tuple[int | None, int | None]:
    """The steps in one version of a summary file (the version is its mtime and size)."""
    summary = RunDir(path.parent).read_summary()  # None when missing or damaged
    if summary is None:
        return None, None
    budget = (summary.budget or {}).get("steps")
    return summary.steps, budget if isinstance(budget, int) and budget > 0 else None


def duration(seconds: float) -> str:
    """``42s``, ``3m05s``, ``1h02m``: short and ASCII."""
    s = max(0, round(seconds))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{s % 3600 // 60:02d}m"


def _clip(text: str, width: int) -> str:
    """``text`` cut in the middle to ``width`` (a run id keeps its seed, at the end)."""
    width = max(width, 8)
    if len(text) <= width:
        return text
    head = (width - 3) // 2
    return f"{text[:head]}...{text[len(text) - (width - 3 - head) :]}"


def event_line(kind: str, entry: RunEntry, manifest: Manifest) -> str:
    """One line per run start or end, for logs and non-terminal output."""
    done = sum(e.state is RunState.FINISHED for e in manifest.runs)
    head = f"[{done}/{len(manifest.runs)}] {entry.id}"
    if kind == "started":
        return f"{head}: started" + (f" (attempt {entry.attempts})" if entry.attempts > 1 else "")
    if entry.state is RunState.FINISHED:
        outcome = f"{entry.medal} medal" if entry.medal else "no medal"
        if entry.score is not None:
            outcome += f", score {entry.score:.6g}"
        elif entry.medal is None:
            outcome = "no valid submission"
        took = f" in {entry.elapsed_s:.0f}s" if entry.elapsed_s is not None else ""
        return f"{head}: finished{took}, {outcome}"
    if entry.state is RunState.FAILED:
        return f"{head}: failed: {entry.error or '?'}"
    return f"{head}: {entry.state.value}"
