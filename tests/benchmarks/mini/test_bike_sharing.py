"""The bundled mini Bike Sharing Demand competition: its data preparation, grader and
leaderboard."""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable
from types import ModuleType

import numpy as np
import pandas as pd
import pytest
import yaml

from podium.benchmarks.folder import FolderTask
from tests.support import MINI, with_cell
from tests.support import grade_with as grade

FOLDER = MINI / "bike-sharing"
TASK_ID = "mini/bike-sharing"
RAW_SHA256 = "ac6950ae6f11efcc69c29d6bb13e8881c001e27d36434660d59444a1414f712c"
LEAKY = {"casual", "registered", "bikers"}
FEATURES = [
    *["date", "season", "mnth", "day", "hr", "holiday", "weekday", "workingday"],
    *["weathersit", "temp", "atemp", "hum", "windspeed"],
]


def rmsle(predicted: np.ndarray, actual: np.ndarray) -> float:
    return float(np.sqrt(np.mean((np.log1p(predicted) - np.log1p(actual)) ** 2)))


# --- the raw data and the folder ------------------------------------------------------------


def test_the_vendored_file_is_the_recorded_one() -> None:
    digest = hashlib.sha256((FOLDER / "raw" / "Bikeshare.csv").read_bytes()).hexdigest()
    assert digest == RAW_SHA256
    assert RAW_SHA256 in (FOLDER / "raw" / "SOURCE.md").read_text(encoding="utf-8")
    licence = (FOLDER / "raw" / "LICENSE-ISLP.txt").read_text(encoding="utf-8")
    assert licence.startswith("Redistribution and use in source and binary forms")
    assert "THIS SOFTWARE IS PROVIDED BY THE AUTHOR" in licence


def test_the_loaded_task(task: FolderTask) -> None:
    assert task.id == TASK_ID
    assert task.name == "Bike Sharing Demand (mini)"
    assert task.lower_is_better is True
    assert task.metric_name == "rmsle"
    assert task.task_type == "tabular-regression"
    assert task.config["grader"]["grade_fn"] == "grade:grade"
    assert "id,count" in task.description
    config = yaml.safe_load((FOLDER / "config.yaml").read_text(encoding="utf-8"))
    assert config["id"] == "bike-sharing"
    assert config["dataset"]["answers"] == "bike-sharing/prepared/private/test.csv"
    assert (
        config["dataset"]["sample_submission"]
        == "bike-sharing/prepared/public/sample_submission.csv"
    )


# --- preparation ---------------------------------------------------------------------------


def test_the_split(train: pd.DataFrame, test_frame: pd.DataFrame, answers: pd.DataFrame) -> None:
    """Kaggle's split: days 1-19 of each month train, day 20 to the month's end test."""
    assert len(train) == 5422
    assert len(test_frame) == 3223
    assert list(train.columns) == ["id", *FEATURES, "count"]
    assert list(test_frame.columns) == ["id", *FEATURES]
    assert not set(train["id"]) & set(test_frame["id"])
    assert set(train["id"]) | set(test_frame["id"]) == set(range(1, 8646))
    train_days = pd.to_datetime(train["date"], format="%Y-%m-%d")
    test_days = pd.to_datetime(test_frame["date"], format="%Y-%m-%d")
    assert train_days.dt.day.max() == 19
    assert test_days.dt.day.min() == 20
    assert set(train_days.dt.month) == set(test_days.dt.month) == set(range(1, 13))
    assert (train_days.dt.year == 2011).all() and (test_days.dt.year == 2011).all()
    # The rebuilt date agrees with the day of the year it was made from.
    assert (train_days.dt.day_of_year == train["day"]).all()
    assert list(answers["id"]) == list(test_frame["id"])


def test_public_files_hold_no_answers(task: FolderTask, answers: pd.DataFrame) -> None:
    assert sorted(p.name for p in task.public_dir.iterdir()) == [
        "sample_submission.csv",
        "test.csv",
        "train.csv",
    ]
    assert sorted(p.name for p in task.private_dir.iterdir()) == ["test.csv"]
    for path in [*task.public_dir.iterdir(), *task.private_dir.iterdir()]:
        columns = set(pd.read_csv(path, nrows=1).columns)
        assert not columns & LEAKY, path
    assert "count" not in pd.read_csv(task.public_dir / "test.csv").columns
    sample = pd.read_csv(task.sample_submission)
    assert list(sample.columns) == ["id", "count"]
    assert set(sample["count"]) == {0}
    assert list(answers.columns) == ["id", "count"]
    assert (answers["count"] >= 1).all()


