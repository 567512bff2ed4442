"""Runs → the JSONL that ``mlebench grade --submission FILE --output-dir DIR`` reads.

One line per run of an MLE-bench task: ``{"competition_id": ..., "submission_path": ...}`` (plus
``run_dir``, which MLE-bench ignores, to map reports back). The submission is the run's final
one, ``best/submission.csv``. A run that ended without one is still listed: MLE-bench then
grades it as no submission, which is how a missing result must count (as no medal), not as a
run left out.

Each line also has the two paths MLE-bench's ``experiments/make_submission.py`` writes for its
checks of a run (null when absent): ``logs_path``, what its rule-violation detector reads — the
run directory, of which it reads every ``.py`` and ``.log`` file (each node's ``solution.py``:
in Podium everything the agent did is code it ran; the journal is SQLite, not text) — and
``code_path``, what its plagiarism detector compares with the competition's public solutions:
the final node's ``best/solution.py``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from podium.errors import UserError
from podium.formats import RunDir, RunFileError, RunSummary, run_files
from podium.interfaces import SUBMISSION

SUMMARY = run_files.SUMMARY  # what marks a run dir
MLEBENCH_PREFIX = "mlebench/"


@dataclass
class Export:
    lines: list[dict[str, str | None]] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # runs of tasks MLE-bench does not know
    without_submission: int = 0


def find_run_dirs(paths: Iterable[Path]) -> list[Path]:
    """Each path is a run dir (it holds summary.json) or a folder searched for them (a sweep)."""
    found: list[Path] = []
    for path in paths:
        if not path.is_dir():
            raise UserError(f"{path} is not a directory", hint="give run or sweep directories")
        if (path / SUMMARY).is_file():
            found.append(path)
        else:
            found.extend(sorted(p.parent for p in path.rglob(SUMMARY)))
    if not found:
        raise UserError(
            "no runs found (no summary.json)", hint="a run directory holds summary.json"
        )
    return found


def mlebench_jsonl(run_dirs: Iterable[Path]) -> Export:
    export = Export()
    for run_dir in run_dirs:
        summary = _summary(run_dir)
        task = summary.task or ""
        if not task.startswith(MLEBENCH_PREFIX):
            export.skipped.append(f"{run_dir} ({task or 'unknown task'})")
            continue
        best = RunDir(run_dir).best
        submission = (best / SUBMISSION).resolve()
        export.without_submission += not submission.is_file()
        code = (best / run_files.SOLUTION).resolve()
        export.lines.append(
            {
                "competition_id": summary.competition_id or task[len(MLEBENCH_PREFIX) :],
                "submission_path": str(submission),
                "logs_path": str(run_dir.resolve()),
                "code_path": str(code) if code.is_file() else None,
                "run_dir": str(run_dir.resolve()),
            }
        )
    return export


def _summary(run_dir: Path) -> RunSummary:
    """The run's summary; only ``task`` and ``competition_id`` are read, so a field of another
    type than expected reads as missing."""
    path = RunDir(run_dir).summary
    try:
        data = run_files.read_json(path)
    except RunFileError as exc:
        if exc.problem == "not-object":
            raise UserError(f"{path} is not a run summary") from None
        raise UserError(f"cannot read {path}: {exc.cause}") from None
    return RunSummary.lenient(data)
