"""Builds ``leaderboard.csv`` for the mini Adult competition from reference solutions.

Run from the repository root::

    .venv/bin/python -m tools.leaderboards.adult

``tools.leaderboards.builder`` prepares the data into a temporary directory, runs every
reference solution below (trained on ``train.csv`` only), scores its ``income`` scores for
``test.csv`` with ``grade.py`` (ROC AUC) and writes the leaderboard best first. Everything is
seeded, so a rerun writes the same file.

The entries span the field: constant and random scores (AUC about 0.5), one feature at a time,
hand-written point rules, and scikit-learn models from weak to strong on feature sets growing from
"relationship" to everything and on training subsets of growing size.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
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
from sklearn.preprocessing import (
    FunctionTransformer,
    KBinsDiscretizer,
    OneHotEncoder,
    OrdinalEncoder,
    StandardScaler,
)
from sklearn.tree import DecisionTreeClassifier

from tools.leaderboards import builder
from tools.leaderboards.builder import Solution

HERE = builder.task_folder("adult")  # where leaderboard.csv goes
SEED = 0
TARGET = "income"

# A scorer gets the training and the test frame and returns one score per test row (higher
# means "more likely over $50K").
Scorer = Callable[[pd.DataFrame, pd.DataFrame], np.ndarray]

NUMERIC = ["age", "education-num", "capital-gain", "capital-loss", "hours-per-week"]
CATEGORICAL = [
    "workclass",
    "education",
    "marital-status",
    "occupation",
    "relationship",
    "race",
    "sex",
    "native-country",
]
# Nested feature sets, each adding what helps most next, ending with every column.
FEATURE_SETS: dict[str, list[str]] = {
    "relationship": ["relationship"],
    "relationship+education": ["relationship", "education"],
    "relationship+education+age": ["relationship", "education", "age"],
    "relationship+education+age+occupation": ["relationship", "education", "age", "occupation"],
    "relationship+education+age+occupation+hours": [
        *["relationship", "education", "age", "occupation", "hours-per-week"],
    ],
    "relationship+education+age+occupation+hours+capital": [
        *["relationship", "education", "age", "occupation", "hours-per-week"],
        *["capital-gain", "capital-loss"],
    ],
    "all features": [*NUMERIC, *CATEGORICAL],
}
ALL = FEATURE_SETS["all features"]


# --- models ----------------------------------------------------------------------------------


def _preprocessor(columns: list[str], encoding: str) -> ColumnTransformer:
    """Numbers first, then categories. ``encoding``: "scaled" (standardised numbers, one-hot
    categories: linear models, k-NN), "one-hot" (raw numbers, one-hot categories: trees) or
    "codes" (raw numbers, one integer code per category: histogram boosting's native categorical
    support, much faster than a hundred one-hot columns). A missing category is its own value."""
    numeric = [c for c in columns if c in NUMERIC]
    categorical = [c for c in columns if c not in NUMERIC]
    parts: list[tuple[str, Any, list[str]]] = []
    if numeric:
        parts.append(("num", StandardScaler() if encoding == "scaled" else "passthrough", numeric))
    if categorical:
        codes = OrdinalEncoder(handle_unknown="use_encoded_value", unknown_value=-1)
        encoder = (
            codes
            if encoding == "codes"
            else OneHotEncoder(handle_unknown="ignore", sparse_output=False)
        )
        imputer = SimpleImputer(strategy="constant", fill_value="missing", keep_empty_features=True)
        parts.append(("cat", make_pipeline(imputer, encoder), categorical))
    return ColumnTransformer(parts)


def _native_boosting(columns: list[str], **params: Any) -> HistGradientBoostingClassifier:
    """Histogram gradient boosting told which of ``columns`` (as ordered by the "codes"
    preprocessor) are categorical."""
    numeric = [c for c in columns if c in NUMERIC]
    mask = [False] * len(numeric) + [True] * (len(columns) - len(numeric))
    return HistGradientBoostingClassifier(categorical_features=mask, random_state=SEED, **params)


def _binned_preprocessor() -> ColumnTransformer:
    """What a careful linear model wants: age and hours in bins (their effect is not linear),
    capital gain and loss on a log scale, every category one-hot."""
    log1p = FunctionTransformer(np.log1p, feature_names_out="one-to-one")
    bins = KBinsDiscretizer(n_bins=10, encode="onehot-dense", strategy="uniform")
    return ColumnTransformer(
        [
            ("bins", bins, ["age", "hours-per-week"]),
            ("log", make_pipeline(log1p, StandardScaler()), ["capital-gain", "capital-loss"]),
            ("num", StandardScaler(), ["education-num"]),
            ("cat", _preprocessor(CATEGORICAL, "scaled"), CATEGORICAL),
        ]
    )


def model_scorer(model: Any, columns: list[str], encoding: str, rows: int | None = None) -> Scorer:
    """Fit ``model`` on ``columns`` of the first ``rows`` training rows (all when None)."""

    def score(train: pd.DataFrame, test: pd.DataFrame) -> np.ndarray:
        fit_on = train if rows is None else train.iloc[:rows]
        pipeline = Pipeline([("prep", _preprocessor(columns, encoding)), ("model", model)])
        pipeline.fit(_objects(fit_on[columns]), fit_on[TARGET])
        return np.asarray(pipeline.predict_proba(_objects(test[columns]))[:, 1])

    return score


def binned_logistic(c: float) -> Scorer:
    def score(train: pd.DataFrame, test: pd.DataFrame) -> np.ndarray:
        model = LogisticRegression(C=c, max_iter=5000)
        pipeline = Pipeline([("prep", _binned_preprocessor()), ("model", model)])
        pipeline.fit(_objects(train[ALL]), train[TARGET])
        return np.asarray(pipeline.predict_proba(_objects(test[ALL]))[:, 1])

    return score


def rank_average(*scorers: Scorer) -> Scorer:
    """A blend: the mean of each scorer's ranks (AUC only sees order, so ranks blend cleanly)."""

    def score(train: pd.DataFrame, test: pd.DataFrame) -> np.ndarray:
        ranks = [pd.Series(s(train, test)).rank().to_numpy() for s in scorers]
        return np.asarray(np.mean(ranks, axis=0))

    return score


