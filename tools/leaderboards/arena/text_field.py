"""A field of reference solutions for an arena text-classification task.

The arena's leaderboards must be wide and made without looking at the baseline model: many
pipelines of many kinds, weak to strong. A task module names what only it knows (its columns,
its classes, a few hand-written rules) and this module crosses one fixed ladder of text
representations (word presence, word n-gram TF-IDF up to trigrams, character n-grams, words and
characters side by side, a dense LSA projection) with one fixed grid of model families (naive
Bayes, logistic regression, linear SVMs, ridge, k-NN on the sparse features; forests, boosting,
logistic regression and k-NN on the dense ones), adds constants, random scores and
learning-curve entries (models trained on a seeded subset of the training rows), and wraps each
as a builder ``Solution`` (the public folder in, the submission frame out).

The arena field rule: every arena field has at least 1,000 entries (MLE-bench's tier where
bronze is the top 10 %), reached by making each family's grid factorial over the two or three
hyperparameters that matter most for it (regularisation and class weighting for the linear
models, the loss for SVMs, smoothing and the prior for naive Bayes, k and the vote's weighting
for k-NN, leaf size and features per split for forests, learning rate and tree size for
boosting), chosen from modelling sense alone and never from where a baseline lands. The same
grid serves every text task: 1,166 entries for a binary task, 1,038 for a multi-class one (no
ridge: it gives no probabilities).

Binary tasks (``classes`` empty) get one score per test row, the probability of class 1 when
the model has one (ROC AUC reads only the order); multi-class tasks get one probability column
per class, each row summing to one. Features are computed once per public folder, training size
and representation and shared by the models that use them, and so are the k-NN neighbours
(one search per representation serves every k and weighting). Everything is seeded.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from sklearn.calibration import CalibratedClassifierCV
from sklearn.decomposition import TruncatedSVD
from sklearn.ensemble import (
    ExtraTreesClassifier,
    HistGradientBoostingClassifier,
    RandomForestClassifier,
)
from sklearn.feature_extraction.text import CountVectorizer, TfidfVectorizer
from sklearn.linear_model import LogisticRegression, RidgeClassifier
from sklearn.multiclass import OneVsRestClassifier
from sklearn.naive_bayes import ComplementNB, MultinomialNB
from sklearn.neighbors import NearestNeighbors
from sklearn.pipeline import make_union
from sklearn.svm import LinearSVC

from tools.leaderboards.builder import Solution

SEED = 0
# A rule gets the training texts, their labels and the test texts, and returns the binary score
# (n,) or the class probabilities (n, k) in the task's class order.
Predictor = Callable[[pd.Series, np.ndarray, pd.Series], np.ndarray]


@dataclass(frozen=True)
class TextTask:
    """What the field needs to know about a task's public files."""

    text: str  # the free-text column of train.csv and test.csv
    target: str  # the training label column (binary: 0/1, predicted in a column of that name)
    classes: tuple[str, ...] = ()  # multi-class: the labels, one probability column each
    rules: Mapping[str, Predictor] = field(default_factory=dict)  # hand-written, by name
    id: str = "id"

    @property
    def multiclass(self) -> bool:
        return bool(self.classes)


# --- representations -----------------------------------------------------------------------


def _words(ngrams: int, min_df: int = 1) -> Any:
    return TfidfVectorizer(ngram_range=(1, ngrams), min_df=min_df, sublinear_tf=True)


def _chars(low: int, high: int) -> Any:
    return TfidfVectorizer(analyzer="char_wb", ngram_range=(low, high), min_df=2, sublinear_tf=True)


# name -> vectorizer factory, from the rawest view of the text to the most engineered
SPARSE: dict[str, Callable[[], Any]] = {
    "word presence": lambda: CountVectorizer(binary=True),
    "word 1-2-gram counts": lambda: CountVectorizer(ngram_range=(1, 2)),
    "word 1-2-gram presence": lambda: CountVectorizer(ngram_range=(1, 2), binary=True),
    "word TF-IDF": lambda: _words(1),
    "word 1-2-gram TF-IDF": lambda: _words(2, 2),
    "word 1-3-gram TF-IDF": lambda: _words(3, 2),
    "character 1-3-gram TF-IDF": lambda: _chars(1, 3),
    "character 2-4-gram TF-IDF": lambda: _chars(2, 4),
    "character 2-5-gram TF-IDF": lambda: _chars(2, 5),
    "word 1-2-gram + character 2-5-gram TF-IDF": lambda: make_union(_words(2, 2), _chars(2, 5)),
    "word 1-3-gram + character 1-5-gram TF-IDF": lambda: make_union(_words(3, 2), _chars(1, 5)),
}
# naive Bayes' natural input: counts or presence
COUNT_BASED = ("word presence", "word 1-2-gram counts", "word 1-2-gram presence")
LSA = {"LSA-50 of word+character TF-IDF": 50, "LSA-150 of word+character TF-IDF": 150}

