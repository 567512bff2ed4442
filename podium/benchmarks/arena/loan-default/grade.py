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

import numpy as np
import pandas as pd
from sklearn.metrics import roc_auc_score

ID = "id"
TARGET = "default"


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
            "(one per test applicant)"
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

    scores = _finite_numbers(submission[TARGET])
    pairs = pd.DataFrame({ID: ids.to_numpy(), "score": scores.to_numpy()}).merge(
        pd.DataFrame({ID: answers[ID].astype("int64"), "actual": answers[TARGET]}),
        on=ID,
        how="inner",
        validate="one_to_one",
    )
    return float(roc_auc_score(pairs["actual"].astype("int64"), pairs["score"]))


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


def _finite_numbers(values: pd.Series) -> pd.Series:
    """The scores as float64; raises when one is missing, not a number or infinite."""
    if values.isna().any():
        raise InvalidSubmissionError(
            f"{TARGET} has {int(values.isna().sum())} missing value(s); every test applicant "
            "needs a score"
        )
    if pd.api.types.is_bool_dtype(values):
        raise InvalidSubmissionError(
            f"{TARGET} must hold finite numbers (scores or probabilities), not true/false"
        )
    numbers = pd.to_numeric(values, errors="coerce").astype("float64")
    bad = values[~np.isfinite(numbers)]
    if len(bad):
        raise InvalidSubmissionError(
            f"{TARGET} must hold finite numbers (scores or probabilities); "
            f"found {[str(v) for v in bad.iloc[:5]]}"
        )
    return numbers.reset_index(drop=True)
