"""Grading a submission the way MLE-bench does, so Podium's numbers compare with the paper's.

Everything here reproduces MLE-bench's grading rules exactly (see docs/benchmarks.md):

* the score is ``round(grade_fn(submission, answers), 5)``, or None when the submission is
  missing, unreadable or rejected by the grader (an invalid submission is a result, never an
  exception); a NaN grade is a score, so the submission is valid and wins nothing;
* lower is better iff the leaderboard's first score is below its last;
* medal thresholds are leaderboard positions that depend on the number of teams (Kaggle's
  progression table); a medal needs the threshold or better (ties win), medals are exclusive,
  and ``above_median`` is strict;
* reports and aggregates carry MLE-bench's field names, so its tooling can read them.

The functions are pure apart from reading files; grading happens after a run, never inside the
sandbox (the answers must not reach the agent), and never in Podium's own process: a task runs
:func:`score_submission` in its grader worker (:mod:`podium.benchmarks.grader_worker`, the
format check's process: its memory cap, a deadline) and builds the report here with
:func:`grade_report`. :func:`grade_submission` does both in the calling process, for that
worker and for tests.

One deliberate difference: before pandas reads a submission, its size and its header line are
checked against the answers and the sample submission (:func:`submission_bounds`, the bounds of
:mod:`podium.submission_check`, at least 100 MiB, 10,000 columns and 100,000 rows, and ten to
twenty times the widest of those files), and pandas stops reading past the rows bound. A file
beyond them (a million-column header, millions of rows) is invalid, with that reason, in
milliseconds; MLE-bench would hand it to pandas for minutes and gigabytes, and no
competition's grader accepts such a file as a real answer.
"""

from __future__ import annotations

import io
import json
import math
import os
import statistics
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, cast

import pandas as pd

from podium.benchmarks.task_code import MAX_REASON_CHARS, load_task_function, one_line
from podium.errors import TaskError
from podium.records import GRADE_OUTCOMES, GradeReport, utcnow
from podium.submission_check import Bounds, bound_problem, bounds
from podium.untrusted import MAX_UNTRUSTED_BYTES, Refused, open_untrusted

# (submission, answers) -> score. The answers are a DataFrame, or for a .jsonl answers file the
# list of its records (see load_answers).
GradeFn = Callable[[pd.DataFrame, Any], Any]
# A submission's path -> (round(score, 5), None) or (None, why it has none): see grade_report.
Scorer = Callable[[Path], tuple[float | None, str | None]]

LEADERBOARD_HINT = (
    "leaderboard.csv holds the private leaderboard with a 'score' column in rank order"
)
LFS_PREFIX = b"version https://git-lfs"

SUMMARY_FIELDS = GRADE_OUTCOMES  # the per-seed rates seed_summary reports


# MLE-bench reads submissions and answers with pandas' round-trip float parser; pandas 3 parses
# exactly by default and deprecates the option, so it is only passed to older versions.
_EXACT_FLOATS: dict[str, Any] = (
    {} if int(pd.__version__.split(".", 1)[0]) >= 3 else {"float_precision": "round_trip"}
)


def _read_csv(path: Path) -> pd.DataFrame:
    frame: pd.DataFrame = pd.read_csv(path, **_EXACT_FLOATS)
    return frame


# --- leaderboard rules ---------------------------------------------------------------------


@dataclass(frozen=True)
class Thresholds:
    """The scores a submission must reach for each medal, and the leaderboard's median."""

    gold: float
    silver: float
    bronze: float
    median: float


def _checked_scores(scores: Sequence[float]) -> list[float]:
    """The leaderboard as plain floats in rank order. An empty leaderboard is rejected (every
    rule below needs a row); NaN scores (blank cells) are kept where they are, as MLE-bench
    keeps them: a threshold that lands on one is NaN, and the median skips them."""
    values = [float(s) for s in scores]
    if not values:
        raise ValueError("the leaderboard has no scores")
    return values


