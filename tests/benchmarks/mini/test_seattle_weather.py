"""The bundled mini Seattle weather competition: its data preparation, grader and leaderboard."""

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

FOLDER = MINI / "seattle-weather"
TASK_ID = "mini/seattle-weather"
RAW_SHA256 = "62f0609f787158128aa2bd102967173a4953122dd4f872bf1d502cae1037df0b"
CLASSES = ["drizzle", "fog", "rain", "snow", "sun"]
FEATURES = ["date", "precipitation", "temp_max", "temp_min", "wind"]


def one_hot(answers: pd.DataFrame, p: float = 1.0) -> pd.DataFrame:
    """A submission giving the true class ``p`` and the others (1 - p) / 4 each."""
    out = pd.DataFrame({"id": answers["id"]})
    for name in CLASSES:
        out[name] = np.where(answers["weather"] == name, p, (1 - p) / 4)
    return out


# --- the raw data and the folder ------------------------------------------------------------


def test_the_vendored_file_is_the_recorded_one() -> None:
    digest = hashlib.sha256((FOLDER / "raw" / "seattle-weather.csv").read_bytes()).hexdigest()
    assert digest == RAW_SHA256
    assert RAW_SHA256 in (FOLDER / "raw" / "SOURCE.md").read_text(encoding="utf-8")
    licence = (FOLDER / "raw" / "LICENSE-vega_datasets.txt").read_text(encoding="utf-8")
    assert licence.startswith("MIT License")
    assert "Jake Vanderplas" in licence


def test_the_loaded_task(task: FolderTask) -> None:
    assert task.id == TASK_ID
    assert task.name == "Seattle Weather: Classify the Day (mini)"
    assert task.lower_is_better is True
    assert task.metric_name == "multiclass_log_loss"
    assert task.task_type == "tabular-classification"
    assert task.config["grader"]["grade_fn"] == "grade:grade"
    assert "id,drizzle,fog,rain,snow,sun" in task.description
    config = yaml.safe_load((FOLDER / "config.yaml").read_text(encoding="utf-8"))
    assert config["id"] == "seattle-weather"
    assert config["dataset"]["answers"] == "seattle-weather/prepared/private/test.csv"
    assert (
        config["dataset"]["sample_submission"]
        == "seattle-weather/prepared/public/sample_submission.csv"
    )


# --- preparation ---------------------------------------------------------------------------


def test_the_split(train: pd.DataFrame, test_frame: pd.DataFrame, answers: pd.DataFrame) -> None:
    assert len(train) == 1000
    assert len(test_frame) == 461
    assert list(train.columns) == ["id", *FEATURES, "weather"]
    assert list(test_frame.columns) == ["id", *FEATURES]
    assert not set(train["id"]) & set(test_frame["id"])
    assert set(train["id"]) | set(test_frame["id"]) == set(range(1, 1462))
    # Every day of 2012-2015 once, split at random: each year is in both parts.
    dates = pd.to_datetime(pd.concat([train["date"], test_frame["date"]]), format="%Y-%m-%d")
    assert dates.is_unique
    assert dates.min() == pd.Timestamp("2012-01-01")
    assert dates.max() == pd.Timestamp("2015-12-31")
    assert set(pd.to_datetime(test_frame["date"]).dt.year) == {2012, 2013, 2014, 2015}
    # Stratified: every class in both parts, in about the same share.
    train_shares = train["weather"].value_counts(normalize=True)
    test_shares = answers["weather"].value_counts(normalize=True)
    assert sorted(train_shares.index) == CLASSES
    assert sorted(test_shares.index) == CLASSES
    assert (train_shares - test_shares).abs().max() < 0.01
    assert list(answers["id"]) == list(test_frame["id"])


def test_public_files_hold_no_answers(task: FolderTask, answers: pd.DataFrame) -> None:
    assert sorted(p.name for p in task.public_dir.iterdir()) == [
        "sample_submission.csv",
        "test.csv",
        "train.csv",
    ]
    assert sorted(p.name for p in task.private_dir.iterdir()) == ["test.csv"]
    assert "weather" not in pd.read_csv(task.public_dir / "test.csv").columns
    sample = pd.read_csv(task.sample_submission)
    assert list(sample.columns) == ["id", *CLASSES]
    assert (sample[CLASSES] == 0.2).all().all()
    assert list(answers.columns) == ["id", "weather"]
    assert sorted(set(answers["weather"])) == CLASSES


def test_the_values_are_the_raw_files(train: pd.DataFrame, test_frame: pd.DataFrame) -> None:
    """prepare only rewrites the date format and adds ids: every measurement is unchanged."""
    raw = pd.read_csv(FOLDER / "raw" / "seattle-weather.csv")
    raw["date"] = raw["date"].str.replace("/", "-")
    both = pd.concat([train, test_frame]).drop(columns=["id", "weather"])
    merged = raw.merge(both, on="date", suffixes=("", "_prepared"), validate="one_to_one")
    assert len(merged) == 1461
    for column in ["precipitation", "temp_max", "temp_min", "wind"]:
        assert (merged[column] == merged[f"{column}_prepared"]).all(), column


# --- grading -------------------------------------------------------------------------------


def test_the_sample_submission_scores_log_5(
    grade_module: ModuleType, sample: pd.DataFrame, answers: pd.DataFrame
) -> None:
    assert grade(grade_module, sample, answers) == pytest.approx(math.log(5))


