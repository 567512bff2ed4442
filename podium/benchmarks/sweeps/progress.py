"""What a sweep shows while it runs: the grid, one cell per (task, strategy/model), one mark
per seed, and a line of totals (done / running / failed, medals so far).

Marks: ``G`` ``S`` ``B`` a medal, ``+`` finished without a medal, ``>`` running, ``.`` waiting,
``~`` interrupted, ``x`` failed. Plain ASCII, so logs and any terminal show the same thing.
"""

from __future__ import annotations

from collections import Counter

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from podium.benchmarks.sweeps.grid import task_slug
from podium.benchmarks.sweeps.manifest import Manifest, RunEntry, RunState

MEDAL_MARKS = {"gold": "G", "silver": "S", "bronze": "B"}
STATE_MARKS = {
    RunState.PENDING: ".",
    RunState.RUNNING: ">",
    RunState.INTERRUPTED: "~",
    RunState.FAILED: "x",
}


def mark(entry: RunEntry) -> str:
    if entry.state is RunState.FINISHED:
        return MEDAL_MARKS.get(entry.medal or "", "+")
    return STATE_MARKS[entry.state]


def grid_table(manifest: Manifest) -> RenderableType:
    grid = manifest.grid
    columns = [(s, m) for s in grid.strategies for m in grid.models]
    table = Table(box=None, pad_edge=False, show_edge=False)
    table.add_column("task")
    for strategy, model in columns:
        table.add_column(strategy if len(grid.models) == 1 else f"{strategy}/{model}")
    cells: dict[tuple[str, str, str], list[str]] = {}
    for entry in manifest.runs:
        cells.setdefault((entry.task, entry.strategy, entry.model), []).append(mark(entry))
    for task in grid.tasks:
        row = ["".join(cells.get((task, s, m), [])) for s, m in columns]
        table.add_row(task_slug(task), *row)
    return Group(table, Text(totals_line(manifest)))  # not a caption: it would wrap


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
