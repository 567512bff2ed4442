"""Builds ``leaderboard.csv`` for the mini US-employment competition from reference forecasters.

Run from the repository root::

    .venv/bin/python -m tools.leaderboards.us_employment

``tools.leaderboards.builder`` prepares the data into a temporary directory, runs every
reference forecaster below on ``train.csv`` only (108 months of 22 series), scores its forecasts
for the 12 months of ``test.csv`` with ``grade.py`` (sMAPE, lower is better) and writes the
leaderboard best first. Everything is deterministic or seeded, so a rerun writes the same file.

The entries span the field of a forecasting competition: constants, long-run means, naive and
seasonal-naive forecasts, moving averages, drift and linear-trend extrapolation, exponential
smoothing (simple, Holt, damped Holt), scikit-learn regressions on lag features (pooled across
series or one per series), a few noisy "random" forecasts and averages of two forecasters.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from sklearn.ensemble import (
    ExtraTreesRegressor,
    GradientBoostingRegressor,
    RandomForestRegressor,
)
from sklearn.linear_model import LinearRegression, Ridge
from sklearn.neighbors import KNeighborsRegressor

from tools.leaderboards import builder
from tools.leaderboards.builder import Solution

HERE = builder.task_folder("us-employment")  # where leaderboard.csv goes
SEED = 0

# A forecaster gets the history (one row per series, one column per month, oldest first) and
# the horizon, and returns the forecasts (one row per series, one column per future month).
Forecaster = Callable[[np.ndarray, int], np.ndarray]


# --- simple rules --------------------------------------------------------------------------


def zero(history: np.ndarray, horizon: int) -> np.ndarray:
    return np.zeros((history.shape[0], horizon))


def global_mean(history: np.ndarray, horizon: int) -> np.ndarray:
    """One number for everything: the mean of every training value of every series."""
    return np.full((history.shape[0], horizon), history.mean())


def series_mean(k: int | None) -> Forecaster:
    """Each series' mean over its last ``k`` months (all of them for None)."""

    def forecast(history: np.ndarray, horizon: int) -> np.ndarray:
        window = history if k is None else history[:, -k:]
        return np.repeat(window.mean(axis=1, keepdims=True), horizon, axis=1)

    return forecast


def series_median(history: np.ndarray, horizon: int) -> np.ndarray:
    return np.repeat(np.median(history, axis=1, keepdims=True), horizon, axis=1)


def naive(history: np.ndarray, horizon: int) -> np.ndarray:
    """The last observed value, carried forward."""
    return np.repeat(history[:, -1:], horizon, axis=1)


def seasonal_naive(history: np.ndarray, horizon: int) -> np.ndarray:
    """The value of the same month a year earlier (the data are seasonally adjusted, so this is
    mostly a year-old level)."""
    return history[:, -12 : -12 + horizon or None]


def seasonal_naive_drift(k: int) -> Forecaster:
    """Same month last year plus the mean year-on-year change over the last ``k`` months."""

    def forecast(history: np.ndarray, horizon: int) -> np.ndarray:
        change = (history[:, -k:] - history[:, -k - 12 : -12]).mean(axis=1, keepdims=True)
        return np.asarray(seasonal_naive(history, horizon) + change, dtype=float)

    return forecast


def drift(k: int) -> Forecaster:
    """The last value plus the average monthly change over the last ``k`` months."""

    def forecast(history: np.ndarray, horizon: int) -> np.ndarray:
        slope = (history[:, -1] - history[:, -1 - k]) / k
        return np.asarray(history[:, -1:] + slope[:, None] * np.arange(1, horizon + 1), dtype=float)

    return forecast


def growth(k: int) -> Forecaster:
    """The last value times the average monthly growth factor over the last ``k`` months."""

    def forecast(history: np.ndarray, horizon: int) -> np.ndarray:
        rate = (history[:, -1] / history[:, -1 - k]) ** (1.0 / k)
        return np.asarray(history[:, -1:] * rate[:, None] ** np.arange(1, horizon + 1), dtype=float)

    return forecast


