"""The ``podium`` command line, assembled: the app, its global options, every command group
registered in help order, and the one place errors become lines.

Nothing imports this module but :mod:`podium.cli` (the console script): every command lives in
its own module and prints through :mod:`podium.cli.console`. Every user error is one line (plus
a hint), never a traceback.
"""

from __future__ import annotations

import functools
import logging
import sys
from collections.abc import Sequence
from typing import Annotated, Any

import typer

from podium.cli.bench import bench
from podium.cli.compare import compare
from podium.cli.console import EXIT_INTERRUPTED, LineHandler, err, out, print_error
from podium.cli.export import export_app
from podium.cli.grade import grade
from podium.cli.help import ChoicesCommand
from podium.cli.models import calls_app, models_app
from podium.cli.options import CONTEXT
from podium.cli.rerun import rerun
from podium.cli.run import resume, run
from podium.cli.sandbox import sandbox_app
from podium.cli.show import show
from podium.cli.tasks import plugins, tasks
from podium.cli.view import view
from podium.errors import UserError
from podium.versions import version_line

try:  # recent typer carries its own copy of click, and raises its errors
    from typer._click.exceptions import ClickException, NoArgsIsHelpError, UsageError
except ImportError:  # pragma: no cover - older typer runs on click itself
    from click.exceptions import (  # type: ignore[assignment]
        ClickException,
        NoArgsIsHelpError,
        UsageError,
    )

app = typer.Typer(
    name="podium",
    help="Build and evaluate ML-engineering agents on Kaggle-style competitions.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings=CONTEXT,
)


def _print_version(value: bool) -> None:
    if value:
        out.print(version_line())
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
        level=logging.INFO if verbose else logging.WARNING, handlers=[LineHandler()], force=True
    )


app.command(cls=ChoicesCommand, short_help="Search for a solution to one task (start here).")(run)
app.command(short_help="Continue a stopped, killed or crashed run (budgets may be raised).")(resume)
app.command(short_help="Grade a submission on the private answers, as MLE-bench grades.")(grade)
app.command(cls=ChoicesCommand, short_help="List a benchmark's tasks, with their metrics.")(tasks)
app.command(short_help="List every plugin's backends, strategies, sandboxes and benchmarks.")(
    plugins
)
app.add_typer(sandbox_app, name="sandbox", short_help="Check the sandbox here; run one file in it.")
app.add_typer(models_app, name="models", short_help="Check that a model answers.")
app.add_typer(calls_app, name="calls", short_help="List or export a run's recorded model calls.")
app.add_typer(export_app, name="export", short_help="Export runs for other tools (MLE-bench).")
app.command(cls=ChoicesCommand, short_help="Run a sweep of tasks × strategies × models × seeds.")(
    bench
)
app.command(short_help="Compare sweeps: a table, plots and a disclosure card.")(compare)
app.command(short_help="Open a run in the browser (live), or export it as HTML.")(view)
app.command(short_help="Show a run's search tree, or one node in full.")(show)
app.command(short_help="Re-run a node's code and compare it with the record.")(rerun)


@app.command(short_help="Print Podium's version (as podium --version).")
def version() -> None:
    """Print Podium's version."""
    out.print(version_line())


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
        print_error(exc.message, exc.hint or _help_hint(args))
        return exc.exit_code
    except NoArgsIsHelpError as exc:  # `podium`, `podium models`: the help
        exc.show()
        return exc.exit_code
    except UsageError as exc:
        command = exc.ctx.command_path if exc.ctx else "podium"
        print_error(_sentence(exc.format_message()), f"see: {command} --help")
        return exc.exit_code
    except ClickException as exc:
        print_error(_sentence(exc.format_message()), "see: podium --help")
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
