"""Builds ``leaderboard.csv`` for the mini Rotten Tomatoes competition from reference solutions.

Run from the repository root::

    .venv/bin/python -m tools.leaderboards.rotten_tomatoes

``tools.leaderboards.builder`` prepares the data into a temporary directory, runs every
reference solution below (trained on ``train.csv`` only), scores its sentiment scores for
``test.csv`` with ``grade.py`` (ROC-AUC) and writes the leaderboard best first. Everything is
seeded, so a rerun writes the same file.

The entries span the field: constant and random scores, the length of the review, hand-written
word lists (count the positive words, subtract the negative ones), and scikit-learn text models
(naive Bayes, logistic regression, linear SVMs, ridge, k-NN) on word counts or TF-IDF with
different n-grams, minimum document frequencies and regularisation, trained on 100 reviews up to
all of them.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from sklearn.feature_extraction.text import CountVectorizer, TfidfVectorizer
from sklearn.linear_model import LogisticRegression, RidgeClassifier
from sklearn.naive_bayes import BernoulliNB, ComplementNB, MultinomialNB
from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import make_pipeline, make_union
from sklearn.svm import LinearSVC

from tools.leaderboards import builder
from tools.leaderboards.builder import Solution

HERE = builder.task_folder("rotten-tomatoes")  # where leaderboard.csv goes
SEED = 0

# A predictor gets the training reviews, their 0/1 sentiment and the test reviews, and returns
# one score per test review (higher = more likely fresh).
Predictor = Callable[[pd.Series, np.ndarray, pd.Series], np.ndarray]


def submission(predict: Predictor, n_train: int | None = None) -> Solution:
    """A predictor as a leaderboard solution, trained on ``n_train`` training reviews (a seeded
    random subset; all of them when None)."""

    def solve(public: Path) -> pd.DataFrame:
        train = pd.read_csv(public / "train.csv", keep_default_na=False)
        test = pd.read_csv(public / "test.csv", keep_default_na=False)
        if n_train is not None:
            train = train.sample(n=n_train, random_state=SEED)
        scores = predict(train["review"], train["sentiment"].to_numpy(), test["review"])
        return pd.DataFrame({"id": test["id"], "sentiment": np.asarray(scores, dtype=float)})

    return solve


# --- rules ---------------------------------------------------------------------------------


def constant(value: float) -> Predictor:
    def predict(train: pd.Series, y: np.ndarray, test: pd.Series) -> np.ndarray:
        return np.full(len(test), value)

    return predict


def random_scores(seed: int) -> Predictor:
    def predict(train: pd.Series, y: np.ndarray, test: pd.Series) -> np.ndarray:
        return np.random.default_rng(seed).random(len(test))

    return predict


def text_measure(measure: Callable[[str], float], sign: float) -> Predictor:
    """A score computed from the review alone, e.g. its length (``sign`` -1: shorter = fresher)."""

    def predict(train: pd.Series, y: np.ndarray, test: pd.Series) -> np.ndarray:
        return sign * np.array([measure(text) for text in test], dtype=float)

    return predict


WORD = re.compile(r"[a-z']+")
POSITIVE_FEW = {"good", "great", "best", "fun", "funny", "love", "wonderful", "beautiful"}
NEGATIVE_FEW = {"bad", "worst", "boring", "dull", "mess", "stupid", "awful", "fails"}
POSITIVE_MORE = POSITIVE_FEW | {
    *["excellent", "enjoyable", "brilliant", "moving", "charming", "delightful", "smart"],
    *["touching", "entertaining", "engaging", "powerful", "solid", "witty", "terrific"],
    *["compelling", "hilarious", "rich", "remarkable", "sweet", "fascinating", "fresh"],
    *["funniest", "gorgeous", "perfect", "superb", "thoughtful", "clever", "satisfying"],
}
NEGATIVE_MORE = NEGATIVE_FEW | {
    *["tedious", "predictable", "lame", "flat", "unfunny", "tired", "lacks", "dumb"],
    *["silly", "poorly", "waste", "pointless", "mediocre", "bland", "worse", "annoying"],
    *["forgettable", "clumsy", "formulaic", "fail", "failed", "nothing", "unfortunately"],
    *["shallow", "disappointing", "ridiculous", "cliches", "neither", "too", "only"],
}


def word_list(positive: set[str], negative: set[str], per_word: bool) -> Predictor:
    """Hand-written: positive words minus negative words (per word of the review if ``per_word``);
    no training."""

    def predict(train: pd.Series, y: np.ndarray, test: pd.Series) -> np.ndarray:
        scores = []
        for text in test:
            words = WORD.findall(text.lower())
            score = sum(w in positive for w in words) - sum(w in negative for w in words)
            scores.append(score / max(len(words), 1) if per_word else score)
        return np.array(scores, dtype=float)

    return predict


def negation_aware(positive: set[str], negative: set[str]) -> Predictor:
    """Hand-written: like ``word_list`` but a listed word right after "not", "never", "no" or a
    "n't" counts for the other side ("not funny" is negative); no training."""

    def predict(train: pd.Series, y: np.ndarray, test: pd.Series) -> np.ndarray:
        scores = []
        for text in test:
            words = WORD.findall(text.lower())
            score = 0
            for before, word in zip(["", *words], words, strict=False):
                sign = -1 if before in NEGATIONS or before.endswith("n't") else 1
                score += sign * ((word in positive) - (word in negative))
            scores.append(score)
        return np.array(scores, dtype=float)

    return predict


NEGATIONS = {"not", "never", "no", "nor", "hardly"}


def _words(text: str) -> float:
    return float(len(WORD.findall(text.lower())))


MEASURES: dict[str, tuple[Callable[[str], float], float]] = {
    "longer is fresher (characters)": (len, 1.0),
    "shorter is fresher (characters)": (len, -1.0),
    "more words is fresher": (_words, 1.0),
    "more exclamation marks is fresher": (lambda t: float(t.count("!")), 1.0),
    "a 'but' is rotten": (lambda t: float(" but " in f" {t.lower()} "), -1.0),
    "a 'not' or 'n't' is rotten": (
        lambda t: float(bool(re.search(r"\bnot\b|n't\b", t.lower()))),
        -1.0,
    ),
}
_FEW = f"{len(POSITIVE_FEW)} positive minus {len(NEGATIVE_FEW)} negative words"
_MORE = f"{len(POSITIVE_MORE)} positive minus {len(NEGATIVE_MORE)} negative words"
WORD_LISTS: dict[str, tuple[set[str], set[str], bool]] = {
    _FEW: (POSITIVE_FEW, NEGATIVE_FEW, False),
    f"{_FEW} per word": (POSITIVE_FEW, NEGATIVE_FEW, True),
    f"{len(POSITIVE_FEW)} positive words only": (POSITIVE_FEW, set(), False),
    f"{len(NEGATIVE_FEW)} negative words only": (set(), NEGATIVE_FEW, False),
    _MORE: (POSITIVE_MORE, NEGATIVE_MORE, False),
    f"{_MORE} per word": (POSITIVE_MORE, NEGATIVE_MORE, True),
}


# --- models --------------------------------------------------------------------------------


def model(vectorizer: Callable[[], Any], classifier: Callable[[], Any]) -> Predictor:
    """A scikit-learn text pipeline; its score is the positive-class probability or, for models
    without one, the decision function."""

    def predict(train: pd.Series, y: np.ndarray, test: pd.Series) -> np.ndarray:
        pipeline = make_pipeline(vectorizer(), classifier())
        pipeline.fit(train, y)
        if hasattr(pipeline, "predict_proba"):
            return np.asarray(pipeline.predict_proba(test))[:, 1]
        return np.asarray(pipeline.decision_function(test))

    return predict


def nb_logistic(c: float, ngrams: int) -> Predictor:
    """Logistic regression on word presence scaled by naive Bayes log-count ratios (the "NB-SVM"
    idea of Wang & Manning, 2012): each n-gram's weight starts from how much more often it
    appears in fresh than in rotten reviews."""

    def predict(train: pd.Series, y: np.ndarray, test: pd.Series) -> np.ndarray:
        vectorizer = CountVectorizer(ngram_range=(1, ngrams), binary=True)
        x_train = vectorizer.fit_transform(train)
        fresh = np.asarray(x_train[y == 1].sum(axis=0)).ravel() + 1.0
        rotten = np.asarray(x_train[y == 0].sum(axis=0)).ravel() + 1.0
        ratio = np.log((fresh / fresh.sum()) / (rotten / rotten.sum()))
        classifier = LogisticRegression(C=c, max_iter=1000)
        classifier.fit(x_train.multiply(ratio).tocsr(), y)
        x_test = vectorizer.transform(test).multiply(ratio).tocsr()
        return np.asarray(classifier.predict_proba(x_test))[:, 1]

    return predict


def rank_average(*members: Predictor) -> Predictor:
    """An ensemble: the mean of its members' scores, each turned into ranks first (their scales
    differ: probabilities, margins)."""

    def predict(train: pd.Series, y: np.ndarray, test: pd.Series) -> np.ndarray:
        ranks = [pd.Series(member(train, y, test)).rank().to_numpy() for member in members]
        return np.asarray(np.mean(ranks, axis=0) / len(test))

    return predict


def counts(ngrams: int = 1, min_df: int = 1, binary: bool = False) -> Callable[[], Any]:
    return lambda: CountVectorizer(ngram_range=(1, ngrams), min_df=min_df, binary=binary)


def tfidf(ngrams: int = 1, min_df: int = 1, analyzer: str = "word") -> Callable[[], Any]:
    if analyzer == "char_wb":
        return lambda: TfidfVectorizer(
            analyzer="char_wb", ngram_range=(2, ngrams), min_df=min_df, sublinear_tf=True
        )
    return lambda: TfidfVectorizer(ngram_range=(1, ngrams), min_df=min_df, sublinear_tf=True)


def words_and_characters() -> Any:
    """Word 1-2-gram and character 2-5-gram TF-IDF side by side (min_df 2): words carry the
    verdict, character n-grams catch misspellings, word endings and punctuation."""
    return make_union(tfidf(2, 2)(), tfidf(5, 2, "char_wb")())


SUBSETS: list[int | None] = [100, 300, 1000, 2000, None]


def model_grid() -> dict[str, tuple[Predictor, list[int | None]]]:
    """Model name -> (predictor, training sizes to run it on)."""
    grid: dict[str, tuple[Predictor, list[int | None]]] = {}
    for ngrams in (1, 2, 3):
        for min_df in (1, 2, 5):
            grid[f"multinomial NB on word 1-{ngrams}-gram counts min_df={min_df}"] = (
                model(counts(ngrams, min_df), MultinomialNB),
                SUBSETS if (ngrams, min_df) in ((1, 1), (2, 1)) else [None],
            )
    for alpha in (0.1, 0.3, 3.0):
        grid[f"multinomial NB alpha={alpha:g} on word 1-2-gram counts"] = (
            model(counts(2), partial(MultinomialNB, alpha=alpha)),
            [None],
        )
    grid["bernoulli NB on word presence"] = (model(counts(binary=True), BernoulliNB), SUBSETS)
    grid["complement NB on word 1-2-gram TF-IDF"] = (model(tfidf(2), ComplementNB), [1000, None])
    for c in (0.1, 1.0, 10.0):
        for ngrams in (1, 2):
            grid[f"logistic regression C={c:g} on word 1-{ngrams}-gram TF-IDF"] = (
                model(tfidf(ngrams), partial(LogisticRegression, C=c, max_iter=1000)),
                SUBSETS,
            )
        grid[f"logistic regression C={c:g} on word counts"] = (
            model(counts(), partial(LogisticRegression, C=c, max_iter=1000)),
            [300, None],
        )
    for min_df in (2, 5):
        grid[f"logistic regression C=10 on word 1-2-gram TF-IDF min_df={min_df}"] = (
            model(tfidf(2, min_df), lambda: LogisticRegression(C=10.0, max_iter=1000)),
            [None],
        )
    for c in (0.03, 0.3, 3.0):
        for ngrams in (1, 2, 3):
            grid[f"linear SVM C={c:g} on word 1-{ngrams}-gram TF-IDF"] = (
                model(tfidf(ngrams), partial(LinearSVC, C=c, random_state=SEED)),
                SUBSETS if ngrams == 2 else [None],
            )
    for c in (0.3, 3.0):
        grid[f"linear SVM C={c:g} on character 2-5-gram TF-IDF"] = (
            model(tfidf(5, 2, "char_wb"), partial(LinearSVC, C=c, random_state=SEED)),
            [1000, None],
        )
        grid[f"logistic regression C={3 * c:g} on character 2-5-gram TF-IDF"] = (
            model(tfidf(5, 2, "char_wb"), partial(LogisticRegression, C=3 * c, max_iter=1000)),
            [1000, None],
        )
    for c in (0.1, 0.3, 1.0):
        grid[f"linear SVM C={c:g} on word 1-2-gram + character 2-5-gram TF-IDF"] = (
            model(words_and_characters, partial(LinearSVC, C=c, random_state=SEED)),
            [2000, None] if c == 0.1 else [None],
        )
    for c in (3.0, 10.0):
        grid[f"logistic regression C={c:g} on word 1-2-gram + character 2-5-gram TF-IDF"] = (
            model(words_and_characters, partial(LogisticRegression, C=c, max_iter=2000)),
            [2000, None] if c == 3.0 else [None],
        )
    grid["ridge classifier on word 1-2-gram TF-IDF"] = (model(tfidf(2), RidgeClassifier), SUBSETS)
    for c in (0.1, 1.0, 10.0):
        for ngrams in (1, 2, 3):
            grid[f"NB-weighted logistic regression C={c:g} on word 1-{ngrams}-gram presence"] = (
                nb_logistic(c, ngrams),
                [300, 1000, 2000, None] if (c, ngrams) == (1.0, 2) else [None],
            )
    grid["rank average of NB, logistic regression and character SVM"] = (
        rank_average(
            model(counts(2), MultinomialNB),
            model(tfidf(2), lambda: LogisticRegression(C=10.0, max_iter=1000)),
            model(tfidf(5, 2, "char_wb"), lambda: LinearSVC(C=0.3, random_state=SEED)),
        ),
        [300, 1000, 2000, None],
    )
    grid["rank average of NB-weighted logistic regression and complement NB"] = (
        rank_average(nb_logistic(1.0, 2), model(tfidf(2), ComplementNB)),
        [1000, None],
    )
    for k in (5, 25, 100):
        grid[f"{k}-NN cosine on word TF-IDF"] = (
            model(tfidf(), partial(KNeighborsClassifier, n_neighbors=k, metric="cosine")),
            [300, 1000, None],
        )
    return grid


# --- the entries ---------------------------------------------------------------------------


def entries() -> dict[str, Solution]:
    """Every reference solution, by team name."""
    found: dict[str, Solution] = {
        "constant 0.5 (the sample submission)": submission(constant(0.5)),
        "constant 0 (everything rotten)": submission(constant(0.0)),
        "constant 1 (everything fresh)": submission(constant(1.0)),
    }
    for seed in range(5):
        found[f"random scores seed={seed}"] = submission(random_scores(seed))
    for name, (measure, sign) in MEASURES.items():
        found[f"rule: {name}"] = submission(text_measure(measure, sign))
    for name, (positive, negative, per_word) in WORD_LISTS.items():
        found[f"rule: {name}"] = submission(word_list(positive, negative, per_word))
    found[f"rule: {_FEW}, negation-aware"] = submission(negation_aware(POSITIVE_FEW, NEGATIVE_FEW))
    found[f"rule: {_MORE}, negation-aware"] = submission(
        negation_aware(POSITIVE_MORE, NEGATIVE_MORE)
    )
    for name, (predict, sizes) in model_grid().items():
        for size in sizes:
            reviews = f"{size} reviews" if size else "all reviews"
            found[f"{name}, {reviews}"] = submission(predict, size)
    return found


if __name__ == "__main__":
    # One thread: on a small shared machine the threaded BLAS spins and runs many times slower.
    sys.exit(builder.main(HERE, entries, lower_is_better=False, threads=1))
