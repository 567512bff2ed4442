"""Builds ``leaderboard.csv`` for the mini Seattle weather competition from reference solutions.

Run from the repository root::

    .venv/bin/python -m tools.leaderboards.seattle_weather

``tools.leaderboards.builder`` prepares the data into a temporary directory, runs every
reference solution below (trained on ``train.csv`` only), scores its probabilities for
``test.csv`` with ``grade.py`` and writes the leaderboard best first. Everything is seeded, so a
rerun writes the same file.

The entries span the field: uniform and prior probabilities, random guesses, tables of class
frequencies by wet/dry day, month and year, hand-written rules, and scikit-learn classifiers
(raw and calibrated) on feature sets from "precipitation only" up to the weather plus the date.
The date matters here because the labelling changes in April 2013 (NOTES.md), so the feature
sets with the year, and best with the exact time of the change, are where the strong entries
are.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from sklearn.calibration import CalibratedClassifierCV
from sklearn.compose import ColumnTransformer
from sklearn.ensemble import (
    ExtraTreesClassifier,
    GradientBoostingClassifier,
    RandomForestClassifier,
)
from sklearn.linear_model import LogisticRegression
from sklearn.naive_bayes import GaussianNB
from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler
from sklearn.tree import DecisionTreeClassifier

from tools.leaderboards import builder
from tools.leaderboards.builder import Solution

HERE = builder.task_folder("seattle-weather")  # where leaderboard.csv goes
SEED = 0
CLASSES = ["drizzle", "fog", "rain", "snow", "sun"]

# A predictor gets the training and the test frame and returns one row of class probabilities
# per test day, the columns in CLASSES order.
Predictor = Callable[[pd.DataFrame, pd.DataFrame], np.ndarray]


# --- features ------------------------------------------------------------------------------


# The training labels show the labelling change: wet days are "rain" up to March 2013 and
# mostly "fog" from April 2013 on.
RELABELLED_FROM = pd.Timestamp("2013-04-01")


def add_features(frame: pd.DataFrame) -> pd.DataFrame:
    """Date parts (year, month, day of year and its position on the yearly circle), the days
    since 2012-01-01 and whether the day falls after the labelling change, whether it rained at
    all, and the day's temperature range."""
    out = frame.copy()
    date = pd.to_datetime(out["date"])
    out["year"] = date.dt.year
    out["days"] = (date - pd.Timestamp("2012-01-01")).dt.days
    out["relabelled"] = (date >= RELABELLED_FROM).astype(int)
    out["month"] = date.dt.month
    out["day_of_year"] = date.dt.day_of_year
    angle = 2 * np.pi * (out["day_of_year"] - 1) / 365.25
    out["season_sin"] = np.sin(angle)
    out["season_cos"] = np.cos(angle)
    out["wet"] = (out["precipitation"] > 0).astype(int)
    out["temp_range"] = out["temp_max"] - out["temp_min"]
    return out


WEATHER = ["precipitation", "temp_max", "temp_min", "wind"]
SEASON = ["month", "day_of_year", "season_sin", "season_cos"]
# Encoded one-hot: the year is a label of the period (the labelling changes by year), not a
# quantity to extrapolate.
CATEGORICAL = {"year"}
FEATURE_SETS: dict[str, list[str]] = {
    "precipitation": ["precipitation"],
    "precipitation+temperatures": ["precipitation", "temp_max", "temp_min"],
    "weather": [*WEATHER, "temp_range"],
    "weather+season": [*WEATHER, "temp_range", *SEASON],
    "date only": ["year", *SEASON],
    "weather+year": [*WEATHER, "temp_range", "year"],
    "weather+year+season": [*WEATHER, "temp_range", "year", *SEASON],
    "weather+time+season": [*WEATHER, "temp_range", "days", "relabelled", *SEASON],
}


def _preprocessor(columns: list[str], scale: bool) -> ColumnTransformer:
    numeric = [c for c in columns if c not in CATEGORICAL]
    categorical = [c for c in columns if c in CATEGORICAL]
    parts: list[tuple[str, Any, list[str]]] = []
    if numeric:
        parts.append(("num", StandardScaler() if scale else "passthrough", numeric))
    if categorical:
        encoder = OneHotEncoder(handle_unknown="ignore", sparse_output=False)
        parts.append(("cat", encoder, categorical))
    return ColumnTransformer(parts)


