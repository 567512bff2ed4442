"""Would the competition's own grader accept this submission? Asked without the answers.

MLE-bench's graders decide validity, and they disagree with any fixed rule: some accept blank
cells, some align rows on a text column, some never look at ids. So the node check asks the
grader itself, with public **stand-ins** for the private answers built from the sample
submission:

* the sample itself;
* the sample with each constant numeric column alternating 0 and 1 (a metric such as ROC AUC
  refuses answers of one class);
* the sample with its constant numeric columns one-hot in turn (class-probability formats).

A stand-in is **trusted** only if the grader accepts the sample against it with a finite
score; only where none does, one it accepts with NaN (MLE-bench counts a NaN score as a valid
submission, but a metric that gives up on one-class answers never looks at the predictions).
A submission the grader accepts against a trusted stand-in is valid. One it rejects against
every trusted stand-in is checked once more against the stand-in that carries the
submission's own predictions under the sample's keys: a rejection that depends only on the
stand-in's made-up values (a label the sample never uses) must not cost a valid submission.
Rejected there too, it is invalid, with the grader's reason. Where no stand-in is trusted
(the answers have another shape), the verdict is "unknown" and the caller falls back to the
structural check.

The grader never sees the private answers here, so the verdict says nothing about the score.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import pandas as pd

from podium.benchmarks.grading import UnreadableSubmission, apply_grader, read_submission
from podium.submission_check import Bounds

GradeFn = Callable[[pd.DataFrame, Any], Any]
Outcome = Literal["valid", "invalid", "unknown"]


@dataclass(frozen=True)
class Verdict:
    outcome: Outcome
    reason: str = ""


def stand_ins(sample: pd.DataFrame, keys: Sequence[str]) -> list[pd.DataFrame]:
    """The candidate stand-ins for the answers, in the order they are tried."""
    constant = [
        name
        for name in sample.columns
        if name not in keys
        and pd.api.types.is_numeric_dtype(sample[name])
        and sample[name].nunique(dropna=False) == 1
    ]
    found = [sample]
    if constant and len(sample) > 1:
        alternating = sample.copy()
        for name in constant:
            alternating[name] = [i % 2 for i in range(len(sample))]
        found.append(alternating)
    if len(constant) > 1:
        one_hot = sample.copy()
        for j, name in enumerate(constant):
            one_hot[name] = [int(i % len(constant) == j) for i in range(len(sample))]
        found.append(one_hot)
    return found


class OutOfMemory(BaseException):
    """The grader ran out of the memory this process may use: that says nothing about the
    submission (MLE-bench grades without the cap), so it must not read as a rejection (a
    BaseException: ``apply_grader`` turns every Exception into one)."""


def guarded(grade_fn: GradeFn) -> GradeFn:
    """``grade_fn`` with its MemoryError raised as :class:`OutOfMemory`."""

    def guarded_fn(submission: pd.DataFrame, answers: Any) -> Any:
        try:
            return grade_fn(submission, answers)
        except MemoryError:
            raise OutOfMemory from None

    return guarded_fn


class StandInCheck:
    """The grader, the sample and the stand-ins the grader was seen to accept the sample with;
    a submission is read within ``limits`` (its bounds against the sample) when given."""

    def __init__(
        self,
        grade_fn: GradeFn,
        sample: pd.DataFrame,
        keys: Sequence[str],
        limits: Bounds | None = None,
    ) -> None:
        self.grade_fn, self.sample, self.keys = guarded(grade_fn), sample, list(keys)
        self.limits = limits
        self.trusted: list[pd.DataFrame] = []
        try:
            scores = [(s, self._score(sample, s)) for s in stand_ins(sample, keys)]
        except OutOfMemory:
            return
        finite = [s for s, score in scores if score is not None and math.isfinite(score)]
        self.trusted = finite or [s for s, score in scores if score is not None]

    def _accepts(self, submission: pd.DataFrame, answers: pd.DataFrame) -> tuple[bool, str]:
        score, reason = self._graded(submission, answers)
        return score is not None, reason or ""

    def _score(self, submission: pd.DataFrame, answers: pd.DataFrame) -> float | None:
        return self._graded(submission, answers)[0]

    def _graded(
        self, submission: pd.DataFrame, answers: pd.DataFrame
    ) -> tuple[float | None, str | None]:
        return apply_grader(self.grade_fn, submission.copy(), answers.copy())

    def verdict(self, data: bytes | Path) -> Verdict:
        """Valid, invalid (with the grader's reason) or unknown, for a submission's bytes or
        its file (read as :func:`read_submission` reads a path)."""
        try:
            submission = read_submission(data, self.limits)
        except UnreadableSubmission as exc:
            return Verdict("invalid", str(exc))
        except MemoryError:
            return Verdict("unknown", "reading the submission ran out of memory")
        if not self.trusted:
            return Verdict("unknown", "the grader rejects the sample against every stand-in")
        try:
            return self._judge(submission)
        except OutOfMemory:
            return Verdict("unknown", "the grader ran out of memory")

    def _judge(self, submission: pd.DataFrame) -> Verdict:
        first_reason = ""
        for answers in self.trusted:
            accepted, reason = self._accepts(submission, answers)
            if accepted:
                return Verdict("valid")
            first_reason = first_reason or reason
        own = self._with_own_predictions(submission)
        if own is not None and self._accepts(submission, own)[0]:
            return Verdict("valid")
        return Verdict("invalid", f"the competition's grader rejects it: {first_reason}")

    def _with_own_predictions(self, submission: pd.DataFrame) -> pd.DataFrame | None:
        """The sample's keys, and any column with a distinct value per row (an id the public
        data does not name), with the submission's other columns, row by row; None when the
        submission's shape does not allow it."""
        columns = list(self.sample.columns)
        if len(submission) != len(self.sample) or not set(columns) <= set(submission.columns):
            return None
        mixed = self.sample.copy()
        for name in columns:
            if name not in self.keys and not self.sample[name].is_unique:
                mixed[name] = submission[name].to_numpy()
        return mixed
