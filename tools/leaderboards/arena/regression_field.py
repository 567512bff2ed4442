"""The field of reference solutions shared by the arena's tabular-regression leaderboards.

Each arena regression task (``tools/leaderboards/arena/<task>.py``) describes its data with a
:class:`RegressionTask`: the id and target columns, the log transform its metric works on, which
columns are categories, a function adding the columns a careful modeller derives from domain
sense, a ladder of feature sets from one raw column to everything engineered, and a few
rules of thumb. :func:`entries` turns that into more than a thousand solutions (the arena's
field rule: MLE-bench's usual team count, where bronze is the top 10 %):

- constants (median, mean, geometric mean, quantiles) and random guesses;
- the task's rules of thumb and the median target per value of each grouping column;
- every model of :func:`model_grid` (linear, robust linear, k-NN, trees, random forests, extra
  trees, gradient boosting, histogram boosting, each over a factorial grid of the settings that
  matter most for it) on every feature set, fitted on the transformed target;
- every model fitted on the untransformed target of the richest set, which the log metric
  punishes;
- learning curves (three models on the richest feature set, trained on the first 250 to 4,000
  rows);
- blends (geometric means) of a linear model and a tree ensemble.

The field is made from the data's domain alone, never tuned against any agent's scores. Every
model is seeded and single-threaded (the builder limits the thread pools), so a rebuild writes
the same leaderboard. Predictions are clipped to a plausible range (half the smallest to twice
the largest training target) so that no entry is invalid.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from itertools import product
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from sklearn.base import clone
from sklearn.compose import ColumnTransformer
from sklearn.ensemble import (
    ExtraTreesRegressor,
    GradientBoostingRegressor,
    HistGradientBoostingRegressor,
    RandomForestRegressor,
)
from sklearn.impute import SimpleImputer
from sklearn.linear_model import ElasticNet, HuberRegressor, Lasso, LinearRegression, Ridge
from sklearn.neighbors import KNeighborsRegressor
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.preprocessing import OneHotEncoder, OrdinalEncoder, StandardScaler
from sklearn.tree import DecisionTreeRegressor

from tools.leaderboards.builder import Solution

SEED = 0
# A predictor gets the training and the test frame (as read from the public files) and returns
# one target value per test row.
Predictor = Callable[[pd.DataFrame, pd.DataFrame], np.ndarray]
TRANSFORMS: dict[str, tuple[Callable[[Any], Any], Callable[[Any], Any]]] = {
    "log": (np.log, np.exp),
    "log1p": (np.log1p, np.expm1),
}
LEARNING_CURVE_ROWS = (250, 500, 1000, 2000, 4000)


@dataclass(frozen=True)
class RegressionTask:
    """What the field needs to know about one task's data.

    ``engineer`` returns a copy of a public frame with the derived columns added (it must not
    look at the target); ``feature_sets`` name columns of that copy, from the fewest to the
    most informative; ``categorical`` lists every column (raw or derived) that holds categories.
    ``groups`` are the columns whose per-value median target is a rule of thumb (a number column
    is cut into quintiles first); ``rules`` are the task's own rules of thumb.
    """

    id: str
    target: str
    transform: str
    categorical: frozenset[str]
    engineer: Callable[[pd.DataFrame], pd.DataFrame]
    feature_sets: Mapping[str, list[str]]
    groups: tuple[str, ...] = ()
    rules: Mapping[str, Predictor] = field(default_factory=dict)

    @property
    def richest(self) -> str:
        """The last (most informative) feature set."""
        return list(self.feature_sets)[-1]


# --- shared helpers -----------------------------------------------------------------------------


def plausible(values: np.ndarray, train: pd.DataFrame, task: RegressionTask) -> np.ndarray:
    """Predictions clipped to [half the smallest, twice the largest] training target (and at or
    above 0): what anyone submitting does, and it keeps a wild extrapolation valid."""
    y = train[task.target].to_numpy(dtype=float)
    low, high = max(float(y.min()) / 2, 0.0), float(y.max()) * 2
    finite = np.nan_to_num(np.asarray(values, dtype=float), nan=low, posinf=high, neginf=low)
    return np.asarray(np.clip(finite, low, high), dtype=float)


def remembered(predictor: Predictor) -> Predictor:
    """``predictor`` computing once per data set, so a blend reuses its members' work."""
    memory: dict[tuple[int, int, float], np.ndarray] = {}

    def predict(train: pd.DataFrame, test: pd.DataFrame) -> np.ndarray:
        key = (len(train), len(test), float(pd.util.hash_pandas_object(test).sum()))
        if key not in memory:
            memory[key] = predictor(train, test)
        return memory[key]

    return predict