def model_solution(model: Any, columns: list[str], scale: bool) -> Predictor:
    def solve(train: pd.DataFrame, test: pd.DataFrame) -> np.ndarray:
        pipeline = Pipeline([("prep", _preprocessor(columns, scale)), ("model", model)])
        pipeline.fit(add_features(train)[columns], train["weather"])
        if list(pipeline.classes_) != CLASSES:
            raise ValueError(f"the model saw the classes {list(pipeline.classes_)}")
        return np.asarray(pipeline.predict_proba(add_features(test)[columns]), dtype=float)

    return solve


# --- baselines and rules -------------------------------------------------------------------


def uniform() -> Predictor:
    def solve(train: pd.DataFrame, test: pd.DataFrame) -> np.ndarray:
        return np.full((len(test), len(CLASSES)), 1 / len(CLASSES))

    return solve


def frequencies(keys: list[str], alpha: float) -> Predictor:
    """The training days' class shares within each group of ``keys`` (all days when empty),
    with ``alpha`` added to every count so that no class gets probability zero; a group the
    training days lack gets the overall shares."""

    def solve(train: pd.DataFrame, test: pd.DataFrame) -> np.ndarray:
        tr, te = add_features(train), add_features(test)
        overall = _shares(tr["weather"], alpha)
        if not keys:
            return np.tile(overall, (len(te), 1))
        table = {
            group if isinstance(group, tuple) else (group,): _shares(rows["weather"], alpha)
            for group, rows in tr.groupby(keys)
        }
        groups = te[keys].itertuples(index=False, name=None)
        return np.array([table.get(tuple(g), overall) for g in groups])

    return solve


def _shares(labels: pd.Series, alpha: float) -> np.ndarray:
    counts = labels.value_counts().reindex(CLASSES, fill_value=0).to_numpy(dtype=float)
    smoothed: np.ndarray = counts + alpha
    shares: np.ndarray = smoothed / smoothed.sum()
    return shares


def random_guess(seed: int, concentration: float) -> Predictor:
    """Probabilities drawn from a symmetric Dirichlet: small ``concentration`` means confident
    guesses (and a terrible log loss), large means close to uniform."""

    def solve(train: pd.DataFrame, test: pd.DataFrame) -> np.ndarray:
        rng = np.random.default_rng(seed)
        return rng.dirichlet(np.full(len(CLASSES), concentration), size=len(test))

    return solve


def rule(label: Callable[[pd.DataFrame], pd.Series], confidence: float) -> Predictor:
    """A hand-written rule naming one class per day, given ``confidence``; the rest of the
    probability is shared evenly by the other four classes."""

    def solve(train: pd.DataFrame, test: pd.DataFrame) -> np.ndarray:
        named = label(add_features(test)).map(CLASSES.index).to_numpy()
        out = np.full((len(test), len(CLASSES)), (1 - confidence) / (len(CLASSES) - 1))
        out[np.arange(len(test)), named] = confidence
        return out

    return solve


def _rain_or_sun(t: pd.DataFrame) -> pd.Series:
    return t["wet"].map({1: "rain", 0: "sun"})


def _by_period(t: pd.DataFrame) -> pd.Series:
    """Wet days were labelled rain in 2012-2013 and mostly fog later; dry days sun."""
    wet = np.where(t["year"] <= 2013, "rain", "fog")
    return pd.Series(np.where(t["wet"] == 1, wet, "sun"), index=t.index)


def _by_change(t: pd.DataFrame) -> pd.Series:
    """Wet days rain before the April 2013 labelling change and fog after; dry days sun."""
    wet = np.where(t["relabelled"] == 0, "rain", "fog")
    return pd.Series(np.where(t["wet"] == 1, wet, "sun"), index=t.index)


def _with_snow(t: pd.DataFrame) -> pd.Series:
    """The period rule, and snow on wet days that stay below 5 °C."""
    return _by_period(t).where(~((t["wet"] == 1) & (t["temp_max"] < 5)), "snow")


RULES: dict[str, Callable[[pd.DataFrame], pd.Series]] = {
    "rain if any precipitation, else sun": _rain_or_sun,
    "wet days rain up to 2013 and fog after, dry days sun": _by_period,
    "period rule plus snow on cold wet days": _with_snow,
    "wet days rain before April 2013 and fog after, dry days sun": _by_change,
}


# --- the entries ---------------------------------------------------------------------------


