"""The bundled graders' shared submission checks (``podium.benchmarks.grade_helpers``): what each
helper accepts and returns, and what it refuses with which reason."""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Any

import numpy as np
import pandas as pd
import pytest

from podium.benchmarks.grade_helpers import (
    InvalidSubmissionError,
    class_probabilities,
    exact_columns,
    matching_ids,
    multiclass_log_loss,
    numbers,
    one_of,
    one_row_each,
    paired,
    refuse_where,
    text,
    true_classes,
    whole_numbers,
)


def refused(reason: str) -> AbstractContextManager[Any]:
    return pytest.raises(InvalidSubmissionError, match=reason)


def mixed(*values: object) -> pd.Series:
    """An object column, as a CSV with mixed cells or a hand-built frame gives."""
    return pd.Series(list(values), dtype=object)


def test_the_error_is_a_value_error() -> None:
    """MLE-bench and Podium's grading read a ValueError as "invalid submission"."""
    assert issubclass(InvalidSubmissionError, ValueError)


# --- columns and rows ------------------------------------------------------------------------


def test_exact_columns_accepts_any_order_and_names_them_as_text() -> None:
    frame = pd.DataFrame([[0.5, 1]], columns=["score", "id"])
    assert list(exact_columns(frame, ["id", "score"]).columns) == ["score", "id"]
    numbered = pd.DataFrame([[1, 2]], columns=[0, "id"])
    assert list(exact_columns(numbered, ["id", "0"]).columns) == ["0", "id"]


def test_exact_columns_refuses_a_repeated_missing_or_unexpected_column() -> None:
    with refused(r"repeats a column: \['id', 'score', 'score'\]"):
        exact_columns(pd.DataFrame([[1, 2, 3]], columns=["id", "score", "score"]), ["id", "score"])
    with refused(r"exactly the columns id,score; missing: \['score'\], unexpected: \['Score'\]"):
        exact_columns(pd.DataFrame([[1, 2]], columns=["id", "Score"]), ["id", "score"])
    with refused(r"missing: none, unexpected: \['extra'\]"):
        exact_columns(pd.DataFrame([[1, 2, 3]], columns=["id", "score", "extra"]), ["id", "score"])


def test_one_row_each_counts_rows() -> None:
    answers = pd.DataFrame({"id": [1, 2, 3]})
    one_row_each(answers.copy(), answers, "test house")
    with refused(r"has 2 rows; expected 3 \(one per test house\)"):
        one_row_each(answers.iloc[:2], answers, "test house")


# --- values ----------------------------------------------------------------------------------


def test_refuse_where_quotes_the_first_five_offending_values() -> None:
    values = pd.Series([-1, 2, -3, -4, -5, -6, -7])
    refuse_where(values, values > 10, "v must be at most 10")  # nothing offends: no error
    with refused(r"^v must not be negative; found \['-1', '-3', '-4', '-5', '-6'\]$"):
        refuse_where(values, (values < 0).to_numpy(), "v must not be negative")


def test_numbers_reads_numbers_and_numbers_written_as_text() -> None:
    values = pd.Series([1, 2.5, -3], index=[7, 8, 9])
    parsed = numbers(values, "v")
    assert parsed.dtype == "float64" and list(parsed.index) == [0, 1, 2]
    assert list(parsed) == [1.0, 2.5, -3.0]
    assert list(numbers(mixed("1.5", 2, "-0"), "v")) == [1.5, 2.0, 0.0]


@pytest.mark.parametrize(
    ("values", "reason"),
    [
        (pd.Series([1.0, None]), r"^v has 1 missing value\(s\); every row needs one$"),
        (pd.Series([True, False]), r"^v must hold finite numbers, not true/false$"),
        (mixed(0.5, True), r"^v must hold finite numbers, not true/false$"),
        (mixed(0.5, np.bool_(False)), r"not true/false"),
        (mixed(0.5, "lots"), r"^v must hold finite numbers; found \['lots'\]$"),
        (pd.Series([1.0, np.inf, -np.inf]), r"found \['inf', '-inf'\]$"),
        (mixed("1", "inf"), r"found \['inf'\]$"),
    ],
    ids=["missing", "bool column", "true in an object column", "numpy false", "text", "inf",
         "inf as text"],
)  # fmt: skip
def test_numbers_refuses(values: pd.Series, reason: str) -> None:
    with refused(reason):
        numbers(values, "v", needed="every row needs one")