_CACHE: dict[tuple[str, str, int | None], tuple[Any, np.ndarray, Any, pd.Series]] = {}


def _data(task: TextTask, public: Path, n_train: int | None) -> tuple[pd.DataFrame, pd.DataFrame]:
    train = pd.read_csv(public / "train.csv", keep_default_na=False)
    test = pd.read_csv(public / "test.csv", keep_default_na=False)
    if n_train is not None:
        train = train.sample(n=n_train, random_state=SEED)
    return train, test


def features(
    task: TextTask, public: Path, name: str, n_train: int | None
) -> tuple[Any, np.ndarray, Any, pd.Series]:
    """(X_train, y_train, X_test, test ids) for one representation, computed once."""
    key = (str(public), name, n_train)
    if key not in _CACHE:
        train, test = _data(task, public, n_train)
        y = train[task.target].astype(str).to_numpy() if task.multiclass else train[task.target]
        if name in LSA:
            x_train, _, x_test, _ = features(
                task, public, "word 1-2-gram + character 2-5-gram TF-IDF", n_train
            )
            svd = TruncatedSVD(LSA[name], random_state=SEED)
            x_train, x_test = svd.fit_transform(x_train), svd.transform(x_test)
        else:
            vectorizer = SPARSE[name]()
            x_train = vectorizer.fit_transform(train[task.text])
            x_test = vectorizer.transform(test[task.text])
        _CACHE[key] = (x_train, np.asarray(y), x_test, test[task.id])
    return _CACHE[key]


# --- models --------------------------------------------------------------------------------


def _scores(task: TextTask, model: Any, x_test: Any) -> np.ndarray:
    """Binary: P(class 1) or the margin; multi-class: probabilities in the task's class order."""
    if not task.multiclass:
        if hasattr(model, "predict_proba"):
            return np.asarray(model.predict_proba(x_test))[:, 1]
        return np.asarray(model.decision_function(x_test), dtype=float)
    found = pd.DataFrame(model.predict_proba(x_test), columns=[str(c) for c in model.classes_])
    proba = found.reindex(columns=list(task.classes), fill_value=0.0).to_numpy()
    return np.asarray(proba / proba.sum(axis=1, keepdims=True))


def fitted(
    task: TextTask, representation: str, make: Callable[[], Any], n_train: int | None = None
) -> Solution:
    """A model trained on one representation (``n_train`` seeded training rows, or all)."""

    def solve(public: Path) -> pd.DataFrame:
        x_train, y, x_test, ids = features(task, public, representation, n_train)
        model = make()
        model.fit(x_train, y)
        return frame(task, ids, _scores(task, model, x_test))

    return solve


def frame(task: TextTask, ids: pd.Series, scores: np.ndarray) -> pd.DataFrame:
    """The submission: ``id`` and the binary score, or ``id`` and one column per class."""
    out = pd.DataFrame({task.id: ids.to_numpy()})
    if task.multiclass:
        for i, name in enumerate(task.classes):
            out[name] = scores[:, i]
    else:
        out[task.target] = scores
    return out


WEIGHTS = (False, True)  # class_weight: none, or "balanced" (inverse class frequencies)


def _weight(balanced: bool) -> str | None:
    return "balanced" if balanced else None


def _says(balanced: bool) -> str:
    return f"class_weight={'balanced' if balanced else 'none'}"


def logistic(
    task: TextTask, c: float, penalty: str = "l2", balanced: bool = False
) -> Callable[[], Any]:
    """Binary: liblinear logistic regression; multi-class: one-vs-rest of them (fast on sparse
    text, and a different calibration from a multinomial fit). ``penalty`` is "l2" or "l1";
    L2 is the default and is not passed (``penalty`` is deprecated since scikit-learn 1.8 and
    goes in 1.10); the L1 entries were built passing ``penalty="l1"``, as the boards record
    (``l1_ratio=1`` fits an L1 model that differs in the fifth decimal)."""
    l1 = {"penalty": "l1"} if penalty == "l1" else {}
    one = partial(LogisticRegression, C=c, class_weight=_weight(balanced), solver="liblinear", **l1)
    return (lambda: OneVsRestClassifier(one())) if task.multiclass else one