def submission(task: RegressionTask, predict: Predictor) -> Solution:
    """A predictor as a leaderboard solution: reads the public data, returns the submission."""

    def solve(public: Path) -> pd.DataFrame:
        train, test = pd.read_csv(public / "train.csv"), pd.read_csv(public / "test.csv")
        return pd.DataFrame({task.id: test[task.id], task.target: predict(train, test)})

    return solve


# --- constants and rules ------------------------------------------------------------------------


def statistic(task: RegressionTask, name: str) -> Predictor:
    """One training statistic for every row: median, mean, geometric mean or a quantile."""

    def predict(train: pd.DataFrame, test: pd.DataFrame) -> np.ndarray:
        y = train[task.target].to_numpy(dtype=float)
        forward, inverse = TRANSFORMS[task.transform]
        values = {
            "median": float(np.median(y)),
            "mean": float(y.mean()),
            "geometric mean": float(inverse(forward(y).mean())),
            "25th percentile": float(np.quantile(y, 0.25)),
            "75th percentile": float(np.quantile(y, 0.75)),
            "minimum": float(y.min()),
            "maximum": float(y.max()),
        }
        return plausible(np.full(len(test), values[name]), train, task)

    return predict


def random_training_target(task: RegressionTask, seed: int) -> Predictor:
    """A training target drawn at random for each row: a guess from the right distribution."""

    def predict(train: pd.DataFrame, test: pd.DataFrame) -> np.ndarray:
        rng = np.random.default_rng(seed)
        return plausible(rng.choice(train[task.target].to_numpy(float), len(test)), train, task)

    return predict


def noisy_median(task: RegressionTask, seed: int, spread: float) -> Predictor:
    """The training median times a random log-normal factor of sd ``spread``."""

    def predict(train: pd.DataFrame, test: pd.DataFrame) -> np.ndarray:
        factor = np.exp(np.random.default_rng(seed).normal(0, spread, len(test)))
        return plausible(float(train[task.target].median()) * factor, train, task)

    return predict


def group_median(task: RegressionTask, column: str) -> Predictor:
    """The median training target among rows with the same value of ``column`` (a number column
    cut at its training quintiles); the overall median for an unseen or missing value."""

    def predict(train: pd.DataFrame, test: pd.DataFrame) -> np.ndarray:
        a, b = task.engineer(train)[column], task.engineer(test)[column]
        if column not in task.categorical and pd.api.types.is_numeric_dtype(a):
            edges = np.unique(np.nanquantile(a.to_numpy(float), [0.2, 0.4, 0.6, 0.8]))
            a = pd.Series(np.digitize(a.to_numpy(float), edges), index=a.index).where(a.notna())
            b = pd.Series(np.digitize(b.to_numpy(float), edges), index=b.index).where(b.notna())
        y = train[task.target]
        medians = y.groupby(a.astype("object")).median()
        found = b.astype("object").map(medians).fillna(float(y.median()))
        return plausible(found.to_numpy(dtype=float), train, task)

    return predict


# --- models -------------------------------------------------------------------------------------

# A model: a factory of the unfitted estimator, and the encoding its preprocessing uses.
Model = tuple[Callable[[], Any], str]


def _preprocessor(task: RegressionTask, columns: list[str], encoding: str) -> ColumnTransformer:
    """Numbers first (a missing one imputed with the median), then categories (a missing one is
    a value of its own). ``encoding``: "scaled" (standardised numbers, one-hot categories: linear
    models and k-NN) or "codes" (raw numbers, one integer per category: trees)."""
    numeric = [c for c in columns if c not in task.categorical]
    categorical = [c for c in columns if c in task.categorical]
    parts: list[tuple[str, Any, list[str]]] = []
    if numeric:
        steps: list[Any] = [SimpleImputer(strategy="median", keep_empty_features=True)]
        if encoding == "scaled":
            steps.append(StandardScaler())
        parts.append(("num", make_pipeline(*steps), numeric))
    if categorical:
        encoder: Any = (
            OneHotEncoder(handle_unknown="ignore", sparse_output=False)
            if encoding == "scaled"
            else OrdinalEncoder(handle_unknown="use_encoded_value", unknown_value=-1)
        )
        imputer = SimpleImputer(strategy="constant", fill_value="missing", keep_empty_features=True)
        parts.append(("cat", make_pipeline(imputer, encoder), categorical))
    return ColumnTransformer(parts)


