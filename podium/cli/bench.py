"""``podium bench``: run a grid of tasks × strategies × models × seeds, and continue it."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.live import Live
from rich.markup import escape

from podium.cli.checks import new_directory
from podium.cli.console import EXIT_INTERRUPTED, err, out
from podium.cli.options import (
    PRESET_HELP,
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
    from podium.experiments.sweeps import Executor, Sweep
    from podium.formats import RunEntry

Strategies = Annotated[
    str, typer.Option("--strategies", help="Comma list: greedy,mcts,evolutionary.")
]
Models = Annotated[
    str, typer.Option("--models", help="Comma list of models: baseline,openai/gpt-4.1.")
]


def bench(
    tasks: Annotated[
        str | None,
        typer.Option(help="A benchmark (mini), benchmark:split (mlebench:low), or a comma list."),
    ] = None,
    strategies: Strategies = "greedy",
    models: Models = "baseline",
    seeds: Annotated[
        str, typer.Option(help="A count (3 = seeds 0,1,2), a list 0,5 or a range 2-4.")
    ] = "1",
    out_dir: Annotated[
        Path | None, typer.Option("--out", help="The sweep directory (new).")
    ] = None,
    resume: Annotated[
        Path | None, typer.Option(help="Continue this sweep: finished runs are kept.")
    ] = None,
    retry_failed: Annotated[
        bool, typer.Option(help="With --resume: run failed runs again.")
    ] = False,
    executor: Annotated[str, typer.Option(help="local (processes here) or ray.")] = "local",
    parallel: Annotated[
        int | None, typer.Option(min=1, help="Runs at once (default: CPUs / cpus per run).")
    ] = None,
    cpus_per_run: Annotated[
        float | None, typer.Option(min=0.1, help="CPUs each run needs (default: its --workers).")
    ] = None,
    gpus_per_run: Annotated[
        int, typer.Option(min=0, help="GPUs pinned to each run (CUDA_VISIBLE_DEVICES).")
    ] = 0,
    address: Annotated[
        str | None, typer.Option(help="Ray cluster: ray://head:10001, auto.")
    ] = None,
    allow_unsandboxed: Annotated[
        bool, typer.Option(help="Run even where the code would not be sandboxed (not clean-track).")
    ] = False,
    report: Annotated[bool, typer.Option(help="Write SWEEP/report when the sweep ends.")] = True,
    steps: Steps = None,
    time_budget: TimeBudget = None,
    cost: Cost = None,
    timeout: Annotated[str | None, typer.Option(help="Per-node execution limit.")] = None,
    workers: Annotated[
        int | None, typer.Option(help="Nodes each run expands concurrently.")
    ] = None,
    sandbox: Annotated[str | None, typer.Option(help="Sandbox plugin.")] = None,
    data_dir: DataDir = None,
    obfuscated_description: Annotated[
        bool, typer.Option(help="Show the agents the obfuscated descriptions (MLE-bench).")
    ] = False,
    preset: Annotated[str | None, typer.Option(help=PRESET_HELP)] = None,
    config: ConfigFile = None,
    overrides: Overrides = None,
    plugins: Plugins = None,
) -> None:
    """Run a sweep: every task × strategy × model × seed, a few runs at a time."""
    from podium.api import sweep as sw
    from podium.formats import describe_grid, parse_list, parse_seeds

    run_options: dict[str, Any] = {
        "budget.steps": steps, "budget.time": time_budget, "budget.cost": cost,
        "exec.timeout": timeout, "workers": workers, "sandbox.name": sandbox,
        "data_dir": data_dir, "preset": preset,
        "obfuscated_description": obfuscated_description or None,
    }  # fmt: skip
    run_options = {k: v for k, v in run_options.items() if v is not None}
    ex = sw.ExecutorRequest(executor, parallel, cpus_per_run, gpus_per_run, address)
    if resume is not None:
        given = [*run_options, *(["-o"] if overrides else []), *(["--tasks"] if tasks else [])]
        if given or out_dir is not None or config is not None:
            raise UserError(
                "--resume continues a sweep as it was planned; its grid and run options are fixed",
                hint="drop the run options, or start a new sweep with --out",
            )
        sweep = sw.open_sweep(resume)
        gpus = int(sweep.manifest.executor.get("gpus_per_run", 0))
        ex = sw.ExecutorRequest(executor, parallel, cpus_per_run, gpus, address)
        ex_obj = sw.make_executor(ex, sw.planned_workers(sweep))
    else:
        if tasks is None or out_dir is None:
            raise UserError(
                "a new sweep needs --tasks and --out", hint="or continue one: --resume DIR"
            )
        new_directory(out_dir, "--out", hint="--out names a new sweep directory (podium makes it)")
        request = sw.SweepRequest(
            tasks, parse_list("--strategies", strategies), parse_list("--models", models),
            parse_seeds(seeds), run_options, overrides or [], config, plugins or [],
            allow_unsandboxed,
        )  # fmt: skip
        planned = sw.plan(out_dir, request, ex)
        ex_obj = sw.make_executor(ex, planned.workers)  # its errors come before any file
        sweep = sw.create(planned, ex)
    m = sweep.manifest
    out.print(f"sweep    {sweep.root}   {describe_grid(m.grid)}")
    out.print(f"executor {_describe(ex_obj.describe())}")
    completed = _run_with_progress(sweep, ex_obj, retry_failed)
    _finish(sweep, completed, report)


def _describe(info: dict[str, object]) -> str:
    shown = ", ".join(f"{k} {v}" for k, v in info.items() if k != "name" and v is not None)
    return f"{info['name']}: {shown}"


def _run_with_progress(sweep: Sweep, executor: Executor, retry_failed: bool) -> bool:
    from podium.api import sweep as sw
    from podium.cli import sweep_worker
    from podium.experiments.sweeps import event_line, grid_table

    m, worker = sweep.manifest, sweep_worker.__name__  # the program that runs each run
    if not out.is_terminal:

        def on_event(kind: str, entry: RunEntry) -> None:
            out.print(escape(event_line(kind, entry, m)))

        return sw.execute(sweep, executor, worker, on_event, retry_failed)
    with Live(grid_table(m), console=out, refresh_per_second=2, transient=False) as live:

        def on_live_event(kind: str, entry: RunEntry) -> None:
            live.console.print(escape(event_line(kind, entry, m)))
            live.update(grid_table(m))

        return sw.execute(sweep, executor, worker, on_live_event, retry_failed)


def _finish(sweep: Sweep, completed: bool, report: bool) -> None:
    from podium.experiments.sweeps import grid_table
    from podium.formats import RunState

    m = sweep.manifest
    if not out.is_terminal:  # on a terminal the live grid stays on screen
        out.print(grid_table(m))
    failed = [e for e in m.runs if e.state is RunState.FAILED]
    for entry in failed[:10]:
        log = sweep.root / entry.path / "run.log"
        err.print(f"failed: {entry.id}: {escape(entry.error or '?')} (log: {log})")
    if report and any(e.state is RunState.FINISHED for e in m.runs):
        _write_report(sweep.root)
    if not completed:
        out.print(f"interrupted; continue with: podium bench --resume {sweep.root}")
        raise typer.Exit(EXIT_INTERRUPTED)
    if failed:
        again = f"podium bench --resume {sweep.root} --retry-failed"
        out.print(f"{len(failed)} run(s) failed; run them again: {again}")
        raise typer.Exit(1)


def _write_report(root: Path) -> None:
    """The sweep's report, into a folder no earlier comparison is in (:func:`report_dir`). A
    report that cannot be made (runs of mixed budgets, say) is said in one line with the
    command that makes it; the sweep itself has still run."""
    started = time.monotonic()
    from podium.experiments.reports import build_report

    target = report_dir(root)
    try:
        build_report([root], target)
    except UserError as exc:
        err.print(f"report not written: {escape(exc.message)}")
        if exc.hint:
            err.print(f"hint: {escape(exc.hint)} (podium compare {root})")
        return
    out.print(f"report   {target}/summary.md ({time.monotonic() - started:.1f}s)")
    sys.stdout.flush()


def report_dir(root: Path) -> Path:
    """Where the sweep's report goes: ``SWEEP/report`` when it does not exist or is empty,
    else the first free ``SWEEP/report-2``, ``report-3``, ... An existing folder may hold an
    earlier comparison (``podium compare SWEEP --baseline ...`` writes there by default) or
    files a user put there: ``podium bench --resume`` never replaces or deletes them."""
    from podium.formats.sweep_dir import REPORT_DIR

    target, n = root / REPORT_DIR, 1
    while target.exists() and (not target.is_dir() or any(target.iterdir())):
        n += 1
        target = root / f"{REPORT_DIR}-{n}"
    return target
