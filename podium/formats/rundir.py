"""The run directory contract (later tools and checks rely on it):

```
DIR/config.toml        the resolved config           DIR/summary.json   the run's outcome
DIR/journal.sqlite     every node and model call      DIR/grade.json     once graded
DIR/nodes/<id>/        solution.py, output.txt (the output so far while it executes),
                       submission.csv (if any), working/ (if kept)
DIR/best/              solution.py, submission.csv, node.json: the chosen final node
```

The names are spelled once, in :mod:`podium.formats.run_files`, with the one way to read the
files back (``summary.json`` as a typed :class:`~podium.formats.run_files.RunSummary`); a
reader takes its paths from a ``RunDir`` (``rd.summary``, ``rd.node_dir(3)``...) or those names,
never from a literal of its own.

Files a solution wrote never reach the run directory as they are: the sandbox hands a node
its submission as a copy the host made (``podium.interfaces.Workspace``), and anything read
from a node's directory is read through ``podium.untrusted`` all the same.

Every file Podium writes here is written whole or not at all (a temp file in the same
directory, renamed over the old one), so a crash or a full disk leaves the old version or the
new, never a partial or empty file. A write that fails is a :class:`RunDirError`: one line
naming the file and the reason, and a hint saying what to do (``failure`` makes it, for this
class's own writes and for the journal's, which the API translates where it runs a search).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import math
import os
import re
import shutil
import sqlite3
from collections.abc import Iterable
from pathlib import Path
from typing import Any, TextIO

from podium.errors import RunDirError
from podium.failpoints import failpoint
from podium.formats import run_files
from podium.formats.run_files import RunSummary
from podium.interfaces import SUBMISSION
from podium.records import Node
from podium.untrusted import Refused, copy_untrusted, remove_tree

TMP_SUFFIX = ".tmp"  # a write in progress: ``name.tmp`` beside ``name``, never left behind

# What a failed write says to do, by kind of failure (see ``RunDir.failure``).
_FULL = {errno.ENOSPC, errno.EDQUOT}
_READ_ONLY = {errno.EROFS}
_DENIED = {errno.EACCES, errno.EPERM}
_IO = {errno.EIO}
_REMOVED = {errno.ENOENT, errno.ENOTDIR, errno.EISDIR, errno.EEXIST}
# Errors that are the run dir's only when they name a path inside it; a full, read-only or
# failing disk is one wherever it is met.
_OURS_ONLY = _DENIED | _REMOVED
# SQLite's primary result codes (``sqlite3.Error.sqlite_errorcode & 0xff``).
_SQLITE_KINDS = {3: "denied", 8: "read-only", 10: "io", 13: "full", 14: "denied"}
_SQLITE_WORDS = (("disk is full", "full"), ("readonly", "read-only"), ("i/o error", "io"),
                 ("unable to open", "denied"))  # fmt: skip


class RunDir:
    """The paths of a run dir (see the module doc), its writes, and the reads of its files."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.config = root / run_files.CONFIG
        self.journal = root / run_files.JOURNAL
        self.nodes = root / run_files.NODES
        self.best = root / run_files.BEST
        self.summary = root / run_files.SUMMARY
        self.grade = root / run_files.GRADE
        self.lock_file = root / run_files.LOCK
        self.sandbox_scratch = root / run_files.SANDBOX_SCRATCH
        self.holdout = root / run_files.HOLDOUT
        self.selection = root / run_files.SELECTION
        self.memory_copy = root / run_files.MEMORY_COPY
        self._lock: TextIO | None = None

    def node_dir(self, node_id: int) -> Path:
        return self.nodes / str(node_id)

    def node_file(self, node_id: int, name: str) -> Path:
        """A file of the node: ``name`` is one of run_files' node names (SOLUTION, OUTPUT...)."""
        return self.node_dir(node_id) / name

    def node_output(self, node_id: int) -> Path:
        """The node's ``output.txt``: while it executes, the output so far (rewritten whole
        about once a second, capped and masked as the result will be); once its execution has
        ended, what the result holds. Readers of a running node's output read it here."""
        return self.node_file(node_id, run_files.OUTPUT)

    def node_notebook(self, node_id: int) -> Path:
        """An agentic node's ``notebook.ipynb`` (nbformat v4): every cell it ran in order, with
        its output and error (``metadata.podium``: the turn that asked for it, its status and
        duration), and the model's words between them as markdown cells. Absent for one-shot
        nodes; written once the node's conversation ended."""
        return self.node_file(node_id, run_files.NOTEBOOK)

    def final_rerun_dir(self, node_id: int) -> Path:
        """Where the final choice runs a top-k candidate once more (replaced each time)."""
        return self.node_dir(node_id) / run_files.FINAL_RERUN

    def fresh_run_dir(self, node_id: int) -> Path:
        """Where a good agentic node's ``solution.py`` runs once more on a fresh kernel, to
        report whether its score reproduces without the session's state (``Node.fresh``)."""
        return self.node_dir(node_id) / run_files.FRESH_RUN

    def reruns_dir(self, node_id: int) -> Path:
        """Where ``podium rerun`` keeps its runs of the node, one numbered directory each."""
        return self.node_dir(node_id) / run_files.RERUNS

    def held_out_score(self, node_id: int) -> float | None:
        """The node's score on the run's held-out labels (``search.holdout``), None when it
        has none. Host-side only: it is never part of the node's record, so no prompt and no
        strategy can be given it."""
        return self.held_out_score_in(self.node_dir(node_id))

    def held_out_score_in(self, directory: Path) -> float | None:
        """:meth:`held_out_score` of an execution's directory (a node's, or its re-run's)."""
        data = run_files.read_json(directory / run_files.HELD_OUT, damaged_ok=True)
        value = None if data is None else data.get("score")
        return float(value) if isinstance(value, int | float) and math.isfinite(value) else None

    # --- reading --------------------------------------------------------------------------

    def read_summary(self) -> RunSummary | None:
        """``summary.json`` as the typed record; None when there is none yet (a run killed
        before its first node) or it cannot be read. A field that does not fit its type reads
        as missing: for readers that show what they can of a run that may be mid-write."""
        data = run_files.read_json(self.summary, damaged_ok=True)
        return None if data is None else RunSummary.lenient(data)

    def write_summary(self, summary: RunSummary) -> None:
        """``summary.json``, replaced whole, with exactly the keys ``summary`` was given."""
        self.write_json(self.summary, summary.to_dict())

    # --- creation and exclusive use -------------------------------------------------------

    def create(self) -> bool:
        """Make the run directory (and its parents); True when it did not exist before."""
        if self.root.exists() and not self.root.is_dir():
            raise RunDirError(
                f"the run directory {self.root} is an existing file",
                hint="give --out a new directory (or one holding a run, to resume it)",
            )
        made = not self.root.exists()
        try:
            self.root.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            in_the_way = exc.errno in (errno.EEXIST, errno.ENOTDIR)
            hint = (
                "a part of that path is a file: give --out a new directory" if in_the_way else None
            )
            raise self._failed(exc, self.root, "create the run directory", hint) from exc
        return made

    def discard_start(self, made: bool) -> None:
        """Undo a start that failed before the journal held anything: the journal files and
        config.toml go, and the directory too when this run made it, so the same command can
        simply be run again. Best effort: what cannot be removed stays."""
        if made:
            shutil.rmtree(self.root, ignore_errors=True)
            return
        for path in (self.config, *_journal_files(self.journal)):
            with contextlib.suppress(OSError):
                path.unlink(missing_ok=True)

    def lock(self) -> None:
        """Hold an exclusive lock for this process's lifetime: one writer per run dir."""
        try:
            fh = self.lock_file.open("a+")
        except OSError as exc:
            raise self._failed(exc, self.root, "write in the run directory") from exc
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            fh.close()
            raise RunDirError(
                f"{self.root} is in use by another Podium process",
                hint="wait for it to finish, or stop it first",
            ) from None
        self._lock = fh

    def unlock(self) -> None:
        if self._lock is not None:
            self._lock.close()
            self._lock = None

    def write_config(self, text: str) -> None:
        """``config.toml``, replaced whole (a resume rewrites it with the budgets it raised)."""
        self.write_file(self.config, text)

    # --- per node -------------------------------------------------------------------------

    def reset_node(self, node_id: int) -> Path:
        """An empty directory for the node (leftovers of an interrupted attempt are removed)."""
        path = self.node_dir(node_id)
        remove_tree(path)  # a crashed node's slot may be any tree a solution made
        try:
            path.mkdir(parents=True)
        except OSError as exc:
            raise self._failed(exc, path, "create") from exc
        return path

    def remove_stray_nodes(self, known: set[int]) -> list[int]:
        """Remove node dirs the journal holds no node for (an older Podium's resume numbered
        re-run nodes anew and left the old dirs); returns their ids."""
        try:
            names = [p.name for p in self.nodes.iterdir()]
        except OSError:
            return []
        stray = sorted(int(n) for n in names if n.isdigit() and int(n) not in known)
        for node_id in stray:
            remove_tree(self.node_dir(node_id))
        return stray

    def write_text(self, node_id: int, name: str, text: str) -> None:
        self.write_file(self.node_dir(node_id) / name, text)

    def write_live_output(self, node_id: int, text: str) -> None:
        """The output so far of a node that is executing, as :meth:`node_output`: replaced
        whole like every file here, but not flushed to the disk (it is rewritten every second
        and replaced by the final output, which is); a failure is a RunDirError as usual, which
        the caller may ignore: the final write has the last word."""
        self.write_file(self.node_output(node_id), text, durable=False)

    def missing_submissions(self, nodes: Iterable[Node]) -> list[int]:
        """The good nodes among ``nodes`` whose ``submission.csv`` is gone from ``nodes/``:
        one of them chosen as the final node would give a ``best/`` without a submission."""
        return [
            n.id
            for n in nodes
            if n.is_good and n.has_submission and not (self.node_dir(n.id) / SUBMISSION).is_file()
        ]

    # --- the final node -------------------------------------------------------------------

    def publish_best(self, node: Node | None) -> None:
        """Make ``best/`` hold ``node``'s files, atomically: a crash leaves the old or the new;
        a failed write leaves the old one and no ``best.new``."""
        staging, old = self.root / f"{run_files.BEST}.new", self.root / f"{run_files.BEST}.old"
        for leftover in (staging, old):
            shutil.rmtree(leftover, ignore_errors=True)
        if node is None:
            return
        try:
            self._stage_best(node, staging)
            if self.best.exists():
                os.replace(self.best, old)
            os.replace(staging, self.best)
        except OSError as exc:
            shutil.rmtree(staging, ignore_errors=True)
            if old.exists() and not self.best.exists():
                with contextlib.suppress(OSError):
                    os.replace(old, self.best)  # the old best/ back, as it was
            raise self._failed(exc, self.best, "write") from exc
        shutil.rmtree(old, ignore_errors=True)

    def _stage_best(self, node: Node, staging: Path) -> None:
        staging.mkdir()
        src = self.node_dir(node.id)
        for name in (run_files.SOLUTION, SUBMISSION):
            try:
                copy_untrusted(src / name, staging / name, trusted=src)
            except (FileNotFoundError, Refused):
                continue
            failpoint("best.copy")
        if not (staging / run_files.SOLUTION).exists():  # gone from nodes/: the journal has it
            (staging / run_files.SOLUTION).write_text(node.code, encoding="utf-8")
        info = {"node_id": node.id, "operator": node.operator, "step": node.step,
                "metric": node.metric.value if node.metric else None}  # fmt: skip
        (staging / run_files.NODE_INFO).write_text(
            json.dumps(info, indent=2) + "\n", encoding="utf-8"
        )
        for path in staging.iterdir():  # on the disk before the rename makes them best/
            _fsync(path)

    def best_node_id(self) -> int | None:
        """The final node's id from ``best/node.json``; None when there is no best yet (or its
        file cannot be read)."""
        info = run_files.read_json(self.best / run_files.NODE_INFO, damaged_ok=True)
        try:
            return None if info is None else int(info["node_id"])
        except (ValueError, KeyError, TypeError):
            return None

    # --- whole files ----------------------------------------------------------------------

    def write_json(self, path: Path, data: dict[str, Any]) -> None:
        self.write_file(path, json.dumps(data, indent=2, default=str) + "\n")

    def write_file(self, path: Path, text: str, durable: bool = True) -> None:
        """Replace ``path`` with ``text``, whole: written to ``path.tmp``, flushed to the disk
        (so a crash cannot leave the renamed file empty; ``durable=False`` skips it, for a file
        soon replaced again), then renamed over ``path``. On failure the temp file is removed
        and the old ``path`` is untouched."""
        tmp = path.with_name(path.name + TMP_SUFFIX)
        try:
            tmp.unlink(missing_ok=True)  # never follow what may have been left there
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
            with open(fd, "w", encoding="utf-8") as fh:
                fh.write(text)
                fh.flush()
                if durable:
                    os.fsync(fh.fileno())
            os.replace(tmp, path)
        except OSError as exc:
            with contextlib.suppress(OSError):
                tmp.unlink(missing_ok=True)
            raise self._failed(exc, path, "write") from exc

    # --- failures of the disk -------------------------------------------------------------

    def failure(self, exc: BaseException) -> RunDirError | None:
        """``exc`` as one line and a hint when it is a failure of the disk or the run dir (full,
        read-only, no permission, an I/O error: from the OS or from SQLite), else None (a bug,
        which keeps its traceback). The hint says how to go on: ``podium resume`` when the
        journal exists (every finished node is in it), else run again."""
        if isinstance(exc, RunDirError):
            return exc
        if isinstance(exc, sqlite3.Error):
            kind = _sqlite_kind(exc)
            if kind is None:
                return None
            reason = str(exc)
            if kind in ("io", "denied") and _no_space(self.root):
                kind = "full"  # SQLite reports some failed writes of a full disk as I/O errors
                reason = f"{os.strerror(errno.ENOSPC).lower()} ({exc})"
            return RunDirError(
                f"cannot write the journal {self.journal}: {reason}", hint=self._hint(kind, None)
            )
        if not isinstance(exc, OSError) or exc.errno is None:
            return None
        path = Path(os.fsdecode(exc.filename)) if exc.filename is not None else None
        if _kind(exc.errno) is None:
            return None
        if exc.errno in _OURS_ONLY and (path is None or not _inside(path, self.root)):
            return None  # elsewhere (a cgroup file, a signal): not the run dir, maybe a bug
        return self._failed(exc, path or self.root, "write")

    def _failed(self, exc: OSError, path: Path, doing: str, hint: str | None = None) -> RunDirError:
        """The RunDirError of a failed ``doing`` (write, create...) of ``path``."""
        reason = os.strerror(exc.errno) if exc.errno else str(exc)
        reason = reason[:1].lower() + reason[1:]
        return RunDirError(
            f"cannot {doing} {path}: {reason}", hint=hint or self._hint(_kind(exc.errno), path)
        )

    def _hint(self, kind: str | None, path: Path | None) -> str:
        """What to do, and how to go on once it is done."""
        mount = _mount_point(path or self.root)
        resumable = self.journal.is_file()
        go_on = (
            f"then continue the run: podium resume {self.root} (no finished node is lost)"
            if resumable
            else "then run the same command again"
        )
        if kind == "full":
            return f"free space on {mount} (df -h {mount}), {go_on}"
        if kind == "read-only" and resumable:
            return (
                f"{mount} is read-only: remount it read-write, {go_on}; or resume a copy: "
                f"cp -a {self.root} NEW && podium resume NEW"
            )
        if kind == "read-only":
            return f"{mount} is read-only: give --out a directory on a writable file system"
        where = path.parent if path is not None and path != self.root else self.root
        if kind == "denied" and resumable:
            return f"make {where} writable for you (ls -ld {where}), {go_on}"
        if kind == "denied":
            return f"give --out a directory you can write to, or make {where} writable"
        if kind == "io":
            return f"check the disk holding {mount} (dmesg), {go_on}"
        if kind == "removed":
            return f"something moved or removed files under {self.root} while it ran, {go_on}"
        return f"check {where}, {go_on}"


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _kind(code: int | None) -> str | None:
    for codes, kind in ((_FULL, "full"), (_READ_ONLY, "read-only"), (_DENIED, "denied"),
                        (_IO, "io"), (_REMOVED, "removed")):  # fmt: skip
        if code in codes:
            return kind
    return None


