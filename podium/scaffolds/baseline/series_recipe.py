"""Forecasting recipes: simple forecasters, and regressions on lag features.

Two sorts of family. Simple forecasters need no fitting and cannot overfit: the seasonal naive
forecast (the value one season earlier), the drift (the last value plus the recent average
step) and their mix, the seasonal naive forecast plus last year's change. Learned families
(ridge, histogram gradient boosting, a random forest) do direct multi-horizon regression: for
each forecast origin slid over the history and each horizon h, the features are the last
``lags`` values, the rolling means over ``windows``, the seasonal lag (the value one season
before the target) and last year's change, and the season of the target step; the target is
the change from the origin's value. Everything is divided by the series' level at the origin,
so one model learns from every series whatever its scale. ``per_horizon`` fits one model per h
rather than one with h as a feature.

Drafts alternate simple and learned families; improve changes one choice (a hyperparameter,
the lags, a window, the seasonal or calendar features, the training history, per-horizon
models, the family); debug falls back to the seasonal naive forecast, then to the last value;
crossover keeps the fitter parent's model and takes the other's features.

A learned family on many or long series is sized (:func:`sized`, issue 39): a draft costs at
most ``budget.DRAFT_SECONDS``, a later node ``budget.GROW_SECONDS``, and its design matrix
stays within ``budget.MEMORY_BYTES``; a sized recipe may grow back (:func:`_grow`).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any

from podium.scaffolds.baseline import budget
from podium.scaffolds.baseline.moves import RecipeMove, one_move
from podium.scaffolds.baseline.parts import Part, nothing
from podium.scaffolds.baseline.recipe_line import unsized_fields
from podium.scaffolds.baseline.specs import SeriesSpec


@dataclass(frozen=True)
class Forecaster:
    module: str  # "" for the simple forecasters, written out in the script
    estimator: str
    params: dict[str, Any]
    per_horizon: bool = False


MODELS: dict[str, Forecaster] = {
    "seasonal_naive": Forecaster("", "", {}),
    "drift": Forecaster("", "", {"window": 24}),
    "seasonal_drift": Forecaster("", "", {}),
    "naive": Forecaster("", "", {}),
    "ridge": Forecaster("sklearn.linear_model", "Ridge", {"alpha": 1.0}, per_horizon=True),
    "hist_gradient_boosting": Forecaster(
        "sklearn.ensemble", "HistGradientBoostingRegressor",
        {"max_iter": 200, "learning_rate": 0.05, "max_leaf_nodes": 15, "random_state": 0},
    ),
    "random_forest": Forecaster(
        "sklearn.ensemble", "RandomForestRegressor",
        {"n_estimators": 100, "min_samples_leaf": 5, "max_features": 0.5, "max_samples": 0.3,
         "random_state": 0},
    ),
}  # fmt: skip
SIMPLE = ("seasonal_naive", "drift", "seasonal_drift", "naive")
LEARNED = ("ridge", "hist_gradient_boosting", "random_forest")
DRAFT_ORDER = ("seasonal_naive", "ridge", "hist_gradient_boosting", "drift", "random_forest",
               "seasonal_drift")  # fmt: skip
WINDOWS = (3, 6, 12, 24)
LAGS = (3, 6, 12, 24, 36)
HISTORIES = (24, 36, 60, 120, 0)  # forecast origins per series to train on (0: all)
TUNING: dict[str, list[tuple[str, float, float, float]]] = {
    # family → (parameter, factor, lowest, highest)
    "drift": [("window", 2, 3, 240), ("window", 0.5, 3, 240)],
    "ridge": [("alpha", 3, 1e-3, 1e3), ("alpha", 0.3, 1e-3, 1e3)],
    "hist_gradient_boosting": [("learning_rate", 0.5, 0.01, 0.3), ("max_iter", 2, 50, 800),
                               ("max_leaf_nodes", 2, 7, 63), ("max_leaf_nodes", 0.5, 7, 63)],
    "random_forest": [("min_samples_leaf", 2, 1, 50), ("min_samples_leaf", 0.5, 1, 50),
                      ("max_features", 0.6, 0.2, 1.0)],
}  # fmt: skip


@dataclass(frozen=True)
class SeriesRecipe:
    family: str
    params: dict[str, Any] = field(default_factory=dict)
    lags: int = 12  # the last values before the origin, as features
    windows: tuple[int, ...] = (3, 12)  # rolling means ending at the origin
    seasonal: bool = True  # the value one season before the target, and last year's change
    calendar: bool = True  # the target step's season (month of year for monthly data)
    per_horizon: bool = False  # one model per horizon, rather than h as a feature
    history: int = 60  # forecast origins per series to train on, the latest (0: all): the
    # recent past is the best guide to the next year when the dynamics change (a recession)
    sample: int = 0  # sizing: fit on this many series, drawn at random (0: all); forecast all

    @classmethod
    def from_fields(cls, data: dict[str, Any]) -> SeriesRecipe:
        return cls(**{**data, "windows": tuple(data.get("windows", ()))})

    def fields(self) -> dict[str, Any]:
        return unsized_fields(self, SIZING)


SIZING = {"sample": 0}  # the sizing field and its default
MIN_HISTORY = 24  # sizing keeps at least this many forecast origins per series
MIN_SERIES = 100  # ... and fits on at least this many series


def warmup(recipe: SeriesRecipe, spec: SeriesSpec) -> int:
    """The first forecast origin (0-based step) with every feature defined."""
    return max(recipe.lags - 1, max(recipe.windows, default=1) - 1, spec.period)


def learnable(spec: SeriesSpec) -> bool:
    """Enough history for a learned model: a dozen origins before the validation window."""
    return spec.length - spec.horizon - warmup(SeriesRecipe("ridge"), spec) >= spec.horizon + 12


def families(spec: SeriesSpec) -> tuple[str, ...]:
    return DRAFT_ORDER if learnable(spec) else tuple(f for f in DRAFT_ORDER if f in SIMPLE)


def _start(family: str) -> SeriesRecipe:
    model = MODELS[family]
    return SeriesRecipe(family, dict(model.params), per_horizon=model.per_horizon)


# --- sizing ----------------------------------------------------------------------------------


def columns(recipe: SeriesRecipe, spec: SeriesSpec) -> int:
    """The design matrix's columns (lags, windows, seasonal, calendar, series number, h)."""
    calendar = spec.period if recipe.calendar and spec.period > 1 else 0
    return recipe.lags - 1 + len(recipe.windows) + 2 * recipe.seasonal + calendar + 2