def is_lower_better(scores: Sequence[float]) -> bool:
    """MLE-bench's direction rule: lower is better iff the first (best-ranked) score is below
    the last. A one-row leaderboard, one whose ends tie, or one with a NaN at either end counts
    as higher-is-better, as in MLE-bench (``read_scores`` refuses the last kind for a task).
    Raises ValueError for an empty leaderboard."""
    values = _checked_scores(scores)
    return values[0] < values[-1]


def medal_thresholds(scores: Sequence[float]) -> Thresholds:
    """The medal thresholds for a leaderboard given in rank order (best first).

    Kaggle's progression table as MLE-bench applies it, with ``pos(k)`` the k-th score (1-based)
    and ``n`` the number of teams::

        n          gold                 silver             bronze
        1–99       pos(max(1, ⌊.1n⌋))   pos(max(1, ⌊.2n⌋))   pos(max(1, ⌊.4n⌋))
        100–249    pos(10)              pos(max(1, ⌊.2n⌋))   pos(max(1, ⌊.4n⌋))
        250–999    pos(10 + ⌊.002n⌋)    pos(50)              pos(100)
        ≥ 1000     pos(10 + ⌊.002n⌋)    pos(max(1, ⌊.05n⌋))  pos(max(1, ⌊.1n⌋))

    The median is the median of all scores (the mean of the two middle ones for an even count,
    as pandas computes it). NaN scores (blank leaderboard cells) are handled as MLE-bench's
    pandas code handles them: they keep their positions, so a threshold that falls on one is
    NaN (no score can reach it), and the median skips them (NaN only if every score is NaN).
    Raises ValueError for an empty leaderboard.
    """
    values = _checked_scores(scores)
    n = len(values)

    def pos(k: int) -> float:
        return values[k - 1]

    # int() floors these non-negative products exactly as MLE-bench does.
    if n < 100:
        gold, silver, bronze = (
            pos(max(1, int(n * 0.1))),
            pos(max(1, int(n * 0.2))),
            pos(max(1, int(n * 0.4))),
        )
    elif n < 250:
        gold, silver, bronze = pos(10), pos(max(1, int(n * 0.2))), pos(max(1, int(n * 0.4)))
    elif n < 1000:
        gold, silver, bronze = pos(10 + int(n * 0.002)), pos(50), pos(100)
    else:
        gold, silver, bronze = (
            pos(10 + int(n * 0.002)),
            pos(max(1, int(n * 0.05))),
            pos(max(1, int(n * 0.1))),
        )
    scored = [v for v in values if not math.isnan(v)]
    median = statistics.median(scored) if scored else math.nan
    return Thresholds(gold=gold, silver=silver, bronze=bronze, median=median)


def rank_score(score: float | None, scores: Sequence[float]) -> dict[str, Any]:
    """Place a (rounded) score on a leaderboard, with MLE-bench's keys: ``gold_medal``,
    ``silver_medal``, ``bronze_medal``, ``above_median`` (plain bools) and ``gold_threshold``,
    ``silver_threshold``, ``bronze_threshold``, ``median_threshold`` (plain floats).

    A medal needs the threshold or better (ties win); medals are exclusive (gold, else silver,
    else bronze); ``above_median`` is strict. A None (invalid or missing) score wins nothing but
    the thresholds are still reported, so a report always says what it would have taken. A NaN
    score, or a NaN threshold, compares false as in MLE-bench: no medal, not above the median.
    """
    lower = is_lower_better(scores)
    t = medal_thresholds(scores)
    result: dict[str, Any] = {
        "gold_medal": False,
        "silver_medal": False,
        "bronze_medal": False,
        "above_median": False,
        "gold_threshold": float(t.gold),
        "silver_threshold": float(t.silver),
        "bronze_threshold": float(t.bronze),
        "median_threshold": float(t.median),
    }
    if score is None:
        return result

    def reaches(threshold: float) -> bool:
        return bool(score <= threshold) if lower else bool(score >= threshold)

    if reaches(t.gold):
        result["gold_medal"] = True
    elif reaches(t.silver):
        result["silver_medal"] = True
    elif reaches(t.bronze):
        result["bronze_medal"] = True
    result["above_median"] = bool(score < t.median) if lower else bool(score > t.median)
    return result


