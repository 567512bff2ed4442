"""Grades a building-energy submission: the mean absolute error (MAE), in MWh.

MLE-bench style: an invalid submission raises ``InvalidSubmissionError`` (a ``ValueError``) with
a message that says what is wrong; a valid one gets

    mean(|predicted - actual|)

over the test buildings, matched to the answers by ``id`` (row order does not matter). Lower is
better and 0 is perfect. An error of 10 MWh costs the same on a small school as on a large
clinic: the survey budgets energy in MWh, not in percent. A use must be a finite number; a
negative one is valid (the absolute error needs no sign, and refusing it would turn a model's
small overshoot below 0 on a tiny building into no score at all) and simply costs its error.
A use that is missing, not a number or infinite makes the submission invalid.
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
    whole_numbers,
)

__all__ = ["InvalidSubmissionError", "grade"]

ID = "id"
TARGET = "energy_mwh"


def grade(submission: pd.DataFrame, answers: pd.DataFrame) -> float:
    submission = exact_columns(submission, [ID, TARGET])
    one_row_each(submission, answers, "test building")
    ids = whole_numbers(submission[ID], ID)
    ids = matching_ids(ids, answers[ID].astype("int64"), ID, "the test set")
    wanted = "finite numbers (MWh)"
    used = numbers(submission[TARGET], TARGET, wanted, "every test building needs a use")
    pairs = paired(ids, used, answers, ID, TARGET)
    predicted, actual = pairs["predicted"].to_numpy(), pairs["actual"].to_numpy("float64")
    return float(np.mean(np.abs(predicted - actual)))
