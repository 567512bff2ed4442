"""Builds ``leaderboard.csv`` for the arena building-energy competition from reference solutions.

Run from the repository root::

    .venv/bin/python -m tools.leaderboards.arena.building_energy

The field is :mod:`tools.leaderboards.arena.regression_field`'s (constants, rules of thumb, a
grid of model families and settings over a ladder of feature sets, raw-target models, learning
curves, blends), on the data as an energy surveyor records it: the building (use, region, floor
area, floors, climate, opening hours), its energy-hungry rooms, the efficiency measures seen,
its register code and a few details. Its engineered columns are what such a modeller computes
without knowing the generator: the register code's first letter (the construction era, as the
description says), the number of efficiency measures listed, the energy-hungry rooms in all,
the area per floor and logs of the skewed numbers. Scored with ``grade.py`` (MAE, lower is
better); the models are fitted on log energy (``log``), a setting the field also varies.
"""

from __future__ import annotations

import sys

import numpy as np
import pandas as pd

from tools.leaderboards import builder
from tools.leaderboards.arena.regression_field import Predictor, RegressionTask, plausible
from tools.leaderboards.arena.regression_field import entries as field_entries
from tools.leaderboards.builder import Solution

HERE = builder.task_folder("building-energy", "arena")
ID, TARGET = "id", "energy_mwh"
CATEGORIES = ["use_type", "region", "roof", "facade", "era"]
ROOMS = ["kitchens", "lifts", "server_rooms", "laundries", "cold_stores"]
BUILDING = [
    "use_type",
    "region",
    "floor_area_m2",
    "floors",
    "heating_degree_days",
    "opening_hours_week",
]
RAW = [*BUILDING, *ROOMS, "roof", "facade", "parking_spaces", "surveyor_rating"]


def engineer(frame: pd.DataFrame) -> pd.DataFrame:
    """The columns a careful modeller adds: the construction era (the register code's first
    letter), how many efficiency measures are listed, the energy-hungry rooms in all, the area
    per floor, and logs of the skewed numbers."""
    out = frame.copy()
    out["era"] = out["building_code"].astype(str).str[0]
    measures = out["efficiency_measures"].fillna("none").astype(str)
    out["measures_count"] = np.where(measures == "none", 0, measures.str.count(";") + 1)
    out["rooms_total"] = out[ROOMS].sum(axis=1)
    out["area_per_floor"] = out["floor_area_m2"] / out["floors"].clip(lower=1)
    for column in ("floor_area_m2", "parking_spaces", "area_per_floor"):
        out[f"log_{column}"] = np.log1p(out[column])
    return out


ENGINEERED = [
    "era",
    "measures_count",
    "rooms_total",
    "area_per_floor",
    "log_floor_area_m2",
    "log_parking_spaces",
    "log_area_per_floor",
]
FEATURE_SETS = {
    "floor area": ["floor_area_m2"],
    "floor area + use": ["floor_area_m2", "use_type"],
    "the building": BUILDING,
    "all raw columns": RAW,
    "all raw columns + era": [*RAW, "era"],
    "all raw columns + measures count": [*RAW, "measures_count"],
    "all raw columns + rooms in all": [*RAW, "rooms_total"],
    "everything, engineered": [*RAW, *ENGINEERED],
}


def _intensity_rule(keys: list[str]) -> Predictor:
    """Floor area times the median training use per m2 among buildings with the same ``keys``
    (the overall median for an unseen combination): the survey's benchmark method."""

    def predict(train: pd.DataFrame, test: pd.DataFrame) -> np.ndarray:
        a, b = engineer(train), engineer(test)
        per_m2 = train[TARGET] / train["floor_area_m2"]
        medians = per_m2.groupby([a[k] for k in keys]).median()
        index = pd.MultiIndex.from_frame(b[keys]) if len(keys) > 1 else pd.Index(b[keys[0]])
        found = pd.Series(medians.reindex(index).to_numpy(), index=b.index)
        found = found.fillna(float(per_m2.median()))
        return plausible((found * b["floor_area_m2"]).to_numpy(dtype=float), train, TASK)

    return predict


# The rules read ``TASK`` (for the plausible range) when they run, after it is defined.
RULES: dict[str, Predictor] = {
    "floor area x median use per m2 by use type": _intensity_rule(["use_type"]),
    "floor area x median use per m2 by use type and era": _intensity_rule(["use_type", "era"]),
    "floor area x median use per m2 by use type and region": _intensity_rule(
        ["use_type", "region"]
    ),
}
TASK = RegressionTask(
    id=ID,
    target=TARGET,
    transform="log",
    categorical=frozenset(CATEGORIES),
    engineer=engineer,
    feature_sets=FEATURE_SETS,
    groups=("use_type", "region", "floor_area_m2", "era", "rooms_total"),
    rules=RULES,
)


def entries() -> dict[str, Solution]:
    """Every reference solution, by team name."""
    return field_entries(TASK)


if __name__ == "__main__":
    sys.exit(builder.main(HERE, entries, lower_is_better=True, threads=1))