def _design(recipe: SeriesRecipe, spec: SeriesSpec) -> tuple[int, int]:
    """(origin-horizon steps, rows) of one fit's design matrix: the final fit's, the larger."""
    origins = max(spec.length - 1 - warmup(recipe, spec), 1)
    if recipe.history:
        origins = min(origins, recipe.history)
    series = min(spec.n_series, recipe.sample) if recipe.sample else spec.n_series
    calls = origins * spec.horizon
    return calls, calls * series


def seconds(recipe: SeriesRecipe, spec: SeriesSpec) -> float:
    """The script's cost on one core: a learned family builds its design and fits twice (the
    validation forecast and the final one); a simple forecaster costs next to nothing."""
    if recipe.family not in LEARNED:
        return 1e-6 * spec.n_series * spec.length
    calls, rows = _design(recipe, spec)
    models = spec.horizon if recipe.per_horizon else 1
    cost = budget.series_seconds(
        recipe.family, recipe.params, calls, rows, columns(recipe, spec), models
    )
    return 2 * cost


def memory_share(recipe: SeriesRecipe, spec: SeriesSpec) -> float:
    """The share of ``recipe``'s design matrix that fits ``budget.MEMORY_BYTES`` (1: all)."""
    held = _design(recipe, spec)[1] * columns(recipe, spec) * budget.DESIGN_BYTES
    return min(1.0, budget.MEMORY_BYTES / max(held, 1))


def sized(recipe: SeriesRecipe, spec: SeriesSpec, limit: float) -> SeriesRecipe:
    """``recipe``, giving up as little as it takes to cost at most ``limit`` seconds of one core
    with its design matrix in ``budget.MEMORY_BYTES``; at sizing's floors when even that does
    not fit. In order: fewer forecast origins per series (the latest, down to
    ``MIN_HISTORY``), then a random sample of the series to fit on (down to ``MIN_SERIES``;
    every series is still forecast). A recipe within the limit, or a simple forecaster (it
    fits nothing), is returned unchanged."""
    r = recipe
    if r.family not in LEARNED:
        return r
    for _ in range(16):
        cost = seconds(r, spec)
        share = min(0.9, limit / cost, memory_share(r, spec))
        if cost <= limit and share >= 0.9:
            break
        origins = _design(r, spec)[0] // spec.horizon
        series = min(spec.n_series, r.sample) if r.sample else spec.n_series
        if origins > MIN_HISTORY:
            r = replace(r, history=max(MIN_HISTORY, int(origins * share)))
        elif series > MIN_SERIES:
            r = replace(r, sample=max(MIN_SERIES, int(series * share)))
        else:
            break
    return r


