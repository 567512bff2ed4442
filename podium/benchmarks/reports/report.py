"""``podium compare``'s work: runs on disk → ``summary.json``, ``summary.md`` and PNG plots.

Everything is computed before anything is written, so a user error (a corrupt file, an unknown
baseline) leaves an older report in place. ``summary.json`` holds every number of
``summary.md`` and more (per-seed values, the per-run list, the disclosure card); its
``format`` key marks it as a report, so a later ``podium compare`` over the same folder never
mistakes it for a run's summary.json.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.table import Table

from podium.benchmarks.reports.aggregate import ALL, aggregate
from podium.benchmarks.reports.disclosure import disclosure
from podium.benchmarks.reports.markdown import (
    PAIRED_HEADERS,
    RESULT_HEADERS,
    paired_rows,
    result_rows,
    splits,
    summary_markdown,
)
from podium.benchmarks.reports.paired import paired
from podium.benchmarks.reports.plots import write_plots
from podium.benchmarks.reports.record import Cell
from podium.benchmarks.reports.runs import RunSet, load_runs
from podium.errors import UserError
from podium.records import utcnow

REPORT_FORMAT = "podium-report/1"
# The report's own files, not a run dir's: its summary.json only has a run's file name (its
# ``format`` key tells them apart, reports.record.is_run_summary), so it is not run_files.SUMMARY.
SUMMARY_JSON = "summary.json"
SUMMARY_MD = "summary.md"


@dataclass(frozen=True)
class Report:
    """A written report: its directory, the data of summary.json, the files written (summary
    files and plots) and the notes (what was skipped or counted specially, and why)."""

    out: Path
    data: dict[str, Any]
    files: tuple[Path, ...]
    notes: tuple[str, ...]


def build_report(dirs: Sequence[Path], out: Path, baseline: str | None = None) -> Report:
    """Compare the runs under ``dirs`` (sweep dirs, run dirs, folders holding them) and write
    the report into ``out`` (created if needed; files of an older report there are replaced).

    ``baseline``: a strategy to compare every other strategy with (same model, paired by task
    and seed). Raises UserError for unreadable runs, an unknown baseline, or an unwritable
    ``out``; a plot that cannot be drawn is only a note.
    """
    runs = load_runs(dirs)
    data: dict[str, Any] = {
        "format": REPORT_FORMAT,
        "created_at": utcnow().isoformat(),
        "sources": [str(d) for d in dirs],
        "groups": aggregate(runs),
        "paired": paired(runs, baseline) if baseline is not None else None,
        "disclosure": disclosure(runs),
        "runs": run_rows(runs),
    }
    _make_dir(out)
    plots = write_plots(runs, data["groups"], out)
    data["plots"] = plots.files
    data["notes"] = [*runs.notes, *plots.notes]
    _write(out / SUMMARY_JSON, json.dumps(data, indent=2) + "\n")
    _write(out / SUMMARY_MD, summary_markdown(data))
    files = [out / SUMMARY_JSON, out / SUMMARY_MD, *(out / f for f in plots.files.values())]
    return Report(out=out, data=data, files=tuple(files), notes=tuple(data["notes"]))


def run_rows(runs: RunSet) -> list[dict[str, Any]]:
    """Every grid cell with its run's outcome as the report counts it (the per-run list)."""
    return [_run_row(runs, cell) for cell in runs.grid]


def _run_row(runs: RunSet, cell: Cell) -> dict[str, Any]:
    run, path = runs.run(cell), runs.paths.get(cell)
    row: dict[str, Any] = {
        "task": cell.task,
        "strategy": cell.strategy,
        "model": cell.model,
        "seed": cell.seed,
        "path": None if path is None else str(path),
        "status": runs.status(cell),
        "medal": run.medal if run is not None and run.finished else None,
        "valid_submission": runs.outcome(cell, "valid_submission"),
        "above_median": runs.outcome(cell, "above_median"),
        "leaderboard_percentile": runs.percentile(cell),
    }
    if run is not None:
        row.update(
            score=run.score,
            tokens=run.tokens,
            usd=run.usd,
            elapsed_s=run.elapsed_s,
            nodes=run.nodes,
            buggy=run.buggy,
            sandboxed=run.sandboxed,
        )
    return row


def _make_dir(out: Path) -> None:
    try:
        out.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise UserError(
            f"{out} exists and is not a directory", hint="give --out a directory"
        ) from None
    except OSError as exc:
        raise UserError(f"cannot create {out}: {exc.strerror or exc}") from None


def _write(path: Path, text: str) -> None:
    """Write atomically (a temporary file, then a rename): a reader never sees half a report."""
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    except OSError as exc:
        raise UserError(f"cannot write {path}: {exc.strerror or exc}") from None


# --- the terminal ----------------------------------------------------------------------------


def report_splits(report: Report) -> list[str]:
    """The report's splits: "all", then the complexity splits its tasks carry."""
    return splits(report.data["groups"])


def summary_table(report: Report, split: str = ALL) -> Table:
    """The result table (same cells as summary.md's) for a terminal."""
    table = Table(*RESULT_HEADERS, title=f"{split} tasks" if split == ALL else f"split {split}")
    for row in result_rows(report.data["groups"], split):
        table.add_row(*row)
    return table


def paired_table(report: Report) -> Table | None:
    """The paired comparison (None when the report has none)."""
    paired_data = report.data.get("paired")
    if not paired_data:
        return None
    table = Table(*PAIRED_HEADERS, title=f"paired against {paired_data['baseline']}")
    for row in paired_rows(paired_data):
        table.add_row(*row)
    return table
