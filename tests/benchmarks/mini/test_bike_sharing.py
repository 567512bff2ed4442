"""The bundled mini Bike Sharing Demand competition: its data preparation, grader and
leaderboard."""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pandas as pd
import pytest
import yaml

from podium.benchmarks import load_folder_task
from podium.benchmarks.folder import FolderTask
from podium.benchmarks.leaderboards import prepared_data
from tests.support import MINI, task_module

FOLDER = MINI / "bike-sharing"
TASK_ID = "mini/bike-sharing"
RAW_SHA256 = "ac6950ae6f11efcc69c29d6bb13e8881c001e27d36434660d59444a1414f712c"
LEAKY = {"casual", "registered", "bikers"}
FEATURES = [
    *["date", "season", "mnth", "day", "hr", "holiday", "weekday", "workingday"],
    *["weathersit", "temp", "atemp", "hum", "windspeed"],
]


def files_under(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


@pytest.fixture(scope="module")
def task(tmp_path_factory: pytest.TempPathFactory) -> FolderTask:
    return load_folder_task(FOLDER, tmp_path_factory.mktemp("bike-sharing"), task_id=TASK_ID)


@pytest.fixture(scope="module")
def grade_module() -> ModuleType:
    return task_module(FOLDER, "grade")


@pytest.fixture(scope="module")
def answers(task: FolderTask) -> pd.DataFrame:
    return pd.read_csv(task.private_dir / "test.csv")


@pytest.fixture(scope="module")
def train(task: FolderTask) -> pd.DataFrame:
    return pd.read_csv(task.public_dir / "train.csv")


@pytest.fixture(scope="module")
def test_frame(task: FolderTask) -> pd.DataFrame:
    return pd.read_csv(task.public_dir / "test.csv")


@pytest.fixture
def sample(task: FolderTask) -> pd.DataFrame:
    return pd.read_csv(task.sample_submission)


def grade(grade_module: ModuleType, submission: pd.DataFrame, answers: pd.DataFrame) -> float:
    return float(grade_module.grade(submission, answers))


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


def test_prepare_is_deterministic(task: FolderTask, tmp_path: Path) -> None:
    other = load_folder_task(FOLDER, tmp_path, task_id=TASK_ID)
    first = files_under(task.public_dir.parent)
    assert first == files_under(other.public_dir.parent)
    assert set(first) >= {
        "public/train.csv",
        "public/test.csv",
        "public/sample_submission.csv",
        "private/test.csv",
    }


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


def _set(frame: pd.DataFrame, row: int, column: str, value: Any) -> pd.DataFrame:
    frame = frame.astype({column: "object"})
    frame.loc[row, column] = value
    return frame


# kind of invalid submission -> (how to make it from the sample, a word the error must say)
INVALID: dict[str, tuple[Callable[[pd.DataFrame], pd.DataFrame], str]] = {
    "missing count column": (lambda s: s[["id"]], "missing: \\['count'\\]"),
    "missing id column": (lambda s: s[["count"]], "missing: \\['id'\\]"),
    "extra column": (lambda s: s.assign(casual=0), "unexpected: \\['casual'\\]"),
    "misspelt column": (lambda s: s.rename(columns={"count": "cnt"}), "columns"),
    "too few rows": (lambda s: s.iloc[:-1], "3222 rows; expected 3223"),
    "too many rows": (lambda s: pd.concat([s, s.iloc[:1]]), "3224 rows"),
    "a duplicated id": (lambda s: _set(s, 1, "id", s.loc[0, "id"]), "repeat"),
    "an unknown id": (lambda s: _set(s, 0, "id", 99999), "unknown"),
    "a training id": (lambda s: _set(s, 0, "id", 1), "unknown"),
    "a missing id": (lambda s: _set(s, 0, "id", None), "id has 1 missing"),
    "a fractional id": (lambda s: _set(s, 0, "id", 432.5), "whole numbers"),
    "a missing count": (lambda s: _set(s, 0, "count", None), "count has 1 missing"),
    "a text count": (lambda s: _set(s, 0, "count", "many"), "numbers"),
    "a negative count": (lambda s: _set(s, 0, "count", -1), "at least 0"),
    "an infinite count": (lambda s: _set(s, 0, "count", float("inf")), "finite"),
    "true/false values": (lambda s: s.assign(count=True), "not true/false"),
}


@pytest.mark.parametrize("kind", list(INVALID))
def test_invalid_submissions_are_rejected(
    kind: str, grade_module: ModuleType, sample: pd.DataFrame, answers: pd.DataFrame
) -> None:
    make, says = INVALID[kind]
    with pytest.raises(ValueError, match=says) as caught:
        grade_module.grade(make(sample.copy()), answers)
    assert type(caught.value).__name__ == "InvalidSubmissionError"


# --- the leaderboard -----------------------------------------------------------------------


def test_the_leaderboard_is_sorted_best_first() -> None:
    board = pd.read_csv(FOLDER / "leaderboard.csv")
    assert list(board.columns) == ["rank", "teamName", "score"]
    assert 100 <= len(board) <= 249
    assert board["teamName"].is_unique
    assert list(board["rank"]) == list(range(1, len(board) + 1))
    assert board["score"].is_monotonic_increasing
    assert (board["score"] >= 0).all()
    assert board["score"].iloc[0] < board["score"].iloc[-1]
    assert (board["score"] == board["score"].round(5)).all()


def test_the_leaderboard_matches_its_script(task: FolderTask) -> None:
    """Recompute the cheapest entries with make_leaderboard.py and compare with the CSV."""
    script = task_module(FOLDER, "make_leaderboard")
    board = pd.read_csv(FOLDER / "leaderboard.csv").set_index("teamName")["score"]
    prepared = prepared_data(FOLDER, task.public_dir, task.private_dir)
    solutions = script.entries()
    checked = [
        "constant 0 (the sample submission)",
        "constant: training mean",
        "constant: expm1 of mean log1p (best constant for RMSLE)",
        "mean count by hour",
        "log-mean count by hour x workingday",
        "linear regression on hour+workingday+temperature, fit to log1p(count)",
    ]
    for name in checked:
        assert prepared.score(solutions[name]) == board[name], name
    assert set(solutions) == set(board.index)