def remembered(scorer: Scorer) -> Scorer:
    """``scorer`` computing once per data set, so that a blend reuses its members' scores."""
    memory: dict[tuple[int, int, int], np.ndarray] = {}

    def score(train: pd.DataFrame, test: pd.DataFrame) -> np.ndarray:
        key = (len(train), len(test), int(test["id"].sum()))
        if key not in memory:
            memory[key] = scorer(train, test)
        return memory[key]

    return score


def _objects(frame: pd.DataFrame) -> pd.DataFrame:
    """String columns as plain objects with NaN for missing (what the sklearn imputers expect)."""
    out = frame.copy()
    for column in out.columns:
        if not pd.api.types.is_numeric_dtype(out[column]):
            out[column] = out[column].astype("object").where(out[column].notna(), np.nan)
    return out


def _models(columns: list[str]) -> dict[str, tuple[Any, str]]:
    """Model name -> (an unfitted estimator for ``columns``, the preprocessor's encoding)."""
    models: dict[str, tuple[Any, str]] = {}
    for c in (0.001, 0.01, 0.1, 1.0):
        models[f"logistic regression C={c:g}"] = (LogisticRegression(C=c, max_iter=3000), "scaled")
    for depth in (2, 4, 8, None):
        name = f"decision tree depth={depth or 'unlimited'}"
        models[name] = (DecisionTreeClassifier(max_depth=depth, random_state=SEED), "one-hot")
    for k in (5, 25, 100):
        models[f"k-NN k={k}"] = (KNeighborsClassifier(n_neighbors=k), "scaled")
    models["gaussian naive bayes"] = (GaussianNB(), "scaled")
    models["random forest 100 trees"] = (
        RandomForestClassifier(n_estimators=100, min_samples_leaf=3, random_state=SEED),
        "one-hot",
    )
    models["extra trees 100 trees"] = (
        ExtraTreesClassifier(n_estimators=100, min_samples_leaf=3, random_state=SEED),
        "one-hot",
    )
    models["gradient boosting"] = (GradientBoostingClassifier(random_state=SEED), "one-hot")
    models["hist gradient boosting"] = (_native_boosting(columns), "codes")
    return models


