"""Builds ``leaderboard.csv`` for the mini Ames house-prices competition from reference solutions.

Run from the repository root::

    .venv/bin/python -m tools.leaderboards.ames_house_prices

``tools.leaderboards.builder`` prepares the data into a temporary directory, runs every
reference solution below (trained on ``train.csv`` only), scores its ``SalePrice`` predictions
for ``test.csv`` with ``grade.py`` (RMSE of log prices, lower is better) and writes the
leaderboard best first. Everything is seeded, so a rerun writes the same file.

The entries span the field: constant prices, random guesses, one-feature rules (median price per
square foot times the living area, the neighbourhood's median price, ...), and scikit-learn
models from weak to strong (linear models, k-NN, trees, forests, boosting) on feature sets
growing from "overall quality" to everything, on the log price or the raw price, and on training
subsets of growing size.
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
    HistGradientBoostingRegressor,
    RandomForestRegressor,
)
from sklearn.impute import SimpleImputer
from sklearn.linear_model import Lasso, LinearRegression, Ridge
from sklearn.neighbors import KNeighborsRegressor
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.preprocessing import OneHotEncoder, OrdinalEncoder, StandardScaler
from sklearn.tree import DecisionTreeRegressor

from tools.leaderboards import builder
from tools.leaderboards.builder import Solution

HERE = builder.task_folder("ames-house-prices")  # where leaderboard.csv goes
SEED = 0
ID = "Id"
TARGET = "SalePrice"

# A predictor gets the training and the test frame and returns one price per test row.
Predictor = Callable[[pd.DataFrame, pd.DataFrame], np.ndarray]

# Columns that hold categories although some are written as numbers (MSSubClass is a dwelling
# type code); every other column is a number.
CATEGORICAL = [
    *["MSSubClass", "MSZoning", "Street", "Alley", "LotShape", "LandContour", "Utilities"],
    *["LotConfig", "LandSlope", "Neighborhood", "Condition1", "Condition2", "BldgType"],
    *["HouseStyle", "RoofStyle", "RoofMatl", "Exterior1st", "Exterior2nd", "MasVnrType"],
    *["ExterQual", "ExterCond", "Foundation", "BsmtQual", "BsmtCond", "BsmtExposure"],
    *["BsmtFinType1", "BsmtFinType2", "Heating", "HeatingQC", "CentralAir", "Electrical"],
    *["KitchenQual", "Functional", "FireplaceQu", "GarageType", "GarageFinish", "GarageQual"],
    *["GarageCond", "PavedDrive", "PoolQC", "Fence", "MiscFeature", "SaleType"],
    "SaleCondition",
]
KEY_NUMBERS = ["OverallQual", "GrLivArea", "YearBuilt", "TotalBsmtSF", "GarageCars"]
MORE_NUMBERS = [
    *["LotArea", "YearRemodAdd", "1stFlrSF", "2ndFlrSF", "FullBath", "HalfBath"],
    *["TotRmsAbvGrd", "Fireplaces", "GarageArea", "MasVnrArea", "BsmtFinSF1", "OverallCond"],
]
KEY_CATEGORIES = ["KitchenQual", "ExterQual", "BsmtQual", "CentralAir", "SaleCondition"]
# Nested feature sets, from the single strongest column to every column; filled in by
# ``feature_sets`` once the columns of ``train.csv`` are known.
SET_NAMES = [
    "quality",
    "quality+area",
    "quality+area+neighborhood",
    "5 key numbers+neighborhood",
    "17 numbers+neighborhood",
    "17 numbers+6 categories",
    "all features",
]


def feature_sets(train: pd.DataFrame) -> dict[str, list[str]]:
    everything = [c for c in train.columns if c not in (ID, TARGET)]
    return dict(
        zip(
            SET_NAMES,
            [
                ["OverallQual"],
                ["OverallQual", "GrLivArea"],
                ["OverallQual", "GrLivArea", "Neighborhood"],
                [*KEY_NUMBERS, "Neighborhood"],
                [*KEY_NUMBERS, *MORE_NUMBERS, "Neighborhood"],
                [*KEY_NUMBERS, *MORE_NUMBERS, "Neighborhood", *KEY_CATEGORIES],
                everything,
            ],
            strict=True,
        )
    )


# --- models ----------------------------------------------------------------------------------


def _preprocessor(columns: list[str], encoding: str) -> ColumnTransformer:
    """Numbers first (missing ones imputed with the median), then categories (a missing one is
    its own value). ``encoding``: "scaled" (standardised numbers, one-hot categories: linear
    models, k-NN) or "codes" (raw numbers, one integer code per category: trees, forests and
    boosting, much faster than hundreds of one-hot columns)."""
    numeric = [c for c in columns if c not in CATEGORICAL]
    categorical = [c for c in columns if c in CATEGORICAL]
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


def _native_boosting(columns: list[str], **params: Any) -> HistGradientBoostingRegressor:
    """Histogram gradient boosting told which of ``columns`` (as ordered by the "codes"
    preprocessor) are categorical."""
    numeric = [c for c in columns if c not in CATEGORICAL]
    mask = [False] * len(numeric) + [True] * (len(columns) - len(numeric))
    return HistGradientBoostingRegressor(categorical_features=mask, random_state=SEED, **params)


def model_predictor(
    make: Callable[[list[str]], Any],
    set_name: str,
    encoding: str,
    log_target: bool = True,
    rows: int | None = None,
) -> Predictor:
    """Fit ``make(columns)`` on the feature set ``set_name`` of the first ``rows`` training rows
    (all when None), on the log price (or the raw price), and predict test prices."""

    def predict(train: pd.DataFrame, test: pd.DataFrame) -> np.ndarray:
        columns = feature_sets(train)[set_name]
        fit_on = train if rows is None else train.iloc[:rows]
        target = fit_on[TARGET].to_numpy(dtype=float)
        pipeline = Pipeline([("prep", _preprocessor(columns, encoding)), ("model", make(columns))])
        pipeline.fit(_objects(fit_on[columns]), np.log(target) if log_target else target)
        raw = np.asarray(pipeline.predict(_objects(test[columns])), dtype=float)
        return plausible(np.exp(raw) if log_target else raw, train)

    return predict


def plausible(prices: np.ndarray, train: pd.DataFrame) -> np.ndarray:
    """Prices clipped to [half the cheapest, twice the dearest] training price: what anyone
    submitting a price does, and it keeps a wild linear extrapolation (or a negative price from
    a model of the raw price) from making the submission invalid."""
    low, high = float(train[TARGET].min()) / 2, float(train[TARGET].max()) * 2
    finite = np.nan_to_num(prices, nan=low, posinf=high, neginf=low)
    return np.asarray(np.clip(finite, low, high), dtype=float)


def _objects(frame: pd.DataFrame) -> pd.DataFrame:
    """Category columns as plain objects with NaN for missing (what the sklearn imputers
    expect); MSSubClass's numbers become strings."""
    out = frame.copy()
    for column in out.columns:
        if column in CATEGORICAL:
            values = out[column].astype("object")
            out[column] = values.where(values.notna(), np.nan).map(
                lambda v: v if isinstance(v, str) or v != v else str(v)
            )
    return out


