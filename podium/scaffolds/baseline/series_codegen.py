"""Writes a complete forecasting solution from a series recipe.

The script pivots the training table to one row per series and one column per date (a missing
date takes its neighbour's value), defines ``forecast(history, horizon)`` — the recipe's simple
forecaster, or a direct multi-horizon regression fitted on windows slid over ``history`` —
validates by forecasting the last ``horizon`` training steps from the steps before them
(``VALIDATION_METRIC`` is the task's metric on that hold-out, e.g. sMAPE in percent), then
forecasts the test dates from the whole history and writes one value per test id.
"""

from __future__ import annotations

from podium.scaffolds.baseline.layouts import read_lines, submission_lines
from podium.scaffolds.baseline.metrics import METRIC_IMPORTS, metric_source
from podium.scaffolds.baseline.recipe_line import recipe_line
from podium.scaffolds.baseline.series_recipe import LEARNED, MODELS, SeriesRecipe, warmup
from podium.scaffolds.baseline.specs import SeriesSpec

LEARNED_ROWS = """            X, base, level = design(history, origin, h)
            rows[h][0].append(X)
            rows[h][1].append((history[:, origin + h] - base) / level)"""
TREES = ("hist_gradient_boosting", "random_forest")  # they get the series' number as a feature

SIMPLE_FORECASTS = {
    "naive": "history[:, origin]",
    "seasonal_naive": "history[:, seasonal(origin, h)]",
    "drift": "history[:, origin] + h * (history[:, origin] - history[:, origin - span]) / span",
    "seasonal_drift": "history[:, seasonal(origin, h)] + growth * int(np.ceil(h / PERIOD))",
}

LEARNED_FORECAST = '''def design(history, origin, h):
    """Features of every series for the forecast of step origin + h, the origin's value and
    the series' level (the mean size of its last season): every feature is a difference from
    the origin's value, in levels, so series of any scale share one model."""
    recent = history[:, max(origin - PERIOD + 1, 0) : origin + 1]
    level = np.maximum(np.abs(recent).mean(axis=1), 1e-9)
    base = history[:, origin]
    cols = [(history[:, origin - lag] - base) / level for lag in range(1, LAGS)]
    cols += [(history[:, origin - w + 1 : origin + 1].mean(axis=1) - base) / level for w in WINDOWS]
    if SEASONAL:
        cols.append((history[:, seasonal(origin, h)] - base) / level)
        cols.append((base - history[:, origin - PERIOD]) / level)  # last year's change
    if CALENDAR and PERIOD > 1:
        cols += [np.full(len(base), float((origin + h) % PERIOD == k)) for k in range(PERIOD)]
    if SERIES_ID:
        cols.append(np.arange(len(base), dtype=float))
    cols.append(np.full(len(base), float(h)))
    return np.column_stack(cols), base, level


def forecast(history, horizon):
    """Direct multi-horizon regression: rows from every origin slid over the history (the
    latest HISTORY of them), target = change from the origin's value, in levels."""
    last = history.shape[1] - 1
    first = max(WARMUP, last - HISTORY) if HISTORY else WARMUP
    rows = {h: ([], []) for h in range(1, horizon + 1)}
    for origin in range(first, last):
        for h in range(1, min(horizon, last - origin) + 1):
            X, base, level = design(history, origin, h)
            rows[h][0].append(X)
            rows[h][1].append((history[:, origin + h] - base) / level)
    groups = [[h] for h in rows] if PER_HORIZON else [list(rows)]
    out = np.empty((history.shape[0], horizon))
    for hs in groups:
        if not any(rows[h][0] for h in hs):
            raise ValueError(f"history of {last + 1} steps is too short to learn horizons {hs}")
        X = np.vstack([x for h in hs for x in rows[h][0]])
        y = np.concatenate([t for h in hs for t in rows[h][1]])
        model = make_model().fit(X, y)
        for h in hs:
            X_new, base, level = design(history, last, h)
            out[:, h - 1] = base + model.predict(X_new) * level
    return out'''
SAMPLED_ROWS = """            X, base, level = design(fit, origin, h)
            rows[h][0].append(X)
            rows[h][1].append((fit[:, origin + h] - base) / level)"""
SAMPLED_FIT = """    last = history.shape[1] - 1
    fit = history[np.random.default_rng(0).permutation(len(history))[:SAMPLE]]  # fitted series
"""


def _sampled(source: str) -> str:
    """``LEARNED_FORECAST`` fitting on ``SAMPLE`` series drawn at random, forecasting every
    one (a sized recipe)."""
    source = source.replace("    last = history.shape[1] - 1\n", SAMPLED_FIT, 1)
    return source.replace(LEARNED_ROWS, SAMPLED_ROWS, 1)


def describe(spec: SeriesSpec, recipe: SeriesRecipe) -> str:
    """The plan's sentence: what the generated solution does."""
    window = f"over {spec.length} steps of {spec.n_series} series"
    validation = f"validated on the last {spec.horizon} training steps with {spec.scoring}"
    if recipe.family not in LEARNED:
        params = ", ".join(f"{k}={v}" for k, v in sorted(recipe.params.items()))
        name = recipe.family.replace("_", " ") + (f" ({params})" if params else "")
        return (
            f"{name} forecast of {spec.target} {spec.horizon} steps ahead {window}; {validation}."
        )
    params = ", ".join(f"{k}={v}" for k, v in sorted(recipe.params.items()) if k != "random_state")
    features = [f"{recipe.lags} lags", f"rolling means {list(recipe.windows)}"]
    features += ["seasonal lag and yearly change"] if recipe.seasonal else []
    features += [f"season of {spec.period}"] if recipe.calendar and spec.period > 1 else []
    fitting = "one model per horizon" if recipe.per_horizon else "one model, horizon as a feature"
    history = f"the latest {recipe.history} origins" if recipe.history else "every origin"
    if recipe.sample:
        history += f" of {recipe.sample} sampled series"
    return (
        f"{MODELS[recipe.family].estimator} ({params}) direct multi-horizon regression of "
        f"{spec.target} {spec.horizon} steps ahead {window}: {', '.join(features)}, scaled by "
        f"each series' level; {fitting}, trained on {history}; {validation}."
    )


