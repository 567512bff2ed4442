"""The ``podium`` command line. Every user error is one line (plus a hint), never a traceback."""

from __future__ import annotations

import logging
import math
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape

from podium import __version__
from podium.config import PRESETS
from podium.errors import UserError
from podium.interfaces import RunInfo
from podium.records import GradeReport, Node
from podium.redact import redact
from podium.scaffolds import Search

app = typer.Typer(
    name="podium",
    help="Build and evaluate ML-engineering agents on Kaggle-style competitions.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)
out = Console(highlight=False, soft_wrap=True)
err = Console(stderr=True, highlight=False, soft_wrap=True)

EXIT_INTERRUPTED = 130
STOP_REASONS = {
    "steps": "step budget spent",
    "time": "time budget spent",
    "cost": "cost budget reached",
    "exhausted": "the strategy had nothing left to try",
    "interrupted": "interrupted",
    "error": "failed",
}

ConfigFile = Annotated[Path | None, typer.Option("--config", "-c", help="TOML config file.")]
Overrides = Annotated[
    list[str] | None,
    typer.Option("--set", "-o", help="Override a config key: -o search.num_drafts=3 (repeatable)."),
]
Plugins = Annotated[
    list[str] | None,
    typer.Option("--plugin", "-p", help="Load a plugin module or .py file (repeatable)."),
]
Steps = Annotated[int | None, typer.Option(help="Stop after this many finished nodes.")]
TimeBudget = Annotated[str | None, typer.Option("--time", help="Wall-clock budget: 90m, 2h...")]
Cost = Annotated[float | None, typer.Option(help="Stop before spending this many USD.")]
DataDir = Annotated[
    Path | None,
    typer.Option(help="Where task data is (prepared). Default: the benchmark's own cache."),
]

PRESET_HELP = f"Config preset: {', '.join(PRESETS)}."


class _LineHandler(logging.Handler):
    """Log records as ``warning: message`` lines on stderr, like the CLI's own errors."""

    def emit(self, record: logging.LogRecord) -> None:
        err.print(f"{record.levelname.lower()}: {escape(redact(record.getMessage()))}")


@app.callback()
def _main(
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="More log output.")] = False,
) -> None:
    logging.basicConfig(
        level=logging.INFO if verbose else logging.WARNING, handlers=[_LineHandler()], force=True
    )


@app.command()
def run(
    task: Annotated[str, typer.Argument(help="benchmark/id, or a task folder (MLE-bench layout).")],
    model: Annotated[str | None, typer.Option(help="Code model: provider/model.")] = None,
    review_model: Annotated[
        str | None, typer.Option(help="Review model (default: --model).")
    ] = None,
    base_url: Annotated[
        str | None, typer.Option(help="An OpenAI-compatible server: http://localhost:8000/v1.")
    ] = None,
    replay: Annotated[
        Path | None,
        typer.Option(help="Answer model calls from this run dir's record (or exported JSONL)."),
    ] = None,
    replay_miss: Annotated[
        str | None, typer.Option(help="A request the record lacks: error (default) or live.")
    ] = None,
    strategy: Annotated[str | None, typer.Option(help="Search strategy.")] = None,
    steps: Steps = None,
    time: TimeBudget = None,
    cost: Cost = None,
    timeout: Annotated[str | None, typer.Option(help="Per-node execution limit.")] = None,
    workers: Annotated[int | None, typer.Option(help="Nodes expanded concurrently.")] = None,
    seed: Annotated[int | None, typer.Option(help="Seed of the run's RNG.")] = None,
    sandbox: Annotated[str | None, typer.Option(help="Sandbox plugin.")] = None,
    out_dir: Annotated[Path | None, typer.Option("--out", help="Run directory.")] = None,
    data_dir: DataDir = None,
    obfuscated_description: Annotated[
        bool, typer.Option(help="Show the agent the obfuscated description (MLE-bench).")
    ] = False,
    keep_working: Annotated[bool, typer.Option(help="Keep each node's working/ dir.")] = False,
    preset: Annotated[
        str | None,
        typer.Option(
            help="Config preset: aide, aide-mlebench, mlebench-reference, aide-mlebench-reference."
        ),
    ] = None,
    config: ConfigFile = None,
    overrides: Overrides = None,
    plugins: Plugins = None,
) -> None:
    """Search for a solution to one task."""
    from podium import api
    from podium.config import load_config

    flags: dict[str, Any] = {
        "task": task, "model.name": model, "model.review": review_model,
        "model.base_url": base_url, "model.replay": replay, "model.replay_miss": replay_miss,
        "search.strategy": strategy, "budget.steps": steps, "budget.time": time,
        "budget.cost": cost, "exec.timeout": timeout, "workers": workers, "seed": seed,
        "sandbox.name": sandbox, "out": out_dir, "data_dir": data_dir, "preset": preset,
        "obfuscated_description": obfuscated_description or None,
        "exec.keep_working": keep_working or None, "plugins": plugins or None,
    }  # fmt: skip
    cfg = load_config(config, overrides or [], {k: v for k, v in flags.items() if v is not None})
    result = api.run(cfg, on_node=print_node, on_start=print_start)
    _finish(result)


