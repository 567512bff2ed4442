"""Grades a subscription-churn submission: the log loss of its ``churn`` probabilities.

MLE-bench style: an invalid submission raises ``InvalidSubmissionError`` (a ``ValueError``) with
a message that says what is wrong; a valid one gets the mean binary log loss (cross-entropy) of
its probabilities against the private answers, matched by ``id`` (row order does not matter).
Lower is better.

A log loss needs probabilities, so each value must be a number in [0, 1]; a value outside it, a
missing, infinite or non-numeric one is rejected. Exact 0 and 1 are accepted and clipped to
[1e-15, 1 - 1e-15] (as Kaggle clips), so a confident wrong answer costs about 34.5, not
infinity.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from podium.benchmarks.grade_helpers import (
    InvalidSubmissionError,
    exact_columns,
    matching_ids,
    numbers,
    one_row_each,
    paired,
    refuse_where,
    whole_numbers,
)

__all__ = ["InvalidSubmissionError", "grade"]

ID = "id"
TARGET = "churn"
EPS = 1e-15


def grade(submission: pd.DataFrame, answers: pd.DataFrame) -> float:
    submission = exact_columns(submission, [ID, TARGET])
    one_row_each(submission, answers, "test subscriber")
    ids = whole_numbers(submission[ID], ID)
    ids = matching_ids(ids, answers[ID].astype("int64"), ID, "the test set")
    need = "every test subscriber needs a probability"
    probabilities = numbers(submission[TARGET], TARGET, "probabilities (finite numbers)", need)
    outside = (probabilities < 0) | (probabilities > 1)
    refuse_where(probabilities, outside, f"{TARGET} must hold probabilities between 0 and 1")
    pairs = paired(ids, probabilities, answers, ID, TARGET)
    p = np.clip(pairs["predicted"].to_numpy(dtype=float), EPS, 1 - EPS)
    y = pairs["actual"].to_numpy(dtype=float)
    return float(-np.mean(y * np.log(p) + (1 - y) * np.log(1 - p)))
