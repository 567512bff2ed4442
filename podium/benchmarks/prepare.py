"""Prepares a registry-layout task's data on first use, once, atomically.

``prepare(raw, public, private)`` runs into a temporary directory that is renamed into place
only when it succeeds, under a file lock (parallel runs of one task prepare it once). A marker
records a hash of ``prepare.py``: when the script changes, the data is prepared again.
"""

from __future__ import annotations

import fcntl
import hashlib
import importlib.util
import logging
import os
import shutil
import traceback
from dataclasses import dataclass
from pathlib import Path

from podium.errors import TaskError

log = logging.getLogger("podium.benchmarks")
MARKER = ".podium-prepared"


@dataclass(frozen=True)
class PreparedData:
    public: Path
    private: Path


def prepare_data(folder: Path, task_id: str, data_dir: Path) -> PreparedData:
    root = data_dir / task_id
    prepared = root / "prepared"
    digest = hashlib.sha256((folder / "prepare.py").read_bytes()).hexdigest()
    result = PreparedData(prepared / "public", prepared / "private")
    if _marker(prepared) == digest:
        return result
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise TaskError(f"cannot create the data dir {root}: {exc.strerror}",
                        hint="choose another with --data-dir") from None  # fmt: skip
    with (root / ".prepare.lock").open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if _marker(prepared) != digest:
            _run_prepare(folder, root, digest)
    return result


def _marker(prepared: Path) -> str | None:
    try:
        return (prepared / MARKER).read_text().strip()
    except OSError:
        return None


def _run_prepare(folder: Path, root: Path, digest: str) -> None:
    log.warning("preparing the data of %s in %s (first use)", root.name, root / "prepared")
    raw = folder / "raw" if (folder / "raw").is_dir() else root / "raw"
    prepare = _load_function(folder / "prepare.py", "prepare")
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


def _load_function(path: Path, name: str):  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location(
        f"podium_task_{path.parent.name}_{path.stem}", path
    )
    if spec is None or spec.loader is None:
        raise TaskError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        raise TaskError(f"{path} failed to import: {type(exc).__name__}: {exc}") from None
    fn = getattr(module, name, None)
    if not callable(fn):
        raise TaskError(f"{path} defines no function {name}()", hint=f"add def {name}(...)")
    return fn
