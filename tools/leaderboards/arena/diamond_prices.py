"""Builds ``leaderboard.csv`` for the arena diamond-prices competition from reference solutions.

Run from the repository root::

    .venv/bin/python -m tools.leaderboards.arena.diamond_prices

The field is :mod:`tools.leaderboards.arena.regression_field`'s (constants, rules of thumb, a
grid of model families and settings over a ladder of feature sets, raw-target models, learning
curves, blends), on the data as a jeweller sees it: the 4 Cs (carat, cut, colour, clarity),
with the grades in their known order, and the stone's measurements. Scored with ``grade.py``
(RMSE of log prices, lower is better).
"""

from __future__ import annotations

import sys

import numpy as np
import pandas as pd

from tools.leaderboards import builder
from tools.leaderboards.arena.regression_field import (
    Predictor,
    RegressionTask,
    plausible,
)
from tools.leaderboards.arena.regression_field import entries as field_entries
from tools.leaderboards.builder import Solution

HERE = builder.task_folder("diamond-prices", "arena")
ID, TARGET = "id", "price"
# The GIA grades from worst to best (ggplot2's factor levels).
ORDER = {
    "cut": ["Fair", "Good", "Very Good", "Premium", "Ideal"],
    "color": ["J", "I", "H", "G", "F", "E", "D"],
    "clarity": ["I1", "SI2", "SI1", "VS2", "VS1", "VVS2", "VVS1", "IF"],
}
GRADES = ["cut", "color", "clarity"]
MEASUREMENTS = ["depth", "table", "x", "y", "z"]


def engineer(frame: pd.DataFrame) -> pd.DataFrame:
    """What a jeweller would compute: the log of the weight (price grows as a power of it), each
    grade as its rank, the stone's volume (log) from its measurements (a 0 means "not
    measured": missing) and its length-to-width ratio."""
    out = frame.copy()
    out["log_carat"] = np.log(out["carat"])
    for grade, levels in ORDER.items():
        out[f"{grade}_rank"] = out[grade].map({v: i for i, v in enumerate(levels)}).astype(float)
    sizes = out[["x", "y", "z"]].where(out[["x", "y", "z"]] > 0)
    out["log_volume"] = np.log(sizes["x"] * sizes["y"] * sizes["z"])
    out["length_width_ratio"] = sizes["x"] / sizes["y"]
    return out


RANKS = [f"{g}_rank" for g in GRADES]
FEATURE_SETS = {
    "carat": ["carat"],
    "measurements": MEASUREMENTS,
    "4 Cs": ["carat", *GRADES],
    "all raw columns": ["carat", *GRADES, *MEASUREMENTS],
    "log carat + grade ranks": ["log_carat", *RANKS],
    "log carat + grade ranks + measurements": [
        "log_carat",
        *RANKS,
        "log_volume",
        "length_width_ratio",
        "depth",
        "table",
    ],
    "everything, engineered": [
        "carat",
        *GRADES,
        *MEASUREMENTS,
        "log_carat",
        *RANKS,
        "log_volume",
        "length_width_ratio",
    ],
}


def per_carat(by: str | None) -> Predictor:
    """The median training price per carat (among stones of the same ``by`` grade), times the
    stone's carat: the trade's first rule of thumb."""

    def predict(train: pd.DataFrame, test: pd.DataFrame) -> np.ndarray:
        rate = train[TARGET] / train["carat"]
        if by is None:
            found = pd.Series(float(rate.median()), index=test.index)
        else:
            medians = rate.groupby(train[by]).median()
            found = test[by].map(medians).fillna(float(rate.median()))
        return plausible((found * test["carat"]).to_numpy(dtype=float), train, TASK)

    return predict


def log_log_rule(train: pd.DataFrame, test: pd.DataFrame) -> np.ndarray:
    """Price as a power of carat, the power and scale from a straight line through the logs."""
    slope, intercept = np.polyfit(np.log(train["carat"]), np.log(train[TARGET]), 1)
    return plausible(np.exp(intercept + slope * np.log(test["carat"].to_numpy(float))), train, TASK)


# The rules read ``TASK`` (for the plausible range) when they run, after it is defined.
RULES: dict[str, Predictor] = {
    "median price per carat x carat": per_carat(None),
    "median price per carat by clarity x carat": per_carat("clarity"),
    "median price per carat by color x carat": per_carat("color"),
    "price as a power of carat (line through the logs)": log_log_rule,
}
TASK = RegressionTask(
    id=ID,
    target=TARGET,
    transform="log",
    categorical=frozenset(GRADES),
    engineer=engineer,
    feature_sets=FEATURE_SETS,
    groups=("carat", "cut", "color", "clarity"),
    rules=RULES,
)


def entries() -> dict[str, Solution]:
    """Every reference solution, by team name."""
    return field_entries(TASK)


if __name__ == "__main__":
    sys.exit(builder.main(HERE, entries, lower_is_better=True, threads=1))
