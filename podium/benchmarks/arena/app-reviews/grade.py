"""Grades an App Reviews submission: ROC-AUC of ``recommended`` against the private answers.

MLE-bench style: an invalid submission raises ``InvalidSubmissionError`` (a ``ValueError``)
with a one-line message saying what is wrong; a valid one gets the area under the ROC curve of
its ``recommended`` scores for the recommending (1) reviews against the others (0), matched by
``id`` (row order does not matter). The AUC depends only on the order of the scores, so any finite
number is accepted (a probability, a log-odds, a vote count); missing, infinite and non-numeric
values, and true/false, are rejected.
"""

from __future__ import annotations

import pandas as pd
from sklearn.metrics import roc_auc_score

from podium.benchmarks.grade_helpers import (
    InvalidSubmissionError,
    exact_columns,
    matching_ids,
    numbers,
    one_row_each,
    paired,
    whole_numbers,
)

__all__ = ["InvalidSubmissionError", "grade"]

ID = "id"
TARGET = "recommended"


def grade(submission: pd.DataFrame, answers: pd.DataFrame) -> float:
    submission = exact_columns(submission, [ID, TARGET])
    one_row_each(submission, answers, "test review")
    ids = whole_numbers(submission[ID], ID, "whole numbers (the test reviews' ids)")
    ids = matching_ids(ids, answers[ID].astype("int64"), ID, "the test set")
    wanted = "finite numbers (a score or probability)"
    scores = numbers(submission[TARGET], TARGET, wanted, "every test review needs a score")
    pairs = paired(ids, scores, answers, ID, TARGET)
    return float(roc_auc_score(pairs["actual"].astype(int), pairs["predicted"]))
