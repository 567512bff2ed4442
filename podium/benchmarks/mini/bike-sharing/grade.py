"""Grades a Bike Sharing Demand submission: RMSLE of ``count`` against the private answers.

MLE-bench style: an invalid submission raises ``InvalidSubmissionError`` (a ``ValueError``)
with a message that says what is wrong; a valid one gets the root mean squared logarithmic
error, sqrt(mean((log(1 + predicted) - log(1 + actual))^2)), rows matched by ``id`` (row order
does not matter). Lower is better; a perfect submission scores 0. Predictions must be finite
numbers at least 0 (the logarithm is undefined below -1, and a negative count makes no sense);
they need not be whole numbers.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

ID = "id"
TARGET = "count"


class InvalidSubmissionError(ValueError):
    """The submission does not have the required format."""


def grade(submission: pd.DataFrame, answers: pd.DataFrame) -> float:
    columns = [str(c) for c in submission.columns]
    missing = [c for c in (ID, TARGET) if c not in columns]
    extra = [c for c in columns if c not in (ID, TARGET)]
    if missing or extra:
        raise InvalidSubmissionError(
            f"the submission must have exactly the columns {ID},{TARGET}; "
            f"missing: {missing or 'none'}, unexpected: {extra or 'none'}"
        )
    if len(columns) != len(set(columns)):
        raise InvalidSubmissionError(f"the submission repeats a column: {columns}")
    submission = submission.set_axis(columns, axis=1)
    if len(submission) != len(answers):
        raise InvalidSubmissionError(
            f"the submission has {len(submission)} rows; expected {len(answers)} "
            "(one per test hour)"
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
            f"the submission's {ID} values do not match the test set: "
            f"{len(unknown)} unknown (e.g. {unknown[:5]}), {len(absent)} absent "
            f"(e.g. {absent[:5]})"
        )

    predicted = _counts(submission[TARGET])
    actual = (
        answers.set_index(answers[ID].astype("int64"))[TARGET]
        .loc[ids.to_numpy()]
        .to_numpy(dtype="float64")
    )
    return float(np.sqrt(np.mean((np.log1p(predicted) - np.log1p(actual)) ** 2)))


def _ids(values: pd.Series) -> pd.Series:
    """The ids as int64; raises when one is missing, not a number or not a whole number."""
    if values.isna().any():
        raise InvalidSubmissionError(f"{ID} has {int(values.isna().sum())} missing value(s)")
    if pd.api.types.is_bool_dtype(values):
        raise InvalidSubmissionError(f"{ID} must hold whole numbers, not true/false")
    numbers = pd.to_numeric(values, errors="coerce").astype("float64")
    bad = values[~np.isfinite(numbers) | (numbers != numbers.round())]
    if len(bad):
        raise InvalidSubmissionError(
            f"{ID} must hold whole numbers; found {[str(v) for v in bad.iloc[:5]]}"
        )
    return numbers.astype("int64").reset_index(drop=True)


def _counts(values: pd.Series) -> np.ndarray:
    """The predictions as floats; raises for missing, non-numeric, infinite or negative ones."""
    if values.isna().any():
        raise InvalidSubmissionError(
            f"{TARGET} has {int(values.isna().sum())} missing value(s); every test hour needs "
            "a prediction"
        )
    if pd.api.types.is_bool_dtype(values):
        raise InvalidSubmissionError(f"{TARGET} must hold numbers, not true/false")
    numbers = pd.to_numeric(values, errors="coerce")
    text = values[numbers.isna()]
    if len(text):
        raise InvalidSubmissionError(
            f"{TARGET} must hold numbers; found {[str(v) for v in text.iloc[:5]]}"
        )
    floats = numbers.to_numpy(dtype="float64")
    infinite = floats[~np.isfinite(floats)]
    if len(infinite):
        raise InvalidSubmissionError(
            f"{TARGET} must hold finite numbers; found {sorted(set(infinite))[:5]}"
        )
    negative = floats[floats < 0]
    if len(negative):
        raise InvalidSubmissionError(
            f"{TARGET} must be at least 0 (a number of rentals); found {sorted(set(negative))[:5]}"
        )
    return floats
