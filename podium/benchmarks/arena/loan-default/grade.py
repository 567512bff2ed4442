"""Grades a loan-default submission: the ROC AUC of its ``default`` scores against the answers.

MLE-bench style: an invalid submission raises ``InvalidSubmissionError`` (a ``ValueError``) with
a message that says what is wrong; a valid one gets the area under the ROC curve of its scores,
matched to the answers by ``id`` (row order does not matter).

AUC depends only on the order of the scores, so any finite real number is accepted: a
probability, a log-odds or a raw decision value all give the same AUC as long as higher means
"more likely to default". Requiring [0, 1] would reject meaningful submissions for no gain; a
missing, infinite or non-numeric score is rejected because it has no place in that order.
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
TARGET = "default"


def grade(submission: pd.DataFrame, answers: pd.DataFrame) -> float:
    submission = exact_columns(submission, [ID, TARGET])
    one_row_each(submission, answers, "test applicant")
    ids = whole_numbers(submission[ID], ID)
    ids = matching_ids(ids, answers[ID].astype("int64"), ID, "the test set")
    wanted = "finite numbers (scores or probabilities)"
    scores = numbers(submission[TARGET], TARGET, wanted, "every test applicant needs a score")
    pairs = paired(ids, scores, answers, ID, TARGET)
    return float(roc_auc_score(pairs["actual"].astype("int64"), pairs["predicted"]))