def _models() -> dict[str, tuple[Any, bool]]:
    """Model name -> (an unfitted classifier, whether numeric features are standardised)."""
    models: dict[str, tuple[Any, bool]] = {}
    for c in (0.01, 0.1, 1.0, 10.0):
        models[f"logistic regression C={c:g}"] = (LogisticRegression(C=c, max_iter=5000), True)
    for depth in (2, 4, 8):
        models[f"decision tree depth={depth}"] = (
            DecisionTreeClassifier(max_depth=depth, random_state=SEED),
            False,
        )
    models["decision tree depth=4 sigmoid-calibrated"] = (
        _calibrated(DecisionTreeClassifier(max_depth=4, random_state=SEED), "sigmoid"),
        False,
    )
    for k in (5, 25, 75):
        models[f"k-NN k={k}"] = (KNeighborsClassifier(n_neighbors=k), True)
    models["gaussian naive bayes"] = (GaussianNB(), True)
    models["random forest 200 trees"] = (
        RandomForestClassifier(n_estimators=200, random_state=SEED),
        False,
    )
    models["random forest 200 trees min leaf 5"] = (
        RandomForestClassifier(n_estimators=200, min_samples_leaf=5, random_state=SEED),
        False,
    )
    models["random forest min leaf 5 isotonic-calibrated"] = (
        _calibrated(
            RandomForestClassifier(n_estimators=100, min_samples_leaf=5, random_state=SEED),
            "isotonic",
        ),
        False,
    )
    models["extra trees 200 trees min leaf 3"] = (
        ExtraTreesClassifier(n_estimators=200, min_samples_leaf=3, random_state=SEED),
        False,
    )
    models["gradient boosting"] = (GradientBoostingClassifier(random_state=SEED), False)
    models["gradient boosting shallow slow"] = (
        GradientBoostingClassifier(
            n_estimators=150, learning_rate=0.05, max_depth=2, random_state=SEED
        ),
        False,
    )
    models["gradient boosting subsampled"] = (
        GradientBoostingClassifier(
            n_estimators=100, learning_rate=0.05, subsample=0.7, random_state=SEED
        ),
        False,
    )
    return models


def _calibrated(model: Any, method: str) -> CalibratedClassifierCV:
    return CalibratedClassifierCV(model, method=method, cv=3)


def entries() -> dict[str, Solution]:
    """Every reference solution, by team name."""
    found: dict[str, Predictor] = {"uniform 0.2 for every class": uniform()}
    for seed in range(3):
        found[f"random guess dirichlet(1) seed={seed}"] = random_guess(seed, 1.0)
    for seed in range(2):
        found[f"random guess dirichlet(10) seed={seed}"] = random_guess(100 + seed, 10.0)
    found["class priors"] = frequencies([], 0.0)
    groupings: dict[str, list[str]] = {
        "month": ["month"],
        "year": ["year"],
        "wet/dry": ["wet"],
        "wet/dry and month": ["wet", "month"],
        "wet/dry and year": ["wet", "year"],
        "wet/dry, year and month": ["wet", "year", "month"],
        "wet/dry and labelling period": ["wet", "relabelled"],
        "wet/dry, labelling period and month": ["wet", "relabelled", "month"],
    }
    for name, keys in groupings.items():
        for alpha in (0.5, 2.0):
            found[f"class shares by {name} (+{alpha:g} smoothing)"] = frequencies(keys, alpha)
    for name, label in RULES.items():
        for confidence in (0.6, 0.8, 0.95):
            found[f"rule: {name} (p={confidence:g})"] = rule(label, confidence)
    for set_name, columns in FEATURE_SETS.items():
        for model_name, (model, scale) in _models().items():
            found[f"{model_name} on {set_name}"] = model_solution(model, columns, scale)
    return {name: submission(predict) for name, predict in found.items()}


def submission(predict: Predictor) -> Solution:
    """A predictor as a leaderboard solution: reads the public data, returns the submission."""

    def solve(public: Path) -> pd.DataFrame:
        train, test = pd.read_csv(public / "train.csv"), pd.read_csv(public / "test.csv")
        probabilities = predict(train, test)
        out = pd.DataFrame({"id": test["id"]})
        for i, name in enumerate(CLASSES):
            out[name] = probabilities[:, i]
        return out

    return solve


if __name__ == "__main__":
    sys.exit(builder.main(HERE, entries, lower_is_better=True))