def test_the_counts_are_the_raw_totals(
    train: pd.DataFrame, test_frame: pd.DataFrame, answers: pd.DataFrame
) -> None:
    raw = pd.read_csv(FOLDER / "raw" / "Bikeshare.csv")
    counts = pd.concat([train[["id", "count"]], answers]).sort_values("id")
    assert list(counts["count"]) == list(raw["bikers"])
    both = pd.concat([train, test_frame]).sort_values("id").reset_index(drop=True)
    for column in ["day", "hr", "temp", "atemp", "hum", "windspeed", "weathersit"]:
        assert (both[column] == raw[column]).all(), column


# --- grading -------------------------------------------------------------------------------


def test_the_sample_submission_scores_the_rmsle_of_zero(
    grade_module: ModuleType, sample: pd.DataFrame, answers: pd.DataFrame
) -> None:
    expected = float(np.sqrt(np.mean(np.log1p(answers["count"].to_numpy(dtype=float)) ** 2)))
    assert 4.0 < expected < 5.0
    assert grade(grade_module, sample, answers) == pytest.approx(expected)


def test_a_perfect_submission_scores_zero(grade_module: ModuleType, answers: pd.DataFrame) -> None:
    assert grade(grade_module, answers.copy(), answers) == 0.0


def test_the_formula(grade_module: ModuleType, answers: pd.DataFrame) -> None:
    actual = answers["count"].to_numpy(dtype=float)
    doubled = answers.assign(count=2 * actual + 1)  # log1p off by exactly log(2) everywhere
    assert grade(grade_module, doubled, answers) == pytest.approx(math.log(2))
    fractional = answers.assign(count=actual * 0.7)
    assert grade(grade_module, fractional, answers) == pytest.approx(rmsle(actual * 0.7, actual))


def test_row_order_does_not_matter(grade_module: ModuleType, answers: pd.DataFrame) -> None:
    submission = answers.copy()
    submission["count"] = np.where(submission.index % 3 == 0, 100, submission["count"])
    ordered = grade(grade_module, submission, answers)
    shuffled = submission.sample(frac=1.0, random_state=7).reset_index(drop=True)
    assert list(shuffled["id"]) != list(submission["id"])
    assert grade(grade_module, shuffled, answers) == pytest.approx(ordered, abs=1e-12)
    assert grade(grade_module, submission[["count", "id"]], answers) == pytest.approx(ordered)
    assert ordered > 0.0


def test_numbers_written_as_text_are_accepted(
    grade_module: ModuleType, answers: pd.DataFrame
) -> None:
    assert grade(grade_module, answers.astype(str), answers) == 0.0


# kind of invalid submission -> (how to make it from the sample, a word the error must say)
INVALID: dict[str, tuple[Callable[[pd.DataFrame], pd.DataFrame], str]] = {
    "missing count column": (lambda s: s[["id"]], "missing: \\['count'\\]"),
    "missing id column": (lambda s: s[["count"]], "missing: \\['id'\\]"),
    "extra column": (lambda s: s.assign(casual=0), "unexpected: \\['casual'\\]"),
    "misspelt column": (lambda s: s.rename(columns={"count": "cnt"}), "columns"),
    "too few rows": (lambda s: s.iloc[:-1], "3222 rows; expected 3223"),
    "too many rows": (lambda s: pd.concat([s, s.iloc[:1]]), "3224 rows"),
    "a duplicated id": (lambda s: with_cell(s, 1, "id", s.loc[0, "id"]), "repeat"),
    "an unknown id": (lambda s: with_cell(s, 0, "id", 99999), "unknown"),
    "a training id": (lambda s: with_cell(s, 0, "id", 1), "unknown"),
    "a missing id": (lambda s: with_cell(s, 0, "id", None), "id has 1 missing"),
    "a fractional id": (lambda s: with_cell(s, 0, "id", 432.5), "whole numbers"),
    "a missing count": (lambda s: with_cell(s, 0, "count", None), "count has 1 missing"),
    "a text count": (lambda s: with_cell(s, 0, "count", "many"), "numbers"),
    "a negative count": (lambda s: with_cell(s, 0, "count", -1), "at least 0"),
    "an infinite count": (lambda s: with_cell(s, 0, "count", float("inf")), "finite"),
    "true/false values": (lambda s: s.assign(count=True), "not true/false"),
}


# --- the leaderboard -----------------------------------------------------------------------


# Leaderboard entries cheap enough to recompute in tests (test_bundled_suites.py checks them against
# the CSV, and this module's INVALID submissions against the grader).
CHEAP_ENTRIES = [
    "constant 0 (the sample submission)",
    "constant: training mean",
    "constant: expm1 of mean log1p (best constant for RMSLE)",
    "mean count by hour",
    "log-mean count by hour x workingday",
    "linear regression on hour+workingday+temperature, fit to log1p(count)",
]
