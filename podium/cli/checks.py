"""Checks of the paths a command line names, made before any work starts.

Each failure is a :class:`~podium.errors.UserError`: one line naming the path and what is wrong
with it, and a hint saying what to give instead. The commands call these on their arguments
(and on the resolved config, so ``-c`` and ``-o`` are checked like the flags): a mistyped path
is reported at once, never as a traceback from deep inside a run, and never after a kernel or
a task's data preparation has started.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from podium.errors import RunDirError, UserError

# The run dir's and the sweep dir's names come from podium.formats, imported by the checks that
# use them: ``podium --help`` imports this module and must not pay for the formats' records.
SQLITE_HEADER = b"SQLite format 3\x00"
TEXT_PROBE_BYTES = 1 << 20  # enough of a file to tell text from binary


def _stat(path: Path, what: str, hint: str = "check the path") -> os.stat_result | None:
    """``path``'s status (links followed), None when nothing is there; other failures (a file
    on the way, a loop of links, a name too long, no permission on a parent) are one line."""
    try:
        return path.stat()
    except FileNotFoundError:
        return None
    except NotADirectoryError:
        raise UserError(f"{what} {path}: {_file_on_the_way(path)} is a file, not a directory",
                        hint=hint) from None  # fmt: skip
    except (OSError, RuntimeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise UserError(f"cannot follow the path {path}: {reason}", hint=hint) from None


def _file_on_the_way(path: Path) -> Path:
    """The first part of ``path`` that is there but is no directory."""
    for parent in reversed(path.parents):
        if parent.exists() and not parent.is_dir():
            return parent
    return path.parent


def existing_file(path: Path, what: str, hint: str) -> Path:
    """``path`` is a file that exists (a directory or nothing there is one line)."""
    found = _stat(path, what, hint)
    if found is None:
        raise UserError(f"{what} not found: {path}", hint=hint)
    if stat.S_ISDIR(found.st_mode):
        raise UserError(f"{what} {path} is a directory, not a file", hint=hint)
    return path


def text_file(path: Path, what: str, hint: str) -> Path:
    """``path`` is a readable UTF-8 text file (not a binary one, not a directory)."""
    existing_file(path, what, hint)
    try:
        with path.open("rb") as fh:
            head = fh.read(TEXT_PROBE_BYTES)
    except OSError as exc:
        raise UserError(f"cannot read {what} {path}: {exc.strerror or exc}", hint=hint) from None
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.start < len(head) - 4:  # not a multi-byte character cut at the probe's end
            raise UserError(f"{what} {path} is not a text file (not UTF-8)", hint=hint) from None
    if b"\x00" in head:
        raise UserError(f"{what} {path} is not a text file (it holds NUL bytes)", hint=hint)
    return path


def directory(path: Path, what: str, hint: str) -> Path:
    """``path`` is a directory that exists."""
    found = _stat(path, what, hint)
    if found is None:
        raise UserError(f"{what} not found: {path}", hint=hint)
    if not stat.S_ISDIR(found.st_mode):
        raise UserError(f"{what} {path} is a file, not a directory", hint=hint)
    return path


def optional_directory(path: Path | None, what: str, hint: str) -> None:
    """``path``, where given and already there, is a directory (it may not exist yet)."""
    if path is None:
        return
    found = _stat(path, what, hint)
    if found is not None and not stat.S_ISDIR(found.st_mode):
        raise UserError(f"{what} {path} is a file, not a directory", hint=hint)


def new_directory(path: Path | None, what: str, hint: str) -> None:
    """``path`` can become a directory: nothing but directories on the way to it, and not a
    file itself (whether it may be used as it is, the command decides)."""
    if path is None:
        return
    optional_directory(path, what, hint)
    for parent in path.absolute().parents:
        found = _stat(parent, what, hint)
        if found is None:
            continue
        if not stat.S_ISDIR(found.st_mode):
            raise UserError(f"{what} {path}: {parent} is a file, not a directory", hint=hint)
        return


def is_sweep_dir(path: Path) -> bool:
    """``path`` holds a sweep (its manifest) and is not itself a run."""
    from podium.formats import MANIFEST, RunDir

    return (path / MANIFEST).is_file() and not RunDir(path).journal.is_file()


def run_dir(path: Path, journal_only: bool = False) -> Path:
    """``path`` is a Podium run directory: it holds ``config.toml`` and the journal (the journal
    alone with ``journal_only``, for reading a run that may be starting), and the journal is an
    SQLite database. A sweep directory says how to use a sweep."""
    from podium.formats import RunDir, run_files
    from podium.formats.sweep_dir import RUNS

    need = (run_files.JOURNAL,) if journal_only else (run_files.CONFIG, run_files.JOURNAL)
    hint = "give a run directory, e.g. runs/…"
    rd = RunDir(path)
    found = _stat(path, "run directory", hint)
    if found is None:
        raise RunDirError(f"{path} does not exist", hint=hint)
    if not stat.S_ISDIR(found.st_mode):
        raise RunDirError(f"{path} is a file, not a run directory", hint=hint)
    if is_sweep_dir(path):
        raise RunDirError(
            f"{path} is a sweep directory, not a run directory",
            hint=f"give one of its runs, e.g. {path}/runs/…; continue the sweep with: "
            f"podium bench --resume {path}",
        )
    missing = [name for name in need if not (path / name).is_file()]
    if missing:
        what = "journal" if missing == [run_files.JOURNAL] else " or ".join(missing)
        hint = f"a run directory holds {' and '.join(need)}"
        if (path / RUNS).is_dir():
            hint = f"{path} looks like a sweep: give one of its runs, e.g. {path}/runs/…"
        raise RunDirError(f"{path} is not a Podium run directory (no {what})", hint=hint)
    journal = rd.journal
    if not journal.is_file():
        return path
    try:
        with journal.open("rb") as fh:
            header = fh.read(len(SQLITE_HEADER))
    except OSError as exc:
        raise RunDirError(f"cannot read {journal}: {exc.strerror or exc}", hint=hint) from None
    if header and header != SQLITE_HEADER:
        raise RunDirError(
            f"{journal} is not an SQLite database (damaged, or not a Podium journal)",
            hint="a run's journal is written by Podium only; restore it from a copy of the run",
        )
    return path


def submission_file(path: Path) -> Path:
    """A submission to grade: a file that exists (a run directory names its best one)."""
    hint = "give the submission CSV, e.g. RUN_DIR/best/submission.csv"
    found = _stat(path, "submission", hint)
    if found is None:
        raise UserError(f"no submission at {path}", hint=hint)
    if stat.S_ISDIR(found.st_mode):
        from podium.formats import RunDir
        from podium.interfaces import SUBMISSION

        best = RunDir(path).best / SUBMISSION
        if best.is_file():
            hint = f"a run's best submission is {best}"
        raise UserError(f"{path} is a directory, not a submission file", hint=hint)
    return path