# --- constants, random scores and rules --------------------------------------------------------


def constant(value: float) -> Scorer:
    def score(train: pd.DataFrame, test: pd.DataFrame) -> np.ndarray:
        return np.full(len(test), value, dtype=float)

    return score


def prevalence(train: pd.DataFrame, test: pd.DataFrame) -> np.ndarray:
    return np.full(len(test), float(train[TARGET].mean()))


def random_scores(seed: int) -> Scorer:
    def score(train: pd.DataFrame, test: pd.DataFrame) -> np.ndarray:
        return np.random.default_rng(seed).random(len(test))

    return score


def column_value(column: str, sign: float = 1.0) -> Scorer:
    """A numeric column itself as the score (or its negative: the rule turned the wrong way)."""

    def score(train: pd.DataFrame, test: pd.DataFrame) -> np.ndarray:
        return sign * test[column].to_numpy(dtype=float)

    return score


def category_rate(column: str) -> Scorer:
    """The training share over $50K among people with the same value of ``column``."""

    def score(train: pd.DataFrame, test: pd.DataFrame) -> np.ndarray:
        key = train[column].astype("object").fillna("missing")
        rates = train[TARGET].groupby(key).mean()
        values = test[column].astype("object").fillna("missing").map(rates)
        return values.fillna(train[TARGET].mean()).to_numpy(dtype=float)

    return score


def points(*rules: Callable[[pd.DataFrame], pd.Series]) -> Scorer:
    """A hand-written score: one point for each rule the person meets."""

    def score(train: pd.DataFrame, test: pd.DataFrame) -> np.ndarray:
        met = [rule(test).fillna(False).to_numpy(dtype=bool) for rule in rules]
        return np.asarray(np.sum(met, axis=0), dtype=float)

    return score


def _married(t: pd.DataFrame) -> pd.Series:
    return t["relationship"].isin(["Husband", "Wife"])


def _degree(t: pd.DataFrame) -> pd.Series:
    return t["education-num"] >= 13


def _prime_age(t: pd.DataFrame) -> pd.Series:
    return t["age"].between(35, 60)


def _long_hours(t: pd.DataFrame) -> pd.Series:
    return t["hours-per-week"] > 40


def _capital(t: pd.DataFrame) -> pd.Series:
    return t["capital-gain"] > 5000


def _white_collar(t: pd.DataFrame) -> pd.Series:
    return t["occupation"].isin(["Exec-managerial", "Prof-specialty", "Tech-support", "Sales"])


RULES: dict[str, Scorer] = {
    "rule: married": points(_married),
    "rule: college degree": points(_degree),
    "rule: married with a college degree": points(lambda t: _married(t) & _degree(t)),
    "rule: married + degree points": points(_married, _degree),
    "rule: married + degree + age 35-60 points": points(_married, _degree, _prime_age),
    "rule: married + degree + age + long hours points": points(
        _married, _degree, _prime_age, _long_hours
    ),
    "rule: married + degree + age + hours + capital gain points": points(
        _married, _degree, _prime_age, _long_hours, _capital
    ),
    "rule: six points incl. white-collar job": points(
        _married, _degree, _prime_age, _long_hours, _capital, _white_collar
    ),
    "rule: male": points(lambda t: t["sex"] == "Male"),
    "rule: private sector": points(lambda t: t["workclass"] == "Private"),
}


# --- the entries -----------------------------------------------------------------------------