def multinomial_logistic(c: float, balanced: bool = False) -> Callable[[], Any]:
    return partial(LogisticRegression, C=c, class_weight=_weight(balanced), max_iter=1000)


def svm(
    task: TextTask, c: float, loss: str = "squared_hinge", balanced: bool = False
) -> Callable[[], Any]:
    """A linear SVM: its margin for a binary score, sigmoid-calibrated for probabilities. The
    hinge loss has only the dual solver; the squared hinge keeps scikit-learn's choice."""
    dual: bool | str = True if loss == "hinge" else "auto"
    one = partial(
        LinearSVC, C=c, loss=loss, dual=dual, class_weight=_weight(balanced), random_state=SEED
    )
    if task.multiclass:
        return lambda: CalibratedClassifierCV(one(), cv=3)
    return one


# --- k nearest neighbours, found once ------------------------------------------------------

# The neighbours of every test row among the training rows, sorted nearest first, found once per
# (training matrix, test matrix, metric) and shared by every k and weighting: the search is
# what costs (a 16,000 x 4,000 distance matrix), the vote is free. Keyed by the matrices'
# identities, which the cached features keep alive (the value holds them too).
_NEIGHBOURS: dict[tuple[int, int, str], tuple[Any, Any, np.ndarray, np.ndarray]] = {}
MOST_NEIGHBOURS = 200


def _neighbours(x_train: Any, x_test: Any, metric: str) -> tuple[np.ndarray, np.ndarray]:
    """(distances, indices) of each test row's nearest training rows, nearest first."""
    key = (id(x_train), id(x_test), metric)
    if key not in _NEIGHBOURS:
        k = min(MOST_NEIGHBOURS, x_train.shape[0])
        search = NearestNeighbors(n_neighbors=k, metric=metric, algorithm="brute").fit(x_train)
        distances, indices = search.kneighbors(x_test)
        _NEIGHBOURS[key] = (x_train, x_test, distances, indices)
    return _NEIGHBOURS[key][2], _NEIGHBOURS[key][3]


class NeighbourVote:
    """k-NN classification (scikit-learn's vote: uniform, or weights 1/distance) over the
    cached neighbours; ``predict_proba`` gives the class shares in ``classes_`` order."""

    def __init__(self, k: int, weights: str = "uniform", metric: str = "minkowski") -> None:
        if k > MOST_NEIGHBOURS:
            raise ValueError(f"k={k} is more than the {MOST_NEIGHBOURS} neighbours cached")
        self.k, self.weights, self.metric = k, weights, metric

    def fit(self, x: Any, y: np.ndarray) -> NeighbourVote:
        self._x = x
        self.classes_, self._codes = np.unique(np.asarray(y), return_inverse=True)
        return self

    def predict_proba(self, x_test: Any) -> np.ndarray:
        distances, indices = _neighbours(self._x, x_test, self.metric)
        distances, indices = distances[:, : self.k], indices[:, : self.k]
        weight = np.ones_like(distances)
        if self.weights == "distance":
            weight = 1.0 / np.maximum(distances, 1e-12)
        votes = self._codes[indices]
        proba = np.stack([(weight * (votes == c)).sum(axis=1) for c in range(len(self.classes_))])
        return np.asarray(proba.T / proba.T.sum(axis=1, keepdims=True))


# --- the grids -----------------------------------------------------------------------------

# Each family's grid is factorial over the two or three settings that matter most for it, from
# the library default to what a careful modeller tries. It is the same for every text task and
# was chosen before any baseline run was scored against the field (the arena field rule).
LOGISTIC_C = (0.03, 0.1, 0.3, 1.0, 3.0, 10.0, 30.0, 100.0)
SVM_C = (0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0)
NB_ALPHA = (0.01, 0.03, 0.1, 0.3, 1.0, 3.0)
COMPLEMENT_ALPHA = (0.1, 0.3, 1.0, 3.0)
RIDGE_ALPHA = (0.1, 0.3, 1.0, 3.0, 10.0, 30.0)
SPARSE_K = (5, 10, 25, 50, 100)
DENSE_K = (10, 50, 150)
SOFTMAX_C = (0.1, 0.3, 1.0, 3.0, 10.0, 30.0)


