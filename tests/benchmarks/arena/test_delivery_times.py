"""The arena delivery-times competition: the generator, its preparation, the RMSLE grader and
the leaderboard."""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType

import numpy as np
import pandas as pd
import pytest
import yaml

from podium.benchmarks.folder import FolderTask
from tests.support import MINI, task_module, with_cell
from tests.support import grade_with as grade

FOLDER = MINI.parent / "arena" / "delivery-times"
TASK_ID = "arena/delivery-times"
FEATURES = [
    *["zone", "distance_km", "vehicle", "weather", "day", "hour", "items_small"],
    *["items_medium", "items_large", "items_drinks", "floor", "courier_tenure_days"],
    *["order_value", "prep_estimate_min"],
]


def rmsle(predicted: np.ndarray, actual: np.ndarray) -> float:
    return float(np.sqrt(np.mean((np.log1p(predicted) - np.log1p(actual)) ** 2)))


# --- the task folder and the generator -------------------------------------------------------


def test_the_loaded_task(task: FolderTask) -> None:
    assert task.id == TASK_ID
    assert task.lower_is_better is True
    assert task.metric_name == "rmsle"
    assert task.config["task_type"] == "tabular-regression"
    assert "root mean squared logarithmic error (RMSLE)" in task.description
    assert "id,delivery_minutes" in task.description
    config = yaml.safe_load((FOLDER / "config.yaml").read_text(encoding="utf-8"))
    assert config["dataset"]["answers"] == "delivery-times/prepared/private/test.csv"


def test_the_generator_states_its_seed_and_process() -> None:
    generator = task_module(FOLDER / "raw", "generate")
    source = (FOLDER / "raw" / "SOURCE.md").read_text(encoding="utf-8")
    assert str(generator.SEED) in source and "Podium" in source
    orders = generator.generate(500)
    assert list(orders.columns) == [*FEATURES, "delivery_minutes"]
    assert orders["delivery_minutes"].gt(0).all()
    pd.testing.assert_frame_equal(orders, generator.generate(500))


# --- preparation ---------------------------------------------------------------------------


def test_the_split(train: pd.DataFrame, test_frame: pd.DataFrame, answers: pd.DataFrame) -> None:
    assert len(train) == 5_000
    assert len(test_frame) == 12_000
    assert list(train.columns) == ["id", *FEATURES, "delivery_minutes"]
    assert list(test_frame.columns) == ["id", *FEATURES]
    assert set(train["id"]) | set(test_frame["id"]) == set(range(1, 17_001))
    assert list(answers.columns) == ["id", "delivery_minutes"]
    assert list(answers["id"]) == list(test_frame["id"])
    # The kitchen's estimate is missing for about a quarter of the orders, and those take
    # longer: the missing value carries information.
    missing = train["prep_estimate_min"].isna()
    assert 0.2 < missing.mean() < 0.3
    times = train["delivery_minutes"]
    assert times[missing].median() > times[~missing].median() + 5


def test_the_sample_predicts_the_training_median(sample: pd.DataFrame, train: pd.DataFrame) -> None:
    assert list(sample.columns) == ["id", "delivery_minutes"]
    assert set(sample["delivery_minutes"]) == {round(train["delivery_minutes"].median(), 1)}


# --- grading -------------------------------------------------------------------------------


def test_the_sample_submission_scores_the_median_guess(
    grade_module: ModuleType, sample: pd.DataFrame, answers: pd.DataFrame
) -> None:
    expected = rmsle(
        sample["delivery_minutes"].to_numpy(float), answers["delivery_minutes"].to_numpy(float)
    )
    assert 0.3 < expected < 0.45
    assert grade(grade_module, sample, answers) == pytest.approx(expected)


def test_the_score_is_the_rmsle(grade_module: ModuleType, answers: pd.DataFrame) -> None:
    actual = answers["delivery_minutes"].to_numpy(float)
    assert grade(grade_module, answers.copy(), answers) == 0.0
    # Predicting 0 everywhere is valid: the error is log(1 + actual).
    zeros = answers.assign(delivery_minutes=0)
    assert grade(grade_module, zeros, answers) == pytest.approx(
        rmsle(np.zeros(len(actual)), actual)
    )
    rng = np.random.default_rng(3)
    noisy = actual * np.exp(rng.normal(0, 0.3, len(actual)))
    as_text = answers.assign(delivery_minutes=[str(v) for v in noisy])  # numbers read as text
    assert grade(grade_module, as_text, answers) == pytest.approx(rmsle(noisy, actual))
    shuffled = answers.assign(delivery_minutes=noisy).sample(frac=1.0, random_state=7)
    assert grade(grade_module, shuffled[["delivery_minutes", "id"]], answers) == pytest.approx(
        rmsle(noisy, actual)
    )


T = "delivery_minutes"
# kind of invalid submission -> (how to make it from the sample, a word the error must say)
INVALID: dict[str, tuple[Callable[[pd.DataFrame], pd.DataFrame], str]] = {
    "missing time column": (lambda s: s[["id"]], "columns"),
    "missing id column": (lambda s: s[[T]], "columns"),
    "extra column": (lambda s: s.assign(zone="Z01"), "unexpected"),
    "misspelt column": (lambda s: s.rename(columns={T: "minutes"}), "columns"),
    "repeated column": (lambda s: s[["id", T, T]], "repeats a column"),
    "too few rows": (lambda s: s.iloc[:-1], "rows"),
    "too many rows": (lambda s: pd.concat([s, s.iloc[:1]]), "rows"),
    "a duplicated id": (lambda s: with_cell(s, 1, "id", s.loc[0, "id"]), "repeat"),
    "an unknown id": (lambda s: with_cell(s, 0, "id", 99_999), "unknown"),
    "a training id": (lambda s: with_cell(s, 0, "id", 1), "unknown"),
    "a missing id": (lambda s: with_cell(s, 0, "id", None), "missing"),
    "a text id": (lambda s: with_cell(s, 0, "id", "order"), "whole numbers"),
    "a missing time": (lambda s: with_cell(s, 0, T, None), "missing"),
    "a text time": (lambda s: with_cell(s, 0, T, "soon"), "finite numbers"),
    "an infinite time": (lambda s: with_cell(s, 0, T, float("inf")), "finite numbers"),
    "a negative time": (lambda s: with_cell(s, 0, T, -5), "0 or more"),
    "true/false times": (lambda s: s.assign(delivery_minutes=s.index % 2 == 0), "true/false"),
}


# Leaderboard entries cheap enough to recompute in tests (test_bundled_suites.py checks them
# against the CSV).
CHEAP_ENTRIES = [
    "constant: training median",
    "random training delivery_minutes seed=0",
    "rule: kitchen estimate + ride at typical speed + a minute per item",
    "rule: median delivery_minutes by vehicle",
    "ridge alpha=1, engineered ride, order and kitchen",
]