def leaderboard_percentile(score: float | None, scores: Sequence[float]) -> float:
    """The share (0–100) of leaderboard entries ``score`` strictly beats, in the board's
    direction: a tie beats nobody, an invalid or missing score (None) or a NaN score beats
    nobody, and a blank (NaN) entry is never beaten (there is no score to beat).

    A finer measure than medals for comparing strategies: it moves with every improvement,
    where a medal rate moves only when a threshold is crossed.
    """
    values = _checked_scores(scores)
    if score is None:
        return 0.0
    if is_lower_better(values):
        beaten = sum(score < s for s in values)
    else:
        beaten = sum(score > s for s in values)
    return round(100.0 * beaten / len(values), 4)


# --- task files ----------------------------------------------------------------------------


def read_leaderboard(path: Path) -> list[float]:
    """The ``score`` column of a leaderboard CSV, in file (rank) order.

    Parsed as MLE-bench's ``get_leaderboard`` parses it, with a plain ``pd.read_csv`` (pandas'
    default float parser, not the round-trip one it uses for submissions), so thresholds match
    its to the last digit on the same pandas. A blank score (or one pandas reads as missing,
    such as ``NaN``) stays in place as NaN, as in MLE-bench, which grades such a board without
    complaint (see :func:`medal_thresholds`); ``inf`` is a number. Raises TaskError naming the
    file for a missing file, a Git LFS pointer (the checkout never fetched the real file), a
    file pandas cannot read, a missing ``score`` column, no rows, or a score that is text (on
    which MLE-bench's own grading would crash).
    """
    if not path.is_file():
        raise TaskError(f"leaderboard not found: {path}", hint=LEADERBOARD_HINT)
    try:
        with path.open("rb") as fh:
            head = fh.read(len(LFS_PREFIX))
    except OSError as exc:
        raise TaskError(f"cannot read the leaderboard {path}: {exc.strerror}") from None
    if head.startswith(LFS_PREFIX):
        raise TaskError(
            f"{path} is a Git LFS pointer, not the leaderboard itself",
            hint="run `git lfs pull` in the MLE-bench checkout",
        )
    try:
        frame = pd.read_csv(path)
    except pd.errors.EmptyDataError:
        raise TaskError(f"leaderboard {path} is empty", hint=LEADERBOARD_HINT) from None
    except (ValueError, OSError) as exc:  # ParserError and UnicodeDecodeError are ValueErrors
        raise TaskError(
            f"leaderboard {path} is not a readable CSV: {one_line(exc)}", hint=LEADERBOARD_HINT
        ) from None
    if "score" not in frame.columns:
        columns = ", ".join(map(str, frame.columns))
        raise TaskError(
            f"leaderboard {path} has no 'score' column (its columns: {columns})",
            hint=LEADERBOARD_HINT,
        )
    raw = frame["score"]
    if raw.empty:
        raise TaskError(f"leaderboard {path} has no scores", hint=LEADERBOARD_HINT)
    if pd.api.types.is_bool_dtype(raw) or not pd.api.types.is_numeric_dtype(raw):
        numeric = pd.to_numeric(raw, errors="coerce")
        for row, (original, value) in enumerate(zip(raw.tolist(), numeric.tolist(), strict=True)):
            if isinstance(original, bool) or (pd.isna(value) and not pd.isna(original)):
                line = row + 2  # 1-based, after the header line
                raise TaskError(
                    f"leaderboard {path}: the score on line {line} is not a number ({original!r})",
                    hint=LEADERBOARD_HINT,
                )
        raw = numeric
    return [float(v) for v in raw.tolist()]


