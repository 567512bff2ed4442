"""Grades a diamond-prices submission: the RMSE between the logs of predicted and actual ``price``.

MLE-bench style: an invalid submission raises ``InvalidSubmissionError`` (a ``ValueError``) with
a message that says what is wrong; a valid one gets

    sqrt(mean((log(predicted) - log(actual)) ** 2))

over the test diamonds, matched to the answers by ``id`` (row order does not matter). Lower is
better and 0 is perfect. Working on logs makes an error on a cheap stone count as much as the
same relative error on an expensive one. The log needs positive prices, so a price that is
missing, not a number, infinite, zero or negative makes the submission invalid.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

ID = "id"
TARGET = "price"


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
            "(one per test diamond)"
        )

    ids = _whole_numbers(submission[ID])
    repeated = ids[ids.duplicated()]
    if len(repeated):
        raise InvalidSubmissionError(
            f"{ID} values repeat in the submission, e.g. {sorted(set(repeated))[:5]}"
        )
    expected = set(answers[ID].astype("int64"))
    unknown = sorted(set(ids) - expected)
    absent = sorted(expected - set(ids))
    if unknown or absent:
        raise InvalidSubmissionError(
            f"the submission's {ID} values do not match the test set: "
            f"{len(unknown)} unknown (e.g. {unknown[:5]}), {len(absent)} absent "
            f"(e.g. {absent[:5]})"
        )

    prices = _positive_numbers(submission[TARGET])
    pairs = pd.DataFrame({ID: ids.to_numpy(), "predicted": prices.to_numpy()}).merge(
        pd.DataFrame({ID: answers[ID].astype("int64"), "actual": answers[TARGET]}),
        on=ID,
        how="inner",
        validate="one_to_one",
    )
    errors = np.log(pairs["predicted"].to_numpy()) - np.log(pairs["actual"].to_numpy("float64"))
    return float(np.sqrt(np.mean(errors**2)))


def _whole_numbers(values: pd.Series) -> pd.Series:
    """The ids as int64; raises when one is missing, not a number or not a whole number."""
    if values.isna().any():
        raise InvalidSubmissionError(f"{ID} has {int(values.isna().sum())} missing value(s)")
    if pd.api.types.is_bool_dtype(values):
        raise InvalidSubmissionError(f"{ID} must hold whole numbers, not true/false")
    numbers = pd.to_numeric(values, errors="coerce").astype("float64")
    bad = values[~np.isfinite(numbers) | (numbers != numbers.round())]
    if len(bad):
        raise InvalidSubmissionError(
            f"{ID} must hold whole numbers; found {[str(v) for v in bad.iloc[:5]]}"
        )
    return numbers.astype("int64").reset_index(drop=True)


def _positive_numbers(values: pd.Series) -> pd.Series:
    """The prices as float64; raises when one is missing, not a number, infinite or <= 0."""
    if values.isna().any():
        raise InvalidSubmissionError(
            f"{TARGET} has {int(values.isna().sum())} missing value(s); every test diamond "
            "needs a price"
        )
    if pd.api.types.is_bool_dtype(values):
        raise InvalidSubmissionError(f"{TARGET} must hold positive prices, not true/false")
    numbers = pd.to_numeric(values, errors="coerce").astype("float64")
    bad = values[~np.isfinite(numbers)]
    if len(bad):
        raise InvalidSubmissionError(
            f"{TARGET} must hold finite numbers (prices in dollars); "
            f"found {[str(v) for v in bad.iloc[:5]]}"
        )
    not_positive = numbers[numbers <= 0]
    if len(not_positive):
        raise InvalidSubmissionError(
            f"{TARGET} must be greater than 0 (the score takes its log); "
            f"found {len(not_positive)} value(s) <= 0, e.g. {not_positive.iloc[:5].tolist()}"
        )
    return numbers.reset_index(drop=True)