def draft(spec: SeriesSpec, index: int, rng: random.Random) -> SeriesRecipe:
    """The ``index``-th draft: the families in turn, simple and learned alternately; past the
    first round, learned ones with other lags; sized to ``budget.DRAFT_SECONDS``."""
    order = families(spec)
    recipe = _start(order[index % len(order)])
    if index >= len(order) and recipe.family in LEARNED:
        recipe = replace(recipe, lags=rng.choice([n for n in LAGS if n != recipe.lags]))
    return sized(recipe, spec, budget.DRAFT_SECONDS)


# --- improve ---------------------------------------------------------------------------------

Move = RecipeMove[SeriesRecipe, SeriesSpec]


def _tune(r: SeriesRecipe, spec: SeriesSpec, rng: random.Random) -> tuple[SeriesRecipe, str] | None:
    moves = [m for m in TUNING.get(r.family, []) if m[0] in r.params]
    if not moves:
        return None
    name, factor, low, high = rng.choice(moves)
    value = r.params[name]
    new = min(max(value * factor, low), high)
    new = round(new) if isinstance(value, int) else round(new, 6)
    if new == value:
        return None
    params = {**r.params, name: new}
    if name == "learning_rate":  # a smaller step needs more of them
        params["max_iter"] = min(int(params.get("max_iter", 100) * 2), 1000)
    return replace(r, params=params), f"set {name} from {value} to {new}"


def _lags(r: SeriesRecipe, spec: SeriesSpec, rng: random.Random) -> tuple[SeriesRecipe, str]:
    lags = rng.choice([n for n in LAGS if n != r.lags])
    return replace(r, lags=lags), f"use the last {lags} values as features"


def _window(r: SeriesRecipe, spec: SeriesSpec, rng: random.Random) -> tuple[SeriesRecipe, str]:
    window = rng.choice(WINDOWS)
    if window in r.windows:
        return replace(r, windows=tuple(w for w in r.windows if w != window)), (
            f"drop the {window}-step rolling mean"
        )
    return replace(r, windows=tuple(sorted((*r.windows, window)))), (
        f"add a {window}-step rolling mean"
    )


def _toggle(r: SeriesRecipe, spec: SeriesSpec, rng: random.Random) -> tuple[SeriesRecipe, str]:
    name = rng.choice(["seasonal", "calendar", "per_horizon"])
    on = not getattr(r, name)
    why = {
        "seasonal": "the seasonal lag and last year's change as features",
        "calendar": "the target's season as a feature",
        "per_horizon": "one model per horizon" if on else "one model for every horizon",
    }[name]
    if name != "per_horizon":
        why = ("add " if on else "drop ") + why
    changes: dict[str, Any] = {name: on}
    return replace(r, **changes), why


def _history(r: SeriesRecipe, spec: SeriesSpec, rng: random.Random) -> tuple[SeriesRecipe, str]:
    history = rng.choice([h for h in HISTORIES if h != r.history])
    why = f"train on the latest {history} origins" if history else "train on every origin"
    return replace(r, history=history), why


def _switch(r: SeriesRecipe, spec: SeriesSpec, rng: random.Random) -> tuple[SeriesRecipe, str]:
    pool = LEARNED if learnable(spec) else SIMPLE
    family = rng.choice([f for f in pool if f != r.family])
    model = MODELS[family]
    new = replace(r, family=family, params=dict(model.params), per_horizon=model.per_horizon)
    return new, f"switch the forecaster from {r.family} to {family}"


def _grow(r: SeriesRecipe, spec: SeriesSpec, rng: random.Random) -> tuple[SeriesRecipe, str] | None:
    """Take back part of what sizing gave up: fit on twice the series, when the result still
    fits ``budget.GROW_SECONDS`` and memory (more origins are :func:`_history`'s)."""
    if not r.sample:
        return None
    series = 0 if r.sample * 2 >= spec.n_series else r.sample * 2
    new = replace(r, sample=series)
    if sized(new, spec, budget.GROW_SECONDS) != new:
        return None
    return new, f"fit on {series or 'all'} series"


def improve(parent: SeriesRecipe, spec: SeriesSpec, rng: random.Random) -> tuple[SeriesRecipe, str]:
    """Change one choice of ``parent``: the features and hyperparameters of a learned model;
    a simple forecaster's window, or a move to a learned model. A sized parent may fit on more
    series again (:func:`_grow`); a child beyond ``budget.GROW_SECONDS`` or memory is sized."""
    moves: list[tuple[Move, float]]
    if parent.family in LEARNED:
        moves = [(_tune, 0.3), (_lags, 0.15), (_window, 0.15), (_toggle, 0.2), (_history, 0.1),
                 (_switch, 0.1)]  # fmt: skip
    else:
        moves = [(_tune, 0.5), (_switch, 0.5)]
    if parent.sample:  # a sized recipe may grow back
        moves.append((_grow, 0.2))
    child, why = one_move(moves, parent, spec, rng, _switch)
    return sized(child, spec, budget.GROW_SECONDS), why


