"""``podium compare``: the report of one or more sweeps (or run dirs) — table, plots, card.

Where the report goes without
``--out``: ``DIR/report`` for a single directory (a sweep's report lives with the sweep); with
several directories no one of them owns the comparison, so ``--out`` is required.

The terminal gets the key columns, sized to fit 100 columns (a terminal's own width when it is
narrower; 100 in a pipe), and every caveat; the full tables are in summary.md.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape

from podium.errors import UserError

OUT_HINT = "podium compare DIR1 DIR2 --out REPORT_DIR"
PIPE_WIDTH = 100  # the report's terminal tables fit this (reports.report.TERMINAL_WIDTH)


def compare(
    dirs: Annotated[
        list[Path],
        typer.Argument(
            metavar="DIR...", help="Sweep dirs, run dirs, or folders holding them (merged)."
        ),
    ],
    baseline: Annotated[
        str | None,
        typer.Option(help="Compare each strategy with this one: paired by task and seed."),
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option("--out", help="Report directory. Default: DIR/report for a single DIR."),
    ] = None,
) -> None:
    """Aggregate sweeps into a table, plots and a disclosure card (summary.md, summary.json)."""
    from podium.experiments.reports import (
        build_report,
        paired_table,
        report_splits,
        summary_table,
    )
    from podium.experiments.reports.report import regret_table, report_caveats
    from podium.formats.sweep_dir import REPORT_DIR

    if out is None:
        if len(dirs) != 1:
            raise UserError("several directories: say where the report goes", hint=OUT_HINT)
        out = dirs[0] / REPORT_DIR
    report = build_report(dirs, out, baseline)
    # A terminal's own width; in a pipe, the width the tables are made to fit.
    console = Console(highlight=False, width=None if sys.stdout.isatty() else PIPE_WIDTH)
    for split in report_splits(report):
        console.print(summary_table(report, split))
        console.print()
    for table in (paired_table(report), regret_table(report)):
        if table is not None:
            console.print(table)
            console.print()
    for caveat in report_caveats(report):
        console.print(f"[bold]caveat:[/bold] {escape(caveat)}")
    for note in report.notes:
        console.print(f"note: {escape(note)}")
    clean = report.data["disclosure"]["clean_track"]
    console.print(escape(clean["statement"]))
    names = ", ".join(f.name for f in report.files)
    console.print(f"report: {escape(str(out))} ({escape(names)})")
