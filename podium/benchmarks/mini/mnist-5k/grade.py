"""Grades a mini MNIST submission: the accuracy of ``label`` against the private answers.

MLE-bench style: an invalid submission raises ``InvalidSubmissionError`` (a ``ValueError``) with
a one-line message saying what is wrong; a valid one gets the share of test images whose digit it
names correctly, matched by ``id`` (row order does not matter). Labels must be whole numbers 0-9:
a typo such as ``10`` or ``3.5`` is a broken submission, not merely a wrong answer, so it is
rejected instead of being scored as a miss.
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

ID = "id"
TARGET = "label"
DIGITS = range(10)


def grade(submission: pd.DataFrame, answers: pd.DataFrame) -> float:
    submission = exact_columns(submission, [ID, TARGET])
    one_row_each(submission, answers, "test image")
    ids = whole_numbers(submission[ID], ID, "whole numbers (the test images' file names)")
    ids = matching_ids(ids, answers[ID].astype("int64"), ID, "the test images")
    labels = whole_numbers(submission[TARGET], TARGET, "digits 0-9")
    one_of(labels, DIGITS, f"{TARGET} must be a digit 0-9")
    pairs = paired(ids, labels, answers, ID, TARGET)
    return float((pairs["predicted"] == pairs["actual"]).mean())
