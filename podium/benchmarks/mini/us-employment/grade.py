"""Grades a US-employment forecast: sMAPE (in percent) of ``value`` against the private answers.

MLE-bench style: an invalid submission raises ``InvalidSubmissionError`` (a ``ValueError``)
with a message that says what is wrong; a valid one gets

    sMAPE = mean over rows of 200 * |F - A| / (|A| + |F|)

with a row where forecast and actual are both 0 counting 0. Lower is better: 0 is perfect and
200 the worst (every row off by a whole sign or predicted 0). Rows are matched by ``id``, so row
order does not matter. Forecasts must be finite and not negative: they are counts of employed
persons, and a negative one is a bug in the forecaster rather than a forecast.
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
    text,
)

__all__ = ["InvalidSubmissionError", "grade", "smape"]

ID = "id"
TARGET = "value"


def grade(submission: pd.DataFrame, answers: pd.DataFrame) -> float:
    submission = exact_columns(submission, [ID, TARGET])
    one_row_each(submission, answers, "row of test.csv")
    ids = matching_ids(text(submission[ID], ID), answers[ID].astype(str), ID, "test.csv")
    forecast = numbers(submission[TARGET], TARGET, needed="every row needs a forecast")
    refuse_where(
        submission[TARGET], forecast < 0, f"{TARGET} must not be negative (employment counts)"
    )
    pairs = paired(ids, forecast, answers, ID, TARGET)
    return smape(pairs["actual"].to_numpy("float64"), pairs["predicted"].to_numpy())


def smape(actual: np.ndarray, forecast: np.ndarray) -> float:
    """Mean of 200 * |F - A| / (|A| + |F|) in percent; a row with A = F = 0 counts 0."""
    denominator = np.abs(actual) + np.abs(forecast)
    safe = np.where(denominator == 0, 1.0, denominator)
    terms = np.where(denominator == 0, 0.0, 200.0 * np.abs(forecast - actual) / safe)
    return float(terms.mean())
