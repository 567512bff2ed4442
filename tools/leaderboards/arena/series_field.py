"""A field of reference forecasters for the arena's multi-series forecasting tasks.

Shared by the arena's series tasks (``regional_sales``, quarterly): each task names its season
(``period``: 4 for quarterly data, 7 for daily, 12 for monthly), its horizon and its level
window, and :func:`field` returns the same ladder of pipelines for it, defined from
forecasting practice alone (never tuned against any agent's scores). The arena field rule (at
least 1000 entries, so that MLE-bench's medal tiers are those of a large competition: bronze
the top 10 %) is met by dense grids over
the cheap rules and smoothers and by a factorial grid over the two or three settings that
matter most for each learned model family, crossed with the same feature sets and histories:

- constants and per-series means and medians over windows of 1-8 seasons;
- naive, seasonal naive, same-season means and medians over several seasons;
- a level (mean of the last k steps) times (plus) a seasonal profile: window x profile length;
- drifts and seasonal naive plus drift; a per-series straight line times the profile;
- exponential smoothing: simple (on deseasonalised data; alpha x profile length) and
  Holt-Winters additive and multiplicative (alpha x beta x gamma);
- scikit-learn regressions pooled over every series (direct multi-horizon: target = the
  value h steps after a forecast origin divided by the series' level at the origin), over a
  ladder of feature sets (the horizon and the target's season only; + recent values; + the
  same-season values of earlier seasons; + rolling means and a level ratio) and three training
  histories, with linear regression, ridge (alpha), k-NN (k x weighting), a decision tree
  (depth x leaf size), a random forest and extra trees (leaf size x feature share) and
  histogram gradient boosting (learning rate x iterations x leaves);
- noisy forecasts (the seasonal naive forecast times a seeded random factor) and averages of
  two forecasters.

A forecaster gets the history (one row per series, one column per step, oldest first) and the
horizon and returns the forecasts (one row per series, one column per future step). Every
model is seeded and every fit subsamples with a fixed seed, so a rebuild writes the same file.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from sklearn.ensemble import (
    ExtraTreesRegressor,
    HistGradientBoostingRegressor,
    RandomForestRegressor,
)
from sklearn.linear_model import LinearRegression, Ridge
from sklearn.neighbors import KNeighborsRegressor
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.tree import DecisionTreeRegressor

from tools.leaderboards.builder import Solution

Forecaster = Callable[[np.ndarray, int], np.ndarray]
SEED = 0
MAX_ROWS = 12_000  # training rows of one pooled model (a seeded subsample): a fast build


@dataclass(frozen=True)
class Season:
    """What a task tells the field: steps per season, the level window (steps averaged to
    scale a series), the spacing of the pooled models' training origins and their numbers of
    training origins (short, middle and long histories)."""

    period: int
    level: int
    origin_step: int
    histories: tuple[int, int, int]


# --- reading a task and writing a submission -----------------------------------------------


@cache
def _read(public: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    return pd.read_csv(public / "train.csv"), pd.read_csv(public / "test.csv")


def solution(forecaster: Forecaster) -> Solution:
    """The forecaster as a leaderboard solution: train.csv pivoted wide, forecasts clipped at 0
    and written for every id of test.csv."""

    def solve(public: Path) -> pd.DataFrame:
        train, test = _read(Path(public))
        wide = train.pivot(index="series", columns="date", values="value").sort_index(axis=1)
        history = wide.to_numpy(dtype=float)
        dates = sorted(test["date"].unique())
        out = np.clip(forecaster(history, len(dates)), 0.0, None)
        row = wide.index.get_indexer(pd.Index(test["series"]))
        step = pd.Index(dates).get_indexer(pd.Index(test["date"]))
        return pd.DataFrame({"id": test["id"], "value": out[row, step]})

    return solve


# --- simple forecasters --------------------------------------------------------------------


def repeat(column: np.ndarray, horizon: int) -> np.ndarray:
    return np.repeat(column.reshape(-1, 1), horizon, axis=1)


def constant(kind: str) -> Forecaster:
    def forecast(y: np.ndarray, horizon: int) -> np.ndarray:
        value = {"zero": 0.0, "mean": y.mean(), "median": float(np.median(y))}[kind]
        return np.full((y.shape[0], horizon), value)

    return forecast


def window_stat(k: int, stat: str) -> Forecaster:
    """Each series' mean or median over its last ``k`` steps, flat."""

    def forecast(y: np.ndarray, horizon: int) -> np.ndarray:
        w = y[:, -k:]
        return repeat(w.mean(axis=1) if stat == "mean" else np.median(w, axis=1), horizon)

    return forecast