@app.command()
def resume(
    run_dir: Annotated[Path, typer.Argument(help="The run directory to continue.")],
    steps: Steps = None,
    time: TimeBudget = None,
    cost: Cost = None,
) -> None:
    """Continue a run that was stopped, killed or crashed (budgets may be raised)."""
    from podium import api

    changes = {"budget.steps": steps, "budget.time": time, "budget.cost": cost}
    result = api.resume(
        run_dir,
        {k: v for k, v in changes.items() if v is not None},
        on_node=print_node,
        on_start=print_start,
    )
    _finish(result)


@app.command()
def grade(
    task: Annotated[str, typer.Argument(help="benchmark/id, or a task folder.")],
    submission: Annotated[Path, typer.Argument(help="The submission CSV to grade.")],
    data_dir: DataDir = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
    plugins: Plugins = None,
) -> None:
    """Grade a submission on the private answers, exactly as MLE-bench grades."""
    from podium.api import load_registry
    from podium.benchmarks import resolve_task

    loaded = resolve_task(task, load_registry(plugins or []), data_dir)
    try:  # your own file: links in its path followed
        path = submission.resolve()
    except (OSError, RuntimeError) as exc:  # a loop of links, a name too long
        raise UserError(
            f"cannot follow the path {submission}: {exc}", hint="give the submission's real path"
        ) from None
    report = loaded.grade(path)
    if report is None:
        raise UserError(f"task {loaded.id} cannot be graded (no private answers or leaderboard)")
    if as_json:  # as grade.json holds it: a NaN score stays NaN (as in MLE-bench's reports)
        out.print_json(data=report.model_dump(mode="json"))
    else:
        print_grade(report)


@app.command()
def tasks(
    benchmark: Annotated[str, typer.Argument(help="A benchmark, or benchmark:split.")] = "mini",
    split: Annotated[
        str | None, typer.Option(help="Only this split (MLE-bench: low (= lite), medium, high...).")
    ] = None,
    data_dir: DataDir = None,
    plugins: Plugins = None,
) -> None:
    """List a benchmark's tasks: id, split, type, metric, direction, rows, teams, status."""
    from podium.api import load_registry

    name, _, inline_split = benchmark.partition(":")
    bench = load_registry(plugins or []).benchmark(name)
    rows = [("id", "split", "type", "metric", "direction", "rows", "teams", "status")]
    for task_id in bench.task_ids(split or inline_split or None):
        t = bench.summary(task_id, data_dir)
        direction = {True: "lower is better", False: "higher is better", None: "?"}
        rows.append((t.id, t.complexity or "-", t.task_type, t.metric,
                     direction[t.lower_is_better], str(t.rows or "?"), str(t.teams or "?"),
                     t.status))  # fmt: skip
    print_columns(rows)


@app.command()
def plugins(plugins: Plugins = None) -> None:
    """List every backend, strategy, sandbox, benchmark and operator set, and its origin."""
    from podium.api import load_registry

    print_columns(
        [("kind", "name", "origin", "description"), *load_registry(plugins or []).listing()]
    )


