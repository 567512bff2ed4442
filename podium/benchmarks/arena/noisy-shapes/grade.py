"""Grades a noisy-shapes submission: the accuracy of ``label`` against the private answers.

MLE-bench style: an invalid submission raises ``InvalidSubmissionError`` (a ``ValueError``) with
a one-line message saying what is wrong; a valid one gets the share of test images whose shape
it names correctly, matched by ``id`` (row order does not matter). Labels must be one of the six
shape names, spelt exactly: a typo such as ``circle`` or ``Disk`` is a broken submission, not
merely a wrong answer, so it is rejected instead of being scored as a miss.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

ID = "id"
TARGET = "label"
SHAPES = ("disk", "ring", "square", "frame", "triangle", "plus")


class InvalidSubmissionError(ValueError):
    """The submission does not have the required format."""


def grade(submission: pd.DataFrame, answers: pd.DataFrame) -> float:
    columns = [str(c) for c in submission.columns]
    if len(columns) != len(set(columns)):
        raise InvalidSubmissionError(f"the submission repeats a column: {columns}")
    missing = [c for c in (ID, TARGET) if c not in columns]
    extra = [c for c in columns if c not in (ID, TARGET)]
    if missing or extra:
        raise InvalidSubmissionError(
            f"the submission must have exactly the columns {ID},{TARGET}; "
            f"missing: {missing or 'none'}, unexpected: {extra or 'none'}"
        )
    submission = submission.set_axis(columns, axis=1)
    if len(submission) != len(answers):
        raise InvalidSubmissionError(
            f"the submission has {len(submission)} rows; expected {len(answers)} "
            "(one per test image)"
        )

    ids = _ids(submission[ID])
    duplicated = ids[ids.duplicated()]
    if len(duplicated):
        raise InvalidSubmissionError(
            f"{ID} values repeat in the submission, e.g. {sorted(set(duplicated))[:5]}"
        )
    expected = set(answers[ID].astype("int64"))
    unknown = sorted(set(ids) - expected)
    absent = sorted(expected - set(ids))
    if unknown or absent:
        raise InvalidSubmissionError(
            f"the submission's {ID} values do not match the test images: "
            f"{len(unknown)} unknown (e.g. {unknown[:5]}), {len(absent)} absent (e.g. {absent[:5]})"
        )

    labels = submission[TARGET]
    if labels.isna().any():
        raise InvalidSubmissionError(f"{TARGET} has {int(labels.isna().sum())} missing value(s)")
    predicted = labels.astype(str).reset_index(drop=True)
    wrong = predicted[~predicted.isin(SHAPES)]
    if len(wrong):
        raise InvalidSubmissionError(
            f"{TARGET} must be one of the shapes {', '.join(SHAPES)}; "
            f"found {sorted(set(wrong))[:5]}"
        )

    pairs = pd.DataFrame({ID: ids.to_numpy(), "predicted": predicted.to_numpy()}).merge(
        pd.DataFrame({ID: answers[ID].astype("int64"), "actual": answers[TARGET].astype(str)}),
        on=ID,
        how="inner",
        validate="one_to_one",
    )
    return float((pairs["predicted"] == pairs["actual"]).mean())


def _ids(values: pd.Series) -> pd.Series:
    """The ids as int64; raises when one is missing, not a number or not a whole number."""
    if values.isna().any():
        raise InvalidSubmissionError(f"{ID} has {int(values.isna().sum())} missing value(s)")
    if (
        pd.api.types.is_bool_dtype(values)
        or values.map(lambda v: isinstance(v, bool | np.bool_)).any()
    ):
        raise InvalidSubmissionError(f"{ID} must hold whole numbers, not true/false")
    numbers = pd.to_numeric(values, errors="coerce").astype("float64")
    bad = values[~np.isfinite(numbers) | (numbers != numbers.round())]
    if len(bad):
        raise InvalidSubmissionError(
            f"{ID} must hold whole numbers (the test images' file names); "
            f"found {[str(v) for v in bad.iloc[:5]]}"
        )
    return numbers.astype("int64").reset_index(drop=True)
