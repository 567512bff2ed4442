"""Reading recorded model calls back: from a run directory's journal or an exported JSONL file.

Used by ``--replay`` and by ``podium calls``. Calls of nodes discarded by a crash are left out:
the resumed run asked the same questions again, and those answers are in the record.
"""

from __future__ import annotations

from pathlib import Path

from podium.errors import RunDirError
from podium.formats.journal import Journal
from podium.formats.rundir import RunDir
from podium.plugins.backends import answers
from podium.plugins.backends.answers import RecordedAnswer


def load_recorded(source: Path, with_requests: bool = True) -> list[RecordedAnswer]:
    """Every recorded call in the order the run made them."""
    if source.is_dir():
        journal_path = RunDir(source).journal
        if not journal_path.is_file():
            raise RunDirError(f"{source} is not a Podium run directory (no journal.sqlite)")
        journal = Journal.open(journal_path)
        try:
            calls = sorted(journal.calls(), key=lambda c: (c.started_at, c.role, c.seq))
        finally:
            journal.close()
        return [answers.from_call(c, with_requests) for c in calls]
    return answers.load(source, "recorded calls file")


def recorded_models(recorded: list[RecordedAnswer]) -> dict[str, str]:
    """The model that answered each role (``code``, ``review``), where the record says."""
    models: dict[str, str] = {}
    for answer in recorded:
        if answer.model:
            models.setdefault(answer.role, answer.model)
    return models