def naive(y: np.ndarray, horizon: int) -> np.ndarray:
    return repeat(y[:, -1], horizon)


def same_season(y: np.ndarray, period: int, horizon: int, seasons: int) -> np.ndarray:
    """``seasons`` x n x horizon: the values of the target's season in the last seasons."""
    t = y.shape[1]
    out = np.empty((seasons, y.shape[0], horizon))
    for h in range(1, horizon + 1):
        last = t - 1 + h - period * int(np.ceil(h / period))  # at or before the origin
        for j in range(seasons):
            out[j, :, h - 1] = y[:, max(last - j * period, 0)]
    return out


def seasonal_stat(period: int, seasons: int, stat: str) -> Forecaster:
    """The mean or median of the target's season over the last ``seasons`` seasons (1: the
    seasonal naive forecast)."""

    def forecast(y: np.ndarray, horizon: int) -> np.ndarray:
        values = same_season(y, period, horizon, seasons)
        return np.asarray(values.mean(axis=0) if stat == "mean" else np.median(values, axis=0))

    return forecast


def profile(y: np.ndarray, period: int, seasons: int, multiplicative: bool) -> np.ndarray:
    """n x period: each season's deviation from the mean over the last ``seasons`` seasons,
    indexed by step % period (a ratio, or a difference)."""
    t = y.shape[1]
    start = max(t - seasons * period, 0)
    start += (t - start) % period  # whole seasons
    window = y[:, start:]
    by_season = window.reshape(y.shape[0], -1, period).mean(axis=1)
    mean = by_season.mean(axis=1, keepdims=True)
    shaped = by_season / np.maximum(mean, 1e-9) if multiplicative else by_season - mean
    return np.roll(shaped, start % period, axis=1)  # column c = steps with step % period == c


def future_profile(p: np.ndarray, t: int, horizon: int) -> np.ndarray:
    return p[:, (t + np.arange(horizon)) % p.shape[1]]


def past_profile(p: np.ndarray, t: int, k: int) -> np.ndarray:
    return p[:, (np.arange(t - k, t)) % p.shape[1]]


def level_profile(period: int, k: int, seasons: int, multiplicative: bool) -> Forecaster:
    """The deseasonalised mean of the last ``k`` steps, times (plus) the seasonal profile."""

    def forecast(y: np.ndarray, horizon: int) -> np.ndarray:
        t = y.shape[1]
        p = profile(y, period, seasons, multiplicative)
        past = past_profile(p, t, k)
        if multiplicative:
            level = (y[:, -k:] / np.maximum(past, 1e-9)).mean(axis=1)
            return np.asarray(repeat(level, horizon) * future_profile(p, t, horizon))
        level = (y[:, -k:] - past).mean(axis=1)
        return np.asarray(repeat(level, horizon) + future_profile(p, t, horizon))

    return forecast


def drift(k: int) -> Forecaster:
    """The last value plus the average step over the last ``k`` steps."""

    def forecast(y: np.ndarray, horizon: int) -> np.ndarray:
        slope = (y[:, -1] - y[:, -1 - k]) / k
        return repeat(y[:, -1], horizon) + np.outer(slope, np.arange(1, horizon + 1))

    return forecast


def seasonal_drift(period: int, k: int) -> Forecaster:
    """The seasonal naive forecast plus the average change per season over the last ``k``."""

    def forecast(y: np.ndarray, horizon: int) -> np.ndarray:
        base = same_season(y, period, horizon, 1)[0]
        change = (y[:, -period:].mean(axis=1) - y[:, -period - k : -k].mean(axis=1)) / k
        return np.asarray(
            base + np.outer(change, period * np.ceil(np.arange(1, horizon + 1) / period))
        )

    return forecast


def trend_profile(period: int, k: int, seasons: int) -> Forecaster:
    """A least-squares line through the last ``k`` deseasonalised steps, times the profile."""

    def forecast(y: np.ndarray, horizon: int) -> np.ndarray:
        t = y.shape[1]
        p = profile(y, period, seasons, True)
        z = y[:, -k:] / np.maximum(past_profile(p, t, k), 1e-9)
        x = np.arange(k) - (k - 1) / 2
        slope = (z * x).sum(axis=1) / (x**2).sum()
        ahead = (k - 1) / 2 + np.arange(1, horizon + 1)
        line = z.mean(axis=1, keepdims=True) + np.outer(slope, ahead)
        return np.asarray(np.clip(line, 0, None) * future_profile(p, t, horizon))

    return forecast