def test_numbers_says_what_the_column_holds() -> None:
    with refused(r"^p must hold probabilities, not true/false$"):
        numbers(pd.Series([True]), "p", "probabilities")
    with refused(r"^p has 1 missing value\(s\)$"):  # no reason given, none said
        numbers(pd.Series([None], dtype=object), "p")


def test_whole_numbers_gives_int64_and_refuses_a_fraction() -> None:
    parsed = whole_numbers(mixed("3", 4.0, 5), "id")
    assert parsed.dtype == "int64" and list(parsed) == [3, 4, 5]
    with refused(r"^id must hold whole numbers; found \['2.5'\]$"):
        whole_numbers(pd.Series([1.0, 2.5]), "id")
    with refused(r"^label must hold digits 0-9; found \['seven'\]$"):
        whole_numbers(mixed(1, "seven"), "label", "digits 0-9")
    with refused("id must hold whole numbers, not true/false"):
        whole_numbers(pd.Series([True, False]), "id")
    with refused(r"found \['inf'\]"):
        whole_numbers(pd.Series([1.0, np.inf]), "id")


def test_text_gives_text_and_refuses_only_missing() -> None:
    parsed = text(pd.Series(["a_2015-01", 7], index=[4, 5]), "id")
    assert list(parsed) == ["a_2015-01", "7"] and list(parsed.index) == [0, 1]
    with refused(r"^id has 1 missing value\(s\)$"):
        text(pd.Series(["a", None]), "id")


def test_one_of_refuses_what_is_not_allowed() -> None:
    one_of(pd.Series([0, 1, 1]), (0, 1), "s must be 0 or 1")
    with refused(r"^s must be 0 or 1; found \['2', '-1'\]$"):
        one_of(pd.Series([0, 2, 1, -1]), (0, 1), "s must be 0 or 1")
    with refused(r"one of the shapes disk, ring; found \['Disk'\]$"):
        one_of(
            pd.Series(["disk", "Disk"]),
            ("disk", "ring"),
            "label must be one of the shapes disk, ring",
        )


# --- ids and row matching --------------------------------------------------------------------


def test_matching_ids_returns_ids_that_are_exactly_the_test_sets() -> None:
    expected = pd.Series([1, 2, 3])
    ids = pd.Series([3, 1, 2])
    assert matching_ids(ids, expected, "id", "the test set") is ids


@pytest.mark.parametrize(
    ("ids", "reason"),
    [
        ([1, 1, 3], r"^id values repeat in the submission, e.g. \[1\]$"),
        (
            [1, 2, 9],
            r"do not match the test set: 1 unknown \(e.g. \[9\]\), 1 absent \(e.g. \[3\]\)",
        ),
        ([1, 2], r"0 unknown \(e.g. \[\]\), 1 absent \(e.g. \[3\]\)"),
    ],
    ids=["repeated", "unknown and absent", "absent only"],
)
def test_matching_ids_refuses(ids: list[int], reason: str) -> None:
    with refused(reason):
        matching_ids(pd.Series(ids), pd.Series([1, 2, 3]), "id", "the test set")


def test_matching_ids_compares_text_ids_as_text() -> None:
    with refused(r"do not match test.csv: 1 unknown \(e.g. \['x_2016'\]\)"):
        matching_ids(
            pd.Series(["x_2015", "x_2016"]), pd.Series(["x_2015", "y_2015"]), "id", "test.csv"
        )