def damped_drift(k: int, phi: float) -> Forecaster:
    """Drift over ``k`` months whose monthly step shrinks by ``phi`` each month ahead."""

    def forecast(history: np.ndarray, horizon: int) -> np.ndarray:
        slope = (history[:, -1] - history[:, -1 - k]) / k
        steps = np.cumsum(phi ** np.arange(1, horizon + 1))
        return np.asarray(history[:, -1:] + slope[:, None] * steps, dtype=float)

    return forecast


def linear_trend(k: int) -> Forecaster:
    """A least-squares straight line through the last ``k`` months, extended."""

    def forecast(history: np.ndarray, horizon: int) -> np.ndarray:
        t = np.arange(k, dtype=float)
        design = np.column_stack([np.ones(k), t])
        coef, *_ = np.linalg.lstsq(design, history[:, -k:].T, rcond=None)
        future = np.column_stack([np.ones(horizon), np.arange(k, k + horizon)])
        return np.asarray((future @ coef).T, dtype=float)

    return forecast


def quadratic_trend(k: int) -> Forecaster:
    """A least-squares parabola through the last ``k`` months, extended (bends too far)."""

    def forecast(history: np.ndarray, horizon: int) -> np.ndarray:
        t = np.arange(k, dtype=float) / k
        design = np.column_stack([np.ones(k), t, t**2])
        coef, *_ = np.linalg.lstsq(design, history[:, -k:].T, rcond=None)
        u = np.arange(k, k + horizon) / k
        return np.asarray((np.column_stack([np.ones(horizon), u, u**2]) @ coef).T, dtype=float)

    return forecast


# --- exponential smoothing -----------------------------------------------------------------


def holt(alpha: float, beta: float | None, phi: float = 1.0) -> Forecaster:
    """Exponential smoothing: simple (``beta`` None), Holt's linear trend, or damped (phi < 1)."""

    def forecast(history: np.ndarray, horizon: int) -> np.ndarray:
        level = history[:, 0].astype(float)
        trend = history[:, 1] - history[:, 0] if beta is not None else np.zeros(len(history))
        for t in range(1, history.shape[1]):
            previous = level
            level = alpha * history[:, t] + (1 - alpha) * (previous + phi * trend)
            if beta is not None:
                trend = beta * (level - previous) + (1 - beta) * phi * trend
        steps = np.cumsum(phi ** np.arange(1, horizon + 1))
        return level[:, None] + trend[:, None] * steps

    return forecast


# --- scikit-learn regressions on lag features ----------------------------------------------


def pooled_direct(model: Any, lags: int, start: int = 0, step: int = 1) -> Forecaster:
    """One model for all series and horizons, on scale-free features.

    For an origin month T and a horizon h, the features are the last ``lags`` log-changes
    (log y[T-j+1] - log y[T-j]) and h; the target is the mean monthly log-growth from T to T+h.
    Training origins are every ``step``-th month from month ``start`` on with T+h inside the
    history (a step of 2 halves the rows, which keeps the tree ensembles fast).
    """

    def forecast(history: np.ndarray, horizon: int) -> np.ndarray:
        logs = np.log(history)
        n_series, n_months = logs.shape
        changes = np.diff(logs, axis=1)  # changes[:, T-1] = log y[T] - log y[T-1]

        def features(t: int, h: int) -> np.ndarray:
            recent = changes[:, t - lags : t][:, ::-1]
            return np.column_stack([recent, np.full(n_series, h)])

        x_rows, y_rows = [], []
        for h in range(1, horizon + 1):
            for t in range(max(lags, start), n_months - h, step):
                x_rows.append(features(t, h))
                y_rows.append((logs[:, t + h] - logs[:, t]) / h)
        fitted = model.fit(np.vstack(x_rows), np.concatenate(y_rows))
        out = np.empty((n_series, horizon))
        last = n_months - 1
        for h in range(1, horizon + 1):
            rate = fitted.predict(features(last, h))
            out[:, h - 1] = history[:, -1] * np.exp(rate * h)
        return out

    return forecast