def fixed(model: Any) -> Callable[[list[str]], Any]:
    """A model that does not depend on the columns, as a factory of fresh copies."""

    def make(columns: list[str]) -> Any:
        return clone(model)

    return make


def _models() -> dict[str, tuple[Callable[[list[str]], Any], str]]:
    """Model name -> (a function making the unfitted estimator for some columns, encoding)."""
    models: dict[str, tuple[Callable[[list[str]], Any], str]] = {
        "linear regression": (fixed(LinearRegression()), "scaled"),
    }
    for alpha in (1.0, 10.0, 100.0):
        models[f"ridge alpha={alpha:g}"] = (fixed(Ridge(alpha=alpha)), "scaled")
    models["lasso alpha=0.001"] = (fixed(Lasso(alpha=0.001, max_iter=20000)), "scaled")
    for k in (5, 20):
        models[f"k-NN k={k}"] = (fixed(KNeighborsRegressor(n_neighbors=k)), "scaled")
    for depth in (3, 6, None):
        models[f"decision tree depth={depth or 'unlimited'}"] = (
            fixed(DecisionTreeRegressor(max_depth=depth, random_state=SEED)),
            "codes",
        )
    forest = RandomForestRegressor(n_estimators=100, max_features=0.5, random_state=SEED)
    models["random forest 100 trees"] = (fixed(forest), "codes")
    extra = ExtraTreesRegressor(n_estimators=100, max_features=0.5, random_state=SEED)
    models["extra trees 100 trees"] = (fixed(extra), "codes")
    models["gradient boosting"] = (fixed(GradientBoostingRegressor(random_state=SEED)), "codes")
    models["hist gradient boosting"] = (_native_boosting, "codes")
    return models


