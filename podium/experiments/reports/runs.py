"""Directories → the runs to compare and the grid they were meant to fill (:class:`RunSet`).

Each directory given is one of:

* a sweep dir (holds ``sweep.json``): the manifest lists every cell of its grid (tasks ×
  strategies × models × seeds) with its run dir; a cell whose run dir has no ``summary.json``
  is in the grid without a run;
* a run dir (holds ``summary.json``);
* any other folder, searched recursively for sweep dirs and run dirs (a sweep's run dirs are
  read through its manifest; a report's own ``summary.json`` is recognised and skipped).

The grid is what the denominators count. A sweep's grid is its manifest's. Runs found without a
manifest have no record of what was meant to run, so their grid is, per (strategy, model) group,
every task observed in the group × every seed observed in the group: a task whose seed 2 left no
run dir then counts as no medal in seed 2, as it would in a sweep, instead of silently shrinking
the denominator. (A run that never wrote ``summary.json`` cannot be seen without a manifest.)

Several directories merge into one RunSet (two sweeps of different strategies, say); the same
directory reached twice is read once. Two different run dirs for one cell are a UserError naming
both: picking either would be an unstated choice.
"""

from __future__ import annotations

import os
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from podium.errors import UserError
from podium.experiments.reports.files import read_object
from podium.experiments.reports.record import Cell, Run, is_run_summary, load_run
from podium.formats import RunDir
from podium.formats.run_files import SUMMARY
from podium.formats.sweep_dir import FORMAT as SWEEP_FORMAT
from podium.formats.sweep_dir import MANIFEST as SWEEP

DIRS_HINT = "give sweep dirs (sweep.json), run dirs (summary.json), or folders holding them"


@dataclass(frozen=True)
class Manifest:
    """A sweep's ``sweep.json``, as read (the disclosure card uses its hardware and executor)."""

    path: Path
    data: dict[str, Any]


@dataclass
class RunSet:
    """Every cell of the grid, the runs that exist for them, and what a manifest says of the
    others (``states``: pending, running, failed, interrupted)."""

    grid: tuple[Cell, ...]
    runs: dict[Cell, Run]
    paths: dict[Cell, Path]  # where each cell's run dir is, or would be (when known)
    states: dict[Cell, str]
    manifests: tuple[Manifest, ...] = ()
    notes: list[str] = field(default_factory=list)
    complexities: dict[str, str] = field(default_factory=dict)  # task → its split, when known

    def run(self, cell: Cell) -> Run | None:
        return self.runs.get(cell)

    def groups(self) -> list[tuple[str, str]]:
        """The (strategy, model) groups of the grid, sorted."""
        return sorted({(c.strategy, c.model) for c in self.grid})

    def strategies(self) -> list[str]:
        return sorted({c.strategy for c in self.grid})

    def cells(self, strategy: str, model: str) -> list[Cell]:
        return [c for c in self.grid if (c.strategy, c.model) == (strategy, model)]

    def complexity(self, task: str) -> str | None:
        """The task's complexity split (MLE-bench's low / medium / high), from any of its runs;
        None when no run of it says (it then appears only in the "all" split)."""
        return self.complexities.get(task)

    def outcome(self, cell: Cell, name: str) -> bool:
        """A boolean outcome of the cell: False for a missing or unfinished run."""
        run = self.runs.get(cell)
        return run is not None and run.outcome(name)

    def percentile(self, cell: Cell) -> float:
        """The cell's leaderboard percentile: 0 for a missing, unfinished or invalid run."""
        run = self.runs.get(cell)
        return 0.0 if run is None else run.percentile()

    def status(self, cell: Cell) -> str:
        """The run's status, else the manifest's state, else ``missing``."""
        run = self.runs.get(cell)
        return run.status if run is not None else self.states.get(cell, "missing")


def load_runs(dirs: Sequence[Path]) -> RunSet:
    """Read every run under ``dirs`` (see the module doc). Raises UserError for a path that is
    not a directory, a directory without runs, a corrupt file, or two runs for one cell."""
    if not dirs:
        raise UserError("no directories to compare", hint=DIRS_HINT)
    builder = _Builder()
    for directory in dirs:
        builder.add_dir(directory)
    return builder.build()


