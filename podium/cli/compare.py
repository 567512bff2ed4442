"""``podium compare``: the report of one or more sweeps (or run dirs) — table, plots, card.

Where the report goes without
``--out``: ``DIR/report`` for a single directory (a sweep's report lives with the sweep); with
several directories no one of them owns the comparison, so ``--out`` is required.

The terminal gets the report's top-level caveats first (incomplete, mixed budgets, saturated),
then the key columns, sized to fit 100 columns (a terminal's own width when it is narrower; 100
in a pipe), the per-task scores and percentiles (first when medal rates are saturated), and
every caveat again under the tables; the full tables are in summary.md. Runs configured with
different budgets are refused unless ``--allow-mixed-budgets``.
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
    allow_mixed_budgets: Annotated[
        bool,
        typer.Option(
            "--allow-mixed-budgets",
            help="Compare runs configured with different budgets (every output says so).",
        ),
    ] = False,
) -> None:
    """Aggregate sweeps into a table, plots and a disclosure card (summary.md, summary.json)."""
    from podium.experiments.reports import (
        build_report,
        paired_table,
        report_splits,
        summary_table,
    )
    from podium.experiments.reports.report import (
        regret_table,
        report_caveats,
        saturated,
        task_table,
        top_caveats,
    )
    from podium.formats.sweep_dir import REPORT_DIR

    if out is None:
        if len(dirs) != 1:
            raise UserError("several directories: say where the report goes", hint=OUT_HINT)
        out = dirs[0] / REPORT_DIR
    report = build_report(dirs, out, baseline, allow_mixed_budgets)
    # A terminal's own width; in a pipe, the width the tables are made to fit.
    console = Console(highlight=False, width=None if sys.stdout.isatty() else PIPE_WIDTH)
    for caveat in top_caveats(report):
        console.print(f"[bold]CAVEAT:[/bold] {escape(caveat)}")
    tables = [summary_table(report, split) for split in report_splits(report)]
    per_task = task_table(report)
    if per_task is not None:
        # Saturated medal rates separate nothing: the scores and percentiles lead.
        tables = [per_task, *tables] if saturated(report) else [*tables, per_task]
    for table in [*tables, paired_table(report), regret_table(report)]:
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