def load_grade_fn(folder: Path, spec: str) -> GradeFn:
    """The grading function a task folder's ``grader.grade_fn`` names (see ``task_code``)."""
    fn = load_task_function(folder, spec, "grader.grade_fn", "(submission, answers) -> score")
    return cast(GradeFn, fn)


# --- grading -------------------------------------------------------------------------------


ANSWERS_HINT = "prepare the task's data again (prepare.py, or mlebench prepare for MLE-bench)"


def load_answers(path: Path) -> Any:
    """The private answers, read as MLE-bench's ``load_answers`` reads them: a ``.csv`` file as a
    DataFrame (round-trip floats, like a submission), a ``.jsonl`` file as the list of its
    records (one JSON value per line; blank lines are skipped). The suffix is matched exactly,
    as MLE-bench matches it.

    A problem here is the task's fault, not the submission's, so it raises TaskError naming the
    file instead of quietly marking the submission invalid: a missing file, another suffix, an
    empty or unreadable CSV (MLE-bench would hand an empty CSV to the grader as an empty frame
    and fail every submission), or a line that is not JSON.
    """
    if not path.is_file():
        raise TaskError(f"answers not found: {path}", hint=ANSWERS_HINT)
    if path.suffix == ".csv":
        try:
            return _read_csv(path)
        except pd.errors.EmptyDataError:
            raise TaskError(f"the answers {path} are empty", hint=ANSWERS_HINT) from None
        except (ValueError, OSError) as exc:  # ParserError and UnicodeDecodeError are ValueErrors
            raise TaskError(f"cannot read the answers {path}: {one_line(exc)}") from None
    if path.suffix == ".jsonl":
        records: list[Any] = []
        number = 0
        try:
            with path.open(encoding="utf-8") as fh:
                for line in fh:
                    number += 1
                    if line.strip():
                        records.append(json.loads(line))
        except json.JSONDecodeError as exc:
            raise TaskError(
                f"the answers {path}: line {number} is not JSON ({exc.msg})", hint=ANSWERS_HINT
            ) from None
        except (ValueError, OSError) as exc:  # UnicodeDecodeError is a ValueError
            raise TaskError(f"cannot read the answers {path}: {one_line(exc)}") from None
        return records
    raise TaskError(
        f"the answers {path} are neither a .csv nor a .jsonl file",
        hint="MLE-bench reads answers from .csv or .jsonl files only (dataset.answers)",
    )


class UnreadableSubmission(ValueError):
    """A submission that cannot be read as MLE-bench reads submissions, or one the host refuses
    to open (see :mod:`podium.untrusted`). Its message is one line, ready to be a report's
    ``error``: ``cannot read the submission: <reason>``, or the refusal's own words."""


def _read_reason(exc: BaseException) -> str:
    """Why pandas could not read a file, in one line: the message alone where it speaks for
    itself (an encoding or tokenizing error), else ``Type: message``."""
    text = " ".join(str(exc).split())
    if not isinstance(exc, UnicodeError | pd.errors.ParserError) or not text:
        return one_line(exc)
    return text if len(text) <= MAX_REASON_CHARS else text[: MAX_REASON_CHARS - 1] + "…"


def _parse_submission(source: BinaryIO, limits: Bounds | None) -> pd.DataFrame:
    """The frame pandas reads from ``source``; with ``limits``, no more than their rows and
    one (pandas stops there: a file of millions of rows costs what a valid one does)."""
    rows = None if limits is None else limits.max_rows + 1
    try:
        frame: pd.DataFrame = pd.read_csv(source, nrows=rows, **_EXACT_FLOATS)
    except pd.errors.EmptyDataError:
        return pd.DataFrame()  # MLE-bench hands an empty file to the grader as an empty frame
    except MemoryError:
        raise  # this process's limit, not the file's fault
    except Exception as exc:  # whatever pandas makes of the bytes, the submission is unreadable
        if "out of memory" in str(exc):  # pandas' C parser reports its failed allocations so
            raise MemoryError(str(exc)) from None
        raise UnreadableSubmission(f"cannot read the submission: {_read_reason(exc)}") from None
    if limits is not None and (problem := limits.rows_problem(len(frame))) is not None:
        raise UnreadableSubmission(problem)
    return frame