def _forecaster(spec: SeriesSpec, recipe: SeriesRecipe) -> tuple[str, str]:
    """The model's import line and the constants and functions that define ``forecast``."""
    if recipe.family not in LEARNED:
        expression = SIMPLE_FORECASTS[recipe.family]
        setup = []
        if recipe.family == "drift":
            setup.append(f"span = max(1, min({recipe.params['window']}, origin))")
        if recipe.family == "seasonal_drift":
            setup.append(
                "growth = history[:, origin] - history[:, origin - PERIOD] "
                "if origin >= PERIOD else 0.0"
            )
        lines = "".join(f"    {line}\n" for line in setup)
        source = f'''def forecast(history, horizon):
    """The {recipe.family.replace("_", " ")} forecast from the last step of ``history``."""
    origin = history.shape[1] - 1
{lines}    return np.column_stack([{expression} for h in range(1, horizon + 1)])'''
        return "", source
    model = MODELS[recipe.family]
    params = ", ".join(f"{k}={v!r}" for k, v in sorted(recipe.params.items()))
    estimator = f"{model.estimator}({params})"
    imports = f"from {model.module} import {model.estimator}\n"
    if recipe.family not in TREES:  # a linear model wants features on one scale
        estimator = f"make_pipeline(StandardScaler(), {estimator})"
        imports += "from sklearn.pipeline import make_pipeline\n"
        imports += "from sklearn.preprocessing import StandardScaler\n"
    constants = (
        f"LAGS, WINDOWS, HISTORY = {recipe.lags}, {list(recipe.windows)!r}, {recipe.history}\n"
        f"SEASONAL, CALENDAR, PER_HORIZON = {recipe.seasonal}, {recipe.calendar}, "
        f"{recipe.per_horizon}\n"
        f"SERIES_ID = {recipe.family in TREES and not recipe.sample}"
        "  # trees can tell series apart by number\n"
        f"WARMUP = {warmup(recipe, spec)}  # the first origin with every feature defined\n"
        + (
            f"SAMPLE = {recipe.sample}  # series to fit on, within the budget\n"
            if recipe.sample
            else ""
        )
        + "\n\n"
        f"def make_model():\n    return {estimator}\n\n\n"
    )
    return imports, constants + (_sampled(LEARNED_FORECAST) if recipe.sample else LEARNED_FORECAST)


def render(spec: SeriesSpec, recipe: SeriesRecipe) -> str:
    imports, forecaster = _forecaster(spec, recipe)
    series = spec.series or "__series"
    single = "" if spec.series else f"train[{series!r}], test[{series!r}] = 0, 0  # one series\n"
    clip = "np.clip(f(history, horizon), 0, None)" if spec.nonnegative else "f(history, horizon)"
    standard = f"submission = pd.DataFrame({{ID: test[ID], {spec.target!r}: values}})"
    submission = submission_lines(spec.layout, "value", "values", standard)
    return f"""{recipe_line("series", recipe.fields())}
import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits
{imports}{METRIC_IMPORTS}

threadpool_limits(1)  # many small fits: threads only contend (and thrash on a busy machine)
{read_lines(spec)}
ID, DATE, SERIES, TARGET = {spec.id_col!r}, {spec.date!r}, {series!r}, {spec.target!r}
PERIOD = {spec.period}  # steps in one season
{single}train[DATE], test[DATE] = pd.to_datetime(train[DATE]), pd.to_datetime(test[DATE])
wide = train.pivot_table(index=SERIES, columns=DATE, values=TARGET, aggfunc="mean")
wide = wide.sort_index(axis=1).ffill(axis=1).bfill(axis=1)  # a missing step: its neighbour's
Y = wide.to_numpy(dtype=float)  # one row per series, one column per step
steps = {{d: i for i, d in enumerate(sorted(set(wide.columns) | set(test[DATE])))}}
HORIZON = max(steps[d] for d in test[DATE]) - (Y.shape[1] - 1)


def seasonal(origin, h):
    \"\"\"The step one or more seasons before origin + h, at or before the origin.\"\"\"
    step = origin + h - PERIOD * int(np.ceil(h / PERIOD))
    return step if step >= 0 else origin


{metric_source(spec.scoring, "value")}


{forecaster}


def clipped(f, history, horizon):
    return {clip}


cut = Y.shape[1] - HORIZON  # validation: forecast the last HORIZON steps from those before
held_out = clipped(forecast, Y[:, :cut], HORIZON)
print(f"VALIDATION_METRIC: {{metric(Y[:, cut:].ravel(), held_out.ravel()):.6f}}")

future = clipped(forecast, Y, HORIZON)
row = wide.index.get_indexer(test[SERIES])
h = test[DATE].map(steps).to_numpy() - Y.shape[1]
values = np.where(row >= 0, future[row, h], np.nanmean(Y))  # an unseen series: the mean
{submission}
submission.to_csv("./submission/submission.csv", index=False)
"""
