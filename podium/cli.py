"""The ``podium`` command line. Every user error is one line (plus a hint), never a traceback."""

from __future__ import annotations

import functools
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
from podium import cli_checks as checks
from podium.cli_help import ChoicesCommand, with_default
from podium.config import PRESETS, RunConfig
from podium.errors import UserError
from podium.interfaces import RunInfo
from podium.records import GradeReport, Node
from podium.redact import redact
from podium.scaffolds import Search

try:  # recent typer carries its own copy of click, and raises its errors
    from typer._click.exceptions import ClickException, NoArgsIsHelpError, UsageError
except ImportError:  # pragma: no cover - older typer runs on click itself
    from click.exceptions import (  # type: ignore[assignment]
        ClickException,
        NoArgsIsHelpError,
        UsageError,
    )

# Full sentences in command lists and option help: click's 80-column cap cuts a command's
# description at ~45 characters, mid-sentence.
CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}

app = typer.Typer(
    name="podium",
    help="Build and evaluate ML-engineering agents on Kaggle-style competitions.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings=CONTEXT,
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
    "replayed": "every recorded answer was replayed",
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

PRESET_HELP = f"Config preset. Choices: {', '.join(PRESETS)}.  [default: none]"
SCRIPTED_HINT = "one JSON answer per line, e.g. from: podium calls export RUN_DIR > FILE"
DATA_DIR_HINT = "--data-dir is a directory (made on first use); leave it out for the default"


class _LineHandler(logging.Handler):
    """Log records as ``warning: message`` lines on stderr, like the CLI's own errors."""

    def emit(self, record: logging.LogRecord) -> None:
        err.print(f"{record.levelname.lower()}: {escape(redact(record.getMessage()))}")


def _print_version(value: bool) -> None:
    if value:
        out.print(f"podium {__version__}")
        raise typer.Exit()


@app.callback()
def _main(
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="More log output.")] = False,
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_print_version, is_eager=True, help="Print the version and exit."
        ),
    ] = False,
) -> None:
    logging.basicConfig(
        level=logging.INFO if verbose else logging.WARNING, handlers=[_LineHandler()], force=True
    )


@app.command(cls=ChoicesCommand, short_help="Search for a solution to one task (start here).")
def run(
    task: Annotated[str, typer.Argument(help="benchmark/id, or a task folder (MLE-bench layout).")],
    model: Annotated[
        str | None,
        typer.Option(help=with_default("Code model: provider/model.", "model.name")),
    ] = None,
    review_model: Annotated[
        str | None, typer.Option(help="Review model: provider/model.  [default: --model]")
    ] = None,
    base_url: Annotated[
        str | None, typer.Option(help="An OpenAI-compatible server: http://localhost:8000/v1.")
    ] = None,
    replay: Annotated[
        Path | None,
        typer.Option(help="Answer model calls from this run dir's record (or exported JSONL)."),
    ] = None,
    replay_miss: Annotated[
        str | None,
        typer.Option(
            help=with_default("A request the record lacks: error or live.", "model.replay_miss")
        ),
    ] = None,
    strategy: Annotated[
        str | None, typer.Option(help=with_default("Search strategy.", "search.strategy"))
    ] = None,
    steps: Annotated[
        int | None,
        typer.Option(help=with_default("Stop after this many finished nodes.", "budget.steps")),
    ] = None,
    time: Annotated[
        str | None,
        typer.Option(
            "--time",
            help=with_default("Wall-clock budget: 90m, 2h...", "budget.time", none="no limit"),
        ),
    ] = None,
    cost: Annotated[
        float | None,
        typer.Option(
            help=with_default("Stop before spending this many USD.", "budget.cost", none="no limit")
        ),
    ] = None,
    timeout: Annotated[
        str | None,
        typer.Option(help=with_default("Per-node execution limit: 90s, 30m...", "exec.timeout")),
    ] = None,
    workers: Annotated[
        int | None, typer.Option(help=with_default("Nodes expanded concurrently.", "workers"))
    ] = None,
    seed: Annotated[
        int | None, typer.Option(help=with_default("Seed of the run's RNG.", "seed"))
    ] = None,
    sandbox: Annotated[
        str | None, typer.Option(help=with_default("Sandbox plugin.", "sandbox.name"))
    ] = None,
    out_dir: Annotated[
        Path | None,
        typer.Option("--out", help="Run directory (new).  [default: runs/<date>-<task>]"),
    ] = None,
    data_dir: DataDir = None,
    obfuscated_description: Annotated[
        bool, typer.Option(help="Show the agent the obfuscated description (MLE-bench).")
    ] = False,
    keep_working: Annotated[bool, typer.Option(help="Keep each node's working/ dir.")] = False,
    preset: Annotated[str | None, typer.Option(help=PRESET_HELP)] = None,
    config: ConfigFile = None,
    overrides: Overrides = None,
    plugins: Plugins = None,
) -> None:
    """Search for a solution to one task.

    Flags override the config file (-c), which overrides the preset; -o KEY=VALUE overrides
    them all. Prints a row per finished node, then the best node and its grade.
    """
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
    if not task.strip():  # Path("") is the current directory: never take it for a task folder
        raise UserError(
            "no task given", hint="give <benchmark>/<task id> (podium tasks lists them) or a folder"
        )
    cfg = load_config(config, overrides or [], {k: v for k, v in flags.items() if v is not None})
    check_run_inputs(cfg)
    result = api.run(cfg, on_node=print_node, on_start=print_start)
    _finish(result)