def ses(period: int, alpha: float, seasons: int) -> Forecaster:
    """Simple exponential smoothing of the deseasonalised series, times the profile."""

    def forecast(y: np.ndarray, horizon: int) -> np.ndarray:
        t = y.shape[1]
        p = profile(y, period, seasons, True)
        z = y / np.maximum(past_profile(p, t, t), 1e-9)
        level = z[:, 0].copy()
        for j in range(1, t):
            level += alpha * (z[:, j] - level)
        return np.asarray(repeat(level, horizon) * future_profile(p, t, horizon))

    return forecast


def holt_winters(
    period: int, alpha: float, beta: float, gamma: float, multiplicative: bool
) -> Forecaster:
    """Holt-Winters with a trend (additive) and a season (additive or multiplicative),
    started from the first two seasons."""

    def forecast(y: np.ndarray, horizon: int) -> np.ndarray:
        t = y.shape[1]
        first = y[:, :period].mean(axis=1)
        trend = (y[:, period : 2 * period].mean(axis=1) - first) / period
        if multiplicative:
            season = y[:, :period] / np.maximum(first[:, None], 1e-9)
        else:
            season = y[:, :period] - first[:, None]
        level = first.copy()
        for j in range(t):
            s = season[:, j % period]
            old = level
            if multiplicative:
                level = alpha * y[:, j] / np.maximum(s, 1e-9) + (1 - alpha) * (old + trend)
                season[:, j % period] = gamma * y[:, j] / np.maximum(level, 1e-9) + (1 - gamma) * s
            else:
                level = alpha * (y[:, j] - s) + (1 - alpha) * (old + trend)
                season[:, j % period] = gamma * (y[:, j] - level) + (1 - gamma) * s
            trend = beta * (level - old) + (1 - beta) * trend
        steps = np.arange(1, horizon + 1)
        base = level[:, None] + np.outer(trend, steps)
        s = season[:, (t - 1 + steps) % period]
        return np.asarray(base * s if multiplicative else base + s)

    return forecast


def noisy(period: int, sigma: float, seed: int) -> Forecaster:
    """The seasonal naive forecast times exp(N(0, sigma)), seeded."""

    def forecast(y: np.ndarray, horizon: int) -> np.ndarray:
        base = same_season(y, period, horizon, 1)[0]
        rng = np.random.default_rng(seed)
        return np.asarray(base * np.exp(rng.normal(0.0, sigma, base.shape)))

    return forecast


def average(a: Forecaster, b: Forecaster) -> Forecaster:
    def forecast(y: np.ndarray, horizon: int) -> np.ndarray:
        return (a(y, horizon) + b(y, horizon)) / 2

    return forecast


# --- pooled regressions ---------------------------------------------------------------------

FEATURE_SETS = ("horizon", "recent", "seasons", "full")


def design(y: np.ndarray, origin: int, h: int, s: Season, features: str) -> np.ndarray:
    """Features of every series for the step ``origin + h`` seen from ``origin`` (inclusive),
    each value divided by the series' level (mean of the last ``s.level`` steps)."""
    level = np.maximum(y[:, origin - s.level + 1 : origin + 1].mean(axis=1), 1e-9)
    n = y.shape[0]
    cols = [np.full(n, float(h)), np.full(n, float((origin + h) % s.period))]
    if features in ("recent", "full"):
        cols += [y[:, origin - j] / level for j in range(s.period)]
    if features in ("seasons", "full"):
        last = origin + h - s.period * int(np.ceil(h / s.period))
        cols += [y[:, last - j * s.period] / level for j in range(4)]
    if features == "full":
        for w in (s.period, 2 * s.period, 4 * s.period):
            cols.append(y[:, origin - w + 1 : origin + 1].mean(axis=1) / level)
        cols.append(level / np.maximum(y[:, origin - 4 * s.period + 1 : origin + 1].mean(1), 1e-9))
    return np.column_stack(cols)


def warmup(s: Season) -> int:
    """The first origin with every feature defined."""
    return max(s.level, 5 * s.period)


