"""A field of reference solutions for an arena binary-classification task on a table.

The arena's leaderboards must be wide and made without looking at the baseline model: many
pipelines of many kinds, weak to strong. A task module names what only it knows (its target,
its columns, a ladder of feature sets chosen from domain sense, a few hand-written rules) and
this module crosses the feature sets with one fixed grid of model families and hyperparameters,
adds constants, random scores, one-feature scores and learning-curve entries, and wraps each as
a builder ``Solution`` (the public folder in, the submission frame out).

Every entry predicts the probability of the positive class (1): ROC AUC reads its order and
log loss its values, so the same field serves either metric. Everything is seeded.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from itertools import product
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from sklearn.compose import ColumnTransformer
from sklearn.ensemble import (
    ExtraTreesClassifier,
    GradientBoostingClassifier,
    HistGradientBoostingClassifier,
    RandomForestClassifier,
)
from sklearn.impute import SimpleImputer
from sklearn.linear_model import LogisticRegression
from sklearn.naive_bayes import GaussianNB
from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.preprocessing import OneHotEncoder, OrdinalEncoder, StandardScaler
from sklearn.tree import DecisionTreeClassifier

from tools.leaderboards.builder import Solution

SEED = 0
# A scorer gets the training and the test frame and returns P(target = 1) per test row.
Scorer = Callable[[pd.DataFrame, pd.DataFrame], np.ndarray]
# Adds a task's engineered columns to a frame (train or test alike); never looks at the target.
Derive = Callable[[pd.DataFrame], pd.DataFrame]
LEARNING_CURVE_ROWS = (250, 500, 1000, 2000)
CURVE_MODELS = (
    "logistic regression C=1",
    "random forest min_samples_leaf=5 max_features=sqrt",
    "hist boosting (100 rounds, lr 0.1, 31 leaves, l2 0)",
)


@dataclass(frozen=True)
class FeatureSet:
    """Some columns of the (derived) frame; ``categorical`` are those of them to encode."""

    columns: tuple[str, ...]
    categorical: tuple[str, ...] = ()
    derive: Derive | None = None

    def frame(self, data: pd.DataFrame) -> pd.DataFrame:
        """The set's columns of ``data`` (after ``derive``), categories as objects."""
        data = self.derive(data) if self.derive else data
        out = data[list(self.columns)].copy()
        for column in self.categorical:
            out[column] = out[column].astype("object").where(out[column].notna(), "missing")
        return out


@dataclass(frozen=True)
class TaskField:
    """What a task contributes to its field."""

    target: str
    numeric: tuple[str, ...]  # raw numeric columns
    categorical: tuple[str, ...]  # raw categorical columns
    feature_sets: Mapping[str, FeatureSet]  # a ladder from few raw columns to engineered ones
    rules: Mapping[str, Scorer]  # hand-written scores (higher = more likely 1), made probability

    @property
    def all_raw(self) -> FeatureSet:
        return FeatureSet((*self.numeric, *self.categorical), self.categorical)


# --- models ----------------------------------------------------------------------------------


def _preprocessor(features: FeatureSet, encoding: str) -> ColumnTransformer:
    """Numbers median-imputed (and standardised for "scaled"), categories one-hot ("scaled",
    "one-hot") or integer codes ("codes"); "native" keeps missing numbers for histogram
    boosting, which learns where they go."""
    numeric = [c for c in features.columns if c not in features.categorical]
    categorical = list(features.categorical)
    parts: list[tuple[str, Any, list[str]]] = []
    if numeric:
        if encoding == "native":
            parts.append(("num", "passthrough", numeric))
        elif encoding == "scaled":
            parts.append(
                ("num", make_pipeline(SimpleImputer(strategy="median"), StandardScaler()), numeric)
            )
        else:
            parts.append(("num", SimpleImputer(strategy="median"), numeric))
    if categorical:
        encoder: Any = (
            OrdinalEncoder(handle_unknown="use_encoded_value", unknown_value=-1)
            if encoding in ("codes", "native")
            else OneHotEncoder(handle_unknown="ignore", sparse_output=False)
        )
        parts.append(("cat", encoder, categorical))
    return ColumnTransformer(parts)


