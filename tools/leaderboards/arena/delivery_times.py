"""Builds ``leaderboard.csv`` for the arena delivery-times competition from reference solutions.

Run from the repository root::

    .venv/bin/python -m tools.leaderboards.arena.delivery_times

The field is :mod:`tools.leaderboards.arena.regression_field`'s (constants, rules of thumb, a
grid of model families and settings over a ladder of feature sets, raw-target models, learning
curves, blends), on the data as a dispatcher sees it: the ride (distance, vehicle, zone, time,
weather), the order (items, value, floor), the courier's tenure and the kitchen's estimate.
Its engineered columns are what such a modeller computes without knowing the generator: the
number of items, whether the kitchen gave an estimate, rush hours and weekends, logs of the
skewed numbers and a nominal ride time. Scored with ``grade.py`` (RMSLE, lower is better).
"""

from __future__ import annotations

import sys

import numpy as np
import pandas as pd

from tools.leaderboards import builder
from tools.leaderboards.arena.regression_field import Predictor, RegressionTask, plausible
from tools.leaderboards.arena.regression_field import entries as field_entries
from tools.leaderboards.builder import Solution

HERE = builder.task_folder("delivery-times", "arena")
ID, TARGET = "id", "delivery_minutes"
CATEGORIES = ["zone", "vehicle", "weather", "day"]
ITEMS = ["items_small", "items_medium", "items_large", "items_drinks"]
RAW = [
    "zone",
    "distance_km",
    "vehicle",
    "weather",
    "day",
    "hour",
    *ITEMS,
    "floor",
    "courier_tenure_days",
    "order_value",
    "prep_estimate_min",
]
# Typical city speeds (km/h) a dispatcher would assume for each vehicle.
NOMINAL_SPEED = {"bicycle": 15.0, "scooter": 25.0, "car": 30.0, "van": 25.0}
RUSH_HOURS = (7, 8, 17, 18, 19)


def engineer(frame: pd.DataFrame) -> pd.DataFrame:
    """The columns a careful modeller adds: items in total, whether the kitchen gave no
    estimate (the estimate itself is then filled with the median by the models' imputer),
    weekday rush hours and weekends, logs of the skewed numbers, and a nominal ride time
    (distance at the vehicle's typical speed)."""
    out = frame.copy()
    out["total_items"] = out[ITEMS].sum(axis=1)
    out["no_prep_estimate"] = out["prep_estimate_min"].isna().astype(int)
    weekend = out["day"].isin(["Sat", "Sun"])
    out["weekend"] = weekend.astype(int)
    out["rush_hour"] = (out["hour"].isin(RUSH_HOURS) & ~weekend).astype(int)
    out["two_wheels"] = out["vehicle"].isin(["bicycle", "scooter"]).astype(int)
    out["wet_or_cold"] = out["weather"].isin(["rain", "snow", "fog"]).astype(int)
    for column in ("distance_km", "floor", "courier_tenure_days", "order_value"):
        out[f"log_{column}"] = np.log1p(out[column])
    speed = out["vehicle"].map(NOMINAL_SPEED).fillna(25.0)
    out["nominal_ride_min"] = 60 * out["distance_km"] / speed
    return out


ENGINEERED = [
    "total_items",
    "no_prep_estimate",
    "weekend",
    "rush_hour",
    "two_wheels",
    "wet_or_cold",
    "log_distance_km",
    "log_floor",
    "log_courier_tenure_days",
    "log_order_value",
    "nominal_ride_min",
]
FEATURE_SETS = {
    "distance": ["distance_km"],
    "distance + vehicle": ["distance_km", "vehicle"],
    "the ride": ["distance_km", "vehicle", "zone", "hour", "day", "weather"],
    "the ride + the kitchen's estimate": [
        "distance_km",
        "vehicle",
        "zone",
        "hour",
        "day",
        "weather",
        "prep_estimate_min",
    ],
    "all raw columns": RAW,
    "engineered ride, order and kitchen": [
        "log_distance_km",
        "nominal_ride_min",
        "vehicle",
        "zone",
        "rush_hour",
        "weekend",
        "wet_or_cold",
        "two_wheels",
        "total_items",
        "items_large",
        "log_floor",
        "log_courier_tenure_days",
        "prep_estimate_min",
        "no_prep_estimate",
    ],
    "everything, engineered": [*RAW, *ENGINEERED],
}


def line_through_distance(train: pd.DataFrame, test: pd.DataFrame) -> np.ndarray:
    """Time as a straight line in distance, fitted by least squares."""
    slope, intercept = np.polyfit(train["distance_km"], train[TARGET], 1)
    return plausible(intercept + slope * test["distance_km"].to_numpy(float), train, TASK)


def dispatcher_rule(train: pd.DataFrame, test: pd.DataFrame) -> np.ndarray:
    """The kitchen's estimate (the training median when it gave none) plus the ride at the
    vehicle's typical speed plus a minute per item."""
    estimate = test["prep_estimate_min"].fillna(float(train["prep_estimate_min"].median()))
    ride = 60 * test["distance_km"] / test["vehicle"].map(NOMINAL_SPEED).fillna(25.0)
    values = estimate + ride + test[ITEMS].sum(axis=1)
    return plausible(values.to_numpy(dtype=float), train, TASK)


def median_by_vehicle_and_distance(train: pd.DataFrame, test: pd.DataFrame) -> np.ndarray:
    """The median time among training orders with the same vehicle and distance quintile."""
    edges = np.quantile(train["distance_km"], [0.2, 0.4, 0.6, 0.8])

    def keys(frame: pd.DataFrame) -> pd.Series:
        bins = np.digitize(frame["distance_km"].to_numpy(float), edges).astype(str)
        return frame["vehicle"].astype(str) + "/" + pd.Series(bins, index=frame.index)

    medians = train[TARGET].groupby(keys(train)).median()
    found = keys(test).map(medians).fillna(float(train[TARGET].median()))
    return plausible(found.to_numpy(dtype=float), train, TASK)


# The rules read ``TASK`` (for the plausible range) when they run, after it is defined.
RULES: dict[str, Predictor] = {
    "time as a line in distance": line_through_distance,
    "kitchen estimate + ride at typical speed + a minute per item": dispatcher_rule,
    "median time by vehicle and distance quintile": median_by_vehicle_and_distance,
}
TASK = RegressionTask(
    id=ID,
    target=TARGET,
    transform="log1p",
    categorical=frozenset(CATEGORIES),
    engineer=engineer,
    feature_sets=FEATURE_SETS,
    groups=("distance_km", "vehicle", "zone", "weather", "hour"),
    rules=RULES,
)


def entries() -> dict[str, Solution]:
    """Every reference solution, by team name."""
    return field_entries(TASK)


if __name__ == "__main__":
    sys.exit(builder.main(HERE, entries, lower_is_better=True, threads=1))
