"""Grades a delivery-times submission: the root mean squared logarithmic error (RMSLE).

MLE-bench style: an invalid submission raises ``InvalidSubmissionError`` (a ``ValueError``) with
a message that says what is wrong; a valid one gets

    sqrt(mean((log(1 + predicted) - log(1 + actual)) ** 2))

over the test orders, matched to the answers by ``id`` (row order does not matter). Lower is
better and 0 is perfect. Working on logs makes an error on a short delivery count about as much as
the same relative error on a long one. A time must be a finite number at or above 0 (a
negative time has no logarithm of 1 + time to speak of), so a time that is missing, not a
number, infinite or negative makes the submission invalid.
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
TARGET = "delivery_minutes"


def grade(submission: pd.DataFrame, answers: pd.DataFrame) -> float:
    submission = exact_columns(submission, [ID, TARGET])
    one_row_each(submission, answers, "test order")
    ids = whole_numbers(submission[ID], ID)
    ids = matching_ids(ids, answers[ID].astype("int64"), ID, "the test set")
    wanted = "finite numbers (minutes)"
    minutes = numbers(submission[TARGET], TARGET, wanted, "every test order needs a time")
    refuse_where(
        submission[TARGET],
        minutes < 0,
        f"{TARGET} must be 0 or more (the score takes the log of 1 + time)",
    )
    pairs = paired(ids, minutes, answers, ID, TARGET)
    predicted, actual = pairs["predicted"].to_numpy(), pairs["actual"].to_numpy("float64")
    errors = np.log1p(predicted) - np.log1p(actual)
    return float(np.sqrt(np.mean(errors**2)))