def pooled(s: Season, make: Callable[[], Any], features: str, origins: int) -> Forecaster:
    """Direct multi-horizon regression pooled over every series: the target is the value h
    steps after an origin over the level at the origin; trained on the latest ``origins``
    origins (spaced ``s.origin_step`` apart, every horizon), subsampled to ``MAX_ROWS``."""

    def forecast(y: np.ndarray, horizon: int) -> np.ndarray:
        last = y.shape[1] - 1
        X, target = [], []
        for k in range(1, origins + 1):
            origin = last - horizon - (k - 1) * s.origin_step
            if origin < warmup(s):
                break
            level = np.maximum(y[:, origin - s.level + 1 : origin + 1].mean(axis=1), 1e-9)
            for h in range(1, horizon + 1):
                X.append(design(y, origin, h, s, features))
                target.append(y[:, origin + h] / level)
        Xa, ta = np.vstack(X), np.concatenate(target)
        if len(ta) > MAX_ROWS:
            keep = np.random.default_rng(SEED).choice(len(ta), MAX_ROWS, replace=False)
            Xa, ta = Xa[keep], ta[keep]
        model = make().fit(Xa, ta)
        level = np.maximum(y[:, last - s.level + 1 :].mean(axis=1), 1e-9)
        out = np.column_stack(
            [model.predict(design(y, last, h, s, features)) for h in range(1, horizon + 1)]
        )
        return np.asarray(out * level[:, None])

    return forecast


def scaled(estimator: Any) -> Callable[[], Any]:
    return lambda: make_pipeline(StandardScaler(), estimator)


def _models() -> dict[str, Callable[[], Any]]:
    """Each model family as a factorial grid over the two or three settings that matter most
    for it, from the library default to what a careful modeller tries (the arena field rule)."""
    out: dict[str, Callable[[], Any]] = {"linear regression": scaled(LinearRegression())}
    for alpha in (0.1, 1, 10, 100):
        out[f"ridge alpha={alpha}"] = scaled(Ridge(alpha=alpha))
    for k in (5, 10, 25, 50):
        for weights in ("uniform", "distance"):
            out[f"k-NN k={k} {weights}"] = scaled(KNeighborsRegressor(k, weights=weights))
    for depth in (4, 6, 12, None):
        for leaf in (1, 5, 20):
            out[f"decision tree depth={depth} leaf={leaf}"] = _tree(depth, leaf)
    for leaf in (1, 5):
        for share in (0.3, 0.5, 1.0):
            out[f"random forest leaf={leaf} features={share}"] = _forest(
                RandomForestRegressor, leaf, share
            )
            out[f"extra trees leaf={leaf} features={share}"] = _forest(
                ExtraTreesRegressor, leaf, share
            )
    for rate in (0.05, 0.1):
        for iters in (100, 300):
            for leaves in (15, 31):
                name = f"gradient boosting lr={rate} iters={iters} leaves={leaves}"
                out[name] = _boosting(rate, iters, leaves)
    return out


def _tree(depth: int | None, leaf: int) -> Callable[[], Any]:
    return lambda: DecisionTreeRegressor(max_depth=depth, min_samples_leaf=leaf, random_state=SEED)


def _forest(kind: type[Any], leaf: int, share: float) -> Callable[[], Any]:
    """40 trees (a fixed, cheap ensemble size): leaf size and feature share are the settings."""
    return lambda: kind(
        n_estimators=40, min_samples_leaf=leaf, max_features=share, random_state=SEED
    )


def _boosting(rate: float, iters: int, leaves: int) -> Callable[[], Any]:
    return lambda: HistGradientBoostingRegressor(
        learning_rate=rate, max_iter=iters, max_leaf_nodes=leaves, random_state=SEED
    )


MODELS: dict[str, Callable[[], Any]] = _models()


# --- the field ------------------------------------------------------------------------------

WINDOWS = (1, 2, 3, 4, 6, 8)  # level, mean and median windows, in seasons
SEASONS = (2, 3, 4, 6, 8)  # seasons averaged into a seasonal profile
ALPHAS = (0.01, 0.02, 0.03, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.7)
HW_ALPHAS = (0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 0.7)
HW_BETAS = (0.0, 0.005, 0.01, 0.05)
HW_GAMMAS = (0.01, 0.05, 0.1, 0.2, 0.3, 0.4)