def per_series_lag12(model: Any, lags: int) -> Forecaster:
    """One model per series on raw values: y[t] from y[t-12], ..., y[t-12-lags+1].

    Lags of 12 and more are all known for the whole forecast year, so one model serves every
    horizon (but the latest months never reach the first forecasts).
    """

    def forecast(history: np.ndarray, horizon: int) -> np.ndarray:
        n_series, n_months = history.shape
        first = 12 + lags - 1
        out = np.empty((n_series, horizon))
        for s in range(n_series):
            y = history[s]
            x = np.column_stack([y[first - 12 - j : n_months - 12 - j] for j in range(lags)])
            fitted = model.fit(x, y[first:])
            future = np.column_stack(
                [y[n_months - 12 - j : n_months - 12 - j + horizon] for j in range(lags)]
            )
            out[s] = fitted.predict(future)
        return out

    return forecast


# --- noise and combinations ----------------------------------------------------------------


def noisy(base: Forecaster, scale: float, seed: int) -> Forecaster:
    """``base`` times random factors exp(N(0, scale)): a forecaster that guesses."""

    def forecast(history: np.ndarray, horizon: int) -> np.ndarray:
        values = base(history, horizon)
        return values * np.exp(np.random.default_rng(seed).normal(0, scale, values.shape))

    return forecast


def average(first: Forecaster, second: Forecaster) -> Forecaster:
    def forecast(history: np.ndarray, horizon: int) -> np.ndarray:
        return (first(history, horizon) + second(history, horizon)) / 2

    return forecast


TREES: dict[str, Callable[[], Any]] = {
    "random forest": lambda: RandomForestRegressor(
        n_estimators=50, min_samples_leaf=10, max_features=0.5, random_state=SEED
    ),
    "extra trees": lambda: ExtraTreesRegressor(
        n_estimators=50, min_samples_leaf=5, max_features=0.5, random_state=SEED
    ),
    "gradient boosting": lambda: GradientBoostingRegressor(subsample=0.5, random_state=SEED),
}


# --- the entries ---------------------------------------------------------------------------


def forecasters() -> dict[str, Forecaster]:
    """Every reference forecaster, by team name."""
    found: dict[str, Forecaster] = {
        "constant: zero": zero,
        "constant: mean of all training values": global_mean,
        "per-series mean of all months": series_mean(None),
        "per-series median of all months": series_median,
        "naive: last value": naive,
        "seasonal naive: same month last year": seasonal_naive,
    }
    for k in (2, 3, 6, 12, 24, 36, 60):
        found[f"mean of last {k} months"] = series_mean(k)
    for k in (12, 24, 36, 60):
        found[f"seasonal naive + drift over {k} months"] = seasonal_naive_drift(k)
    for k in (1, 3, 6, 12, 18, 24, 36, 48, 60, 84, 107):
        found[f"drift over last {k} months"] = drift(k)
    for k in (6, 12, 24, 36, 60):
        found[f"growth rate over last {k} months"] = growth(k)
    for k in (12, 24, 36):
        for phi in (0.8, 0.9, 0.95, 0.98):
            found[f"damped drift over {k} months phi={phi}"] = damped_drift(k, phi)
    for k in (6, 12, 18, 24, 36, 48, 60, 84, 108):
        found[f"linear trend over last {k} months"] = linear_trend(k)
    for k in (24, 36, 60, 108):
        found[f"quadratic trend over last {k} months"] = quadratic_trend(k)
    for alpha in (0.1, 0.3, 0.5, 0.8):
        found[f"simple exponential smoothing alpha={alpha}"] = holt(alpha, None)
    for alpha in (0.3, 0.5, 0.8):
        for beta in (0.05, 0.1, 0.3):
            found[f"holt alpha={alpha} beta={beta}"] = holt(alpha, beta)
            found[f"damped holt alpha={alpha} beta={beta} phi=0.9"] = holt(alpha, beta, 0.9)
    for lags in (3, 6, 12, 24):
        for origins, start in (("all origins", 0), ("origins from 2010", 48)):
            linear: dict[str, Any] = {
                "linear regression": LinearRegression(),
                "ridge alpha=0.01": Ridge(alpha=0.01),
                "ridge alpha=0.1": Ridge(alpha=0.1),
            }
            for model_name, model in linear.items():
                name = f"{model_name} pooled, {lags} lagged log-changes, {origins}"
                found[name] = pooled_direct(model, lags, start)
    for lags in (3, 6, 12):
        for k in (5, 20):
            name = f"k-NN k={k} pooled, {lags} lagged log-changes, all origins"
            found[name] = pooled_direct(KNeighborsRegressor(n_neighbors=k), lags)
        for model_name, make in TREES.items():
            for origins, start in (("every 2nd origin", 0), ("every 2nd origin from 2010", 48)):
                name = f"{model_name} pooled, {lags} lagged log-changes, {origins}"
                found[name] = pooled_direct(make(), lags, start, step=2)
    for lags in (1, 3, 6, 12):
        found[f"linear regression per series on lags 12..{11 + lags}"] = per_series_lag12(
            LinearRegression(), lags
        )
        found[f"ridge alpha=1e6 per series on lags 12..{11 + lags}"] = per_series_lag12(
            Ridge(alpha=1e6), lags
        )
    for seed in range(3):
        found[f"random: last value with 5% noise seed={seed}"] = noisy(naive, 0.05, seed)
        found[f"random: last value with 1% noise seed={10 + seed}"] = noisy(naive, 0.01, 10 + seed)
    for first, second in COMBINATIONS:
        found[f"average of ({first}) and ({second})"] = average(found[first], found[second])
    return found


