"""Reading the small JSON and TOML files of run and sweep dirs, with one-line errors.

A report reads files other programs wrote (or a user edited, or a crash cut short). A file that
cannot be read is the user's to fix, so every problem is a :class:`UserError` naming the file,
never a traceback. The reading itself is the run dir's owner's
(:func:`podium.formats.run_files.read_json` and ``read_toml``); this adds the hint.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from podium.errors import UserError
from podium.formats import RunFileError, run_files

REPAIR_HINT = "fix or remove the file, or leave its directory out of the comparison"


def read_object(path: Path) -> dict[str, Any]:
    """A JSON file that must hold an object (every Podium JSON file does); UserError (one line,
    naming it) when it is missing, unreadable or not a JSON object."""
    try:
        return run_files.read_json(path)
    except RunFileError as exc:
        raise UserError(exc.message, hint=REPAIR_HINT) from None


def read_optional_object(path: Path) -> dict[str, Any] | None:
    """Like :func:`read_object`, None when the file does not exist."""
    return read_object(path) if path.is_file() else None


def read_run_config(path: Path) -> dict[str, Any]:
    """A run's ``config.toml`` as a dict; an empty dict when the run has none."""
    if not path.is_file():
        return {}
    try:
        return run_files.read_toml(path)
    except RunFileError as exc:
        raise UserError(exc.message, hint=REPAIR_HINT) from None