def test_paired_matches_rows_on_the_ids_in_the_submissions_order() -> None:
    answers = pd.DataFrame({"id": [10, 20, 30], "y": [1.0, 2.0, 3.0]})
    pairs = paired(pd.Series([30, 10, 20]), np.array([3.5, 1.5, 2.5]), answers, "id", "y")
    assert list(pairs.columns) == ["id", "predicted", "actual"]
    assert list(pairs["id"]) == [30, 10, 20]
    assert list(pairs["predicted"] - pairs["actual"]) == [0.5, 0.5, 0.5]
    text_answers = pd.DataFrame({"id": ["b", "a"], "y": ["cat", "dog"]})
    pairs = paired(pd.Series(["a", "b"]), pd.Series(["dog", "dog"]), text_answers, "id", "y")
    assert list(pairs["actual"]) == ["dog", "cat"]


# --- class probabilities ---------------------------------------------------------------------

CLASSES = ["cat", "dog"]


def probabilities(cat: list[object], dog: list[object]) -> pd.DataFrame:
    return pd.DataFrame({"id": [7, 8], "cat": cat, "dog": dog})


def test_class_probabilities_is_a_table_in_the_submissions_order() -> None:
    table = class_probabilities(
        probabilities([0.2, 3], ["0.8", 0]), CLASSES, "id", pd.Series([7, 8])
    )
    assert table.dtype == np.float64
    assert table.tolist() == [[0.2, 0.8], [3.0, 0.0]]  # rows need not sum to one


@pytest.mark.parametrize(
    ("cat", "dog", "reason"),
    [
        ([0.2, -0.1], [0.8, 1.1], r"^cat must hold probabilities of at least 0; found \['-0.1'\]$"),
        ([0.5, 0.0], [0.5, 0.0], r"1 row\(s\) are all zero, e.g. id \[8\]$"),
        ([0.5, None], [0.5, 1.0], r"cat has 1 missing value\(s\); every row needs a probability"),
        (
            [0.5, 0.5],
            [True, False],
            r"dog must hold probabilities \(finite numbers\), not true/false",
        ),
        (
            [0.5, "high"],
            [0.5, 0.5],
            r"cat must hold probabilities \(finite numbers\); found \['high'\]",
        ),
        ([0.5, np.inf], [0.5, 0.5], r"found \['inf'\]"),
    ],
    ids=["negative", "all-zero row", "missing", "true/false", "text", "inf"],
)
def test_class_probabilities_refuses(cat: list[object], dog: list[object], reason: str) -> None:
    with refused(reason):
        class_probabilities(probabilities(cat, dog), CLASSES, "id", pd.Series([7, 8]))


def test_true_classes_gives_each_rows_class_position_in_the_submissions_order() -> None:
    answers = pd.DataFrame({"id": [7, 8, 9], "animal": ["dog", "cat", "dog"]})
    found = true_classes(pd.Series([9, 8, 7]), answers, "id", "animal", CLASSES)
    assert found.tolist() == [1, 0, 1]


def test_true_classes_blames_the_answers_for_an_unknown_class() -> None:
    answers = pd.DataFrame({"id": [7], "animal": ["cow"]})
    with pytest.raises(ValueError, match=r"the answers hold unknown classes \['cow'\]") as caught:
        true_classes(pd.Series([7]), answers, "id", "animal", CLASSES)
    assert not isinstance(caught.value, InvalidSubmissionError)


def test_multiclass_log_loss_is_kaggles_clipped_and_renormalised() -> None:
    true_class = np.array([0, 1, 2])
    rows = np.array([[0.7, 0.2, 0.1], [0.1, 0.8, 0.1], [0.3, 0.3, 0.4]])
    expected = -np.mean(np.log([0.7, 0.8, 0.4]))
    assert multiclass_log_loss(rows, true_class) == pytest.approx(expected)
    # rows that do not add up to one are divided by their sums; a zero is clipped, not -inf
    assert multiclass_log_loss(rows / 2, true_class) == pytest.approx(expected)
    certain_miss = multiclass_log_loss(np.array([[0.0, 1.0]]), np.array([0]))
    assert certain_miss == pytest.approx(-np.log(1e-15 / (1 + 1e-15)))
