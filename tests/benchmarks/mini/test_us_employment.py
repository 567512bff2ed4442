"""The bundled mini US-employment forecasting competition: preparation, grader, leaderboard."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from types import ModuleType

import numpy as np
import pandas as pd
import pytest
import yaml

from podium.benchmarks.folder import FolderTask
from tests.support import MINI, with_cell
from tests.support import grade_with as grade

FOLDER = MINI / "us-employment"
TASK_ID = "mini/us-employment"
RAW_SHA256 = "0fa5366929bf738ac420509b84ed120155f740b0fa9c265ca309dad4057d1b1b"
N_SERIES = 22
N_TRAIN_MONTHS = 108
HORIZON = 12


# --- the raw data and the folder ------------------------------------------------------------


def test_the_vendored_file_is_the_recorded_one() -> None:
    digest = hashlib.sha256((FOLDER / "raw" / "us-employment.csv").read_bytes()).hexdigest()
    assert digest == RAW_SHA256
    assert RAW_SHA256 in (FOLDER / "raw" / "SOURCE.md").read_text(encoding="utf-8")
    licence = (FOLDER / "raw" / "LICENSE-vega_datasets.txt").read_text(encoding="utf-8")
    assert licence.startswith("MIT License")


def test_the_loaded_task(task: FolderTask) -> None:
    assert task.id == TASK_ID
    assert task.name == "US Employment by Sector: 12-Month Forecast (mini)"
    assert task.lower_is_better is True
    assert task.metric_name == "smape"
    assert task.config["task_type"] == "time-series-forecasting"
    assert task.config["grader"]["grade_fn"] == "grade:grade"
    assert "id,value" in task.description
    assert task.sample_submission.name == "sample_submission.csv"
    config = yaml.safe_load((FOLDER / "config.yaml").read_text(encoding="utf-8"))
    assert config["id"] == "us-employment"
    assert config["dataset"]["answers"] == "us-employment/prepared/private/test.csv"


# --- preparation ---------------------------------------------------------------------------


def test_the_split(train: pd.DataFrame, test_frame: pd.DataFrame, answers: pd.DataFrame) -> None:
    assert list(train.columns) == ["date", "series", "value"]
    assert list(test_frame.columns) == ["id", "date", "series"]
    assert len(train) == N_SERIES * N_TRAIN_MONTHS
    assert len(test_frame) == N_SERIES * HORIZON
    assert train["series"].nunique() == N_SERIES
    assert set(test_frame["series"]) == set(train["series"])
    assert "nonfarm_change" not in set(train["series"])
    assert train.groupby("series")["date"].nunique().eq(N_TRAIN_MONTHS).all()
    assert (train["date"].min(), train["date"].max()) == ("2006-01-01", "2014-12-01")
    assert sorted(test_frame["date"].unique()) == [f"2015-{m:02d}-01" for m in range(1, 13)]
    assert train["value"].gt(0).all() and train["value"].notna().all()
    expected_ids = test_frame["series"] + "_" + test_frame["date"].str.slice(0, 7)
    assert list(test_frame["id"]) == list(expected_ids)
    assert test_frame["id"].is_unique
    assert list(answers["id"]) == list(test_frame["id"])


def test_the_values_are_the_raw_ones(
    train: pd.DataFrame, test_frame: pd.DataFrame, answers: pd.DataFrame
) -> None:
    raw = pd.read_csv(FOLDER / "raw" / "us-employment.csv").set_index("month")
    history = train.pivot(index="date", columns="series", values="value")
    assert np.array_equal(history.to_numpy(), raw.loc[history.index, history.columns].to_numpy())
    future = test_frame.merge(answers, on="id").pivot(
        index="date", columns="series", values="value"
    )
    assert future.shape == (HORIZON, N_SERIES)
    assert np.array_equal(future.to_numpy(), raw.loc[future.index, future.columns].to_numpy())


def test_public_files_hold_no_answers(
    task: FolderTask, train: pd.DataFrame, test_frame: pd.DataFrame, answers: pd.DataFrame
) -> None:
    assert sorted(p.name for p in task.public_dir.iterdir()) == [
        "sample_submission.csv",
        "test.csv",
        "train.csv",
    ]
    assert sorted(p.name for p in task.private_dir.iterdir()) == ["test.csv"]
    assert "value" not in test_frame.columns
    assert train["date"].max() < test_frame["date"].min()
    sample = pd.read_csv(task.sample_submission)
    assert list(sample.columns) == ["id", "value"]
    assert set(sample["value"]) == {0}
    assert list(answers.columns) == ["id", "value"]
    assert answers["value"].gt(0).all()


# --- grading -------------------------------------------------------------------------------


def test_the_sample_submission_scores_200(
    grade_module: ModuleType, sample: pd.DataFrame, answers: pd.DataFrame
) -> None:
    assert grade(grade_module, sample, answers) == 200.0


def test_a_perfect_submission_scores_zero(grade_module: ModuleType, answers: pd.DataFrame) -> None:
    assert grade(grade_module, answers.copy(), answers) == 0.0


def test_the_formula(grade_module: ModuleType, answers: pd.DataFrame) -> None:
    """10% too high everywhere: each row costs 200 * 0.1 / 2.1; doubling costs 200/3."""
    high = answers.assign(value=answers["value"] * 1.1)
    assert grade(grade_module, high, answers) == pytest.approx(200 * 0.1 / 2.1)
    double = answers.assign(value=answers["value"] * 2)
    assert grade(grade_module, double, answers) == pytest.approx(200 / 3)
    both_zero = grade_module.smape(np.array([0.0, 1.0]), np.array([0.0, 1.0]))
    assert both_zero == 0.0


def test_row_order_does_not_matter(grade_module: ModuleType, answers: pd.DataFrame) -> None:
    submission = answers.copy()
    submission.loc[submission.index % 3 == 0, "value"] *= 1.05
    ordered = grade(grade_module, submission, answers)
    shuffled = submission.sample(frac=1.0, random_state=7).reset_index(drop=True)
    assert list(shuffled["id"]) != list(submission["id"])
    assert grade(grade_module, shuffled, answers) == ordered
    assert 0.0 < ordered < 200.0
    swapped = submission[["value", "id"]]
    assert grade(grade_module, swapped, answers) == ordered


def test_numbers_written_as_text_are_fine(grade_module: ModuleType, answers: pd.DataFrame) -> None:
    as_text = answers.assign(value=answers["value"].map(str))
    assert grade(grade_module, as_text, answers) == 0.0


# kind of invalid submission -> (how to make it from the sample, a word the error must say)
INVALID: dict[str, tuple[Callable[[pd.DataFrame], pd.DataFrame], str]] = {
    "missing value column": (lambda s: s[["id"]], "columns"),
    "missing id column": (lambda s: s[["value"]], "columns"),
    "extra column": (lambda s: s.assign(series="x"), "unexpected"),
    "misspelt column": (lambda s: s.rename(columns={"value": "Value"}), "columns"),
    "too few rows": (lambda s: s.iloc[:-1], "rows"),
    "too many rows": (lambda s: pd.concat([s, s.iloc[:1]]), "rows"),
    "a duplicated id": (lambda s: with_cell(s, 1, "id", s.loc[0, "id"]), "repeat"),
    "an unknown id": (lambda s: with_cell(s, 0, "id", "nonfarm_2016-01"), "unknown"),
    "a training id": (lambda s: with_cell(s, 0, "id", "nonfarm_2014-12"), "unknown"),
    "a missing id": (lambda s: with_cell(s, 0, "id", None), "missing"),
    "a missing value": (lambda s: with_cell(s, 0, "value", None), "missing"),
    "a text value": (lambda s: with_cell(s, 0, "value", "lots"), "numbers"),
    "an infinite value": (lambda s: with_cell(s, 0, "value", float("inf")), "finite"),
    "a negative value": (lambda s: with_cell(s, 0, "value", -1.0), "negative"),
    "true/false values": (lambda s: s.assign(value=s["value"] == 0), "true/false"),
}


# --- the leaderboard -----------------------------------------------------------------------


# Leaderboard entries cheap enough to recompute in tests (test_bundled_suites.py checks them against
# the CSV, and this module's INVALID submissions against the grader).
CHEAP_ENTRIES = [
    "constant: zero",
    "naive: last value",
    "seasonal naive: same month last year",
    "drift over last 12 months",
    "holt alpha=0.5 beta=0.1",
    "linear regression pooled, 6 lagged log-changes, all origins",
    "random: last value with 5% noise seed=0",
]