# Pairs of entries above whose average is an entry of its own.
COMBINATIONS = [
    ("naive: last value", "drift over last 12 months"),
    ("naive: last value", "seasonal naive: same month last year"),
    ("drift over last 1 months", "drift over last 24 months"),
    ("drift over last 3 months", "growth rate over last 24 months"),
    ("mean of last 12 months", "drift over last 24 months"),
    ("seasonal naive + drift over 12 months", "drift over last 12 months"),
    ("holt alpha=0.8 beta=0.1", "damped drift over 12 months phi=0.95"),
    ("simple exponential smoothing alpha=0.5", "linear trend over last 108 months"),
    ("linear regression per series on lags 12..14", "naive: last value"),
    ("linear regression pooled, 6 lagged log-changes, all origins", "drift over last 6 months"),
    (
        "ridge alpha=0.01 pooled, 3 lagged log-changes, all origins",
        "random forest pooled, 3 lagged log-changes, every 2nd origin",
    ),
    (
        "linear regression pooled, 6 lagged log-changes, all origins",
        "gradient boosting pooled, 12 lagged log-changes, every 2nd origin",
    ),
    ("extra trees pooled, 3 lagged log-changes, every 2nd origin", "drift over last 1 months"),
    ("k-NN k=20 pooled, 3 lagged log-changes, all origins", "holt alpha=0.8 beta=0.3"),
]


def entries() -> dict[str, Solution]:
    return {name: submission(forecast) for name, forecast in forecasters().items()}


def submission(forecast: Forecaster) -> Solution:
    """A forecaster as a leaderboard solution: reads the public data, returns the submission.

    Forecasts are clipped at 0 because the grader rejects negative employment.
    """

    def solve(public: Path) -> pd.DataFrame:
        train = pd.read_csv(public / "train.csv")
        test = pd.read_csv(public / "test.csv")
        wide = train.pivot(index="series", columns="date", values="value")
        months = sorted(test["date"].unique())
        predicted = np.clip(forecast(wide.to_numpy(dtype=float), len(months)), 0, None)
        values = pd.DataFrame(
            {
                "series": np.repeat(wide.index.to_numpy(), len(months)),
                "date": np.tile(months, len(wide)),
                "value": predicted.ravel(),
            }
        )
        merged = test.merge(values, on=["series", "date"], how="left", validate="one_to_one")
        return merged[["id", "value"]]

    return solve


if __name__ == "__main__":
    sys.exit(builder.main(HERE, entries, lower_is_better=True))
