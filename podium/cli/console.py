"""The CLI's one console: where every command prints, and how.

Every command module imports this module and the library below it, never :mod:`podium.cli.app`
(which only assembles the commands), so the CLI has no import circle. What is printed here was
often written by a model or by the code it wrote: it goes out as text, never as rich markup
(``escape``), with secrets masked (:func:`podium.redact.redact`) and terminal control sequences
shown or dropped (:func:`visible`, :func:`terminal_text`), never sent to the terminal.
"""

from __future__ import annotations

import logging
import math
import re
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from rich.console import Console
from rich.markup import escape
from rich.text import Text

from podium.redact import redact
from podium.untrusted import ESCAPE_SEQUENCE, SGR, strip_ansi

if TYPE_CHECKING:  # for the types only: every command imports this module at its start
    from podium.api.runs import RunStart
    from podium.interfaces import RunInfo
    from podium.records import GradeReport, Node

out = Console(highlight=False, soft_wrap=True)
err = Console(stderr=True, highlight=False, soft_wrap=True)

PIPE_WIDTH = 250  # in a pipe: wide enough that tree lines stay whole
EXIT_INTERRUPTED = 130
STOP_REASONS = {
    "steps": "step budget spent",
    "time": "time budget spent",
    "cost": "cost budget reached",
    "exhausted": "the strategy had nothing left to try",
    "interrupted": "interrupted",
    "replayed": "every recorded answer was replayed",
    "error": "failed",
    "beyond": "the task is beyond the operator set",
    "repeated": "the same failure repeated",
}

# Any control character left after escape sequences are removed, and the bidi overrides that
# make code read differently than it runs.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


class LineHandler(logging.Handler):
    """Log records as ``warning: message`` lines on stderr, like the CLI's own errors."""

    def emit(self, record: logging.LogRecord) -> None:
        err.print(f"{record.levelname.lower()}: {escape(redact(record.getMessage()))}")


def print_error(message: str, hint: str | None = None) -> None:
    """A failure as the CLI reports every one: an ``error:`` line and a ``hint:`` line."""
    err.print(f"error: {escape(redact(message))}")
    if hint:
        err.print(f"hint: {escape(redact(hint))}")


def wide_console() -> Console:
    """The terminal's own width; in a pipe, wide plain text (no colours, no cut lines)."""
    width = None if sys.stdout.isatty() else PIPE_WIDTH
    return Console(highlight=False, soft_wrap=True, width=width)


def print_columns(rows: Sequence[Sequence[str]]) -> None:
    """Plain aligned columns (last one free): readable in a terminal, greppable in a pipe."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)]
    for row in rows:
        cells = [cell.ljust(width) for cell, width in zip(row, widths, strict=False)]
        out.print(escape("  ".join([*cells, row[-1]])), overflow="ignore", crop=False)


def print_grade(report: GradeReport) -> None:
    if report.valid_submission and report.score is not None and math.isnan(report.score):
        out.print(
            "score: nan on the private answers (the grader returned NaN; MLE-bench counts the "
            "submission as valid): no medal"
        )
    elif report.valid_submission and report.score is not None:
        verdict = medal_text(report.medal)
        if not report.medal:
            verdict += ", above the median" if report.above_median else ", below the median"
        out.print(f"score: {report.score:.6g} on the private answers: {verdict}")
    else:
        out.print(f"score: none, invalid submission: {escape(report.error or '?')}")
    cmp = "<=" if report.is_lower_better else ">="
    out.print(
        f"       thresholds: gold {cmp} {report.gold_threshold:.6g}, silver {cmp} "
        f"{report.silver_threshold:.6g}, bronze {cmp} {report.bronze_threshold:.6g}, "
        f"median {report.median_threshold:.6g}"
    )
    if report.sandboxed is False:
        out.print("       not clean-track: the solutions ran without a sandbox (sandboxed: false)")
    if report.isolation_gaps:
        gaps = "; ".join(report.isolation_gaps)
        out.print(f"       less isolated: {escape(gaps)} (isolation_gaps)")


def medal_text(medal: str | None) -> str:
    """``gold medal`` or ``no medal``: how every command names a grade's medal."""
    return f"{medal} medal" if medal else "no medal"


def print_node(node: Node) -> None:
    parent = ",".join(map(str, node.parent_ids)) or "-"
    if node.is_buggy:
        result = f"buggy: {node.bug_reason or ''}"
    else:
        result = f"{node.metric.value:.6g}" if node.metric else "?"
    result = " ".join(result.split())
    result = result if len(result) <= 50 else result[:47] + "..."
    out.print(
        f"{node.step:>4}  {node.id:>4}  {node.operator:<8}  {parent:<7}  "
        f"{escape(result):<50}  {node.timings.total_s:.1f}s"
    )


def print_start(run: RunInfo, start: RunStart) -> None:
    out.print(f"run dir  {run.run_dir}")
    out.print(
        f"task     {run.task_id} ({'lower' if start.lower_is_better else 'higher'} "
        f"is better)   model {run.model}   strategy {run.strategy}"
    )
    out.print(f"sandbox  {start.sandbox_detail}")
    out.print(f"watch    podium view {escape(str(run.run_dir))}   (the search graph, live)")
    if start.sandbox_notice:
        err.print(f"warning: {start.sandbox_notice}")
    for gap in start.isolation_gaps:
        err.print(f"warning: LESS ISOLATED: {escape(gap)} (recorded as isolation_gaps)")
    if not start.sandboxed:
        what = (
            "leaves isolation to the container"
            if start.sandbox == "container"
            else ("isolates nothing")
        )
        err.print(
            f"warning: sandbox {start.sandbox!r} {what}; this run is stamped sandboxed: false"
        )
    if start.finished_nodes or start.interrupted_nodes:
        out.print(
            f"resuming after {start.finished_nodes} finished node(s); "
            f"{start.interrupted_nodes} interrupted node(s) will run again"
        )
    out.print(f"{'step':>4}  {'node':>4}  {'operator':<8}  {'parent':<7}  {'result':<50}  time")


def visible(text: str) -> str:
    """``text`` with every control character shown as an escape (``\\x1b``), none sent raw."""
    text = text.replace("\r\n", "\n")
    return _CONTROL.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), text)


def terminal_text(text: str, colours: bool = False) -> Text:
    """What a program printed: escape sequences dropped (``colours``: SGR ones rendered)."""
    if not colours:
        return Text(visible(strip_ansi(text)))
    kept = ESCAPE_SEQUENCE.sub(lambda m: m.group() if SGR.fullmatch(m.group()) else "", text)
    parts, codes = SGR.split(kept), [*SGR.findall(kept), ""]
    return Text.from_ansi(
        "".join(visible(part) + code for part, code in zip(parts, codes, strict=True))
    )


def duration(seconds: float) -> str:
    """``0.42s``, ``12.3s``, ``4m05s``, ``2h07m``: a time as a person reads it."""
    if seconds < 10:
        return f"{seconds:.2f}s"
    if seconds < 60:
        return f"{seconds:.1f}s"
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes}m{rest:02d}s" if minutes < 60 else f"{minutes // 60}h{minutes % 60:02d}m"
