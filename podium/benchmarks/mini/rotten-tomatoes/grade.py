"""Grades a Rotten Tomatoes submission: ROC-AUC of ``sentiment`` against the private answers.

MLE-bench style: an invalid submission raises ``InvalidSubmissionError`` (a ``ValueError``)
with a one-line message saying what is wrong; a valid one gets the area under the ROC curve of
its ``sentiment`` scores for the fresh (1) reviews against the rotten (0) ones, matched by ``id``
(row order does not matter). The AUC depends only on the order of the scores, so any finite
number is accepted (a probability, a log-odds, a vote count); missing, infinite and non-numeric
values, and true/false, are rejected.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.metrics import roc_auc_score

ID = "id"
TARGET = "sentiment"


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
            "(one per test review)"
        )

    ids = _numbers(submission[ID], ID, "whole numbers (the test reviews' ids)")
    if (ids != ids.round()).any():
        bad = submission[ID][(ids != ids.round()).to_numpy()]
        raise InvalidSubmissionError(
            f"{ID} must hold whole numbers; found {[str(v) for v in bad.iloc[:5]]}"
        )
    ids = ids.astype("int64")
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
            f"the submission's {ID} values do not match the test set: "
            f"{len(unknown)} unknown (e.g. {unknown[:5]}), {len(absent)} absent (e.g. {absent[:5]})"
        )

    scores = _numbers(submission[TARGET], TARGET, "finite numbers (a score or probability)")
    pairs = pd.DataFrame({ID: ids.to_numpy(), "score": scores.to_numpy()}).merge(
        pd.DataFrame({ID: answers[ID].astype("int64"), "actual": answers[TARGET]}),
        on=ID,
        how="inner",
        validate="one_to_one",
    )
    return float(roc_auc_score(pairs["actual"].astype(int), pairs["score"]))


def _numbers(values: pd.Series, column: str, wanted: str) -> pd.Series:
    """``values`` as float64; raises when one is missing, not a number or infinite."""
    if values.isna().any():
        raise InvalidSubmissionError(f"{column} has {int(values.isna().sum())} missing value(s)")
    if (
        pd.api.types.is_bool_dtype(values)
        or values.map(lambda v: isinstance(v, bool | np.bool_)).any()
    ):
        raise InvalidSubmissionError(f"{column} must hold {wanted}, not true/false")
    numbers = pd.to_numeric(values, errors="coerce").astype("float64")
    bad = values[~np.isfinite(numbers.to_numpy())]
    if len(bad):
        raise InvalidSubmissionError(
            f"{column} must hold {wanted}; found {[str(v) for v in bad.iloc[:5]]}"
        )
    return numbers.reset_index(drop=True)
