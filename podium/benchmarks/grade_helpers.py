"""What every bundled task's grader checks before it scores: the submission's columns, rows, ids
and values, each refused with one readable reason.

Bundled graders (the ``mini`` and ``arena`` suites) are loaded by path, as MLE-bench's are, and
import these helpers as MLE-bench's graders import ``mlebench.grade_helpers``. One owner for
each rule means every task refuses the same malformed submission for the same reason: a
true/false is not a number, a text or infinite value is not a finite number, an id must be
given once and the ids must be exactly the test set's. What stays in a task's ``grade.py`` is
its own: the metric, its columns, which values are possible (classes, a range).

Every check raises :class:`InvalidSubmissionError` (a ``ValueError``, which is what MLE-bench
and Podium's grading read as "invalid submission") with the first few offending values.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

import numpy as np
import pandas as pd

SHOWN = 5  # offending values quoted in a message


class InvalidSubmissionError(ValueError):
    """The submission does not have the required format."""


def exact_columns(submission: pd.DataFrame, columns: Sequence[str]) -> pd.DataFrame:
    """``submission`` with text column names, if they are exactly ``columns`` (any order)."""
    names = [str(c) for c in submission.columns]
    if len(names) != len(set(names)):
        raise InvalidSubmissionError(f"the submission repeats a column: {names}")
    missing = [c for c in columns if c not in names]
    extra = [c for c in names if c not in columns]
    if missing or extra:
        raise InvalidSubmissionError(
            f"the submission must have exactly the columns {','.join(columns)}; "
            f"missing: {missing or 'none'}, unexpected: {extra or 'none'}"
        )
    return submission.set_axis(names, axis=1)


def one_row_each(submission: pd.DataFrame, answers: pd.DataFrame, each: str) -> None:
    """One submission row per answer (``each`` names what a row is: "test passenger")."""
    if len(submission) != len(answers):
        raise InvalidSubmissionError(
            f"the submission has {len(submission)} rows; expected {len(answers)} (one per {each})"
        )


def refuse_where(values: pd.Series, bad: pd.Series | np.ndarray, message: str) -> None:
    """Raise ``message; found [...]`` with the first offending values, if any is ``bad``."""
    found = values[np.asarray(bad, dtype=bool)]
    if len(found):
        raise InvalidSubmissionError(f"{message}; found {[str(v) for v in found.iloc[:SHOWN]]}")


def _present(values: pd.Series, column: str, needed: str) -> None:
    if values.isna().any():
        why = f"; {needed}" if needed else ""
        raise InvalidSubmissionError(
            f"{column} has {int(values.isna().sum())} missing value(s){why}"
        )


def _not_booleans(values: pd.Series, column: str, wanted: str) -> None:
    """True/false would read as 1/0: refused, in a boolean column or mixed into a text one."""
    if pd.api.types.is_bool_dtype(values) or (
        values.dtype == object and values.map(lambda v: isinstance(v, bool | np.bool_)).any()
    ):
        raise InvalidSubmissionError(f"{column} must hold {wanted}, not true/false")


def numbers(
    values: pd.Series, column: str, wanted: str = "finite numbers", needed: str = ""
) -> pd.Series:
    """``values`` as float64 (renumbered from 0), refusing missing, true/false, text and
    infinite values; ``wanted`` says what the column holds, ``needed`` why none may be
    missing ("every row needs a forecast")."""
    _present(values, column, needed)
    _not_booleans(values, column, wanted)
    parsed = pd.to_numeric(values, errors="coerce").astype("float64")
    refuse_where(values, ~np.isfinite(parsed), f"{column} must hold {wanted}")
    return parsed.reset_index(drop=True)


def whole_numbers(values: pd.Series, column: str, wanted: str = "whole numbers") -> pd.Series:
    """``values`` as int64 (renumbered from 0), refusing what :func:`numbers` refuses and any
    fraction (an id of 3001.5 or a label of 0.5 is a broken file, not a near miss)."""
    parsed = numbers(values, column, wanted)
    refuse_where(values, (parsed != parsed.round()).to_numpy(), f"{column} must hold {wanted}")
    return parsed.astype("int64")


def text(values: pd.Series, column: str) -> pd.Series:
    """``values`` as text (renumbered from 0), refusing missing ones."""
    _present(values, column, "")
    return values.astype(str).reset_index(drop=True)


def matching_ids(ids: pd.Series, expected: pd.Series, column: str, test_set: str) -> pd.Series:
    """``ids`` if each is given once and together they are exactly ``expected`` (the answers'
    ids, already of the same type); ``test_set`` names where the ids come from."""
    repeated = ids[ids.duplicated()]
    if len(repeated):
        raise InvalidSubmissionError(
            f"{column} values repeat in the submission, e.g. {sorted(set(repeated))[:SHOWN]}"
        )
    unknown = sorted(set(ids) - set(expected))
    absent = sorted(set(expected) - set(ids))
    if unknown or absent:
        raise InvalidSubmissionError(
            f"the submission's {column} values do not match {test_set}: "
            f"{len(unknown)} unknown (e.g. {unknown[:SHOWN]}), {len(absent)} absent "
            f"(e.g. {absent[:SHOWN]})"
        )
    return ids


def one_of(values: pd.Series, allowed: Collection[object], message: str) -> None:
    """Refuse a value outside ``allowed`` (``message`` says what is allowed)."""
    refuse_where(values, ~values.isin(list(allowed)), message)


def paired(
    ids: pd.Series, predicted: pd.Series | np.ndarray, answers: pd.DataFrame, column: str,
    target: str,
) -> pd.DataFrame:  # fmt: skip
    """``predicted`` and the answers' ``actual`` side by side, rows matched on the ids (which
    :func:`matching_ids` checked), in the submission's order."""
    truth = pd.DataFrame(
        {column: answers[column].astype(ids.dtype).to_numpy(), "actual": answers[target]}
    )
    mine = pd.DataFrame({column: ids.to_numpy(), "predicted": np.asarray(predicted)})
    return mine.merge(truth, on=column, how="inner", validate="one_to_one")