def _as_objects(frame: pd.DataFrame, task: RegressionTask) -> pd.DataFrame:
    """Category columns as strings with NaN for missing, what the imputers expect."""
    out = frame.copy()
    for column in out.columns:
        if column in task.categorical:
            values = out[column]
            out[column] = values.astype(str).where(values.notna(), np.nan).astype("object")
    return out


def model_predictor(
    task: RegressionTask,
    model: Model,
    set_name: str,
    transformed: bool = True,
    rows: int | None = None,
) -> Predictor:
    """Fit ``model`` on the feature set ``set_name`` of the first ``rows`` training rows (all
    when None), on the transformed target (or the raw one), and predict the test rows."""
    make, encoding = model

    def predict(train: pd.DataFrame, test: pd.DataFrame) -> np.ndarray:
        columns = list(task.feature_sets[set_name])
        fit_on = train if rows is None else train.iloc[:rows]
        forward, inverse = TRANSFORMS[task.transform]
        y = fit_on[task.target].to_numpy(dtype=float)
        pipeline = Pipeline([("prep", _preprocessor(task, columns, encoding)), ("model", make())])
        x_train = _as_objects(task.engineer(fit_on)[columns], task)
        pipeline.fit(x_train, forward(y) if transformed else y)
        raw = np.asarray(
            pipeline.predict(_as_objects(task.engineer(test)[columns], task)), dtype=float
        )
        if transformed:
            raw = inverse(np.clip(raw, -50.0, 50.0))
        return plausible(raw, train, task)

    return predict


def fixed(estimator: Any) -> Callable[[], Any]:
    """A factory of fresh copies of ``estimator``."""
    return lambda: clone(estimator)


def model_grid() -> dict[str, Model]:
    """Model name -> (factory, encoding): each family crossed over the two or three settings
    that matter most for it, from the scikit-learn defaults to what a careful modeller tries.

    The arena's field rule: at least 1000 entries (MLE-bench's usual team count), reached by
    factorial grids of the same families; values chosen from modelling sense, never from the
    baseline's scores.
    """
    grid: dict[str, Model] = {"linear regression": (fixed(LinearRegression()), "scaled")}
    for alpha in (0.01, 0.1, 1.0, 10.0, 100.0, 1000.0):
        grid[f"ridge alpha={alpha:g}"] = (fixed(Ridge(alpha=alpha)), "scaled")
    for alpha in (0.0001, 0.001, 0.01, 0.1):
        grid[f"lasso alpha={alpha:g}"] = (fixed(Lasso(alpha=alpha, max_iter=20_000)), "scaled")
    for alpha, ratio in product((0.001, 0.01), (0.2, 0.5, 0.8)):
        net = ElasticNet(alpha=alpha, l1_ratio=ratio, max_iter=20_000)
        grid[f"elastic net alpha={alpha:g} l1_ratio={ratio:g}"] = (fixed(net), "scaled")
    for epsilon in (1.1, 1.35, 2.0):
        huber = HuberRegressor(epsilon=epsilon, max_iter=1000)
        grid[f"huber regression epsilon={epsilon:g}"] = (fixed(huber), "scaled")
    for k, weights in product((3, 5, 10, 15, 25, 40, 80), ("uniform", "distance")):
        name = f"k-NN k={k}" + (" distance-weighted" if weights == "distance" else "")
        grid[name] = (fixed(KNeighborsRegressor(n_neighbors=k, weights=weights)), "scaled")
    for depth, leaf in product((3, 4, 6, 8, 12, None), (1, 5, 20)):
        tree = DecisionTreeRegressor(max_depth=depth, min_samples_leaf=leaf, random_state=SEED)
        grid[f"decision tree depth={depth} min leaf={leaf}"] = (fixed(tree), "codes")
    for leaf, share in product((1, 3, 10), (0.33, 0.66, 1.0)):
        forest = RandomForestRegressor(
            n_estimators=100, min_samples_leaf=leaf, max_features=share, random_state=SEED
        )
        grid[f"random forest leaf={leaf} features={share:g}"] = (fixed(forest), "codes")
        extra = ExtraTreesRegressor(
            n_estimators=100, min_samples_leaf=leaf, max_features=share, random_state=SEED
        )
        grid[f"extra trees leaf={leaf} features={share:g}"] = (fixed(extra), "codes")
    schedules = ((100, 0.1), (300, 0.1), (300, 0.05), (600, 0.05))
    for (trees, rate), depth in product(schedules, (2, 3, 4, 5)):
        boosting = GradientBoostingRegressor(
            n_estimators=trees,
            learning_rate=rate,
            max_depth=depth,
            subsample=0.8 if trees > 100 else 1.0,
            random_state=SEED,
        )
        grid[f"gradient boosting {trees} trees lr={rate:g} depth={depth}"] = (
            fixed(boosting),
            "codes",
        )
    for rate, leaves, rounds, l2 in product((0.03, 0.1, 0.3), (15, 31, 63), (100, 300), (0.0, 1.0)):
        histogram = HistGradientBoostingRegressor(
            learning_rate=rate,
            max_leaf_nodes=leaves,
            max_iter=rounds,
            l2_regularization=l2,
            early_stopping=False,
            random_state=SEED,
        )
        name = f"histogram boosting lr={rate:g} leaves={leaves} rounds={rounds} l2={l2:g}"
        grid[name] = (fixed(histogram), "codes")
    return grid


