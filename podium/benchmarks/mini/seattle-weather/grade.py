"""Grades a Seattle weather submission: multi-class log loss against the private answers.

MLE-bench style: an invalid submission raises ``InvalidSubmissionError`` (a ``ValueError``)
with a message that says what is wrong; a valid one gets Kaggle's multi-class log loss, rows
matched by ``id`` (row order and column order do not matter). As on Kaggle, each probability is
clipped to [1e-15, 1 - 1e-15] and each row is then divided by its sum, so the probabilities need
not add up to one; the score is the mean of -log(probability given to the true class). Lower is
better; a perfect submission scores about 1e-15 (rounded: 0.0).
"""

from __future__ import annotations

import pandas as pd

from podium.benchmarks.grade_helpers import (
    InvalidSubmissionError,
    class_probabilities,
    exact_columns,
    matching_ids,
    multiclass_log_loss,
    one_row_each,
    true_classes,
    whole_numbers,
)

__all__ = ["InvalidSubmissionError", "grade"]

ID = "id"
TARGET = "weather"
CLASSES = ["drizzle", "fog", "rain", "snow", "sun"]


def grade(submission: pd.DataFrame, answers: pd.DataFrame) -> float:
    submission = exact_columns(submission, [ID, *CLASSES])
    one_row_each(submission, answers, "test day")
    ids = whole_numbers(submission[ID], ID)
    ids = matching_ids(ids, answers[ID].astype("int64"), ID, "the test set")
    probabilities = class_probabilities(submission, CLASSES, ID, ids)
    return multiclass_log_loss(probabilities, true_classes(ids, answers, ID, TARGET, CLASSES))