def blend(*predictors: Predictor) -> Predictor:
    """The geometric mean of the members' prices (the mean of their log prices)."""

    def predict(train: pd.DataFrame, test: pd.DataFrame) -> np.ndarray:
        logs = [np.log(p(train, test)) for p in predictors]
        return np.asarray(np.exp(np.mean(logs, axis=0)))

    return predict


def remembered(predictor: Predictor) -> Predictor:
    """``predictor`` computing once per data set, so that a blend reuses its members' work."""
    memory: dict[tuple[int, int, int], np.ndarray] = {}

    def predict(train: pd.DataFrame, test: pd.DataFrame) -> np.ndarray:
        key = (len(train), len(test), int(test[ID].sum()))
        if key not in memory:
            memory[key] = predictor(train, test)
        return memory[key]

    return predict


QUALITY_SCORES = {"Ex": 5, "Gd": 4, "TA": 3, "Fa": 2, "Po": 1}
RATED = [
    *["ExterQual", "ExterCond", "BsmtQual", "BsmtCond", "HeatingQC", "KitchenQual"],
    *["FireplaceQu", "GarageQual", "GarageCond", "PoolQC"],
]


def engineered(frame: pd.DataFrame, scores: bool = True) -> pd.DataFrame:
    """A few columns a careful modeller adds: total floor area, house age at sale, years since
    remodelling, total bathrooms, logs of the skewed areas and (with ``scores``) each Ex..Po
    rating also as a number 5..1 (0 when the thing is absent), so that a linear model sees the
    ratings' order."""
    out = frame.copy()
    if scores:
        for column in RATED:
            out[f"{column}Score"] = out[column].map(QUALITY_SCORES).fillna(0).astype(float)
    out["TotalSF"] = out["GrLivArea"] + out["TotalBsmtSF"].fillna(0)
    out["Age"] = out["YrSold"] - out["YearBuilt"]
    out["SinceRemod"] = out["YrSold"] - out["YearRemodAdd"]
    out["Baths"] = (
        out["FullBath"]
        + 0.5 * out["HalfBath"]
        + out["BsmtFullBath"].fillna(0)
        + 0.5 * out["BsmtHalfBath"].fillna(0)
    )
    for column in ("GrLivArea", "LotArea", "1stFlrSF", "TotalSF"):
        out[f"Log{column}"] = np.log1p(out[column])
    return out


def careful_linear(model: Any, scores: bool = True) -> Predictor:
    """A linear ``model`` on the log price with the engineered columns."""

    def predict(train: pd.DataFrame, test: pd.DataFrame) -> np.ndarray:
        train, test = engineered(train, scores), engineered(test, scores)
        columns = [c for c in train.columns if c not in (ID, TARGET)]
        pipeline = Pipeline([("prep", _preprocessor(columns, "scaled")), ("model", clone(model))])
        pipeline.fit(_objects(train[columns]), np.log(train[TARGET].to_numpy(dtype=float)))
        return plausible(np.exp(pipeline.predict(_objects(test[columns]))), train)

    return predict


