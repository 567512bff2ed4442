"""Builds ``leaderboard.csv`` for the mini Bike Sharing Demand competition from reference
solutions.

Run from the repository root::

    .venv/bin/python -m tools.leaderboards.bike_sharing

``tools.leaderboards.builder`` prepares the data into a temporary directory, runs every
reference solution below (trained on ``train.csv`` only), scores its predictions for
``test.csv`` with ``grade.py`` and writes the leaderboard best first. Everything is seeded, so a
rerun writes the same file.

The entries span the field: constants (zero, mean, median, quantiles, the best constant for
RMSLE), tables of means by hour, working day, weekday and month, and scikit-learn regressors
from linear models to gradient boosting on feature sets from "hour only" up to everything, each
fitted on the raw count and on log1p(count). RMSLE rewards fitting log1p(count), so that choice
separates otherwise equal models.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from sklearn.base import clone
from sklearn.compose import ColumnTransformer
from sklearn.ensemble import (
    ExtraTreesRegressor,
    GradientBoostingRegressor,
    RandomForestRegressor,
)
from sklearn.linear_model import LinearRegression, Ridge
from sklearn.neighbors import KNeighborsRegressor
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler
from sklearn.tree import DecisionTreeRegressor

from tools.leaderboards import builder
from tools.leaderboards.builder import Solution

HERE = builder.task_folder("bike-sharing")  # where leaderboard.csv goes
SEED = 0

# A predictor gets the training and the test frame and returns a count for each test hour.
Predictor = Callable[[pd.DataFrame, pd.DataFrame], np.ndarray]


# --- features ------------------------------------------------------------------------------

MONTHS = ["Jan", "Feb", "March", "April", "May", "June"]
MONTHS += ["July", "Aug", "Sept", "Oct", "Nov", "Dec"]
WEATHER_LEVELS = ["clear", "cloudy/misty", "light rain/snow", "heavy rain/snow"]


NEIGHBOURS = {"weather_1h_before": 1, "weather_2h_before": 2, "weather_3h_before": 3}
NEIGHBOURS["weather_1h_after"] = -1


def add_features(frame: pd.DataFrame, every: pd.DataFrame | None = None) -> pd.DataFrame:
    """Numeric codes for the text columns (month 1-12, weather 1-4: worse is higher); with
    ``every`` (the feature rows of all hours, train and test), also the weather of the
    neighbouring hours, which tells a passing shower from a rainy day (an hour the data lacks
    counts as the hour's own weather)."""
    out = frame.copy()
    out["month"] = out["mnth"].map(lambda m: MONTHS.index(m) + 1)
    out["weather"] = out["weathersit"].map(lambda w: WEATHER_LEVELS.index(w) + 1)
    if every is not None:
        weather = every["weathersit"].map(lambda w: WEATHER_LEVELS.index(w) + 1)
        weather.index = _hour_stamps(every)
        own = _hour_stamps(out)
        for name, shift in NEIGHBOURS.items():
            seen = weather.reindex(own - pd.Timedelta(hours=shift)).to_numpy()
            out[name] = np.where(np.isnan(seen), out["weather"], seen)
    return out


def _hour_stamps(frame: pd.DataFrame) -> pd.DatetimeIndex:
    return pd.DatetimeIndex(pd.to_datetime(frame["date"]) + pd.to_timedelta(frame["hr"], "h"))


# Hour is one-hot for the linear and k-NN models (demand is far from linear in the hour) and a
# plain number for the trees; month and weekday likewise.
CATEGORICAL = {"hr", "month", "weekday", "weather"}
FEATURE_SETS: dict[str, list[str]] = {
    "hour": ["hr"],
    "hour+workingday": ["hr", "workingday"],
    "hour+workingday+temperature": ["hr", "workingday", "temp", "atemp"],
    "hour+workingday+weather": [
        *["hr", "workingday", "temp", "atemp", "hum", "windspeed", "weather"],
    ],
    "hour+workingday+weather+calendar": [
        *["hr", "workingday", "temp", "atemp", "hum", "windspeed", "weather"],
        *["month", "day", "weekday", "holiday", "season"],
    ],
    "hour+workingday+weather+calendar+neighbouring hours": [
        *["hr", "workingday", "temp", "atemp", "hum", "windspeed", "weather"],
        *["month", "day", "weekday", "holiday", "season", *NEIGHBOURS],
    ],
}


def _preprocessor(columns: list[str], encode: bool) -> ColumnTransformer:
    """One-hot categorical and standardised numeric columns (``encode``), or all as numbers."""
    if not encode:
        return ColumnTransformer([("all", "passthrough", columns)])
    numeric = [c for c in columns if c not in CATEGORICAL]
    categorical = [c for c in columns if c in CATEGORICAL]
    parts: list[tuple[str, Any, list[str]]] = []
    if numeric:
        parts.append(("num", StandardScaler(), numeric))
    if categorical:
        encoder = OneHotEncoder(handle_unknown="ignore", sparse_output=False)
        parts.append(("cat", encoder, categorical))
    return ColumnTransformer(parts)


def model_solution(model: Any, columns: list[str], encode: bool, log_target: bool) -> Predictor:
    """Fit ``model`` on ``columns``, to log1p(count) when ``log_target``; predictions below
    zero (a linear model can make them) become zero, which RMSLE requires."""

    def solve(train: pd.DataFrame, test: pd.DataFrame) -> np.ndarray:
        steps = [("prep", _preprocessor(columns, encode)), ("model", clone(model))]
        pipeline = Pipeline(steps)
        every = pd.concat([train.drop(columns=["count"]), test], ignore_index=True)
        target = train["count"].to_numpy(dtype=float)
        x_train, x_test = add_features(train, every)[columns], add_features(test, every)[columns]
        pipeline.fit(x_train, np.log1p(target) if log_target else target)
        predicted = np.asarray(pipeline.predict(x_test), dtype=float)
        counts: np.ndarray = np.expm1(predicted) if log_target else predicted
        clipped: np.ndarray = np.clip(counts, 0, None)
        return clipped

    return solve


# --- constants and tables ------------------------------------------------------------------


def constant(value: Callable[[pd.Series], float]) -> Predictor:
    def solve(train: pd.DataFrame, test: pd.DataFrame) -> np.ndarray:
        return np.full(len(test), value(train["count"]))

    return solve


def _log_mean(counts: pd.Series) -> float:
    """The constant with the lowest RMSLE on ``counts``: expm1 of the mean of log1p."""
    return float(np.expm1(np.log1p(counts.to_numpy(dtype=float)).mean()))


def _quantile(q: float) -> Callable[[pd.Series], float]:
    def value(counts: pd.Series) -> float:
        return float(counts.quantile(q))

    return value


def group_table(keys: list[str], statistic: str) -> Predictor:
    """The training hours' ``statistic`` (mean, median or log-mean) of count within each group
    of ``keys``; a group the training hours lack falls back to the hour's value, then to the
    overall value."""

    def stat(counts: pd.Series) -> float:
        if statistic == "log-mean":
            return _log_mean(counts)
        return float(counts.mean() if statistic == "mean" else counts.median())

    def lookup(train: pd.DataFrame, test: pd.DataFrame, by: list[str]) -> pd.Series:
        table = train.groupby(by)["count"].apply(stat).rename("predicted")
        return test[by].merge(table, left_on=by, right_index=True, how="left")["predicted"]

    def solve(train: pd.DataFrame, test: pd.DataFrame) -> np.ndarray:
        tr, te = add_features(train), add_features(test)
        predicted = lookup(tr, te, keys)
        if "hr" in keys and keys != ["hr"]:
            predicted = predicted.fillna(lookup(tr, te, ["hr"]))
        return predicted.fillna(stat(tr["count"])).to_numpy(dtype=float)

    return solve


# --- the entries ---------------------------------------------------------------------------


def _models() -> dict[str, tuple[Any, bool]]:
    """Model name -> (an unfitted regressor, whether features are one-hot/standardised)."""
    models: dict[str, tuple[Any, bool]] = {
        "linear regression": (LinearRegression(), True),
        "ridge alpha=10": (Ridge(alpha=10.0), True),
    }
    for depth in (3, 6, 10):
        models[f"decision tree depth={depth}"] = (
            DecisionTreeRegressor(max_depth=depth, random_state=SEED),
            False,
        )
    models["k-NN k=10"] = (KNeighborsRegressor(n_neighbors=10), True)
    models["random forest 60 trees"] = (
        RandomForestRegressor(n_estimators=60, min_samples_leaf=2, random_state=SEED),
        False,
    )
    models["extra trees 60 trees"] = (
        ExtraTreesRegressor(n_estimators=60, min_samples_leaf=2, random_state=SEED),
        False,
    )
    models["gradient boosting"] = (GradientBoostingRegressor(random_state=SEED), False)
    models["gradient boosting 300 trees depth 5"] = (
        GradientBoostingRegressor(
            n_estimators=300, max_depth=5, learning_rate=0.05, subsample=0.8, random_state=SEED
        ),
        False,
    )
    return models


def entries() -> dict[str, Solution]:
    """Every reference solution, by team name."""
    found: dict[str, Predictor] = {
        "constant 0 (the sample submission)": constant(lambda c: 0.0),
        "constant: training mean": constant(lambda c: float(c.mean())),
        "constant: training median": constant(lambda c: float(c.median())),
        "constant: expm1 of mean log1p (best constant for RMSLE)": constant(_log_mean),
    }
    for q in (0.1, 0.25, 0.75, 0.9):
        found[f"constant: training {q:g} quantile"] = constant(_quantile(q))
    groupings: dict[str, list[str]] = {
        "hour": ["hr"],
        "hour x workingday": ["hr", "workingday"],
        "hour x weekday": ["hr", "weekday"],
        "hour x workingday x weather": ["hr", "workingday", "weather"],
        "hour x workingday x month": ["hr", "workingday", "month"],
        "month": ["month"],
        "weather": ["weather"],
    }
    for name, keys in groupings.items():
        for statistic in ("mean", "median", "log-mean"):
            found[f"{statistic} count by {name}"] = group_table(keys, statistic)
    for set_name, columns in FEATURE_SETS.items():
        for model_name, (model, encode) in _models().items():
            for log_target in (False, True):
                target = "log1p(count)" if log_target else "count"
                found[f"{model_name} on {set_name}, fit to {target}"] = model_solution(
                    model, columns, encode, log_target
                )
    return {name: submission(predict) for name, predict in found.items()}


def submission(predict: Predictor) -> Solution:
    """A predictor as a leaderboard solution: reads the public data, returns the submission."""

    def solve(public: Path) -> pd.DataFrame:
        train, test = pd.read_csv(public / "train.csv"), pd.read_csv(public / "test.csv")
        return pd.DataFrame({"id": test["id"], "count": predict(train, test)})

    return solve


if __name__ == "__main__":
    sys.exit(builder.main(HERE, entries, lower_is_better=True))
