"""Grades a regional-sales forecast: sMAPE (in percent) of ``value`` against the private answers.

MLE-bench style: an invalid submission raises ``InvalidSubmissionError`` (a ``ValueError``)
with a message that says what is wrong; a valid one gets

    sMAPE = mean over rows of 200 * |F - A| / (|A| + |F|)

with a row where forecast and actual are both 0 counting 0. Lower is better: 0 is perfect and
200 the worst (every row off by a whole sign or predicted 0). Rows are matched by ``id``, so row
order does not matter. Forecasts must be finite and not negative: they are sales, and a
negative one is a bug in the forecaster rather than a forecast.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

ID = "id"
TARGET = "value"


class InvalidSubmissionError(ValueError):
    """The submission does not have the required format."""


def grade(submission: pd.DataFrame, answers: pd.DataFrame) -> float:
    columns = [str(c) for c in submission.columns]
    missing = [c for c in (ID, TARGET) if c not in columns]
    extra = [c for c in columns if c not in (ID, TARGET)]
    if missing or extra:
        raise InvalidSubmissionError(
            f"the submission must have exactly the columns {ID},{TARGET}; "
            f"missing: {missing or 'none'}, unexpected: {extra or 'none'}"
        )
    if len(columns) != len(set(columns)):
        raise InvalidSubmissionError(f"the submission repeats a column: {columns}")
    if len(submission) != len(answers):
        raise InvalidSubmissionError(
            f"the submission has {len(submission)} rows; expected {len(answers)} "
            "(one per row of test.csv)"
        )

    raw_ids = submission[ID]
    if raw_ids.isna().any():
        raise InvalidSubmissionError(f"{ID} has {int(raw_ids.isna().sum())} missing value(s)")
    ids = raw_ids.astype(str).reset_index(drop=True)
    duplicated = ids[ids.duplicated()]
    if len(duplicated):
        raise InvalidSubmissionError(
            f"{ID} values repeat in the submission, e.g. {sorted(set(duplicated))[:5]}"
        )
    expected = set(answers[ID].astype(str))
    unknown = sorted(set(ids) - expected)
    absent = sorted(expected - set(ids))
    if unknown or absent:
        raise InvalidSubmissionError(
            f"the submission's {ID} values do not match test.csv: "
            f"{len(unknown)} unknown (e.g. {unknown[:5]}), {len(absent)} absent "
            f"(e.g. {absent[:5]})"
        )

    forecast = _forecasts(submission[TARGET])
    pairs = pd.DataFrame({ID: ids, "forecast": forecast.to_numpy()}).merge(
        pd.DataFrame({ID: answers[ID].astype(str), "actual": answers[TARGET].astype("float64")}),
        on=ID,
        how="inner",
        validate="one_to_one",
    )
    return smape(pairs["actual"].to_numpy(), pairs["forecast"].to_numpy())


def smape(actual: np.ndarray, forecast: np.ndarray) -> float:
    """Mean of 200 * |F - A| / (|A| + |F|) in percent; a row with A = F = 0 counts 0."""
    denominator = np.abs(actual) + np.abs(forecast)
    safe = np.where(denominator == 0, 1.0, denominator)
    terms = np.where(denominator == 0, 0.0, 200.0 * np.abs(forecast - actual) / safe)
    return float(terms.mean())


def _forecasts(values: pd.Series) -> pd.Series:
    """``values`` as float64; raises when one is missing, not a finite number, or negative."""
    if values.isna().any():
        raise InvalidSubmissionError(
            f"{TARGET} has {int(values.isna().sum())} missing value(s); every row needs a forecast"
        )
    if pd.api.types.is_bool_dtype(values):
        raise InvalidSubmissionError(f"{TARGET} must hold numbers, not true/false")
    numbers = pd.to_numeric(values, errors="coerce")
    bad = values[numbers.isna()]
    if len(bad):
        raise InvalidSubmissionError(
            f"{TARGET} must hold numbers; found {[str(v) for v in bad.iloc[:5]]}"
        )
    numbers = numbers.astype("float64")
    infinite = values[~np.isfinite(numbers)]
    if len(infinite):
        raise InvalidSubmissionError(
            f"{TARGET} must hold finite numbers; found {[str(v) for v in infinite.iloc[:5]]}"
        )
    negative = values[numbers < 0]
    if len(negative):
        raise InvalidSubmissionError(
            f"{TARGET} must not be negative (sales); found {[str(v) for v in negative.iloc[:5]]}"
        )
    return numbers.reset_index(drop=True)