class _Builder:
    def __init__(self) -> None:
        self.runs: dict[Cell, Run] = {}
        self.paths: dict[Cell, Path] = {}
        self.states: dict[Cell, str] = {}
        self.sweep_cells: set[Cell] = set()
        self.loose: list[Run] = []
        self.manifests: list[Manifest] = []
        self.seen: set[Path] = set()  # resolved sweep and run dirs already read

    def add_dir(self, directory: Path) -> None:
        if not directory.is_dir():
            raise UserError(f"{directory} is not a directory", hint=DIRS_HINT)
        sweeps, runs = _discover(directory)
        if not sweeps and not runs:
            raise UserError(
                f"no runs in {directory} (no sweep.json or summary.json)", hint=DIRS_HINT
            )
        for sweep in sweeps:
            self.add_sweep(sweep)
        for path, summary in runs:
            if self._first_time(path):
                run = load_run(path, summary)
                self._put(run.cell, run)
                self.loose.append(run)

    def add_sweep(self, sweep: Path) -> None:
        if not self._first_time(sweep):
            return
        manifest = Manifest(sweep / SWEEP, read_object(sweep / SWEEP))
        self.manifests.append(manifest)
        for cell, path, state in _manifest_cells(manifest):
            self.sweep_cells.add(cell)
            self.paths.setdefault(cell, path)
            if RunDir(path).summary.is_file() and self._first_time(path):
                self._put(cell, _as_cell(load_run(path), cell))
            elif cell not in self.runs:
                self.states[cell] = state

    def _first_time(self, path: Path) -> bool:
        key = path.resolve()
        if key in self.seen:
            return False
        self.seen.add(key)
        return True

    def _put(self, cell: Cell, run: Run) -> None:
        other = self.runs.get(cell)
        if other is not None:
            raise UserError(
                f"two runs for {cell.label}: {other.path} and {run.path}",
                hint="compare them in separate reports, or leave one of them out",
            )
        self.runs[cell] = run
        self.paths[cell] = run.path
        self.states.pop(cell, None)

    def build(self) -> RunSet:
        loose_grid = _observed_grid(self.loose)
        grid = tuple(sorted(self.sweep_cells | loose_grid))
        result = RunSet(grid, self.runs, self.paths, self.states, tuple(self.manifests))
        for run in sorted(self.runs.values(), key=lambda r: r.cell):
            if run.complexity:
                result.complexities.setdefault(run.task, run.complexity)
        result.notes.extend(_notes(result, loose_grid))
        return result


def _discover(root: Path) -> tuple[list[Path], list[tuple[Path, dict[str, Any]]]]:
    """Sweep dirs and (summary-holding) run dirs under ``root``; does not descend into them."""
    sweeps: list[Path] = []
    runs: list[tuple[Path, dict[str, Any]]] = []
    for dirpath, dirnames, filenames in os.walk(root):
        here = Path(dirpath)
        dirnames.sort()
        if SWEEP in filenames:
            sweeps.append(here)
            dirnames.clear()
        elif SUMMARY in filenames:
            dirnames.clear()
            summary = read_object(here / SUMMARY)
            if is_run_summary(summary):
                runs.append((here, summary))
    return sweeps, runs


def _manifest_cells(manifest: Manifest) -> list[tuple[Cell, Path, str]]:
    """The grid cells a manifest lists, with each run's dir and state."""
    data, where = manifest.data, manifest.path
    if data.get("format") != SWEEP_FORMAT:
        raise UserError(
            f"{where} is not a sweep manifest (format {data.get('format')!r})",
            hint=f"this Podium reads {SWEEP_FORMAT}",
        )
    entries = data.get("runs")
    if not isinstance(entries, list):
        raise UserError(f"{where} has no 'runs' list", hint="podium bench writes sweep.json")
    cells = []
    for i, entry in enumerate(entries):
        try:
            cell = Cell(
                str(entry["strategy"]), str(entry["model"]), str(entry["task"]), int(entry["seed"])
            )
            path = where.parent / str(entry["path"])
        except (KeyError, TypeError, ValueError) as exc:
            raise UserError(
                f"{where}: run entry {i} is malformed ({type(exc).__name__}: {exc})",
                hint="podium bench writes sweep.json",
            ) from None
        cells.append((cell, path, str(entry.get("state") or "pending")))
    return cells


def _as_cell(run: Run, cell: Cell) -> Run:
    """A sweep's run under the manifest's names for its cell (the grid is what was asked)."""
    return replace(run, strategy=cell.strategy, model=cell.model, task=cell.task, seed=cell.seed)


def _observed_grid(runs: Iterable[Run]) -> set[Cell]:
    """Per (strategy, model) group: every observed task × every observed seed."""
    tasks: dict[tuple[str, str], set[str]] = defaultdict(set)
    seeds: dict[tuple[str, str], set[int]] = defaultdict(set)
    for run in runs:
        tasks[run.strategy, run.model].add(run.task)
        seeds[run.strategy, run.model].add(run.seed)
    return {Cell(s, m, t, seed) for (s, m), ts in tasks.items() for t in ts for seed in seeds[s, m]}


def _notes(runs: RunSet, loose_grid: set[Cell]) -> list[str]:
    notes = []
    unseen = [c for c in loose_grid if c not in runs.runs]
    if unseen:
        notes.append(
            f"{len(unseen)} cells of the observed grid (tasks × seeds per strategy and "
            "model) have no run dir: counted as no medal"
        )
    finished = [r for r in runs.runs.values() if r.finished]
    ungraded = sum(not r.graded for r in finished)
    if ungraded:
        notes.append(
            f"{ungraded} finished runs have no grade (the task has no private answers "
            "or leaderboard): counted as no medal in the rates, left out of paired statistics"
        )
    no_pct = sum(r.valid_submission and r.leaderboard_percentile is None for r in finished)
    if no_pct:
        notes.append(
            f"{no_pct} valid runs recorded no leaderboard percentile (graded by an "
            "older Podium): counted as percentile 0"
        )
    return notes
