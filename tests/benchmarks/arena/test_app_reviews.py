"""The arena App Reviews competition: the generator, its preparation, the ROC-AUC grader and
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

FOLDER = MINI.parent / "arena" / "app-reviews"
TASK_ID = "arena/app-reviews"


@pytest.fixture(scope="module")
def train(task: FolderTask) -> pd.DataFrame:
    return pd.read_csv(task.public_dir / "train.csv", keep_default_na=False)


@pytest.fixture(scope="module")
def test_frame(task: FolderTask) -> pd.DataFrame:
    return pd.read_csv(task.public_dir / "test.csv", keep_default_na=False)


def pairwise_auc(scores: np.ndarray, labels: np.ndarray) -> float:
    """The AUC by its definition: the share of (positive, negative) pairs ordered right."""
    positive, negative = scores[labels == 1], scores[labels == 0]
    wins = (positive[:, None] > negative[None, :]).sum()
    ties = (positive[:, None] == negative[None, :]).sum()
    return float((wins + 0.5 * ties) / (len(positive) * len(negative)))


# --- the task folder and the generator -------------------------------------------------------


def test_the_loaded_task(task: FolderTask) -> None:
    assert task.id == TASK_ID
    assert task.lower_is_better is False
    assert task.metric_name == "roc_auc"
    assert task.config["task_type"] == "text-classification"
    assert "area under the ROC curve" in task.description
    assert "id,recommended" in task.description
    config = yaml.safe_load((FOLDER / "config.yaml").read_text(encoding="utf-8"))
    assert config["dataset"]["answers"] == "app-reviews/prepared/private/test.csv"


def test_the_generator_states_its_seed_and_is_seeded() -> None:
    generator = task_module(FOLDER / "raw", "generate")
    source = (FOLDER / "raw" / "SOURCE.md").read_text(encoding="utf-8")
    assert str(generator.SEED) in source and "Podium" in source
    first, again = generator.generate(n=300), generator.generate(n=300)
    pd.testing.assert_frame_equal(first, again)
    assert list(first.columns) == ["review", "recommended"]
    assert set(first["recommended"]) == {0, 1}
    assert not generator.generate(seed=1, n=300).equals(first)


# --- preparation ---------------------------------------------------------------------------


def test_the_split(train: pd.DataFrame, test_frame: pd.DataFrame, answers: pd.DataFrame) -> None:
    assert len(train) == 4000 and len(test_frame) == 16000
    assert list(train.columns) == ["id", "review", "recommended"]
    assert list(test_frame.columns) == ["id", "review"]
    assert set(train["id"]) | set(test_frame["id"]) == set(range(1, 20001))
    assert list(answers.columns) == ["id", "recommended"]
    assert list(answers["id"]) == list(test_frame["id"])
    assert set(train["recommended"]) == set(answers["recommended"]) == {0, 1}
    assert 0.3 < train["recommended"].mean() < 0.5
    for reviews in (train["review"], test_frame["review"]):
        assert (reviews.str.len() > 0).all() and not reviews.str.contains("\n").any()


def test_the_signal_a_word_tokenizer_misses(train: pd.DataFrame) -> None:
    """The design: star ratings ("4/5") and emoticons, which scikit-learn's default token
    pattern drops, are common and agree with the label."""
    reviews, label = train["review"], train["recommended"]
    stars = reviews.str.extract(r"([1-5]) ?/ ?5")[0].dropna().astype(int)
    assert 0.1 < len(stars) / len(train) < 0.3
    assert label[stars.index][stars >= 4].mean() > 0.8 > 0.2 > label[stars.index][stars <= 2].mean()
    happy = reviews.str.contains(r"(?::\)|:D|<3|:-\)|\(:)$")
    assert 0.1 < happy.mean() < 0.3 and label[happy].mean() > 0.7


# --- grading -------------------------------------------------------------------------------


def _noisy(answers: pd.DataFrame) -> pd.DataFrame:
    noise = np.random.default_rng(3).normal(0.0, 0.8, len(answers))
    return answers.assign(recommended=answers["recommended"] + noise)


def test_the_score_is_the_auc(grade_module: ModuleType, answers: pd.DataFrame) -> None:
    part = answers.iloc[:3000]
    submission = _noisy(part).round({"recommended": 1})  # rounding makes ties
    expected = pairwise_auc(submission["recommended"].to_numpy(), part["recommended"].to_numpy())
    assert grade(grade_module, submission, part) == pytest.approx(expected, abs=1e-12)
    assert grade(grade_module, answers.copy(), answers) == 1.0
    flipped = answers.assign(recommended=1 - answers["recommended"])
    assert grade(grade_module, flipped, answers) == 0.0


def test_the_sample_scores_one_half(
    grade_module: ModuleType, sample: pd.DataFrame, answers: pd.DataFrame
) -> None:
    assert grade(grade_module, sample, answers) == 0.5


def test_row_order_and_scale_do_not_matter(grade_module: ModuleType, answers: pd.DataFrame) -> None:
    submission = _noisy(answers)
    expected = grade(grade_module, submission, answers)
    shuffled = submission.sample(frac=1.0, random_state=7)[["recommended", "id"]]
    assert grade(grade_module, shuffled, answers) == expected
    rescaled = submission.assign(recommended=submission["recommended"] * 50 - 3)
    assert grade(grade_module, rescaled, answers) == pytest.approx(expected)


# kind of invalid submission -> (how to make it from the sample, a word the error must say)
INVALID: dict[str, tuple[Callable[[pd.DataFrame], pd.DataFrame], str]] = {
    "missing score column": (lambda s: s[["id"]], "columns"),
    "missing id column": (lambda s: s[["recommended"]], "columns"),
    "extra column": (lambda s: s.assign(review="x"), "unexpected"),
    "misspelt column": (lambda s: s.rename(columns={"recommended": "Recommended"}), "columns"),
    "a repeated column": (
        lambda s: pd.concat([s, s[["recommended"]]], axis=1),
        "repeats a column",
    ),
    "too few rows": (lambda s: s.iloc[:-1], "rows"),
    "too many rows": (lambda s: pd.concat([s, s.iloc[:1]]), "rows"),
    "a duplicated id": (lambda s: with_cell(s, 1, "id", s.loc[0, "id"]), "repeat"),
    "an unknown id": (lambda s: with_cell(s, 0, "id", 999999), "unknown"),
    "a fractional id": (lambda s: with_cell(s, 0, "id", 2.5), "whole numbers"),
    "a missing id": (lambda s: with_cell(s, 0, "id", None), "missing"),
    "a missing score": (lambda s: with_cell(s, 0, "recommended", None), "missing"),
    "a text score": (lambda s: with_cell(s, 0, "recommended", "yes"), "finite numbers"),
    "an infinite score": (lambda s: with_cell(s, 0, "recommended", float("inf")), "finite numbers"),
    "true/false scores": (lambda s: s.assign(recommended=s.index % 2 == 0), "true/false"),
}


# --- the leaderboard -----------------------------------------------------------------------

# Entries cheap enough to recompute in tests (test_bundled_suites.py checks them against the CSV).
CHEAP_ENTRIES = [
    "constant: the training prior",
    "random scores seed=0",
    "rule: emoticons (happy minus sad)",
    "rule: 15 positive minus 15 negative words, negation-aware",
    "multinomial NB alpha=0.3 fit_prior=yes on word 1-2-gram counts",
    "logistic regression C=1 penalty=l2 class_weight=none on word TF-IDF, 500 training rows",
]
