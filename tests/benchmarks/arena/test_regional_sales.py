"""The arena regional-sales forecasting competition: generator, preparation, grader, leaderboard."""

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

FOLDER = MINI.parent / "arena" / "regional-sales"
TASK_ID = "arena/regional-sales"
N_SERIES = 840
N_TRAIN_QUARTERS = 36
HORIZON = 4


# --- the task folder and the generator -------------------------------------------------------


def test_the_loaded_task(task: FolderTask) -> None:
    assert task.id == TASK_ID
    assert task.lower_is_better is True
    assert task.metric_name == "smape"
    assert task.config["task_type"] == "time-series-forecasting"
    assert "symmetric mean absolute percentage error (sMAPE)" in task.description
    config = yaml.safe_load((FOLDER / "config.yaml").read_text(encoding="utf-8"))
    assert config["dataset"]["answers"] == "regional-sales/prepared/private/test.csv"


def test_the_generator_states_its_seed_and_process() -> None:
    generator = task_module(FOLDER / "raw", "generate")
    source = (FOLDER / "raw" / "SOURCE.md").read_text(encoding="utf-8")
    assert str(generator.SEED) in source
    panel = generator.generate()
    assert len(panel) == N_SERIES * (N_TRAIN_QUARTERS + HORIZON)
    assert panel["value"].gt(0).all()


def test_level_shifts_strike_the_year_to_forecast_as_often_as_the_history() -> None:
    """One process over every month: validating on the last year of the history measures what
    the test year measures (a generator that shifted only the history would mislead)."""
    generator = task_module(FOLDER / "raw", "generate")
    rng = np.random.default_rng(0)
    months = np.concatenate(
        [np.flatnonzero(np.diff(generator.level_shifts(rng))) + 1 for _ in range(4000)]
    )
    n_months = generator.N_MONTHS
    last_year = np.mean(months >= n_months - 12)
    assert last_year == pytest.approx(12 / (n_months - 1), abs=0.03)
    assert len(months) == pytest.approx(4000 * generator.SHIFT_RATE * (n_months - 1), rel=0.1)


# --- preparation ---------------------------------------------------------------------------


def test_the_split(train: pd.DataFrame, test_frame: pd.DataFrame, answers: pd.DataFrame) -> None:
    assert list(train.columns) == ["date", "series", "value"]
    assert list(test_frame.columns) == ["id", "date", "series"]
    assert len(train) == N_SERIES * N_TRAIN_QUARTERS
    assert len(test_frame) == N_SERIES * HORIZON
    assert train.groupby("series")["date"].nunique().eq(N_TRAIN_QUARTERS).all()
    assert (train["date"].min(), train["date"].max()) == ("2015-01-01", "2023-10-01")
    assert list(test_frame["date"].unique()) == [
        "2024-01-01",
        "2024-04-01",
        "2024-07-01",
        "2024-10-01",
    ]
    assert set(test_frame["series"]) == set(train["series"])
    quarter = (
        test_frame["date"].str.slice(5, 7).map({"01": "Q1", "04": "Q2", "07": "Q3", "10": "Q4"})
    )
    assert list(test_frame["id"]) == list(
        test_frame["series"] + "_" + test_frame["date"].str.slice(0, 4) + quarter
    )
    assert list(answers["id"]) == list(test_frame["id"])
    assert list(answers.columns) == ["id", "value"] and answers["value"].gt(0).all()


def test_the_answers_continue_the_generated_series(
    train: pd.DataFrame, test_frame: pd.DataFrame, answers: pd.DataFrame
) -> None:
    panel = task_module(FOLDER / "raw", "generate").generate()
    history = panel[panel["date"] <= "2023-10-01"].reset_index(drop=True)
    assert history.equals(train)
    future = panel[panel["date"] > "2023-10-01"].reset_index(drop=True)
    assert np.array_equal(future["value"].to_numpy(), answers["value"].to_numpy())


# --- grading -------------------------------------------------------------------------------


def test_the_formula(grade_module: ModuleType, answers: pd.DataFrame) -> None:
    """sMAPE against an independent computation; the sample (all 0) scores the maximum, 200."""
    rng = np.random.default_rng(3)
    actual = answers["value"].to_numpy()
    guess = answers.assign(value=actual * rng.uniform(0.5, 1.5, len(answers)))
    forecast = guess["value"].to_numpy()
    expected = float(np.mean(200 * np.abs(forecast - actual) / (actual + forecast)))
    assert grade(grade_module, guess, answers) == pytest.approx(expected)
    high = answers.assign(value=actual * 1.1)
    assert grade(grade_module, high, answers) == pytest.approx(200 * 0.1 / 2.1)
    assert grade(grade_module, answers.assign(value=0), answers) == 200.0
    assert grade(grade_module, answers.copy(), answers) == 0.0
    assert grade_module.smape(np.array([0.0, 1.0]), np.array([0.0, 1.0])) == 0.0


def test_row_order_and_text_numbers_do_not_matter(
    grade_module: ModuleType, answers: pd.DataFrame
) -> None:
    submission = answers.assign(value=answers["value"] * 1.1)
    ordered = grade(grade_module, submission, answers)
    shuffled = submission.sample(frac=1.0, random_state=7)[["value", "id"]]
    assert grade(grade_module, shuffled, answers) == pytest.approx(ordered)
    as_text = answers.assign(value=answers["value"].map(str))
    assert grade(grade_module, as_text, answers) == 0.0


# kind of invalid submission -> (how to make it from the sample, a word the error must say)
INVALID: dict[str, tuple[Callable[[pd.DataFrame], pd.DataFrame], str]] = {
    "missing value column": (lambda s: s[["id"]], "columns"),
    "extra column": (lambda s: s.assign(series="x"), "unexpected"),
    "misspelt column": (lambda s: s.rename(columns={"value": "sales"}), "columns"),
    "too few rows": (lambda s: s.iloc[:-1], "rows"),
    "too many rows": (lambda s: pd.concat([s, s.iloc[:1]]), "rows"),
    "a duplicated id": (lambda s: with_cell(s, 1, "id", s.loc[0, "id"]), "repeat"),
    "a training id": (lambda s: with_cell(s, 0, "id", "region01_category01_2023Q4"), "unknown"),
    "a missing id": (lambda s: with_cell(s, 0, "id", None), "missing"),
    "a missing value": (lambda s: with_cell(s, 0, "value", None), "missing"),
    "a text value": (lambda s: with_cell(s, 0, "value", "lots"), "numbers"),
    "an infinite value": (lambda s: with_cell(s, 0, "value", float("inf")), "finite"),
    "a negative value": (lambda s: with_cell(s, 0, "value", -1.0), "negative"),
    "true/false values": (lambda s: s.assign(value=s["value"] == 0), "true/false"),
}


# --- the leaderboard -----------------------------------------------------------------------

# Entries cheap enough to recompute in tests (test_bundled_suites.py checks them against the CSV).
CHEAP_ENTRIES = [
    "constant: zero",
    "naive: last value",
    "same-season mean over 4 seasons",
    "level of last 12 quarters times profile of 8 seasons",
    "holt-winters additive alpha=0.1 beta=0.0 gamma=0.05",
    "ridge alpha=1 pooled, seasons features, recent origins",
    "random: seasonal naive with 5% noise seed=0",
]