def tuned_boosting(**params: Any) -> Predictor:
    """Gradient boosting on the log price with the engineered columns and categories as codes."""

    def predict(train: pd.DataFrame, test: pd.DataFrame) -> np.ndarray:
        train, test = engineered(train), engineered(test)
        columns = [c for c in train.columns if c not in (ID, TARGET)]
        model = GradientBoostingRegressor(random_state=SEED, **params)
        pipeline = Pipeline([("prep", _preprocessor(columns, "codes")), ("model", model)])
        pipeline.fit(_objects(train[columns]), np.log(train[TARGET].to_numpy(dtype=float)))
        return plausible(np.exp(pipeline.predict(_objects(test[columns]))), train)

    return predict


# --- constants, random guesses and rules -------------------------------------------------------


def constant(price: float) -> Predictor:
    def predict(train: pd.DataFrame, test: pd.DataFrame) -> np.ndarray:
        return np.full(len(test), price, dtype=float)

    return predict


def statistic(name: str) -> Predictor:
    """One price for every house, a statistic of the training prices."""

    def predict(train: pd.DataFrame, test: pd.DataFrame) -> np.ndarray:
        prices = train[TARGET].astype(float)
        value = {
            "median": prices.median(),
            "mean": prices.mean(),
            "geometric mean": float(np.exp(np.log(prices).mean())),
            "minimum": prices.min(),
            "maximum": prices.max(),
        }[name]
        return np.full(len(test), float(value))

    return predict


def random_training_price(seed: int) -> Predictor:
    """Each test house gets the price of a training house drawn at random."""

    def predict(train: pd.DataFrame, test: pd.DataFrame) -> np.ndarray:
        rng = np.random.default_rng(seed)
        return rng.choice(train[TARGET].to_numpy(dtype=float), size=len(test))

    return predict


def noisy_median(seed: int, spread: float) -> Predictor:
    """The training median times a random factor exp(N(0, spread))."""

    def predict(train: pd.DataFrame, test: pd.DataFrame) -> np.ndarray:
        noise = np.random.default_rng(seed).normal(0.0, spread, size=len(test))
        return float(train[TARGET].median()) * np.exp(noise)

    return predict


def per_square_foot(area: Callable[[pd.DataFrame], pd.Series]) -> Predictor:
    """The training median of price per square foot of ``area``, times each test house's area."""

    def predict(train: pd.DataFrame, test: pd.DataFrame) -> np.ndarray:
        rate = (train[TARGET] / area(train).clip(lower=1)).median()
        return plausible(rate * area(test).fillna(area(train).median()).to_numpy(float), train)

    return predict


def group_median(column: str, per_foot: bool = False) -> Predictor:
    """The median training price (or price per living-area square foot, times the living area)
    among houses with the same ``column``; the overall median for unseen values."""

    def predict(train: pd.DataFrame, test: pd.DataFrame) -> np.ndarray:
        value = train[TARGET] / train["GrLivArea"] if per_foot else train[TARGET]
        groups = value.groupby(train[column].astype("object")).median()
        found = test[column].astype("object").map(groups).fillna(value.median())
        prices = found * test["GrLivArea"] if per_foot else found
        return plausible(prices.to_numpy(dtype=float), train)

    return predict


def _living(t: pd.DataFrame) -> pd.Series:
    return t["GrLivArea"].astype(float)


def _living_and_basement(t: pd.DataFrame) -> pd.Series:
    return t["GrLivArea"] + t["TotalBsmtSF"].fillna(0)


def _lot(t: pd.DataFrame) -> pd.Series:
    return t["LotArea"].astype(float)


# --- the entries -----------------------------------------------------------------------------