def entries() -> dict[str, Solution]:
    """Every reference solution, by team name."""
    found: dict[str, Scorer] = {
        "constant 0": constant(0.0),
        "constant 0.5": constant(0.5),
        "constant 1": constant(1.0),
        "constant: training share over 50K": prevalence,
    }
    for seed in range(6):
        found[f"random scores seed={seed}"] = random_scores(seed)
    for column in NUMERIC:
        found[f"one feature: {column}"] = column_value(column)
    found["one feature turned the wrong way: minus age"] = column_value("age", -1.0)
    found["one feature turned the wrong way: minus education-num"] = column_value(
        "education-num", -1.0
    )
    for column in CATEGORICAL:
        found[f"one feature: share over 50K by {column}"] = category_rate(column)
    found.update(RULES)
    for set_name, columns in FEATURE_SETS.items():
        for model_name, (model, encoding) in _models(columns).items():
            found[f"{model_name} on {set_name}"] = model_scorer(model, columns, encoding)
    for rows in (200, 500, 1000, 2000, 4000):
        found[f"logistic regression C=1 on all features, first {rows} rows"] = model_scorer(
            LogisticRegression(C=1.0, max_iter=3000), ALL, "scaled", rows
        )
        found[f"random forest 100 trees on all features, first {rows} rows"] = model_scorer(
            RandomForestClassifier(n_estimators=100, min_samples_leaf=3, random_state=SEED),
            ALL,
            "one-hot",
            rows,
        )
        found[f"hist gradient boosting on all features, first {rows} rows"] = model_scorer(
            _native_boosting(ALL), ALL, "codes", rows
        )
    tuned_gb = remembered(
        model_scorer(
            GradientBoostingClassifier(
                n_estimators=300, learning_rate=0.05, max_depth=4, subsample=0.8, random_state=SEED
            ),
            ALL,
            "one-hot",
        )
    )
    tuned_hgb = remembered(
        model_scorer(
            _native_boosting(ALL, learning_rate=0.05, max_iter=300, max_leaf_nodes=15),
            ALL,
            "codes",
        )
    )
    binned = remembered(binned_logistic(0.3))
    found["tuned gradient boosting (300 trees, depth 4, lr 0.05)"] = tuned_gb
    found["tuned hist gradient boosting (600 rounds, 31 leaves, lr 0.02)"] = model_scorer(
        _native_boosting(ALL, learning_rate=0.02, max_iter=600, l2_regularization=1.0),
        ALL,
        "codes",
    )
    found["tuned gradient boosting (500 trees, depth 3, lr 0.05)"] = model_scorer(
        GradientBoostingClassifier(
            n_estimators=500, learning_rate=0.05, max_depth=3, subsample=0.8, random_state=SEED
        ),
        ALL,
        "one-hot",
    )
    found["tuned hist gradient boosting (300 rounds, 15 leaves, lr 0.05)"] = tuned_hgb
    for c in (0.03, 3.0):
        found[f"logistic regression C={c:g}, binned age/hours, log capital"] = binned_logistic(c)
    found["logistic regression C=0.3, binned age/hours, log capital"] = binned
    found["blend: tuned gradient boosting + binned logistic regression"] = rank_average(
        tuned_gb, binned
    )
    found["blend: tuned hist gradient boosting + binned logistic regression"] = rank_average(
        tuned_hgb, binned
    )
    return {name: submission(scorer) for name, scorer in found.items()}


def submission(scorer: Scorer) -> Solution:
    """A scorer as a leaderboard solution: reads the public data, returns the submission."""

    def solve(public: Path) -> pd.DataFrame:
        train, test = pd.read_csv(public / "train.csv"), pd.read_csv(public / "test.csv")
        return pd.DataFrame({"id": test["id"], TARGET: scorer(train, test)})

    return solve


if __name__ == "__main__":
    # One thread: the build is several times faster on a busy 2-core machine, and the boosting
    # sums do not depend on the core count.
    sys.exit(builder.main(HERE, entries, lower_is_better=False, threads=1))