def simple(s: Season, steps: str) -> dict[str, Forecaster]:
    """The rules and smoothers; ``steps`` names a step in team names ("days", "months").
    Cheap, so their grids are dense: windows, smoothing constants and seasonal variants."""
    p = s.period
    out: dict[str, Forecaster] = {f"constant: {k}": constant(k) for k in ("zero", "mean", "median")}
    for k in WINDOWS:
        for stat in ("mean", "median"):
            out[f"{stat} of last {k * p} {steps}"] = window_stat(k * p, stat)
    out["naive: last value"] = naive
    for m in (1, 2, 3, 4, 5, 6, 8):
        out[f"same-season mean over {m} seasons"] = seasonal_stat(p, m, "mean")
    for m in (3, 4, 5, 6, 8):
        out[f"same-season median over {m} seasons"] = seasonal_stat(p, m, "median")
    for k in WINDOWS:
        for m in SEASONS:
            for mult in (True, False):
                kind = "times" if mult else "plus"
                name = f"level of last {k * p} {steps} {kind} profile of {m} seasons"
                out[name] = level_profile(p, k * p, m, mult)
    for k in (1, 2, p, 2 * p, 4 * p, 8 * p):
        out[f"drift over last {k} {steps}"] = drift(k)
    for k in (1, 2, 3, 4, 6):
        out[f"seasonal naive plus drift over {k} seasons"] = seasonal_drift(p, k * p)
    for k in (2, 3, 4, 6, 8):
        for m in (2, 4, 8):
            name = f"straight line through last {k * p} {steps} times profile of {m} seasons"
            out[name] = trend_profile(p, k * p, m)
    for alpha in ALPHAS:
        for m in (2, 4, 8):
            name = f"simple exponential smoothing alpha={alpha} times profile of {m} seasons"
            out[name] = ses(p, alpha, m)
    for mult in (False, True):
        kind = "multiplicative" if mult else "additive"
        for alpha in HW_ALPHAS:
            for beta in HW_BETAS:
                for gamma in HW_GAMMAS:
                    name = f"holt-winters {kind} alpha={alpha} beta={beta} gamma={gamma}"
                    out[name] = holt_winters(p, alpha, beta, gamma, mult)
    for sigma in (0.05, 0.2):
        for seed in range(3):
            out[f"random: seasonal naive with {sigma:.0%} noise seed={seed}"] = noisy(
                p, sigma, seed
            )
    return out


def learned(s: Season) -> dict[str, Forecaster]:
    """Pooled regressions: every model x feature set x training history."""
    out: dict[str, Forecaster] = {}
    for features in FEATURE_SETS:
        histories = zip(s.histories, ("recent origins", "some origins", "all origins"), strict=True)
        for origins, when in histories:
            for model, make in MODELS.items():
                name = f"{model} pooled, {features} features, {when}"
                out[name] = pooled(s, make, features, origins)
    return out


PAIRS = (
    ("naive: last value", "same-season mean over 4 seasons"),
    ("same-season mean over 1 seasons", "same-season mean over 8 seasons"),
    (
        "simple exponential smoothing alpha=0.1 times profile of 8 seasons",
        "same-season median over 5 seasons",
    ),
    ("holt-winters additive alpha=0.1 beta=0.0 gamma=0.05", "same-season mean over 4 seasons"),
    (
        "holt-winters multiplicative alpha=0.1 beta=0.0 gamma=0.05",
        "ridge alpha=1 pooled, full features, all origins",
    ),
    (
        "ridge alpha=1 pooled, full features, all origins",
        "random forest leaf=5 features=0.5 pooled, full features, all origins",
    ),
    (
        "ridge alpha=1 pooled, seasons features, all origins",
        "gradient boosting lr=0.1 iters=100 leaves=31 pooled, full features, all origins",
    ),
    (
        "linear regression pooled, recent features, recent origins",
        "k-NN k=50 uniform pooled, seasons features, all origins",
    ),
    (
        "extra trees leaf=5 features=0.5 pooled, full features, all origins",
        "gradient boosting lr=0.05 iters=300 leaves=15 pooled, full features, all origins",
    ),
    (
        "straight line through last {4p} {steps} times profile of 8 seasons",
        "same-season mean over 3 seasons",
    ),
    (
        "level of last {1p} {steps} times profile of 8 seasons",
        "level of last {4p} {steps} times profile of 8 seasons",
    ),
    ("drift over last {p} {steps}", "same-season mean over 2 seasons"),
    ("mean of last {4p} {steps}", "same-season mean over 6 seasons"),
    (
        "decision tree depth=6 leaf=1 pooled, full features, recent origins",
        "ridge alpha=100 pooled, recent features, all origins",
    ),
    (
        "k-NN k=10 uniform pooled, full features, all origins",
        "holt-winters additive alpha=0.3 beta=0.01 gamma=0.2",
    ),
    (
        "random forest leaf=5 features=0.5 pooled, seasons features, recent origins",
        "simple exponential smoothing alpha=0.3 times profile of 8 seasons",
    ),
)


def field(s: Season, steps: str) -> dict[str, Forecaster]:
    """Every entry of the leaderboard, by team name."""
    entries = {**simple(s, steps), **learned(s)}
    fill = {"p": s.period, "steps": steps, "1p": s.period, "4p": 4 * s.period}
    for a, b in PAIRS:
        a, b = a.format(**fill), b.format(**fill)
        entries[f"average of ({a}) and ({b})"] = average(entries[a], entries[b])
    return entries


def entries(s: Season, steps: str) -> dict[str, Solution]:
    return {name: solution(f) for name, f in field(s, steps).items()}
