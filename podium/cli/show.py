"""``podium show``: a run's search tree, or one node in full.

It reads a run through :func:`podium.viewer.run_data.open_run`, so it works on a live run too.

Everything a run holds (plans, code, outputs, tracebacks, prompts, answers) was written by a
model or by the code it wrote: it is printed as text, never as rich markup, and terminal
control sequences in it are shown (``\\x1b``) or dropped, never sent to the terminal. In a
pipe the output is plain, wide text.

A failing node's traceback is shown as :func:`podium.tracebacks.render_text` reads it (the
error, the solution's frames, the library's folded), and once: the copy the kernel also wrote at
the end of the output is left out of the output. ``--diff`` shows what a node changed from its
parent(s) (:mod:`podium.code_diff`), unified or ``--side-by-side``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from podium.cli import checks
from podium.cli.console import wide_console
from podium.errors import UserError

DEFAULT_OUTPUT_LINES = 200
CELL_OUTPUT_LINES = 40  # an agentic node's cell: its output's last lines, at most


# --- podium show ---------------------------------------------------------------------------


def show(
    run_dir: Annotated[Path, typer.Argument(help="A run directory.")],
    node: Annotated[int | None, typer.Argument(help="A node id: show that node in full.")] = None,
    buggy: Annotated[
        bool, typer.Option("--buggy", help="List only the buggy nodes, each with its full reason.")
    ] = False,
    messages: Annotated[
        bool,
        typer.Option("--messages", help="With NODE: every message sent and answer received."),
    ] = False,
    output_lines: Annotated[
        int,
        typer.Option(
            help="With NODE: the output's last N lines (0: all); an agentic node's cells: "
            f"each at most {CELL_OUTPUT_LINES}, unless 0.",
            min=0,
        ),
    ] = DEFAULT_OUTPUT_LINES,
    follow: Annotated[
        bool,
        typer.Option(
            "--follow", "-f", help="With NODE: print its output as it comes, until it finishes."
        ),
    ] = False,
    diff: Annotated[
        bool, typer.Option("--diff", help="With NODE: its code against its parent's (each's).")
    ] = False,
    side_by_side_view: Annotated[
        bool,
        typer.Option("--side-by-side", help="With NODE: the diff side by side (implies --diff)."),
    ] = False,
) -> None:
    """Show a run's search tree, or one node in full.

    NODE in full: plan, code, output, error, usage, timings and model calls. A node still
    running shows its output so far; --follow then prints the rest as it comes and its end.
    """
    if node is not None and buggy:
        raise UserError(
            "--buggy lists a run's buggy nodes: give it without NODE",
            hint=f"podium show {run_dir} --buggy, or podium show {run_dir} {node}",
        )
    if node is None and messages:
        raise UserError("--messages shows one node's model calls", hint="give a NODE id with it")
    if node is None and follow:
        raise UserError("--follow prints one node's output as it comes", hint="give a NODE id")
    diff = diff or side_by_side_view
    from podium.cli import show_text
    from podium.viewer.run_data import open_run

    show_text.check_diff_options(run_dir, node, diff, messages or follow)
    view = open_run(checks.run_dir(run_dir, journal_only=True))
    console = wide_console()
    if node is not None and diff:
        show_text.show_diffs(console, view, view.node(node), side_by_side_view)
    elif node is not None:
        shown = view.node(node)
        live = show_text.show_node(console, view, shown, messages, output_lines, CELL_OUTPUT_LINES)
        if follow and live is not None:
            show_text.follow(console, view.root, shown.id, live)
    elif buggy:
        show_text.show_buggy(console, view)
    else:
        show_text.show_header(view)
        console.print(show_text.tree(view))
        if view.status in ("stopped", "interrupted"):
            console.print(f"continue with: podium resume {escape(str(view.root))}")
