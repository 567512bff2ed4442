"""Reading the small JSON and TOML files of run and sweep dirs, with one-line errors.

A report reads files other programs wrote (or a user edited, or a crash cut short). A file that
cannot be read is the user's to fix, so every problem is a :class:`UserError` naming the file,
never a traceback.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

from podium.errors import UserError

REPAIR_HINT = "fix or remove the file, or leave its directory out of the comparison"


def read_json(path: Path) -> Any:
    """The parsed JSON of ``path``; UserError (one line, naming it) when unreadable or invalid."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise UserError(f"cannot read {path}: {exc.strerror or exc}", hint=REPAIR_HINT) from None
    except UnicodeDecodeError as exc:
        raise UserError(f"{path} is not UTF-8 text: {exc.reason}", hint=REPAIR_HINT) from None
    try:
        return json.loads(text)
    except ValueError as exc:
        raise UserError(f"{path} is not valid JSON: {exc}", hint=REPAIR_HINT) from None


def read_object(path: Path) -> dict[str, Any]:
    """A JSON file that must hold an object (every Podium JSON file does)."""
    data = read_json(path)
    if not isinstance(data, dict):
        raise UserError(f"{path} holds {type(data).__name__}, not a JSON object", hint=REPAIR_HINT)
    return data


def read_optional_object(path: Path) -> dict[str, Any] | None:
    """Like :func:`read_object`, None when the file does not exist."""
    return read_object(path) if path.is_file() else None


def read_toml(path: Path) -> dict[str, Any]:
    """A run's ``config.toml`` as a dict; an empty dict when the run has none."""
    if not path.is_file():
        return {}
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise UserError(f"cannot read {path}: {exc.strerror or exc}", hint=REPAIR_HINT) from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise UserError(f"{path} is not valid TOML: {exc}", hint=REPAIR_HINT) from None
