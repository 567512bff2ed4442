"""``podium view RUN --export FILE``: the whole run in one self-contained HTML file.

The file holds the page, its script and style inline, and every node's detail as embedded JSON
(``snapshot.export_data``; ``page.export_page`` renders it), so it opens from disk, offline,
anywhere. It is written atomically: a reader (or a browser reloading it) sees the old file or
the new one, never half of one.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

from podium.errors import UserError
from podium.viewer import page
from podium.viewer.run_data import open_run
from podium.viewer.snapshot import export_data


def export_html(run_dir: Path, dest: Path) -> int:
    """Write ``run_dir`` as one HTML file at ``dest``; return how many nodes it holds.

    A bad run dir or a ``dest`` that cannot be written (missing directory, a directory itself)
    is a one-line error, checked before the run is read.
    """
    _check_dest(dest)
    view = open_run(run_dir)
    html = page.export_page(*export_data(view))
    _write_atomically(dest, html)
    return len(view.nodes)


def _check_dest(dest: Path) -> None:
    if dest.is_dir():
        raise UserError(f"{dest} is a directory", hint="give a file name, e.g. run.html")
    if not dest.parent.is_dir():
        raise UserError(
            f"cannot write {dest}: {dest.parent} does not exist",
            hint="create the directory first, or export somewhere else",
        )


def _write_atomically(dest: Path, text: str) -> None:
    """A temporary file beside ``dest``, then renamed over it (same file system: atomic).

    The temporary file is a new one with a name no one can guess (``mkstemp``: created with
    O_EXCL, so a link planted beside the destination is never followed), then given the usual
    permissions (umask), not a private temp file's: an export is for sharing.
    """
    tmp: Path | None = None
    try:
        fd, name = tempfile.mkstemp(dir=dest.parent, prefix=f".{dest.name}.", suffix=".tmp")
        tmp = Path(name)
        umask = os.umask(0)
        os.umask(umask)
        os.fchmod(fd, 0o666 & ~umask)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, dest)
    except OSError as exc:
        if tmp is not None:
            with contextlib.suppress(OSError):
                tmp.unlink()
        raise UserError(f"cannot write {dest}: {exc.strerror or exc}") from None
