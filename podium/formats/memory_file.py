"""The memory's file format: ``memory.dir/records.jsonl``, shared by runs, and each run's frozen
copy of what it read from there (``run_files.MEMORY_COPY``, written through ``RunDir``).

``records.jsonl`` grows by one line per finished node of every run that names the directory;
runs side by side (a sweep) append to it under an exclusive lock, one ``write`` per line, so
lines never interleave. A run reads it once, when it starts, and keeps what it read as its own
``memory.jsonl``: its resume and its replays read that copy, so they see what it saw whatever
the directory holds since. A line that cannot be read (a hand edit, a torn last line after a
crash) is skipped, never fatal; records are capped in size so a file stays cheap to read.
"""

from __future__ import annotations

import fcntl
import os
from collections import deque
from pathlib import Path

from pydantic import ValidationError

from podium.records import MemoryRecord

RECORDS = "records.jsonl"  # in memory.dir
MAX_LINE_BYTES = 64 * 1024  # a record's line; longer ones are skipped when read
MAX_RECORDS = 10_000  # the newest are read: a directory kept for months stays cheap to recall


def append(directory: Path, record: MemoryRecord) -> None:
    """Add ``record`` to ``directory``'s records, under a lock (other runs append too)."""
    directory.mkdir(parents=True, exist_ok=True)
    line = (record.model_dump_json() + "\n").encode()
    fd = os.open(directory / RECORDS, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        os.write(fd, line)
    finally:
        os.close(fd)


def read(path: Path) -> list[MemoryRecord]:
    """The records of a JSONL file (``RECORDS`` or a run's copy), oldest first; none when it
    does not exist. Unreadable and oversized lines are skipped."""
    if not path.is_file():
        return []
    records: deque[MemoryRecord] = deque(maxlen=MAX_RECORDS)
    with path.open("rb") as f:
        for raw in f:
            if len(raw) > MAX_LINE_BYTES:
                continue
            try:
                records.append(MemoryRecord.model_validate_json(raw))
            except (ValidationError, ValueError):
                continue
    return list(records)


def lines(records: list[MemoryRecord]) -> str:
    """``records`` as the file holds them: one JSON object per line."""
    return "".join(r.model_dump_json() + "\n" for r in records)
