"""Grades an Ames submission: the RMSE between the logs of predicted and actual ``SalePrice``.

MLE-bench style: an invalid submission raises ``InvalidSubmissionError`` (a ``ValueError``) with
a message that says what is wrong; a valid one gets

    sqrt(mean((log(predicted) - log(actual)) ** 2))

over the test houses, matched to the answers by ``Id`` (row order does not matter). Lower is
better and 0 is perfect. Working on logs makes an error on a cheap house count as much as the
same relative error on an expensive one. The log needs positive prices, so a price that is
missing, not a number, infinite, zero or negative makes the submission invalid.
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

ID = "Id"
TARGET = "SalePrice"


def grade(submission: pd.DataFrame, answers: pd.DataFrame) -> float:
    submission = exact_columns(submission, [ID, TARGET])
    one_row_each(submission, answers, "test house")
    ids = whole_numbers(submission[ID], ID)
    ids = matching_ids(ids, answers[ID].astype("int64"), ID, "the test set")
    wanted = "finite numbers (prices in dollars)"
    prices = numbers(submission[TARGET], TARGET, wanted, "every test house needs a price")
    refuse_where(
        submission[TARGET],
        prices <= 0,
        f"{TARGET} must be greater than 0 (the score takes its log)",
    )
    pairs = paired(ids, prices, answers, ID, TARGET)
    errors = np.log(pairs["predicted"].to_numpy()) - np.log(pairs["actual"].to_numpy("float64"))
    return float(np.sqrt(np.mean(errors**2)))
