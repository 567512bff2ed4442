"""The bundled mini US-employment forecasting competition: preparation, grader, leaderboard."""

from __future__ import annotations

import hashlib
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

FOLDER = MINI / "us-employment"
TASK_ID = "mini/us-employment"
RAW_SHA256 = "0fa5366929bf738ac420509b84ed120155f740b0fa9c265ca309dad4057d1b1b"
N_SERIES = 22
N_TRAIN_MONTHS = 108
HORIZON = 12


def files_under(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


@pytest.fixture(scope="module")
def task(tmp_path_factory: pytest.TempPathFactory) -> FolderTask:
    return load_folder_task(FOLDER, tmp_path_factory.mktemp("us-employment"), task_id=TASK_ID)


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


def _set(frame: pd.DataFrame, row: int, column: str, value: Any) -> pd.DataFrame:
    frame = frame.astype({column: "object"})
    frame.loc[row, column] = value
    return frame


# kind of invalid submission -> (how to make it from the sample, a word the error must say)
INVALID: dict[str, tuple[Callable[[pd.DataFrame], pd.DataFrame], str]] = {
    "missing value column": (lambda s: s[["id"]], "columns"),
    "missing id column": (lambda s: s[["value"]], "columns"),
    "extra column": (lambda s: s.assign(series="x"), "unexpected"),
    "misspelt column": (lambda s: s.rename(columns={"value": "Value"}), "columns"),
    "too few rows": (lambda s: s.iloc[:-1], "rows"),
    "too many rows": (lambda s: pd.concat([s, s.iloc[:1]]), "rows"),
    "a duplicated id": (lambda s: _set(s, 1, "id", s.loc[0, "id"]), "repeat"),
    "an unknown id": (lambda s: _set(s, 0, "id", "nonfarm_2016-01"), "unknown"),
    "a training id": (lambda s: _set(s, 0, "id", "nonfarm_2014-12"), "unknown"),
    "a missing id": (lambda s: _set(s, 0, "id", None), "missing"),
    "a missing value": (lambda s: _set(s, 0, "value", None), "missing"),
    "a text value": (lambda s: _set(s, 0, "value", "lots"), "numbers"),
    "an infinite value": (lambda s: _set(s, 0, "value", float("inf")), "finite"),
    "a negative value": (lambda s: _set(s, 0, "value", -1.0), "negative"),
    "true/false values": (lambda s: s.assign(value=s["value"] == 0), "true/false"),
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
    assert 100 <= len(board) < 250
    assert board["teamName"].is_unique
    assert list(board["rank"]) == list(range(1, len(board) + 1))
    assert board["score"].is_monotonic_increasing
    assert board["score"].between(0.0, 200.0).all()
    assert board["score"].iloc[0] < board["score"].iloc[-1]
    assert (board["score"] == board["score"].round(5)).all()
    # Medal thresholds for 100-249 teams: positions 10, floor(0.2n), floor(0.4n).
    n = len(board)
    gold, bronze = board["score"].iloc[9], board["score"].iloc[int(0.4 * n) - 1]
    assert bronze > gold * 1.1


def test_the_leaderboard_matches_its_script(task: FolderTask) -> None:
    """Recompute the cheapest entries with make_leaderboard.py and compare with the CSV."""
    script = task_module(FOLDER, "make_leaderboard")
    board = pd.read_csv(FOLDER / "leaderboard.csv").set_index("teamName")["score"]
    prepared = prepared_data(FOLDER, task.public_dir, task.private_dir)
    solutions = script.entries()
    checked = [
        "constant: zero",
        "naive: last value",
        "seasonal naive: same month last year",
        "drift over last 12 months",
        "holt alpha=0.5 beta=0.1",
        "linear regression pooled, 6 lagged log-changes, all origins",
        "random: last value with 5% noise seed=0",
    ]
    for name in checked:
        assert prepared.score(solutions[name]) == board[name], name
    assert board["constant: zero"] == 200.0
    assert set(solutions) == set(board.index)