def crossover(
    fitter: SeriesRecipe, other: SeriesRecipe, spec: SeriesSpec
) -> tuple[SeriesRecipe, str] | None:
    """The fitter parent's model (family, hyperparameters, per-horizon fitting) and the other's
    features (lags, windows, seasonal and calendar features, history). ``None`` when the child
    would be the fitter parent: the same features, or a simple forecaster, which uses none."""
    if fitter.family not in LEARNED:
        return None
    child = replace(fitter, lags=other.lags, windows=other.windows, seasonal=other.seasonal,
                    calendar=other.calendar, history=other.history)  # fmt: skip
    child = sized(child, spec, budget.GROW_SECONDS)
    if child == fitter:
        return None
    windows = ", ".join(map(str, other.windows)) or "none"
    taken = f"{other.lags} lags, windows {windows}, history {other.history or 'all'}"
    return child, f"keep the {fitter.family} model, take the features ({taken}) from the other"


def debug(parent: SeriesRecipe | None, spec: SeriesSpec) -> tuple[SeriesRecipe, str]:
    """Fall back to the seasonal naive forecast, then to the last value: neither can fail."""
    if parent is None or parent.family != "seasonal_naive":
        return _start("seasonal_naive"), "fall back to the seasonal naive forecast"
    return _start("naive"), "fall back to repeating the last value, which cannot fail"


# --- ablate and refine -----------------------------------------------------------------------


def _refine_model(
    r: SeriesRecipe, spec: SeriesSpec, rng: random.Random
) -> tuple[SeriesRecipe, str]:
    """The model block's refine: one hyperparameter tuned, else another forecaster."""
    return _tune(r, spec, rng) or _switch(r, spec, rng)


def fitted_series(recipe: SeriesRecipe, spec: SeriesSpec) -> int:
    """The series a learned model fits on (a sized recipe samples them)."""
    return min(spec.n_series, recipe.sample) if recipe.sample else spec.n_series


def _more(values: tuple[int, ...], now: int) -> int | None:
    return next((v for v in values if v > now), None)


def _more_lags(
    r: SeriesRecipe, spec: SeriesSpec, rng: random.Random
) -> tuple[SeriesRecipe, str] | None:
    lags = _more(LAGS, r.lags)
    if lags is None or spec.length - spec.horizon - warmup(replace(r, lags=lags), spec) < 12:
        return None  # too few origins would be left to learn from
    return replace(r, lags=lags), f"use the last {lags} values as features instead of {r.lags}"


def _add_window(
    r: SeriesRecipe, spec: SeriesSpec, rng: random.Random
) -> tuple[SeriesRecipe, str] | None:
    window = next((w for w in WINDOWS if w not in r.windows), None)
    if window is None or spec.length - spec.horizon - max(window, spec.period) < 12:
        return None
    return replace(r, windows=tuple(sorted((*r.windows, window)))), (
        f"add a {window}-step rolling mean"
    )


def parts(r: SeriesRecipe, spec: SeriesSpec) -> list[Part[SeriesRecipe]]:
    """What an ablation of ``r`` takes out, one at a time (:mod:`parts`): the forecaster
    (replaced by the last value); of a learned one, its lags (the last 2 values only), its
    rolling means and its seasonal features; of the seasonal naive forecast plus last year's
    change, that change."""
    found: list[Part[SeriesRecipe]] = []
    if r.family != "naive":
        last = replace(r, family="naive", params={})
        found.append(Part("last value forecast", last, "the last value",
                          partial(_refine_model, r, spec), model=True))  # fmt: skip
    if r.family == "seasonal_drift":
        found.append(Part("no yearly change", replace(r, family="seasonal_naive"),
                          "the value a season earlier", nothing))  # fmt: skip
    if r.family not in LEARNED:
        return found
    if r.lags > LAGS[0]:
        found.append(Part("fewer lags", replace(r, lags=LAGS[0]), f"{LAGS[0] - 1} lags",
                          partial(_more_lags, r, spec)))  # fmt: skip
    if r.windows:
        found.append(Part("no rolling means", replace(r, windows=()), "no rolling means",
                          partial(_add_window, r, spec)))  # fmt: skip
    if r.seasonal:
        unseasonal = replace(r, seasonal=False)
        found.append(Part("no seasonal features", unseasonal, "no seasonal lag", nothing))
    return found
