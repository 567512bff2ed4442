"""Grades a Titanic submission: accuracy of ``Survived`` against the private answers.

MLE-bench style: an invalid submission raises ``InvalidSubmissionError`` (a ``ValueError``)
with a message that says what is wrong; a valid one gets the share of test passengers whose
``Survived`` it predicts correctly, matched by ``PassengerId`` (row order does not matter).
"""

from __future__ import annotations

import pandas as pd

from podium.benchmarks.grade_helpers import (
    InvalidSubmissionError,
    exact_columns,
    matching_ids,
    one_of,
    one_row_each,
    paired,
    whole_numbers,
)

__all__ = ["InvalidSubmissionError", "grade"]

ID = "PassengerId"
TARGET = "Survived"


def grade(submission: pd.DataFrame, answers: pd.DataFrame) -> float:
    submission = exact_columns(submission, [ID, TARGET])
    one_row_each(submission, answers, "test passenger")
    ids = whole_numbers(submission[ID], ID)
    ids = matching_ids(ids, answers[ID].astype("int64"), ID, "the test set")
    predicted = whole_numbers(submission[TARGET], TARGET, "0 or 1")
    one_of(predicted, (0, 1), f"{TARGET} must be 0 or 1")
    pairs = paired(ids, predicted, answers, ID, TARGET)
    return float((pairs["predicted"] == pairs["actual"]).mean())
