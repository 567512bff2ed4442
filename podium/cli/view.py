"""``podium view``: look at a run in the browser.

Without ``--export`` it serves a live page on 127.0.0.1 (never another interface) until
Ctrl-C; the URL line is printed (and flushed) before serving, as
``viewer: http://127.0.0.1:PORT/?token=TOKEN  (Ctrl-C to stop)``, for people and for scripts
that parse it: the page answers only requests that carry the token (another user of the machine
reaches 127.0.0.1 too; see ``podium.viewer.server``). ``--open`` hands the browser a private
redirect file (mode 0600 in a 0700 directory, removed when the viewer stops), never the URL
itself: a browser's command line is readable by every user. With ``--export FILE`` it writes
one self-contained HTML file and exits. A sweep directory is served as its grid of runs, each
opening its own page.
"""

from __future__ import annotations

import html
import os
import shutil
import sys
import tempfile
import threading
import webbrowser
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated

import typer

from podium.errors import UserError

MAX_PORT = 65535
REDIRECT = (
    '<!DOCTYPE html>\n<meta charset="utf-8">\n<meta name="referrer" content="no-referrer">\n'
    '<meta http-equiv="refresh" content="0;url={url}">\n'
    '<title>podium view</title>\n<p><a href="{url}">Open the viewer</a></p>\n'
)


def view(
    run_dir: Annotated[
        Path, typer.Argument(help="The run directory, or a sweep's (its grid of runs).")
    ],
    port: Annotated[
        int | None,
        typer.Option(help="Port on 127.0.0.1. Default: 8765, or a free one if taken; 0: any."),
    ] = None,
    open_browser: Annotated[
        bool, typer.Option("--open", help="Open the page in the default web browser.")
    ] = False,
    export: Annotated[
        Path | None,
        typer.Option("--export", metavar="FILE", help="Write one self-contained HTML file."),
    ] = None,
) -> None:
    """Open a run (or a sweep) in the browser: a live page on 127.0.0.1, or --export one HTML
    file."""
    from podium.cli.checks import is_sweep_dir
    from podium.cli.checks import run_dir as check_run_dir

    sweep = is_sweep_dir(run_dir)
    if sweep and export is not None:
        raise UserError(
            f"{run_dir} is a sweep: --export writes one run's page",
            hint=f"export one of its runs: podium view {run_dir}/runs/<id> --export FILE",
        )
    if not sweep:
        check_run_dir(run_dir, journal_only=True)
    if port is not None and not 0 <= port <= MAX_PORT:
        raise UserError(f"--port {port} is not a port", hint="use 1–65535, or 0 for any free one")
    from podium.viewer import export_html, serve  # igraph, and through it matplotlib: checked first

    if export is not None:
        if port is not None:
            raise UserError("--port has no effect with --export", hint="drop one of them")
        count = export_html(run_dir, export)
        print(f"wrote {export} ({count} node{'' if count == 1 else 's'})", flush=True)
        if open_browser:
            _open(export.resolve().as_uri())
        return

    with _redirects() as redirect:

        def ready(url: str) -> None:
            print(f"viewer: {url}  (Ctrl-C to stop)", flush=True)
            if open_browser:
                _open(redirect(url))

        if sweep:
            from podium.viewer.sweep_data import SweepView

            serve(SweepView(run_dir), port, ready)
        else:
            serve(run_dir, port, ready)


@contextmanager
def _redirects() -> Iterator[Callable[[str], str]]:
    """``redirect(url)``: the file:// URI of a page only this user can read that sends the
    browser on to ``url`` (the token stays off command lines); the files go at the end."""
    folder: Path | None = None

    def redirect(url: str) -> str:
        nonlocal folder
        folder = folder or Path(tempfile.mkdtemp(prefix="podium-view-"))  # mode 0700
        page = folder / "open.html"
        fd = os.open(page, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(REDIRECT.format(url=html.escape(url, quote=True)))
        return page.as_uri()

    try:
        yield redirect
    finally:
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)


def _open(url: str) -> None:
    """Open ``url`` in a browser from a side thread: some browsers (a terminal one) block until
    they are closed, and the server must keep answering meanwhile."""

    def run() -> None:
        if not webbrowser.open(url):
            print(f"warning: no web browser found; open {url} yourself", file=sys.stderr)

    threading.Thread(target=run, daemon=True).start()
