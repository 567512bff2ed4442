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
TARGET = "count"


def grade(submission: pd.DataFrame, answers: pd.DataFrame) -> float:
    submission = exact_columns(submission, [ID, TARGET])
    one_row_each(submission, answers, "test hour")
    ids = whole_numbers(submission[ID], ID)
    ids = matching_ids(ids, answers[ID].astype("int64"), ID, "the test set")
    counts = numbers(submission[TARGET], TARGET, needed="every test hour needs a prediction")
    refuse_where(
        submission[TARGET], counts < 0, f"{TARGET} must be at least 0 (a number of rentals)"
    )
    pairs = paired(ids, counts, answers, ID, TARGET)
    predicted, actual = pairs["predicted"].to_numpy(), pairs["actual"].to_numpy("float64")
    return float(np.sqrt(np.mean((np.log1p(predicted) - np.log1p(actual)) ** 2)))