def nb_grid() -> dict[str, Callable[[], Any]]:
    """Multinomial naive Bayes: smoothing x whether to learn the class prior."""
    return {
        f"multinomial NB alpha={alpha:g} fit_prior={'yes' if prior else 'no'}": partial(
            MultinomialNB, alpha=alpha, fit_prior=prior
        )
        for alpha in NB_ALPHA
        for prior in (True, False)
    }


def sparse_grid(task: TextTask) -> dict[str, Callable[[], Any]]:
    """The models tried on every sparse representation (naive Bayes: on counts and presence;
    ``nb_grid`` also on word TF-IDF)."""
    grid: dict[str, Callable[[], Any]] = {}
    for c in LOGISTIC_C:
        for penalty in ("l2", "l1"):
            for balanced in WEIGHTS:
                name = f"logistic regression C={c:g} penalty={penalty} {_says(balanced)}"
                grid[name] = logistic(task, c, penalty, balanced)
    for c in SVM_C:
        for loss in ("squared_hinge", "hinge"):
            for balanced in WEIGHTS:
                grid[f"linear SVM C={c:g} loss={loss} {_says(balanced)}"] = svm(
                    task, c, loss, balanced
                )
    grid.update(nb_grid())
    for alpha in COMPLEMENT_ALPHA:
        for norm in (False, True):
            grid[f"complement NB alpha={alpha:g} norm={'yes' if norm else 'no'}"] = partial(
                ComplementNB, alpha=alpha, norm=norm
            )
    if not task.multiclass:  # no probabilities to give a multi-class log loss
        for alpha in RIDGE_ALPHA:
            for balanced in WEIGHTS:
                grid[f"ridge classifier alpha={alpha:g} {_says(balanced)}"] = partial(
                    RidgeClassifier, alpha=alpha, class_weight=_weight(balanced)
                )
    for k in SPARSE_K:
        for weights in ("uniform", "distance"):
            grid[f"{k}-NN cosine weights={weights}"] = partial(
                NeighbourVote, k=k, weights=weights, metric="cosine"
            )
    return grid


def dense_grid(task: TextTask) -> dict[str, Callable[[], Any]]:
    """The models tried on the dense LSA projections."""
    grid: dict[str, Callable[[], Any]] = {}
    forests = {"random forest": RandomForestClassifier, "extra trees": ExtraTreesClassifier}
    for family, forest in forests.items():
        for features in ("sqrt", "log2"):
            for leaf in (1, 2, 5):
                name = f"{family} 300 trees max_features={features} min_samples_leaf={leaf}"
                grid[name] = partial(
                    forest,
                    n_estimators=300,
                    max_features=features,
                    min_samples_leaf=leaf,
                    random_state=SEED,
                )
    for rate in (0.05, 0.1):
        for leaves in (15, 31):
            name = f"histogram gradient boosting learning_rate={rate:g} max_leaf_nodes={leaves}"
            grid[name] = partial(
                HistGradientBoostingClassifier,
                max_iter=200,
                learning_rate=rate,
                max_leaf_nodes=leaves,
                random_state=SEED,
            )
    for c in (0.1, 1.0, 10.0):
        for balanced in WEIGHTS:
            grid[f"logistic regression C={c:g} {_says(balanced)}"] = multinomial_logistic(
                c, balanced
            )
    for k in DENSE_K:
        for weights in ("uniform", "distance"):
            grid[f"{k}-NN euclidean weights={weights}"] = partial(
                NeighbourVote, k=k, weights=weights
            )
    return grid


# Multinomial (softmax) logistic regression, slower to fit: on the main representations only.
MULTINOMIAL = (
    "word 1-2-gram TF-IDF",
    "character 2-5-gram TF-IDF",
    "word 1-2-gram + character 2-5-gram TF-IDF",
    "word 1-3-gram + character 1-5-gram TF-IDF",
)