def _sqlite_kind(exc: sqlite3.Error) -> str | None:
    code = getattr(exc, "sqlite_errorcode", None)
    if isinstance(code, int) and (kind := _SQLITE_KINDS.get(code & 0xFF)):
        return kind
    text = str(exc).lower()
    return next((kind for words, kind in _SQLITE_WORDS if words in text), None)


def _no_space(path: Path) -> bool:
    try:
        return os.statvfs(_existing(path)).f_bavail == 0
    except OSError:
        return False


def _existing(path: Path) -> Path:
    path = path.absolute()
    while not path.exists() and path != path.parent:
        path = path.parent
    return path


def _mount_point(path: Path) -> Path:
    """The mount point of the file system holding ``path`` (or its nearest existing parent):
    the longest one in ``/proc/self/mountinfo`` above it (bind mounts included), else the
    first parent ``os.path.ismount`` says is one."""
    path = _existing(path).resolve()
    try:
        lines = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        lines = []
    mounts = [Path(_OCTAL.sub(_unescape, line.split()[4])) for line in lines if line.count(" ") > 4]
    if above := [m for m in mounts if path.is_relative_to(m)]:
        return max(above, key=lambda m: len(m.parts))
    while not os.path.ismount(path) and path != path.parent:
        path = path.parent
    return path


_OCTAL = re.compile(r"\\([0-7]{3})")  # mountinfo writes a space in a path as \040


def _unescape(match: re.Match[str]) -> str:
    return chr(int(match.group(1), 8))


def _inside(path: Path, root: Path) -> bool:
    return path.absolute().is_relative_to(root.absolute())


def _journal_files(journal: Path) -> list[Path]:
    return [journal, *(journal.with_name(journal.name + s) for s in ("-wal", "-shm", "-journal"))]