def _boosting(features: FeatureSet, **params: Any) -> HistGradientBoostingClassifier:
    """Histogram boosting told which columns (as the "native" preprocessor orders them) are
    categorical."""
    n_numeric = len(features.columns) - len(features.categorical)
    mask = [False] * n_numeric + [True] * len(features.categorical)
    return HistGradientBoostingClassifier(
        categorical_features=mask if any(mask) else None, random_state=SEED, **params
    )


def models(features: FeatureSet) -> dict[str, tuple[Any, str]]:
    """The fixed grid: model name -> (an unfitted estimator, the preprocessor's encoding).

    Each family is crossed over the two to four settings that matter most for it, from the
    scikit-learn default to what a careful modeller tries (the arena's field rule: a field of at
    least 1000 entries, MLE-bench's usual team count, reached by factorial grids of the same
    families; the values were chosen from modelling sense, never from the baseline's scores).
    """
    grid: dict[str, tuple[Any, str]] = {}
    for c, weight in product((0.001, 0.01, 0.1, 1.0, 10.0, 100.0), (None, "balanced")):
        name = f"logistic regression C={c:g}" + (" balanced" if weight else "")
        grid[name] = (LogisticRegression(C=c, class_weight=weight, max_iter=3000), "scaled")
    for k, weights in product((5, 15, 50, 150, 400), ("uniform", "distance")):
        name = f"k-NN k={k}" + (" distance-weighted" if weights == "distance" else "")
        grid[name] = (KNeighborsClassifier(n_neighbors=k, weights=weights), "scaled")
    for smoothing in (1e-9, 1e-3, 1e-1):
        grid[f"gaussian naive bayes smoothing={smoothing:g}"] = (
            GaussianNB(var_smoothing=smoothing),
            "scaled",
        )
    for depth, leaf in product((3, 5, 8, 12, None), (1, 10, 50)):
        tree = DecisionTreeClassifier(max_depth=depth, min_samples_leaf=leaf, random_state=SEED)
        grid[f"decision tree depth={depth} min_samples_leaf={leaf}"] = (tree, "codes")
    for leaf, share in product((1, 5, 20), ("sqrt", 0.5)):
        forest = RandomForestClassifier(
            n_estimators=100, min_samples_leaf=leaf, max_features=share, random_state=SEED
        )
        grid[f"random forest min_samples_leaf={leaf} max_features={share}"] = (forest, "codes")
    for leaf, share in product((1, 3, 10), ("sqrt", 1.0)):
        extra = ExtraTreesClassifier(
            n_estimators=100, min_samples_leaf=leaf, max_features=share, random_state=SEED
        )
        grid[f"extra trees min_samples_leaf={leaf} max_features={share}"] = (extra, "codes")
    for (trees, rate), depth in product(((100, 0.1), (200, 0.05), (300, 0.1)), (2, 3, 5)):
        boosting = GradientBoostingClassifier(
            n_estimators=trees, max_depth=depth, learning_rate=rate, random_state=SEED
        )
        grid[f"gradient boosting ({trees} trees, depth {depth}, lr {rate:g})"] = (boosting, "codes")
    for rate, leaves, rounds, l2 in product((0.03, 0.1, 0.3), (7, 15, 31), (100, 300), (0.0, 1.0)):
        histogram = _boosting(
            features, max_iter=rounds, learning_rate=rate, max_leaf_nodes=leaves,
            l2_regularization=l2,
        )  # fmt: skip
        name = f"hist boosting ({rounds} rounds, lr {rate:g}, {leaves} leaves, l2 {l2:g})"
        grid[name] = (histogram, "native")
    return grid


def model_scorer(model: Any, features: FeatureSet, encoding: str, target: str,
                 rows: int | None = None) -> Scorer:  # fmt: skip
    """Fit ``model`` on ``features`` of the first ``rows`` training rows (all when None)."""

    def score(train: pd.DataFrame, test: pd.DataFrame) -> np.ndarray:
        fit_on = train if rows is None else train.iloc[:rows]
        pipeline = Pipeline([("prep", _preprocessor(features, encoding)), ("model", model)])
        pipeline.fit(features.frame(fit_on), fit_on[target])
        return np.asarray(pipeline.predict_proba(features.frame(test))[:, 1])

    return score