def submission_bounds(answers: Path, sample: Path | None = None) -> Bounds:
    """The bounds a submission is held to before pandas reads it (see the module's docstring):
    from the answers (a ``.csv`` file; a ``.jsonl`` one has no header to compare with) and the
    sample submission, the widest of them."""
    named = {"the sample submission": sample} if sample is not None and sample.is_file() else {}
    if answers.suffix == ".csv":
        named["the answers"] = answers
    shown = " and ".join(named) or "the bounds' floors"
    return bounds(*named.values(), shown=f"the widest of {shown}" if len(named) > 1 else shown)


def read_submission(source: Path | bytes, limits: Bounds | None = None) -> pd.DataFrame:
    """A submission as the grader receives it: read exactly as MLE-bench's ``read_csv`` reads it
    (round-trip floats; an empty file is an empty DataFrame, which the grader then judges).

    ``source`` is the file's bytes, or its path: a path is opened through
    :func:`podium.untrusted.open_untrusted` (a solution wrote it: no link is followed, no FIFO
    or oversized file is read). With ``limits`` (:func:`submission_bounds`), a file out of them
    is refused on its first bytes, before pandas reads it, and pandas stops past their rows
    (a file with more is refused). Raises :class:`UnreadableSubmission`
    for anything pandas cannot parse (wrong encoding, unbalanced quotes, ragged rows), a refused
    file (with the refusal's message) or a missing one; never another exception for a bad file.
    """
    if isinstance(source, bytes):
        _within(source, len(source), limits)
        return _parse_submission(io.BytesIO(source), limits)
    cap = limits.max_bytes if limits is not None else MAX_UNTRUSTED_BYTES
    try:
        with open_untrusted(source, shown="the submission", max_bytes=cap) as fh:
            if limits is not None:
                _within(fh.read(limits.max_header_bytes + 1), os.fstat(fh.fileno()).st_size, limits)
                fh.seek(0)
            return _parse_submission(fh, limits)
    except Refused as exc:
        raise UnreadableSubmission(str(exc)) from None
    except FileNotFoundError:
        raise UnreadableSubmission(f"cannot read the submission: no file at {source}") from None
    except OSError as exc:
        raise UnreadableSubmission(f"cannot read the submission: {one_line(exc)}") from None


def _within(head: bytes, size: int, limits: Bounds | None) -> None:
    if limits is not None and (problem := bound_problem(head, size, limits)) is not None:
        raise UnreadableSubmission(problem)


def apply_grader(
    grade_fn: GradeFn, submission_df: pd.DataFrame, answers: Any
) -> tuple[float | None, str | None]:
    """Run a competition's grader as MLE-bench's ``Grader.__call__`` does.

    Returns ``(round(score, 5), None)`` for a number (a plain float, rounded by the result's own
    ``round`` as MLE-bench rounds it; other numeric types such as ``numpy.float32`` are made
    floats first). NaN is a score: MLE-bench reports it, so the submission counts as valid and
    wins nothing. Returns ``(None, reason)`` when the grader raises anything (MLE-bench's
    ``InvalidSubmissionError`` or any other exception: both mean an invalid submission) or
    returns something that is not a number (text, None, an array); ``reason`` is one line.
    """
    try:
        result = grade_fn(submission_df, answers)
    except Exception as exc:  # MLE-bench: any grader exception means an invalid submission
        return None, f"grader rejected the submission: {one_line(exc)}"
    try:
        if isinstance(result, str | bytes | bytearray):
            raise TypeError("text")
        if isinstance(result, float | int):  # numpy.float64 too: its own round, as MLE-bench
            value = float(round(result, 5))
        else:
            value = round(float(result), 5)
    except (TypeError, ValueError, OverflowError):
        shown = str(result)[:80]
        return None, f"grader returned {type(result).__name__} {shown!r}, not a number"
    return value, None


