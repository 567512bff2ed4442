"""``podium sandbox check`` and ``podium sandbox run``: the sandbox by hand."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape

from podium.cli import checks
from podium.cli.console import err, out
from podium.errors import ConfigError

if TYPE_CHECKING:
    from podium.interfaces import Sandbox
    from podium.records import ExecResult

sandbox_app = typer.Typer(
    help="Check what isolation works here; run one file in a sandboxed kernel.",
    no_args_is_help=True,
    rich_markup_mode=None,
)


def _options(**given: Any) -> dict[str, Any]:
    """The ``[sandbox]`` table a run would make from these options (threads sized as a run's)."""
    from podium.api.config import validate_config
    from podium.api.runs import sandbox_table

    data = {k: v for k, v in given.items() if v is not None}
    return sandbox_table(validate_config({"task": "-", "sandbox": data}))


@sandbox_app.command(
    "check", short_help="Probe bubblewrap, a kernel in it, cgroups and each limit."
)
def check(
    python: Annotated[str | None, typer.Option(help="The solutions' interpreter.")] = None,
    gpus: Annotated[str | None, typer.Option(help='"all" or "0,1".')] = None,
) -> None:
    """Probe bubblewrap, a kernel inside it, cgroups and each limit; one line each."""
    from podium.sandbox import run_checks

    lines = run_checks(_options(python=python, gpus=gpus))
    for line in lines:
        mark = "ok  " if line.ok else "--  "
        out.print(f"{mark}{line.name:<16} {escape(line.detail)}")
    usable = next(line.ok for line in lines if line.name == "bubblewrap")
    kernel = all(line.ok for line in lines if line.name == "kernel")
    verdict = "bwrap" if usable and kernel else "local (NOT isolated)"
    out.print(f"sandbox auto -> {verdict}")


@sandbox_app.command("run", short_help="Run FILE in a fresh sandboxed kernel; print what happened.")
def run_file(
    file: Annotated[Path, typer.Argument(help="Python file to run as one cell.")],
    workspace: Annotated[
        Path, typer.Option(help="Where the outputs are handed over (submission.csv, working/).")
    ],
    input_dir: Annotated[Path, typer.Option("--input", help="Public data, mounted read-only.")],
    timeout: Annotated[float, typer.Option(help="Seconds before interrupt, then kill.")] = 60.0,
    memory: Annotated[str | None, typer.Option(help="Memory limit, e.g. 4G.")] = None,
    sandbox: Annotated[str, typer.Option(help="auto, bwrap, local or container.")] = "auto",
    python: Annotated[str | None, typer.Option(help="The solutions' interpreter.")] = None,
    threads: Annotated[
        int | None,
        typer.Option(min=1, help="OpenMP/BLAS threads; default: the cores this process may use."),
    ] = None,
    keep_working: Annotated[bool, typer.Option(help="Hand working/ over too.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
) -> None:
    """Run FILE in a fresh sandboxed kernel and print what happened (exit 1 if it failed)."""
    import asyncio

    from podium.api.config import ExecSection
    from podium.api.runs import load_registry
    from podium.interfaces import Workspace
    from podium.scaffolds import execute_solution

    checks.text_file(file, "file", "give a Python file (its code runs as one cell)")
    checks.directory(input_dir, "--input", "give the folder of public data to mount read-only")
    checks.new_directory(
        workspace, "--workspace", "give a directory for the outputs (made if it is not there)"
    )
    if not timeout > 0:
        raise ConfigError(
            f"--timeout must be positive (got {timeout:g})", hint="seconds, e.g. --timeout 60"
        )
    options = _options(python=python, memory=memory, threads=threads, warm_pool=False)
    box = load_registry([]).sandbox(sandbox).create(options)
    code = file.read_text(encoding="utf-8")
    ws = Workspace(workspace.resolve(), input_dir, keep_working)
    # Run as a run's node would be: the output capped at a run's default exec.max_output_bytes,
    # secrets masked, a sandbox failure reported as a failed result.
    result = asyncio.run(
        execute_solution(
            box,
            code,
            ws,
            timeout_s=timeout,
            max_output_bytes=ExecSection().max_output_bytes,
            close_sandbox=True,
        )
    )
    _report(box, result, as_json)
    if result.failed:
        raise typer.Exit(1)


def _report(box: Sandbox, result: ExecResult, as_json: bool) -> None:

    if box.notice:
        err.print(f"warning: {escape(box.notice)}")
    if as_json:
        data = result.model_dump(mode="json")
        data.update(sandbox=box.name, sandboxed=box.isolated, isolation_gaps=box.isolation_gaps())
        out.print_json(json.dumps(data))
        return
    out.print(escape(result.output), end="")
    out.print(f"--- {box.describe()}")
    line = [f"status {result.status.value}", f"duration {result.duration_s:.2f}s",
            f"kernel start {result.kernel_start_s:.2f}s"]  # fmt: skip
    if result.peak_memory_bytes:
        line.append(f"peak memory {result.peak_memory_bytes / 2**20:.0f} MiB")
    out.print("  ".join(line))
    if result.error_name:
        out.print(f"error  {escape(result.error_name)}: {escape(result.error_value or '')}")
    if result.killed_reason:
        out.print(f"killed {escape(result.killed_reason)}")
    if result.submission_refused:
        out.print(f"submission refused: {escape(result.submission_refused)}")