# --- naive entries ---------------------------------------------------------------------------


def constant(value: float) -> Scorer:
    def score(train: pd.DataFrame, test: pd.DataFrame) -> np.ndarray:
        return np.full(len(test), value, dtype=float)

    return score


def prevalence(target: str) -> Scorer:
    def score(train: pd.DataFrame, test: pd.DataFrame) -> np.ndarray:
        return np.full(len(test), float(train[target].mean()))

    return score


def random_scores(seed: int) -> Scorer:
    def score(train: pd.DataFrame, test: pd.DataFrame) -> np.ndarray:
        return np.random.default_rng(seed).random(len(test))

    return score


def bin_rate(column: str, target: str, bins: int = 10) -> Scorer:
    """The training share of 1s in the test row's bin of ``column`` (deciles of a number, or
    its category; a missing value is a bin of its own): a one-feature model."""

    def score(train: pd.DataFrame, test: pd.DataFrame) -> np.ndarray:
        def keys(values: pd.Series) -> pd.Series:
            if pd.api.types.is_numeric_dtype(values):
                edges = np.unique(np.nanquantile(train[column], np.linspace(0, 1, bins + 1)))
                coded = pd.Series(np.searchsorted(edges[1:-1], values, side="right"), values.index)
                return coded.astype("object").where(values.notna(), "missing")
            return values.astype("object").where(values.notna(), "missing")

        rates = train[target].groupby(keys(train[column])).mean()
        found = keys(test[column]).map(rates)
        return found.fillna(train[target].mean()).to_numpy(dtype=float)

    return score


def as_probability(rule: Callable[[pd.DataFrame], pd.Series], target: str) -> Scorer:
    """A hand-written points score turned into a probability: the training share of 1s among
    rows with the same number of points (so a rule is usable under log loss too)."""

    def score(train: pd.DataFrame, test: pd.DataFrame) -> np.ndarray:
        rates = train[target].groupby(rule(train).to_numpy()).mean()
        found = pd.Series(rule(test).to_numpy()).map(rates)
        return found.fillna(train[target].mean()).to_numpy(dtype=float)

    return score


# --- the field -------------------------------------------------------------------------------


def scorers(task: TaskField) -> dict[str, Scorer]:
    """Every reference scorer of the task, by team name."""
    found: dict[str, Scorer] = {
        "constant 0.5": constant(0.5),
        "constant 0.01": constant(0.01),
        "constant 0.99": constant(0.99),
        f"constant: training share of {task.target}": prevalence(task.target),
    }
    for seed in range(6):
        found[f"random scores seed={seed}"] = random_scores(seed)
    for column in (*task.numeric, *task.categorical):
        found[f"one feature: share of {task.target} by {column}"] = bin_rate(column, task.target)
    found.update({f"rule: {name}": rule for name, rule in task.rules.items()})
    for set_name, features in task.feature_sets.items():
        for model_name, (model, encoding) in models(features).items():
            found[f"{model_name} on {set_name}"] = model_scorer(
                model, features, encoding, task.target
            )
    curve = models(task.all_raw)
    for rows in LEARNING_CURVE_ROWS:
        for name in CURVE_MODELS:
            model, encoding = curve[name]
            found[f"{name} on all raw features, first {rows} rows"] = model_scorer(
                model, task.all_raw, encoding, task.target, rows
            )
    return found


def solutions(task: TaskField, id_column: str = "id") -> dict[str, Solution]:
    """The field as builder solutions: each reads the public folder and returns ``id`` and the
    probability of ``task.target`` per test row."""
    return {
        name: _solution(scorer, task.target, id_column) for name, scorer in scorers(task).items()
    }


def _solution(scorer: Scorer, target: str, id_column: str) -> Solution:
    def solve(public: Path) -> pd.DataFrame:
        train = pd.read_csv(public / "train.csv")
        test = pd.read_csv(public / "test.csv")
        probability = np.clip(scorer(train, test), 0.0, 1.0)
        return pd.DataFrame({id_column: test[id_column], target: probability})

    return solve