def check_run_inputs(cfg: RunConfig) -> None:
    """The paths a run's config names, checked before anything starts (the names, the task
    and the model's endpoint are checked by :func:`podium.api.run` next, before any file)."""
    checks.new_directory(
        cfg.out,
        "--out",
        hint="--out names a new run directory (podium makes it); continue a run with podium resume",
    )
    if cfg.out is not None and (cfg.out / "journal.sqlite").exists():
        raise UserError(
            f"{cfg.out} already holds a run", hint=f"continue it with: podium resume {cfg.out}"
        )
    checks.optional_directory(cfg.data_dir, "--data-dir", DATA_DIR_HINT)
    _check_model_files(cfg)


def _check_model_files(cfg: RunConfig) -> None:
    """A ``scripted:`` file and a ``--replay`` source are there and are text (or a run dir):
    their readers would otherwise fail on a binary file with a traceback."""
    for name in dict.fromkeys([cfg.model.name, cfg.model.review]):
        if name and name.startswith("scripted:"):
            path = Path(name.removeprefix("scripted:")).expanduser()
            checks.text_file(path, "scripted model file", SCRIPTED_HINT)
    if cfg.model.replay is None:
        return
    replay = Path(cfg.model.replay).expanduser()
    if replay.is_dir():
        checks.run_dir(replay, need=checks.JOURNAL_ONLY)
    else:
        hint = "give a run directory, or a file of: podium calls export RUN_DIR"
        checks.text_file(replay, "--replay", hint)


@app.command(short_help="Continue a stopped, killed or crashed run (budgets may be raised).")
def resume(
    run_dir: Annotated[Path, typer.Argument(help="The run directory to continue.")],
    steps: Steps = None,
    time: TimeBudget = None,
    cost: Cost = None,
) -> None:
    """Continue a run that was stopped, killed or crashed (budgets may be raised)."""
    from podium import api

    checks.run_dir(run_dir)
    changes = {"budget.steps": steps, "budget.time": time, "budget.cost": cost}
    result = api.resume(
        run_dir,
        {k: v for k, v in changes.items() if v is not None},
        on_node=print_node,
        on_start=print_start,
    )
    _finish(result)


@app.command(short_help="Grade a submission on the private answers, as MLE-bench grades.")
def grade(
    task: Annotated[str, typer.Argument(help="benchmark/id, or a task folder.")],
    submission: Annotated[Path, typer.Argument(help="The submission CSV to grade.")],
    data_dir: DataDir = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
    plugins: Plugins = None,
) -> None:
    """Grade a submission on the private answers, exactly as MLE-bench grades.

    Exit 0 for a valid submission (whatever its score), 1 for an invalid one (the report says
    why), 2 when it cannot be graded at all (an unknown task; no such file, except with --json,
    which reports it as MLE-bench does: submission_exists false).
    """
    from podium.api import load_registry
    from podium.benchmarks import resolve_task

    if not as_json:  # --json: MLE-bench's report, a missing submission's too (exit 1)
        checks.submission_file(submission)
    checks.optional_directory(data_dir, "--data-dir", DATA_DIR_HINT)
    loaded = resolve_task(task, load_registry(plugins or []), data_dir)
    try:  # your own file: links in its path followed
        path = submission.resolve()
    except (OSError, RuntimeError) as exc:  # a loop of links, a name too long
        raise UserError(
            f"cannot follow the path {submission}: {exc}", hint="give the submission's real path"
        ) from None
    report = loaded.grade(path)
    if report is None:
        raise UserError(
            f"task {loaded.id} cannot be graded (no private answers or leaderboard)",
            hint="grading needs a task with private answers: a benchmark task, or a task "
            "folder with grade.py and leaderboard.csv",
        )
    if as_json:  # as grade.json holds it: a NaN score stays NaN (as in MLE-bench's reports)
        out.print_json(data=report.model_dump(mode="json"))
    else:
        print_grade(report)
    if not report.valid_submission:
        raise typer.Exit(1)


