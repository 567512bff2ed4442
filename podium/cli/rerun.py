"""``podium rerun``: a node's code again in a fresh sandbox, compared with its record.

The work is :func:`podium.api.rerun.rerun_node`; this module parses the flags and prints the
report. Everything compared (outputs, errors, format-check reasons) was written by a solution:
it is printed through :func:`podium.cli.console.visible`, never as markup or raw escapes.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.text import Text

from podium.cli import checks
from podium.cli.console import duration, out, print_columns, visible, wide_console
from podium.errors import UserError
from podium.untrusted import strip_ansi

if TYPE_CHECKING:
    from podium.api.rerun import RerunReport

DEFAULT_DIFF_LINES = 60


def rerun(
    run_dir: Annotated[Path, typer.Argument(help="A run directory (finished or still running).")],
    node: Annotated[int, typer.Argument(help="The node whose code runs again.")],
    sandbox: Annotated[
        str | None, typer.Option(help="Sandbox plugin (default: the run's own).")
    ] = None,
    timeout: Annotated[
        str | None, typer.Option(help="Execution limit: 90s, 10m... (default: the run's).")
    ] = None,
    tolerance: Annotated[
        float, typer.Option(help="Relative difference under which metrics are equal.", min=0)
    ] = 1e-9,
    diff_lines: Annotated[
        int, typer.Option(help="Show at most this many lines of the output diff (0: all).", min=0)
    ] = DEFAULT_DIFF_LINES,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
) -> None:
    """Re-run a node's code in a fresh sandbox and compare with the record.

    Exit 0 when the status and metric reproduce, 1 when they differ. The rerun goes in
    RUN_DIR/nodes/NODE/reruns/N/ (with rerun.json); the journal is untouched.
    """
    from podium.api.rerun import rerun_node

    limit = _timeout(timeout)
    checks.run_dir(run_dir)
    if sandbox is not None:
        _check_sandbox(run_dir, sandbox)
    report = rerun_node(run_dir, node, sandbox, limit, tolerance)
    if as_json:
        out.print_json(report.model_dump_json())
    else:
        _print_report(wide_console(), report, diff_lines)
    if not report.reproduced:
        raise typer.Exit(1)


def _check_sandbox(run_dir: Path, name: str) -> None:
    """An unknown ``--sandbox`` is reported before the task's data is looked for."""
    from podium.api.config import read_config_file
    from podium.api.runs import load_registry
    from podium.formats import RunDir

    plugins = read_config_file(RunDir(run_dir).config).get("plugins", [])
    load_registry(plugins if isinstance(plugins, list) else []).sandbox(name)


def _timeout(text: str | None) -> float | None:
    from podium.api.config import parse_duration

    if text is None:
        return None
    hint = "a duration: 90, 90s, 10m, 1h30m (leave it out for the run's own)"
    try:
        seconds = parse_duration(text)
    except ValueError as exc:
        raise UserError(f"--timeout: {exc}", hint=hint) from None
    if not isinstance(seconds, float | int) or seconds <= 0:
        raise UserError(f"--timeout: must be positive (got {text!r})", hint=hint)
    return float(seconds)


def _print_report(console: Console, r: RerunReport, diff_lines: int) -> None:
    rows = [
        ("rerun", f"node {r.node_id} → {r.rerun_dir}"),
        ("sandbox", r.sandbox_detail + ("" if r.sandboxed else " (UNSANDBOXED)")),
        ("status", _then_now(r.status_then, r.status_now)),
    ]
    for when, error in (("then", r.error_then), ("now", r.error_now)):
        if error:
            rows.append((f"error {when}", " ".join(visible(error).split())))
    rows.append(("metric", _metric_change(r)))
    if r.metric_problem_now:
        rows.append(("", visible(r.metric_problem_now)))
    rows += [
        ("submission", _submission_change(r)),
        ("duration", _then_now(duration(r.duration_then_s), duration(r.duration_now_s))),
        ("output", "identical" if r.output_identical else "differs (diff below)"),
    ]
    print_columns(rows)
    if not r.output_identical:
        _print_diff(console, r.output_diff, diff_lines)
    if r.reproduced:
        console.print(Text("reproduced: status and metric as recorded", style="bold green"))
    else:
        console.print(Text(f"NOT reproduced: {'; '.join(r.why_not)}", style="bold red"))


def _then_now(then: str, now: str) -> str:
    return f"{then} → {now}" + ("  (same)" if then == now else "")


def _metric_change(r: RerunReport) -> str:
    then = "none" if r.metric_then is None else f"{r.metric_then:.10g}"
    now = "none" if r.metric_now is None else f"{r.metric_now:.10g}"
    if r.metric_difference is None or r.metric_difference == 0:
        return _then_now(then, now)
    text = f"{then} → {now}  (difference {r.metric_difference:+.6g}"
    if r.metric_then:
        text += f", {100 * r.metric_difference / abs(r.metric_then):+.3g}%"
    return text + ")"


def _submission_change(r: RerunReport) -> str:
    written = {True: "written", False: "none"}
    text = f"{written[r.submission_then]} → {written[r.submission_now]}"
    if r.submission_identical is not None:
        text += ", identical files" if r.submission_identical else ", the files differ"
    if r.submission_now:
        problem = r.submission_problem_now
        text += f"; format check: {visible(problem)}" if problem else "; format check passed"
    return text


def _print_diff(console: Console, diff: list[str], limit: int) -> None:
    shown = diff[:limit] if limit else diff
    for line in shown:
        style = "green" if line.startswith("+") else "red" if line.startswith("-") else ""
        style = "bold" if line.startswith(("+++", "---")) else style
        console.print(Text(visible(strip_ansi(line)), style=style))
    if len(diff) > len(shown):
        console.print(Text(f"[{len(diff) - len(shown)} more diff lines cut]", style="dim"))