def score_submission(
    submission: Path, answers: Path, grade_fn: GradeFn, sample: Path | None = None
) -> tuple[float | None, str | None]:
    """``(round(grade, 5), None)`` (NaN included), or ``(None, reason)`` when the submission is
    invalid: read within :func:`submission_bounds` and graded by ``grade_fn`` in this process
    (on the host, only ever inside a grader worker). Raises TaskError for unusable answers."""
    answers_data = load_answers(answers)
    try:
        submission_df = read_submission(submission, submission_bounds(answers, sample))
    except UnreadableSubmission as exc:
        return None, str(exc)
    except MemoryError:
        return None, "cannot read the submission: out of memory"
    return apply_grader(grade_fn, submission_df, answers_data)


def score_in_worker(
    grade_fn: GradeFn, submission: str, answers: str, sample: str | None
) -> list[float | str | None]:
    """:func:`score_submission` as a grader worker's call (``GraderWorker.call``): paths as
    text, ``[score, error]`` back."""
    score, error = score_submission(
        Path(submission), Path(answers), grade_fn, Path(sample) if sample else None
    )
    return [score, error]


def _not_gradable(submission: Path) -> str | None:
    """Why MLE-bench would not grade ``submission`` at all (it grades a regular ``.csv`` file),
    or None."""
    try:
        if submission.is_file() and submission.suffix.lower() == ".csv":
            return None
        return (
            f"{submission} is not a .csv file"
            if submission.exists()
            else (f"no submission at {submission}")
        )
    except OSError as exc:  # a name too long, a path through a file
        return f"cannot read the submission: {one_line(exc)}"


def grade_submission(
    competition_id: str,
    submission: Path,
    answers: Path,
    grade_fn: GradeFn,
    leaderboard: Sequence[float],
    sandboxed: bool | None = None,
    sample: Path | None = None,
) -> GradeReport:
    """Grade one submission file as MLE-bench's ``grade_csv`` does.

    The submission exists when ``submission`` is a regular file with a ``.csv`` suffix; it is
    valid when ``grade_fn(submission_df, answers)`` returns a number (rounded to 5 decimals
    *before* it is compared with the thresholds; see :func:`apply_grader`). A NaN grade is a
    valid submission with a NaN score and no medal, as in MLE-bench. A missing, unreadable
    (:func:`read_submission`) or rejected submission gives ``score=None`` with the reason in
    ``error``: this function never raises for a bad submission. It raises TaskError only when
    the task's own answers are unusable (:func:`load_answers`). The submission is first held to
    :func:`submission_bounds` (the answers', and ``sample``'s when given).

    The grader runs in this process: a task grades through its grader worker instead (see
    the module's docstring), with :func:`grade_report`.
    """
    return grade_report(
        competition_id,
        submission,
        leaderboard,
        lambda path: score_submission(path, answers, grade_fn, sample),
        sandboxed,
    )