@app.command(cls=ChoicesCommand, short_help="List a benchmark's tasks, with their metrics.")
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

    checks.optional_directory(data_dir, "--data-dir", DATA_DIR_HINT)
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


@app.command(short_help="List every plugin's backends, strategies, sandboxes and benchmarks.")
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

    app.add_typer(
        sandbox_app, name="sandbox", short_help="Check the sandbox here; run one file in it."
    )
    app.add_typer(models_app, name="models", short_help="Check that a model answers.")
    app.add_typer(
        calls_app, name="calls", short_help="List or export a run's recorded model calls."
    )
    app.add_typer(export_app, name="export", short_help="Export runs for other tools (MLE-bench).")
    app.command(
        cls=ChoicesCommand, short_help="Run a sweep of tasks × strategies × models × seeds."
    )(bench)
    app.command(short_help="Compare sweeps: a table, plots and a disclosure card.")(compare)
    app.command(short_help="Open a run in the browser (live), or export it as HTML.")(view)
    app.command(short_help="Show a run's search tree, or one node in full.")(show)
    app.command(short_help="Re-run a node's code and compare it with the record.")(rerun)


_add_subcommands()


@app.command(short_help="Print Podium's version (as podium --version).")
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


def run_cli(argv: Sequence[str] | None = None) -> int:
    """Run the command line on ``argv`` (default: ``sys.argv[1:]``); return the exit status.

    Every error a user can cause is printed as one ``error:`` line and a ``hint:`` line on
    stderr: Podium's own (:class:`UserError`, exit 2 unless it says otherwise) and the command
    line's (a mistyped option, a missing argument: exit 2). Anything else is a bug and keeps
    its traceback.
    """
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        status = _command().main(args=args, prog_name="podium", standalone_mode=False)
    except UserError as exc:
        _print_error(exc.message, exc.hint or _help_hint(args))
        return exc.exit_code
    except NoArgsIsHelpError as exc:  # `podium`, `podium models`: the help
        exc.show()
        return exc.exit_code
    except UsageError as exc:
        command = exc.ctx.command_path if exc.ctx else "podium"
        _print_error(_sentence(exc.format_message()), f"see: {command} --help")
        return exc.exit_code
    except ClickException as exc:
        _print_error(_sentence(exc.format_message()), "see: podium --help")
        return exc.exit_code
    except (KeyboardInterrupt, typer.Abort):
        err.print("interrupted")
        return EXIT_INTERRUPTED
    return status if isinstance(status, int) else 0


@functools.cache
def _command() -> Any:
    """The click command typer builds from ``app`` (once: building it reads every signature)."""
    return typer.main.get_command(app)


def _help_hint(args: Sequence[str]) -> str:
    """``see: podium run --help``: the help of the command ``args`` name, for an error that
    has no hint of its own."""
    command: Any = _command()
    path = ["podium"]
    for token in args:
        commands = getattr(command, "commands", None)
        if not commands or token not in commands:
            break
        command = commands[token]
        path.append(token)
    return f"see: {' '.join(path)} --help"


def _print_error(message: str, hint: str | None) -> None:
    err.print(f"error: {escape(redact(message))}")
    if hint:
        err.print(f"hint: {escape(redact(hint))}")


def _sentence(text: str) -> str:
    """click's messages ("No such option: --stepz\nDid you mean --steps?") as one line in
    Podium's style (lower case first, like every other error line)."""
    line = "; ".join(part.strip() for part in text.splitlines() if part.strip())
    line = line.removesuffix(".")
    if len(line) > 1 and line[0].isupper() and line[1].islower():
        line = line[0].lower() + line[1:]
    return line


def main() -> None:
    sys.exit(run_cli())