CURVE_MODELS = (
    "ridge alpha=1",
    "random forest leaf=1 features=0.33",
    "gradient boosting 100 trees lr=0.1 depth=3",
)
BLENDS = (
    ("ridge alpha=1", "gradient boosting 300 trees lr=0.05 depth=5"),
    ("ridge alpha=1", "random forest leaf=1 features=0.33"),
    ("k-NN k=15 distance-weighted", "gradient boosting 600 trees lr=0.05 depth=4"),
    ("random forest leaf=1 features=0.33", "gradient boosting 600 trees lr=0.05 depth=4"),
)


def blend(task: RegressionTask, first: Predictor, second: Predictor) -> Predictor:
    """The mean of two predictions on the transformed scale (a geometric mean for logs)."""
    forward, inverse = TRANSFORMS[task.transform]

    def predict(train: pd.DataFrame, test: pd.DataFrame) -> np.ndarray:
        mean = (forward(first(train, test)) + forward(second(train, test))) / 2
        return plausible(inverse(mean), train, task)

    return predict


# --- the entries --------------------------------------------------------------------------------


def entries(task: RegressionTask) -> dict[str, Solution]:
    """Every reference solution of ``task``'s field, by team name."""
    found: dict[str, Predictor] = {}
    for name in ("median", "mean", "geometric mean", "25th percentile", "75th percentile"):
        found[f"constant: training {name}"] = statistic(task, name)
    for name in ("minimum", "maximum"):
        found[f"constant: training {name}"] = statistic(task, name)
    for seed in range(4):
        found[f"random training {task.target} seed={seed}"] = random_training_target(task, seed)
    for seed, spread in ((0, 0.1), (1, 0.3), (2, 0.6)):
        found[f"training median times random factor, sd {spread:g}, seed={seed}"] = noisy_median(
            task, seed, spread
        )
    for column in task.groups:
        found[f"rule: median {task.target} by {column}"] = group_median(task, column)
    for name, rule in task.rules.items():
        found[f"rule: {name}"] = rule
    grid = model_grid()
    kept: dict[str, Predictor] = {}
    for set_name in task.feature_sets:
        for model_name, model in grid.items():
            predictor = model_predictor(task, model, set_name)
            if set_name == task.richest:
                predictor = kept[model_name] = remembered(predictor)
            found[f"{model_name}, {set_name}"] = predictor
    for model_name, model in grid.items():  # the target transform is a setting too
        found[f"{model_name} on raw {task.target}, {task.richest}"] = model_predictor(
            task, model, task.richest, transformed=False
        )
    for rows in LEARNING_CURVE_ROWS:
        for model_name in CURVE_MODELS:
            found[f"{model_name}, {task.richest}, first {rows} rows"] = model_predictor(
                task, grid[model_name], task.richest, rows=rows
            )
    for first, second in BLENDS:
        found[f"blend: {first} + {second}, {task.richest}"] = blend(task, kept[first], kept[second])
    return {name: submission(task, predict) for name, predict in found.items()}