def grade_report(
    competition_id: str,
    submission: Path,
    leaderboard: Sequence[float],
    scorer: Scorer,
    sandboxed: bool | None = None,
) -> GradeReport:
    """MLE-bench's report on ``submission``, scored by ``scorer`` when the file is one MLE-bench
    grades (see :func:`grade_submission`): its leaderboard thresholds, medals and percentile."""
    score: float | None = None
    error = _not_gradable(submission)
    exists = error is None
    if exists:
        score, error = scorer(submission)
    ranked = rank_score(score, leaderboard)
    return GradeReport(
        competition_id=competition_id,
        score=score,
        gold_threshold=ranked["gold_threshold"],
        silver_threshold=ranked["silver_threshold"],
        bronze_threshold=ranked["bronze_threshold"],
        median_threshold=ranked["median_threshold"],
        any_medal=ranked["gold_medal"] or ranked["silver_medal"] or ranked["bronze_medal"],
        gold_medal=ranked["gold_medal"],
        silver_medal=ranked["silver_medal"],
        bronze_medal=ranked["bronze_medal"],
        above_median=ranked["above_median"],
        submission_exists=exists,
        valid_submission=score is not None,  # a NaN score is valid, as in MLE-bench
        is_lower_better=is_lower_better(leaderboard),
        created_at=utcnow(),
        submission_path=str(submission),
        sandboxed=sandboxed,
        error=error,
        leaderboard_percentile=leaderboard_percentile(score, leaderboard),
    )


# --- summaries -----------------------------------------------------------------------------


def aggregate_reports(reports: Iterable[GradeReport]) -> dict[str, Any]:
    """Counts over a set of reports, with the field names of MLE-bench's grading summary, and
    the reports themselves as JSON-ready dicts (``competition_reports``)."""
    items = list(reports)
    return {
        "total_runs": len(items),
        "total_runs_with_submissions": sum(r.submission_exists for r in items),
        "total_valid_submissions": sum(r.valid_submission for r in items),
        "total_medals": sum(r.any_medal for r in items),
        "total_gold_medals": sum(r.gold_medal for r in items),
        "total_silver_medals": sum(r.silver_medal for r in items),
        "total_bronze_medals": sum(r.bronze_medal for r in items),
        "total_above_median": sum(r.above_median for r in items),
        "competition_reports": [r.model_dump(mode="json") for r in items],
    }


def seed_summary(
    reports_by_seed: Mapping[int, Sequence[GradeReport]], task_ids: Sequence[str]
) -> dict[str, Any]:
    """The paper's headline numbers: per seed, the percentage of ``task_ids`` with a medal (and
    likewise gold, silver, bronze, above median, valid submission); across seeds, their mean and
    standard error of the mean (sample standard deviation, ddof=1, over √seeds).

    The denominator is always ``len(task_ids)``: a task without a report in a seed (a run that
    crashed or never started) counts as no medal, so failures cannot flatter the result. Reports
    for tasks outside ``task_ids`` are ignored. ``sem`` is None with a single seed.

    Shape: ``{"n_seeds", "n_tasks", "any_medal": {"per_seed": {seed: pct}, "mean", "sem"},
    "gold_medal": {...}, ...}``. Raises ValueError for no seeds, no tasks, repeated task ids,
    or two reports for one task in one seed (picking either would be an unstated choice).
    """
    if not reports_by_seed:
        raise ValueError("no seeds to summarise")
    if not task_ids:
        raise ValueError("no tasks to summarise")
    wanted = set(task_ids)
    if len(wanted) != len(task_ids):
        raise ValueError("task_ids repeats a task")
    per_seed: dict[str, dict[int, float]] = {field: {} for field in SUMMARY_FIELDS}
    for seed in sorted(reports_by_seed):
        by_task: dict[str, GradeReport] = {}
        for report in reports_by_seed[seed]:
            if report.competition_id not in wanted:
                continue
            if report.competition_id in by_task:
                raise ValueError(f"seed {seed} has two reports for {report.competition_id}")
            by_task[report.competition_id] = report
        for field in SUMMARY_FIELDS:
            hits = sum(bool(getattr(r, field)) for r in by_task.values())
            per_seed[field][seed] = hits / len(task_ids) * 100
    summary: dict[str, Any] = {"n_seeds": len(reports_by_seed), "n_tasks": len(task_ids)}
    for field in SUMMARY_FIELDS:
        values = list(per_seed[field].values())
        sem = statistics.stdev(values) / math.sqrt(len(values)) if len(values) > 1 else None
        summary[field] = {"per_seed": per_seed[field], "mean": statistics.fmean(values), "sem": sem}
    return summary
