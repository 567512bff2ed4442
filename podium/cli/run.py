"""``podium run`` and ``podium resume``: one search, started or continued, printed as it goes."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape

from podium.cli import checks
from podium.cli.console import (
    EXIT_INTERRUPTED,
    STOP_REASONS,
    out,
    print_error,
    print_grade,
    print_node,
    print_start,
)
from podium.cli.help import with_default
from podium.cli.options import (
    DATA_DIR_HINT,
    PRESET_HELP,
    SCRIPTED_HINT,
    ConfigFile,
    Cost,
    DataDir,
    Overrides,
    Plugins,
    Steps,
    TimeBudget,
)
from podium.errors import UserError

if TYPE_CHECKING:
    from podium.api import RunResult
    from podium.api.config import RunConfig
    from podium.formats import SummaryUsage


def run(
    task: Annotated[str, typer.Argument(help="benchmark/id, or a task folder (MLE-bench layout).")],
    model: Annotated[
        str | None,
        typer.Option(help=with_default("Code model: provider/model.", "model.name")),
    ] = None,
    review_model: Annotated[
        str | None, typer.Option(help="Review model: provider/model.  [default: --model]")
    ] = None,
    plan_model: Annotated[
        str | None,
        typer.Option(help="Planning model (with -o search.planning=separate).  [default: --model]"),
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
    from podium.api import runs as api
    from podium.api.config import load_config

    flags: dict[str, Any] = {
        "task": task, "model.name": model, "model.review": review_model,
        "model.plan": plan_model,
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
    and the model's endpoint are checked by :func:`podium.api.runs.run` next, before any file)."""
    from podium.formats import RunDir

    checks.new_directory(
        cfg.out,
        "--out",
        hint="--out names a new run directory (podium makes it); continue a run with podium resume",
    )
    if cfg.out is not None and RunDir(cfg.out).journal.exists():
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
        checks.run_dir(replay, journal_only=True)
    else:
        hint = "give a run directory, or a file of: podium calls export RUN_DIR"
        checks.text_file(replay, "--replay", hint)


def resume(
    run_dir: Annotated[Path, typer.Argument(help="The run directory to continue.")],
    steps: Steps = None,
    time: TimeBudget = None,
    cost: Cost = None,
) -> None:
    """Continue a run that was stopped, killed or crashed (budgets may be raised)."""
    from podium.api import runs as api

    checks.run_dir(run_dir)
    changes = {"budget.steps": steps, "budget.time": time, "budget.cost": cost}
    result = api.resume(
        run_dir,
        {k: v for k, v in changes.items() if v is not None},
        on_node=print_node,
        on_start=print_start,
    )
    _finish(result)


def _finish(result: RunResult) -> None:
    from podium.formats import RunDir
    from podium.records import Direction

    s = result.record
    why = STOP_REASONS.get(s.stop_reason or "", s.stop_reason or "?")
    out.print(
        f"stopped: {why} — {s.steps} step{'' if s.steps == 1 else 's'}, {s.buggy_nodes} buggy, "
        f"{s.elapsed_s or 0.0:.1f}s{_spent(s.usage)}"
    )
    failed = s.status == "failed"
    if s.stop_detail and not (failed and s.error):
        out.print(f"         {escape(s.stop_detail)}")
    if s.error:  # a failed run's detail is what to do about it: its hint
        print_error(s.error, s.stop_detail if failed else None)
    if s.best_node is None or s.best_metric is None:
        out.print("best: no good node yet")
    else:
        direction = Direction.of(bool(s.lower_is_better))
        out.print(f"best: node {s.best_node}, validation metric {s.best_metric:.6g} ({direction})")
        if s.holdout is not None:
            held = "none" if s.best_held_out is None else f"{s.best_held_out:.6g}"
            out.print(f"      chosen on the host's held-out labels ({s.holdout.get('rows')} "
                      f"training rows kept from the agent): {held}")  # fmt: skip
        out.print(f"      {RunDir(result.run_dir).best}")
    if result.grade is not None:
        print_grade(result.grade)
    if s.status == "interrupted":
        out.print(f"continue with: podium resume {result.run_dir}")
        raise typer.Exit(EXIT_INTERRUPTED)
    if s.status == "failed":
        raise typer.Exit(1)


def _spent(usage: SummaryUsage | None) -> str:
    if usage is None or not usage.calls:
        return ""
    tokens = usage.input_tokens + usage.output_tokens
    replayed = usage.replayed.calls if usage.replayed else 0
    calls = f"{usage.calls} model calls" + (f" ({replayed} replayed)" if replayed else "")
    return f", {calls}, {tokens:,} tokens, ${usage.cost_usd:.4f}"
