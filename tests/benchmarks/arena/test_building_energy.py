"""The arena building-energy competition: the generator, its preparation, the MAE grader and
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

FOLDER = MINI.parent / "arena" / "building-energy"
TASK_ID = "arena/building-energy"
ROOMS = ["kitchens", "lifts", "server_rooms", "laundries", "cold_stores"]
FEATURES = [
    *["building_code", "use_type", "region", "floor_area_m2", "floors"],
    *["heating_degree_days", "opening_hours_week", *ROOMS, "efficiency_measures"],
    *["roof", "facade", "parking_spaces", "surveyor_rating"],
]


def mae(predicted: np.ndarray, actual: np.ndarray) -> float:
    return float(np.mean(np.abs(predicted - actual)))


# --- the task folder and the generator -------------------------------------------------------


def test_the_loaded_task(task: FolderTask) -> None:
    assert task.id == TASK_ID
    assert task.lower_is_better is True
    assert task.metric_name == "mae"
    assert task.config["task_type"] == "tabular-regression"
    assert "mean absolute error (MAE)" in task.description
    assert "id,energy_mwh" in task.description
    config = yaml.safe_load((FOLDER / "config.yaml").read_text(encoding="utf-8"))
    assert config["dataset"]["answers"] == "building-energy/prepared/private/test.csv"


def test_the_generator_states_its_seed_and_process() -> None:
    generator = task_module(FOLDER / "raw", "generate")
    source = (FOLDER / "raw" / "SOURCE.md").read_text(encoding="utf-8")
    assert str(generator.SEED) in source and "Podium" in source
    buildings = generator.generate(500)
    assert list(buildings.columns) == [*FEATURES, "energy_mwh"]
    assert buildings["energy_mwh"].gt(0).all()
    pd.testing.assert_frame_equal(buildings, generator.generate(500))


# --- preparation ---------------------------------------------------------------------------


def test_the_split(train: pd.DataFrame, test_frame: pd.DataFrame, answers: pd.DataFrame) -> None:
    assert len(train) == 3_500
    assert len(test_frame) == 15_500
    assert list(train.columns) == ["id", *FEATURES, "energy_mwh"]
    assert list(test_frame.columns) == ["id", *FEATURES]
    assert set(train["id"]) | set(test_frame["id"]) == set(range(1, 19_001))
    assert list(answers.columns) == ["id", "energy_mwh"]
    assert list(answers["id"]) == list(test_frame["id"])
    assert not train.isna().any().any() and not test_frame.isna().any().any()


def test_the_hooks(train: pd.DataFrame) -> None:
    """What a search can find and a default first draft misses: the era in the code's first
    letter, the number of measures in the list, and the rooms in all (a central plant from 5)."""
    use = train["energy_mwh"] / train["floor_area_m2"]
    era = train["building_code"].str[0]
    assert set(era) == {"H", "M", "L", "N", "Z"}
    assert use[era == "M"].median() > 1.5 * use[era == "Z"].median()
    measures = train["efficiency_measures"]
    count = np.where(measures == "none", 0, measures.str.count(";") + 1)
    assert use[count >= 5].median() < 0.8 * use[count <= 1].median()
    rooms = train[ROOMS].sum(axis=1)
    small = train["floor_area_m2"] < 1500
    energy = train["energy_mwh"]
    assert energy[small & (rooms >= 5)].median() > energy[small & (rooms <= 4)].median() + 150


def test_the_sample_predicts_the_training_median(sample: pd.DataFrame, train: pd.DataFrame) -> None:
    assert list(sample.columns) == ["id", "energy_mwh"]
    assert set(sample["energy_mwh"]) == {round(train["energy_mwh"].median(), 1)}


# --- grading -------------------------------------------------------------------------------


def test_the_sample_submission_scores_the_median_guess(
    grade_module: ModuleType, sample: pd.DataFrame, answers: pd.DataFrame
) -> None:
    expected = mae(sample["energy_mwh"].to_numpy(float), answers["energy_mwh"].to_numpy(float))
    assert 250 < expected < 350
    assert grade(grade_module, sample, answers) == pytest.approx(expected)


def test_the_score_is_the_mae(grade_module: ModuleType, answers: pd.DataFrame) -> None:
    actual = answers["energy_mwh"].to_numpy(float)
    assert grade(grade_module, answers.copy(), answers) == 0.0
    zeros = answers.assign(energy_mwh=0)  # valid: the error is the actual use
    assert grade(grade_module, zeros, answers) == pytest.approx(float(actual.mean()))
    below = answers.assign(energy_mwh=-10.0)  # valid too: a negative use costs its error
    assert grade(grade_module, below, answers) == pytest.approx(float(actual.mean()) + 10)
    rng = np.random.default_rng(3)
    noisy = actual * np.exp(rng.normal(0, 0.3, len(actual)))
    as_text = answers.assign(energy_mwh=[str(v) for v in noisy])  # numbers read as text
    assert grade(grade_module, as_text, answers) == pytest.approx(mae(noisy, actual))
    shuffled = answers.assign(energy_mwh=noisy).sample(frac=1.0, random_state=7)
    assert grade(grade_module, shuffled[["energy_mwh", "id"]], answers) == pytest.approx(
        mae(noisy, actual)
    )


T = "energy_mwh"
# kind of invalid submission -> (how to make it from the sample, a word the error must say)
INVALID: dict[str, tuple[Callable[[pd.DataFrame], pd.DataFrame], str]] = {
    "missing use column": (lambda s: s[["id"]], "columns"),
    "missing id column": (lambda s: s[[T]], "columns"),
    "extra column": (lambda s: s.assign(region="R01"), "unexpected"),
    "misspelt column": (lambda s: s.rename(columns={T: "energy"}), "columns"),
    "repeated column": (lambda s: s[["id", T, T]], "repeats a column"),
    "too few rows": (lambda s: s.iloc[:-1], "rows"),
    "too many rows": (lambda s: pd.concat([s, s.iloc[:1]]), "rows"),
    "a duplicated id": (lambda s: with_cell(s, 1, "id", s.loc[0, "id"]), "repeat"),
    "an unknown id": (lambda s: with_cell(s, 0, "id", 99_999), "unknown"),
    "a training id": (lambda s: with_cell(s, 0, "id", 1), "unknown"),
    "a missing id": (lambda s: with_cell(s, 0, "id", None), "missing"),
    "a text id": (lambda s: with_cell(s, 0, "id", "building"), "whole numbers"),
    "a missing use": (lambda s: with_cell(s, 0, T, None), "missing"),
    "a text use": (lambda s: with_cell(s, 0, T, "a lot"), "finite numbers"),
    "an infinite use": (lambda s: with_cell(s, 0, T, float("inf")), "finite numbers"),
    "true/false uses": (lambda s: s.assign(energy_mwh=s.index % 2 == 0), "true/false"),
}


# Leaderboard entries cheap enough to recompute in tests (test_bundled_suites.py checks them
# against the CSV).
CHEAP_ENTRIES = [
    "constant: training median",
    "random training energy_mwh seed=0",
    "rule: floor area x median use per m2 by use type and era",
    "rule: median energy_mwh by era",
    "ridge alpha=1, everything, engineered",
]