def class_probabilities(
    submission: pd.DataFrame, classes: Sequence[str], column: str, ids: pd.Series
) -> np.ndarray:
    """One probability column per class, rows in the submission's order: finite numbers of at
    least 0, and each row positive somewhere (it is normalised before scoring)."""
    wanted = "probabilities (finite numbers)"
    need = "every row needs a probability for every class"
    table = np.column_stack([numbers(submission[c], c, wanted, need) for c in classes])
    for i, name in enumerate(classes):
        refuse_where(
            pd.Series(table[:, i]), table[:, i] < 0, f"{name} must hold probabilities of at least 0"
        )
    zero = ids[table.sum(axis=1) <= 0]
    if len(zero):
        raise InvalidSubmissionError(
            f"every row needs a positive probability for some class; {len(zero)} row(s) are all "
            f"zero, e.g. {column} {sorted(zero)[:SHOWN]}"
        )
    return table


def true_classes(
    ids: pd.Series, answers: pd.DataFrame, column: str, target: str, classes: Sequence[str]
) -> np.ndarray:
    """The position in ``classes`` of each row's true class (the answers' ``target``, rows
    matched on the ids, which :func:`matching_ids` checked), in the submission's order: what a
    :func:`class_probabilities` table is scored against (a 2-D table, which :func:`paired` does
    not pair). A class outside ``classes`` in the answers is the task's fault, not the
    submission's: a plain ``ValueError``."""
    truth = answers.set_index(answers[column].astype(ids.dtype))[target].astype(str)
    unknown = sorted(set(truth) - set(classes))
    if unknown:
        raise ValueError(f"the answers hold unknown classes {unknown}")
    return truth.loc[ids.to_numpy()].map(list(classes).index).to_numpy()


def multiclass_log_loss(
    probabilities: np.ndarray, true_class: np.ndarray, eps: float = 1e-15
) -> float:
    """Kaggle's multi-class log loss: each probability clipped to [eps, 1 - eps], each row
    divided by its sum (so rows need not add up to one), then the mean of -log(the probability
    given to the row's true class)."""
    clipped = np.clip(probabilities, eps, 1 - eps)
    clipped /= clipped.sum(axis=1, keepdims=True)
    picked = clipped[np.arange(len(clipped)), true_class]
    return float(-np.log(picked).mean())
