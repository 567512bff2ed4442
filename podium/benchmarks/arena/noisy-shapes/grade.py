"""Grades a noisy-shapes submission: the accuracy of ``label`` against the private answers.

MLE-bench style: an invalid submission raises ``InvalidSubmissionError`` (a ``ValueError``) with
a one-line message saying what is wrong; a valid one gets the share of test images whose shape
it names correctly, matched by ``id`` (row order does not matter). Labels must be one of the six
shape names, spelt exactly: a typo such as ``circle`` or ``Disk`` is a broken submission, not
merely a wrong answer, so it is rejected instead of being scored as a miss.
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
    text,
    whole_numbers,
)

__all__ = ["InvalidSubmissionError", "grade"]

ID = "id"
TARGET = "label"
SHAPES = ("disk", "ring", "square", "frame", "triangle", "plus")


def grade(submission: pd.DataFrame, answers: pd.DataFrame) -> float:
    submission = exact_columns(submission, [ID, TARGET])
    one_row_each(submission, answers, "test image")
    ids = whole_numbers(submission[ID], ID, "whole numbers (the test images' file names)")
    ids = matching_ids(ids, answers[ID].astype("int64"), ID, "the test images")
    labels = text(submission[TARGET], TARGET)
    one_of(labels, SHAPES, f"{TARGET} must be one of the shapes {', '.join(SHAPES)}")
    pairs = paired(ids, labels, answers, ID, TARGET)
    return float((pairs["predicted"] == pairs["actual"].astype(str)).mean())