def entries() -> dict[str, Solution]:
    """Every reference solution, by team name."""
    found: dict[str, Predictor] = {}
    for name in ("median", "mean", "geometric mean", "minimum", "maximum"):
        found[f"constant: training {name}"] = statistic(name)
    for price in (100_000, 150_000, 200_000, 250_000, 300_000):
        found[f"constant: ${price:,}"] = constant(price)
    for seed in range(4):
        found[f"random training price seed={seed}"] = random_training_price(seed)
    for seed, spread in ((0, 0.1), (1, 0.2), (2, 0.4)):
        found[f"training median times random factor, sd {spread:g}, seed={seed}"] = noisy_median(
            seed, spread
        )
    found["rule: median price per sq ft x living area"] = per_square_foot(_living)
    found["rule: median price per sq ft x (living + basement area)"] = per_square_foot(
        _living_and_basement
    )
    found["rule: median price per sq ft of lot x lot area"] = per_square_foot(_lot)
    for column in ("Neighborhood", "OverallQual", "GarageCars", "HouseStyle", "YearBuilt"):
        found[f"rule: median price by {column}"] = group_median(column)
    for column in ("Neighborhood", "OverallQual"):
        found[f"rule: median price per sq ft by {column} x living area"] = group_median(
            column, per_foot=True
        )
    for set_name in SET_NAMES:
        for model_name, (make, encoding) in _models().items():
            found[f"{model_name} on log price, {set_name}"] = model_predictor(
                make, set_name, encoding
            )
    for set_name in ("quality+area", "5 key numbers+neighborhood", "all features"):
        found[f"linear regression on raw price, {set_name}"] = model_predictor(
            fixed(LinearRegression()), set_name, "scaled", log_target=False
        )
        found[f"random forest 100 trees on raw price, {set_name}"] = model_predictor(
            fixed(RandomForestRegressor(n_estimators=100, max_features=0.5, random_state=SEED)),
            set_name,
            "codes",
            log_target=False,
        )
    for rows in (100, 250, 500, 1000, 1500):
        found[f"ridge alpha=10 on log price, all features, first {rows} rows"] = model_predictor(
            fixed(Ridge(alpha=10.0)), "all features", "scaled", rows=rows
        )
        found[f"hist gradient boosting on log price, all features, first {rows} rows"] = (
            model_predictor(_native_boosting, "all features", "codes", rows=rows)
        )
    careful = "engineered columns"
    ridge = remembered(careful_linear(Ridge(alpha=10.0)))
    lasso = remembered(careful_linear(Lasso(alpha=0.0005, max_iter=50_000)))
    boosting = remembered(
        tuned_boosting(n_estimators=600, learning_rate=0.03, max_depth=3, subsample=0.8)
    )
    histogram = remembered(model_predictor(_native_boosting, "all features", "codes"))
    for alpha in (3.0, 30.0):
        found[f"careful ridge alpha={alpha:g} ({careful})"] = careful_linear(Ridge(alpha=alpha))
    found[f"careful ridge alpha=10 ({careful})"] = ridge
    found["careful ridge alpha=10 (engineered columns without rating scores)"] = careful_linear(
        Ridge(alpha=10.0), scores=False
    )
    found[f"careful lasso alpha=0.0005 ({careful})"] = lasso
    found[f"careful lasso alpha=0.002 ({careful})"] = careful_linear(
        Lasso(alpha=0.002, max_iter=50_000)
    )
    found["tuned gradient boosting (600 trees, lr 0.03, engineered columns)"] = boosting
    found["tuned gradient boosting (300 trees, lr 0.05, depth 4, engineered columns)"] = (
        tuned_boosting(n_estimators=300, learning_rate=0.05, max_depth=4, subsample=0.8)
    )
    found["blend: careful ridge + tuned gradient boosting"] = blend(ridge, boosting)
    found["blend: careful lasso + tuned gradient boosting"] = blend(lasso, boosting)
    found["blend: careful ridge + hist gradient boosting"] = blend(ridge, histogram)
    return {name: submission(predict) for name, predict in found.items()}


def submission(predict: Predictor) -> Solution:
    """A predictor as a leaderboard solution: reads the public data, returns the submission."""

    def solve(public: Path) -> pd.DataFrame:
        train, test = pd.read_csv(public / "train.csv"), pd.read_csv(public / "test.csv")
        return pd.DataFrame({ID: test[ID], TARGET: predict(train, test)})

    return solve


if __name__ == "__main__":
    # One thread: the build is several times faster on a busy 2-core machine, and the boosting
    # sums do not depend on the core count.
    sys.exit(builder.main(HERE, entries, lower_is_better=True, threads=1))
