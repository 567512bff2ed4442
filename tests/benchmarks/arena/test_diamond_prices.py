"""The arena diamond-prices competition: the vendored data, its preparation, the log-RMSE grader
and the leaderboard."""

from __future__ import annotations

import gzip
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

FOLDER = MINI.parent / "arena" / "diamond-prices"
TASK_ID = "arena/diamond-prices"
GZ_SHA256 = "937edfaa3b414fb2599edb49823d87c1f18d1347b744a00072891bc276690a0b"
CSV_SHA256 = "9574730b03aba241d899c4a97511c5061b19358fab89510774fb6c24168345c4"
FEATURES = ["carat", "cut", "color", "clarity", "depth", "table", "x", "y", "z"]


def log_rmse(predicted: np.ndarray, actual: np.ndarray) -> float:
    return float(np.sqrt(np.mean((np.log(predicted) - np.log(actual)) ** 2)))


# --- the raw data and the folder ------------------------------------------------------------


def test_the_vendored_file_is_plotnines_table_gzipped() -> None:
    packed = (FOLDER / "raw" / "diamonds.csv.gz").read_bytes()
    assert hashlib.sha256(packed).hexdigest() == GZ_SHA256
    assert hashlib.sha256(gzip.decompress(packed)).hexdigest() == CSV_SHA256
    source = (FOLDER / "raw" / "SOURCE.md").read_text(encoding="utf-8")
    assert GZ_SHA256 in source and CSV_SHA256 in source and "plotnine" in source
    assert "MIT License" in (FOLDER / "raw" / "LICENSE-plotnine.txt").read_text()


def test_the_loaded_task(task: FolderTask) -> None:
    assert task.id == TASK_ID
    assert task.lower_is_better is True
    assert task.metric_name == "rmse_log"
    assert task.config["task_type"] == "tabular-regression"
    assert "root mean squared error between the logarithm" in task.description
    assert "id,price" in task.description
    config = yaml.safe_load((FOLDER / "config.yaml").read_text(encoding="utf-8"))
    assert config["dataset"]["answers"] == "diamond-prices/prepared/private/test.csv"


# --- preparation ---------------------------------------------------------------------------


def test_the_split(train: pd.DataFrame, test_frame: pd.DataFrame, answers: pd.DataFrame) -> None:
    assert len(train) == 6_000
    assert len(test_frame) == 12_000
    assert list(train.columns) == ["id", *FEATURES, "price"]
    assert list(test_frame.columns) == ["id", *FEATURES]
    assert set(train["id"]) | set(test_frame["id"]) == set(range(1, 18_001))
    assert list(answers.columns) == ["id", "price"]
    assert list(answers["id"]) == list(test_frame["id"])
    assert (train["price"] > 0).all() and (answers["price"] > 0).all()
    assert set(train["cut"]) == {"Fair", "Good", "Very Good", "Premium", "Ideal"}
    # a random split: the two sets' prices look alike
    assert abs(np.log(train["price"]).mean() - np.log(answers["price"]).mean()) < 0.05


def test_the_sample_predicts_the_training_median(sample: pd.DataFrame, train: pd.DataFrame) -> None:
    assert list(sample.columns) == ["id", "price"]
    assert set(sample["price"]) == {round(train["price"].median())}


# --- grading -------------------------------------------------------------------------------


def test_the_sample_submission_scores_the_median_guess(
    grade_module: ModuleType, sample: pd.DataFrame, answers: pd.DataFrame
) -> None:
    expected = log_rmse(sample["price"].to_numpy(float), answers["price"].to_numpy(float))
    assert 0.8 < expected < 1.2
    assert grade(grade_module, sample, answers) == pytest.approx(expected)


def test_the_score_is_the_rmse_of_logs(grade_module: ModuleType, answers: pd.DataFrame) -> None:
    assert grade(grade_module, answers.copy(), answers) == 0.0
    high = answers.assign(price=answers["price"] * 1.1)
    assert grade(grade_module, high, answers) == pytest.approx(np.log(1.1))
    rng = np.random.default_rng(2)
    noisy = answers["price"] * np.exp(rng.normal(0, 0.2, len(answers)))
    expected = log_rmse(noisy.to_numpy(), answers["price"].to_numpy(float))
    as_text = answers.assign(price=[str(p) for p in noisy])  # numbers read as text
    assert grade(grade_module, as_text, answers) == pytest.approx(expected)
    shuffled = answers.assign(price=noisy).sample(frac=1.0, random_state=7)
    assert grade(grade_module, shuffled[["price", "id"]], answers) == pytest.approx(expected)


# kind of invalid submission -> (how to make it from the sample, a word the error must say)
INVALID: dict[str, tuple[Callable[[pd.DataFrame], pd.DataFrame], str]] = {
    "missing price column": (lambda s: s[["id"]], "columns"),
    "missing id column": (lambda s: s[["price"]], "columns"),
    "extra column": (lambda s: s.assign(carat=1.0), "unexpected"),
    "misspelt column": (lambda s: s.rename(columns={"price": "Price"}), "columns"),
    "repeated column": (lambda s: s[["id", "price", "price"]], "repeats a column"),
    "too few rows": (lambda s: s.iloc[:-1], "rows"),
    "too many rows": (lambda s: pd.concat([s, s.iloc[:1]]), "rows"),
    "a duplicated id": (lambda s: with_cell(s, 1, "id", s.loc[0, "id"]), "repeat"),
    "an unknown id": (lambda s: with_cell(s, 0, "id", 99_999), "unknown"),
    "a training id": (lambda s: with_cell(s, 0, "id", 1), "unknown"),
    "a missing id": (lambda s: with_cell(s, 0, "id", None), "missing"),
    "a text id": (lambda s: with_cell(s, 0, "id", "stone"), "whole numbers"),
    "a fractional id": (lambda s: with_cell(s, 0, "id", 6001.5), "whole numbers"),
    "a missing price": (lambda s: with_cell(s, 0, "price", None), "missing"),
    "a text price": (lambda s: with_cell(s, 0, "price", "cheap"), "finite numbers"),
    "an infinite price": (lambda s: with_cell(s, 0, "price", float("inf")), "finite numbers"),
    "a zero price": (lambda s: with_cell(s, 0, "price", 0), "greater than 0"),
    "a negative price": (lambda s: with_cell(s, 0, "price", -500), "greater than 0"),
    "true/false prices": (lambda s: s.assign(price=s.index % 2 == 0), "true/false"),
}


# Leaderboard entries cheap enough to recompute in tests (test_bundled_suites.py checks them
# against the CSV).
CHEAP_ENTRIES = [
    "constant: training median",
    "random training price seed=0",
    "rule: median price per carat by clarity x carat",
    "rule: median price by color",
    "ridge alpha=1, log carat + grade ranks",
]
