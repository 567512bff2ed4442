"""Grades a Support Tickets submission: multi-class log loss against the private answers.

MLE-bench style: an invalid submission raises ``InvalidSubmissionError`` (a ``ValueError``)
with a message that says what is wrong; a valid one gets Kaggle's multi-class log loss, rows
matched by ``id`` (row order and column order do not matter). As on Kaggle, each probability is
clipped to [1e-15, 1 - 1e-15] and each row is then divided by its sum, so the probabilities need
not add up to one; the score is the mean of -log(probability given to the true class). Lower is
better; a perfect submission scores about 1e-15 (rounded: 0.0).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

ID = "id"
TARGET = "queue"
CLASSES = ["account", "billing", "cancellation", "returns", "shipping", "technical"]
EPS = 1e-15


class InvalidSubmissionError(ValueError):
    """The submission does not have the required format."""


def grade(submission: pd.DataFrame, answers: pd.DataFrame) -> float:
    wanted = [ID, *CLASSES]
    columns = [str(c) for c in submission.columns]
    missing = [c for c in wanted if c not in columns]
    extra = [c for c in columns if c not in wanted]
    if missing or extra:
        raise InvalidSubmissionError(
            f"the submission must have exactly the columns {','.join(wanted)}; "
            f"missing: {missing or 'none'}, unexpected: {extra or 'none'}"
        )
    if len(columns) != len(set(columns)):
        raise InvalidSubmissionError(f"the submission repeats a column: {columns}")
    submission = submission.set_axis(columns, axis=1)
    if len(submission) != len(answers):
        raise InvalidSubmissionError(
            f"the submission has {len(submission)} rows; expected {len(answers)} "
            "(one per test ticket)"
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

    probabilities = np.column_stack([_probabilities(submission[c], c) for c in CLASSES])
    sums = probabilities.sum(axis=1)
    zero = ids[sums <= 0]
    if len(zero):
        raise InvalidSubmissionError(
            f"every row needs a positive probability for some class; {len(zero)} row(s) are all "
            f"zero, e.g. {ID} {sorted(zero)[:5]}"
        )

    truth = answers.set_index(answers[ID].astype("int64"))[TARGET].astype(str)
    unknown_labels = sorted(set(truth) - set(CLASSES))
    if unknown_labels:
        raise ValueError(f"the answers hold unknown classes {unknown_labels}")
    true_class = truth.loc[ids.to_numpy()].map(CLASSES.index).to_numpy()

    clipped = np.clip(probabilities, EPS, 1 - EPS)
    clipped /= clipped.sum(axis=1, keepdims=True)
    picked = clipped[np.arange(len(clipped)), true_class]
    return float(-np.log(picked).mean())


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


def _probabilities(values: pd.Series, column: str) -> np.ndarray:
    """A probability column as floats; raises for missing, non-numeric, infinite or negative
    values (a probability must be a finite number at least 0)."""
    if values.isna().any():
        raise InvalidSubmissionError(
            f"{column} has {int(values.isna().sum())} missing value(s); every row needs a "
            "probability for every class"
        )
    if pd.api.types.is_bool_dtype(values):
        raise InvalidSubmissionError(f"{column} must hold probabilities (numbers), not true/false")
    numbers = pd.to_numeric(values, errors="coerce")
    text = values[numbers.isna()]
    if len(text):
        raise InvalidSubmissionError(
            f"{column} must hold probabilities (numbers); found {[str(v) for v in text.iloc[:5]]}"
        )
    floats = numbers.to_numpy(dtype="float64")
    infinite = floats[~np.isfinite(floats)]
    if len(infinite):
        raise InvalidSubmissionError(
            f"{column} must hold finite probabilities; found {sorted(set(infinite))[:5]}"
        )
    negative = floats[floats < 0]
    if len(negative):
        raise InvalidSubmissionError(
            f"{column} must hold probabilities of at least 0; found {sorted(set(negative))[:5]}"
        )
    return floats
