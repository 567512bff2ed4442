"""Prepares a registry-layout task's data on first use, once, atomically.

``prepare(raw, public, private)`` runs into a temporary directory that is renamed into place
only when it succeeds, under a file lock (parallel runs of one task prepare it once). A marker
records a fingerprint of everything a preparer can read (:func:`fingerprint`: the folder's
Python modules, its config and its ``raw/`` data, a generator included): when any of them
changes, the data is prepared again; data prepared from an older version is never served.

Data that Podium did not prepare (no marker) but that is complete, a non-empty ``public`` and
the answers file in ``private``, is used as it is: it was prepared elsewhere, typically by
``mlebench prepare`` into MLE-bench's data dir, whose ``prepare.py`` scripts need MLE-bench and
the raw Kaggle download. Nothing is written then: no lock, no marker. Only when preparing is
needed is the lock file (``<data>/<id>/.prepare.lock``) created, and it stays (removing a lock
file others may be waiting on would let two preparations run at once).
"""

from __future__ import annotations

import fcntl
import hashlib
import logging
import os
import shutil
import traceback
from dataclasses import dataclass
from pathlib import Path

from podium.benchmarks.task_code import load_task_function
from podium.errors import TaskError

log = logging.getLogger("podium.benchmarks")
MARKER = ".podium-prepared"


@dataclass(frozen=True)
class PreparedData:
    """Where a task's data is; ``as_found`` when it was prepared elsewhere and used as is."""

    public: Path
    private: Path
    as_found: bool = False


def prepare_data(
    folder: Path,
    task_id: str,
    data_dir: Path,
    preparer: str = "prepare:prepare",
    answers: str | None = None,
) -> PreparedData:
    """``<data_dir>/<task_id>/prepared/{public,private}``, prepared by ``folder``'s preparer
    unless it is there already: prepared by Podium from the same inputs (the marker's
    :func:`fingerprint`), or, when ``answers`` names the answers file, complete without a
    marker (see the module's docstring). Raises TaskError when preparing fails, leaving no
    half-prepared data.
    """
    root = data_dir / task_id
    prepared = root / "prepared"
    digest = fingerprint(folder)
    result = PreparedData(prepared / "public", prepared / "private")
    marker = _marker(prepared)
    if marker == digest:
        return result
    if marker is None and answers is not None and _complete(result, answers):
        log.info("using the data already prepared in %s", prepared)
        return PreparedData(result.public, result.private, as_found=True)
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise TaskError(f"cannot create the data dir {root}: {exc.strerror}",
                        hint="choose another with --data-dir") from None  # fmt: skip
    with (root / ".prepare.lock").open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if _marker(prepared) != digest:
            _run_prepare(folder, root, digest, preparer)
    return result


def fingerprint(folder: Path) -> str:
    """A hash of what ``folder``'s preparer can read: its top-level Python modules (the
    preparer and any helper it imports), ``config.yaml`` (which names the preparer) and every
    file under ``raw/`` (vendored data, or a generator and its seed), by relative path and
    content. Grading files and notes (``leaderboard.csv``, ``description.md``) are left out:
    they do not change the prepared data."""
    inputs = [*sorted(folder.glob("*.py")), folder / "config.yaml"]
    raw = folder / "raw"
    if raw.is_dir():
        inputs += sorted(p for p in raw.rglob("*") if p.is_file() and "__pycache__" not in p.parts)
    digest = hashlib.sha256()
    for path in inputs:
        if path.is_file():
            digest.update(f"{path.relative_to(folder)}\0".encode())
            digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def _complete(data: PreparedData, answers: str) -> bool:
    """Public data to hand over and the answers to grade with (MLE-bench's readiness test)."""
    try:
        return any(data.public.iterdir()) and (data.private / answers).is_file()
    except OSError:  # no public dir, or one that cannot be listed
        return False


def _marker(prepared: Path) -> str | None:
    try:
        return (prepared / MARKER).read_text().strip()
    except OSError:
        return None


def _run_prepare(folder: Path, root: Path, digest: str, preparer: str) -> None:
    log.warning("preparing the data of %s in %s (first use)", root.name, root / "prepared")
    raw = folder / "raw" if (folder / "raw").is_dir() else root / "raw"
    prepare = load_task_function(folder, preparer, "preparer", "(raw, public, private) -> None")
    staging = root / f"prepared.tmp-{os.getpid()}"
    shutil.rmtree(staging, ignore_errors=True)
    (staging / "public").mkdir(parents=True)
    (staging / "private").mkdir()
    try:
        prepare(raw, staging / "public", staging / "private")
    except Exception as exc:
        shutil.rmtree(staging, ignore_errors=True)
        where = traceback.extract_tb(exc.__traceback__)[-1]
        raise TaskError(
            f"{folder}/prepare.py failed: {type(exc).__name__}: {exc} "
            f"(at {Path(where.filename).name}:{where.lineno})"
        ) from None
    (staging / MARKER).write_text(digest + "\n")
    old = root / "prepared.old"
    shutil.rmtree(old, ignore_errors=True)
    if (root / "prepared").exists():
        os.replace(root / "prepared", old)
    os.replace(staging, root / "prepared")
    shutil.rmtree(old, ignore_errors=True)