# Learning curves: (representation, model name in the grids), trained on seeded subsets.
_LR = "logistic regression C={} penalty=l2 class_weight=none"
_SVM = "linear SVM C={} loss=squared_hinge class_weight=none"
CURVES = [
    ("word TF-IDF", _LR.format(1)),
    ("word 1-2-gram TF-IDF", _LR.format(10)),
    ("word 1-2-gram counts", "multinomial NB alpha=0.3 fit_prior=yes"),
    ("word 1-2-gram TF-IDF", _SVM.format(0.3)),
    ("character 2-5-gram TF-IDF", _LR.format(3)),
    ("word 1-2-gram + character 2-5-gram TF-IDF", _LR.format(3)),
    ("word 1-2-gram + character 2-5-gram TF-IDF", _SVM.format(0.1)),
    ("word 1-3-gram + character 1-5-gram TF-IDF", _LR.format(10)),
    (
        "LSA-150 of word+character TF-IDF",
        "histogram gradient boosting learning_rate=0.1 max_leaf_nodes=31",
    ),
    (
        "LSA-50 of word+character TF-IDF",
        "random forest 300 trees max_features=sqrt min_samples_leaf=2",
    ),
    ("word presence", "multinomial NB alpha=1 fit_prior=yes"),
    ("character 2-4-gram TF-IDF", _SVM.format(0.3)),
]
CURVE_SIZES = (250, 500, 1000, 2000)


# --- constants and rules ---------------------------------------------------------------------


def _priors(task: TextTask, y: np.ndarray) -> np.ndarray:
    counts = pd.Series(y).astype(str).value_counts()
    return np.array([counts.get(c, 0) for c in task.classes], dtype=float) / len(y)


def ruled(task: TextTask, predict: Predictor) -> Solution:
    """A rule or constant as a solution: it sees the training texts and labels only."""

    def solve(public: Path) -> pd.DataFrame:
        train, test = _data(task, public, None)
        y = train[task.target].astype(str).to_numpy() if task.multiclass else train[task.target]
        scores = predict(train[task.text], np.asarray(y), test[task.text])
        return frame(task, test[task.id], np.asarray(scores, dtype=float))

    return solve


def baselines(task: TextTask) -> dict[str, Predictor]:
    """Constants and random guesses."""

    def random_scores(seed: int) -> Predictor:
        def predict(train: pd.Series, y: np.ndarray, test: pd.Series) -> np.ndarray:
            rng = np.random.default_rng(seed)
            if task.multiclass:
                return rng.dirichlet(np.ones(len(task.classes)), size=len(test))
            return rng.random(len(test))

        return predict

    def constant(kind: str) -> Predictor:
        def predict(train: pd.Series, y: np.ndarray, test: pd.Series) -> np.ndarray:
            if not task.multiclass:
                return np.full(len(test), float(np.mean(y)) if kind == "prior" else 0.5)
            k = len(task.classes)
            row = _priors(task, y) if kind == "prior" else np.full(k, 1.0 / k)
            if kind == "majority":
                row = np.full(k, 0.1 / (k - 1))
                row[int(np.argmax(_priors(task, y)))] = 0.9
            return np.tile(row, (len(test), 1))

        return predict

    found: dict[str, Predictor] = {
        "constant: the training prior": constant("prior"),
        "constant: uniform": constant("uniform"),
    }
    if task.multiclass:
        found["constant: 0.9 on the most frequent class"] = constant("majority")
    for seed in range(5):
        found[f"random scores seed={seed}"] = random_scores(seed)
    return found


# --- the field -------------------------------------------------------------------------------


def solutions(task: TextTask) -> dict[str, Solution]:
    """Every entry of the field, by team name."""
    found = {name: ruled(task, p) for name, p in {**baselines(task), **task.rules}.items()}
    sparse, dense = sparse_grid(task), dense_grid(task)
    for representation in SPARSE:
        for model_name, make in sparse.items():
            is_nb = "NB" in model_name
            if (
                is_nb
                and representation not in COUNT_BASED
                and ("character" in representation or not model_name.startswith("multinomial"))
            ):
                continue  # naive Bayes on TF-IDF: the multinomial grid, on words only
            found[f"{model_name} on {representation}"] = fitted(task, representation, make)
    for representation in MULTINOMIAL:
        for c in SOFTMAX_C:
            for balanced in WEIGHTS:
                kind = "multinomial" if task.multiclass else "lbfgs"
                name = f"{kind} logistic regression C={c:g} {_says(balanced)} on {representation}"
                found[name] = fitted(task, representation, multinomial_logistic(c, balanced))
    for representation in LSA:
        for model_name, make in dense.items():
            found[f"{model_name} on {representation}"] = fitted(task, representation, make)
    for representation, model_name in CURVES:
        make = {**sparse, **dense}[model_name]
        for size in CURVE_SIZES:
            name = f"{model_name} on {representation}, {size} training rows"
            found[name] = fitted(task, representation, make, size)
    return found