def test_a_perfect_submission_scores_zero(grade_module: ModuleType, answers: pd.DataFrame) -> None:
    score = grade(grade_module, one_hot(answers), answers)
    assert score == pytest.approx(0.0, abs=1e-12)
    assert round(score, 5) == 0.0


def test_the_formula(grade_module: ModuleType, answers: pd.DataFrame) -> None:
    """Clipped to [1e-15, 1 - 1e-15], rows divided by their sum, mean -log(true class)."""
    assert grade(grade_module, one_hot(answers, 0.6), answers) == pytest.approx(-math.log(0.6))
    # Unnormalised rows are rescaled: halving every probability changes nothing.
    halved = one_hot(answers, 0.6)
    halved[CLASSES] /= 2
    assert grade(grade_module, halved, answers) == pytest.approx(-math.log(0.6))
    # Clipping comes first: a value above 1 - 1e-15 counts as 1 - 1e-15 before rescaling.
    tripled = one_hot(answers, 0.6)
    tripled[CLASSES] *= 3  # true class 1.8 -> ~1, the others 0.3 each
    assert grade(grade_module, tripled, answers) == pytest.approx(-math.log(1 / 2.2))
    # A confident wrong answer costs -log(1e-15) (the clipped zero, after renormalising).
    wrong = pd.DataFrame({"id": answers["id"], **dict.fromkeys(CLASSES, 0.0)})
    wrong["sun"] = np.where(answers["weather"] == "sun", 0.0, 1.0)
    wrong["fog"] = np.where(answers["weather"] == "sun", 1.0, 0.0)
    expected = -math.log(1e-15 / (1 - 1e-15 + 4e-15))
    assert grade(grade_module, wrong, answers) == pytest.approx(expected)


def test_row_and_column_order_do_not_matter(
    grade_module: ModuleType, answers: pd.DataFrame
) -> None:
    submission = one_hot(answers, 0.5)
    submission.loc[submission.index % 3 == 0, CLASSES] = 0.2
    ordered = grade(grade_module, submission, answers)
    shuffled = submission.sample(frac=1.0, random_state=7).reset_index(drop=True)
    assert list(shuffled["id"]) != list(submission["id"])
    assert grade(grade_module, shuffled, answers) == pytest.approx(ordered, abs=1e-12)
    reordered = submission[["sun", "id", "snow", "fog", "rain", "drizzle"]]
    assert grade(grade_module, reordered, answers) == pytest.approx(ordered, abs=1e-12)
    assert math.log(2) < ordered < math.log(5)


def test_numbers_written_as_text_are_accepted(
    grade_module: ModuleType, sample: pd.DataFrame, answers: pd.DataFrame
) -> None:
    as_text = sample.astype(str)
    assert grade(grade_module, as_text, answers) == pytest.approx(math.log(5))


# kind of invalid submission -> (how to make it from the sample, a word the error must say)
INVALID: dict[str, tuple[Callable[[pd.DataFrame], pd.DataFrame], str]] = {
    "missing a class column": (lambda s: s.drop(columns=["snow"]), "missing: \\['snow'\\]"),
    "missing id column": (lambda s: s.drop(columns=["id"]), "missing: \\['id'\\]"),
    "extra column": (lambda s: s.assign(hail=0.0), "unexpected: \\['hail'\\]"),
    "a label column instead": (
        lambda s: s[["id"]].assign(weather="sun"),
        "exactly the columns id,drizzle,fog,rain,snow,sun",
    ),
    "misspelt column": (lambda s: s.rename(columns={"sun": "Sun"}), "columns"),
    "too few rows": (lambda s: s.iloc[:-1], "460 rows; expected 461"),
    "too many rows": (lambda s: pd.concat([s, s.iloc[:1]]), "462 rows"),
    "a duplicated id": (lambda s: with_cell(s, 1, "id", s.loc[0, "id"]), "repeat"),
    "an unknown id": (lambda s: with_cell(s, 0, "id", 5000), "unknown"),
    "a training id": (lambda s: with_cell(s, 0, "id", 1), "unknown"),
    "a missing id": (lambda s: with_cell(s, 0, "id", None), "id has 1 missing"),
    "a text id": (lambda s: with_cell(s, 0, "id", "day one"), "whole numbers"),
    "a missing probability": (lambda s: with_cell(s, 0, "fog", None), "fog has 1 missing"),
    "a text probability": (lambda s: with_cell(s, 0, "rain", "likely"), "numbers"),
    "a negative probability": (lambda s: with_cell(s, 0, "sun", -0.1), "at least 0"),
    "an infinite probability": (lambda s: with_cell(s, 0, "sun", float("inf")), "finite"),
    "an all-zero row": (
        lambda s: s.assign(**{c: np.where(s.index == 3, 0.0, 0.2) for c in CLASSES}),
        "positive probability",
    ),
    "true/false values": (lambda s: s.assign(sun=True), "not true/false"),
}


# --- the leaderboard -----------------------------------------------------------------------


# Leaderboard entries cheap enough to recompute in tests (test_bundled_suites.py checks them against
# the CSV, and this module's INVALID submissions against the grader).
CHEAP_ENTRIES = [
    "uniform 0.2 for every class",
    "class priors",
    "class shares by wet/dry and year (+0.5 smoothing)",
    "rule: wet days rain up to 2013 and fog after, dry days sun (p=0.8)",
    "random guess dirichlet(1) seed=0",
    "logistic regression C=1 on weather+year",
]