def _add_subcommands() -> None:
    from podium.cli_bench import bench
    from podium.cli_compare import compare
    from podium.cli_export import export_app
    from podium.cli_models import calls_app, models_app
    from podium.cli_sandbox import sandbox_app
    from podium.cli_show import rerun, show
    from podium.cli_view import view

    app.add_typer(sandbox_app, name="sandbox")
    app.add_typer(models_app, name="models")
    app.add_typer(calls_app, name="calls")
    app.add_typer(export_app, name="export")
    app.command()(bench)
    app.command()(compare)
    app.command()(view)
    app.command()(show)
    app.command()(rerun)


_add_subcommands()


@app.command()
def version() -> None:
    """Print Podium's version."""
    out.print(f"podium {__version__}")


# --- progress output -----------------------------------------------------------------------


def print_start(run: RunInfo, search: Search) -> None:
    resumed = len(search.tree)
    parts = search.parts
    out.print(f"run dir  {run.run_dir}")
    out.print(
        f"task     {run.task_id} ({'lower' if parts.task.lower_is_better else 'higher'} "
        f"is better)   model {run.model}   strategy {run.strategy}"
    )
    out.print(f"sandbox  {parts.sandbox.describe()}")
    out.print(f"watch    podium view {escape(str(run.run_dir))}   (the search graph, live)")
    if parts.sandbox.notice:
        err.print(f"warning: {parts.sandbox.notice}")
    for gap in parts.sandbox.isolation_gaps():
        err.print(f"warning: LESS ISOLATED: {escape(gap)} (recorded as isolation_gaps)")
    if not parts.sandbox.isolated:
        what = (
            "leaves isolation to the container"
            if parts.sandbox.name == "container"
            else ("isolates nothing")
        )
        err.print(
            f"warning: sandbox {parts.sandbox.name!r} {what}; this run is stamped sandboxed: false"
        )
    if resumed or search.discarded:
        out.print(
            f"resuming after {resumed} finished node(s); "
            f"{len(search.discarded)} interrupted node(s) will run again"
        )
    out.print(f"{'step':>4}  {'node':>4}  {'operator':<8}  {'parent':<7}  {'result':<50}  time")


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
        verdict = f"{report.medal} medal" if report.medal else "no medal"
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


def _finish(result: Any) -> None:
    s = result.summary
    direction = "lower is better" if s["lower_is_better"] else "higher is better"
    why = STOP_REASONS.get(s["stop_reason"], s["stop_reason"])
    out.print(
        f"stopped: {why} — {s['steps']} steps, {s['buggy_nodes']} buggy, "
        f"{s['elapsed_s']:.1f}s{_spent(s['usage'])}"
    )
    if s.get("stop_detail"):
        out.print(f"         {escape(s['stop_detail'])}")
    if s.get("error"):
        err.print(f"error: {escape(redact(s['error']))}")
    if s["best_node"] is None:
        out.print("best: no good node yet")
    else:
        out.print(
            f"best: node {s['best_node']}, validation metric {s['best_metric']:.6g} ({direction})"
        )
        out.print(f"      {result.run_dir / 'best'}")
    if result.grade is not None:
        print_grade(result.grade)
    if s["status"] == "interrupted":
        out.print(f"continue with: podium resume {result.run_dir}")
        raise typer.Exit(EXIT_INTERRUPTED)
    if s["status"] == "failed":
        raise typer.Exit(1)


def _spent(usage: dict[str, Any]) -> str:
    if not usage.get("calls"):
        return ""
    tokens = usage["input_tokens"] + usage["output_tokens"]
    replayed = usage.get("replayed", {}).get("calls", 0)
    calls = f"{usage['calls']} model calls" + (f" ({replayed} replayed)" if replayed else "")
    return f", {calls}, {tokens:,} tokens, ${usage['cost_usd']:.4f}"


def main() -> None:
    try:
        app()
    except UserError as exc:
        err.print(f"error: {escape(redact(exc.message))}")
        if exc.hint:
            err.print(f"hint: {escape(redact(exc.hint))}")
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        err.print("interrupted")
        sys.exit(EXIT_INTERRUPTED)
