"""Grades a mini MNIST submission: the accuracy of ``label`` against the private answers.

MLE-bench style: an invalid submission raises ``InvalidSubmissionError`` (a ``ValueError``) with
a one-line message saying what is wrong; a valid one gets the share of test images whose digit it
names correctly, matched by ``id`` (row order does not matter). Labels must be whole numbers 0-9:
a typo such as ``10`` or ``3.5`` is a broken submission, not merely a wrong answer, so it is
rejected instead of being scored as a miss.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

ID = "id"
TARGET = "label"
DIGITS = range(10)


class InvalidSubmissionError(ValueError):
    """The submission does not have the required format."""


def grade(submission: pd.DataFrame, answers: pd.DataFrame) -> float:
    columns = [str(c) for c in submission.columns]
    if len(columns) != len(set(columns)):
        raise InvalidSubmissionError(f"the submission repeats a column: {columns}")
    missing = [c for c in (ID, TARGET) if c not in columns]
    extra = [c for c in columns if c not in (ID, TARGET)]
    if missing or extra:
        raise InvalidSubmissionError(
            f"the submission must have exactly the columns {ID},{TARGET}; "
            f"missing: {missing or 'none'}, unexpected: {extra or 'none'}"
        )
    if len(submission) != len(answers):
        raise InvalidSubmissionError(
            f"the submission has {len(submission)} rows; expected {len(answers)} "
            "(one per test image)"
        )

    ids = _whole_numbers(submission[ID], ID, "whole numbers (the test images' file names)")
    duplicated = ids[ids.duplicated()]
    if len(duplicated):
        raise InvalidSubmissionError(
            f"{ID} values repeat in the submission, e.g. {sorted(set(duplicated))[:5]}"
        )
    expected = set(answers[ID].astype("int64"))
    unknown = sorted(set(ids) - expected)
    absent = sorted(expected - set(ids))
    if unknown or absent:
        raise InvalidSubmissionError(
            f"the submission's {ID} values do not match the test images: "
            f"{len(unknown)} unknown (e.g. {unknown[:5]}), {len(absent)} absent (e.g. {absent[:5]})"
        )

    predicted = _whole_numbers(submission[TARGET], TARGET, "digits 0-9")
    wrong = predicted[~predicted.isin(DIGITS)]
    if len(wrong):
        raise InvalidSubmissionError(
            f"{TARGET} must be a digit 0-9; found {sorted(set(wrong))[:5]}"
        )

    pairs = pd.DataFrame({ID: ids.to_numpy(), "predicted": predicted.to_numpy()}).merge(
        pd.DataFrame({ID: answers[ID].astype("int64"), "actual": answers[TARGET]}),
        on=ID,
        how="inner",
        validate="one_to_one",
    )
    return float((pairs["predicted"] == pairs["actual"]).mean())


def _whole_numbers(values: pd.Series, column: str, wanted: str) -> pd.Series:
    """``values`` as int64; raises when one is missing, not a number or not a whole number."""
    if values.isna().any():
        raise InvalidSubmissionError(f"{column} has {int(values.isna().sum())} missing value(s)")
    if (
        pd.api.types.is_bool_dtype(values)
        or values.map(lambda v: isinstance(v, bool | np.bool_)).any()
    ):
        raise InvalidSubmissionError(f"{column} must hold {wanted}, not true/false")
    numbers = pd.to_numeric(values, errors="coerce")
    finite = numbers.notna() & numbers.abs().lt(float("inf"))
    bad = values[~finite | (numbers != numbers.round())]
    if len(bad):
        raise InvalidSubmissionError(
            f"{column} must hold {wanted}; found {[str(v) for v in bad.iloc[:5]]}"
        )
    return numbers.astype("int64").reset_index(drop=True)
