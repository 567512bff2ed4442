"""Builds ``leaderboard.csv`` for the arena loan-default competition (ROC AUC).

Run from the repository root::

    .venv/bin/python -m tools.leaderboards.arena.loan_default

The field is :mod:`tools.leaderboards.arena.tabular_field`'s fixed grid of model families
crossed with the ladder of feature sets below, chosen from what a credit analyst would try
(payment history first, then income and debt, credit use, the loan and the applicant, the
categories; then the engineered columns a risk model usually gets: the total of missed
payments, a flag for an unstated income, credit utilisation and logs of money amounts), plus
constants, random scores, one-feature scores, point rules and learning curves.
"""

from __future__ import annotations

import sys

import numpy as np
import pandas as pd

from tools.leaderboards import builder
from tools.leaderboards.arena.tabular_field import FeatureSet, Scorer, TaskField, as_probability
from tools.leaderboards.arena.tabular_field import solutions as field_solutions
from tools.leaderboards.builder import Solution

HERE = builder.task_folder("loan-default", "arena")
TARGET = "default"
MISSED = tuple(
    f"missed_{a}" for a in ("card", "car_loan", "mortgage", "student_loan", "utilities", "phone")
)
MONEY = ("income", "loan_amount", "credit_limit", "revolving_balance")
NUMERIC = (
    "age", "employment_years", "income", "loan_amount", "debt_to_income", "credit_limit",
    "revolving_balance", "open_accounts", *MISSED,
)  # fmt: skip
CATEGORICAL = ("home_ownership", "purpose", "state")


def derive(frame: pd.DataFrame) -> pd.DataFrame:
    """The engineered columns: total missed payments, income-not-stated flag, utilisation,
    and the log of each money amount (an unstated income stays missing)."""
    out = frame.copy()
    out["total_missed"] = out[list(MISSED)].sum(axis=1)
    out["income_missing"] = out["income"].isna().astype(int)
    out["utilisation"] = out["revolving_balance"] / out["credit_limit"].clip(lower=1)
    for column in MONEY:
        out[f"log_{column}"] = np.log1p(out[column].clip(lower=0))
    return out


LOGS = tuple(f"log_{c}" for c in MONEY)
RAW_LADDER: dict[str, tuple[str, ...]] = {
    "missed payments": MISSED,
    "missed payments+income+debt": (*MISSED, "income", "debt_to_income"),
    "missed payments+income+debt+credit use": (
        *MISSED,
        "income",
        "debt_to_income",
        "credit_limit",
        "revolving_balance",
    ),
    "all raw numbers": NUMERIC,
}
ENGINEERED: dict[str, tuple[str, ...]] = {
    "all raw features": (),
    "all raw features+total missed": ("total_missed",),
    "all raw features+income-missing flag": ("income_missing",),
    "all raw features+utilisation": ("utilisation",),
    "all raw features+logs": LOGS,
    "all raw features+all engineered": ("total_missed", "income_missing", "utilisation", *LOGS),
}
COMPACT = (
    "total_missed", "income_missing", "log_income", "debt_to_income", "utilisation",
    "log_loan_amount", "age", "employment_years", "home_ownership", "purpose",
)  # fmt: skip


def feature_sets() -> dict[str, FeatureSet]:
    sets = {name: FeatureSet(columns) for name, columns in RAW_LADDER.items()}
    for name, extra in ENGINEERED.items():
        sets[name] = FeatureSet((*NUMERIC, *extra, *CATEGORICAL), CATEGORICAL, derive)
    sets["compact engineered set"] = FeatureSet(COMPACT, ("home_ownership", "purpose"), derive)
    return sets


def _points(*conditions: str) -> Scorer:
    """One point per condition met (a ``DataFrame.eval`` expression over the derived frame)."""

    def rule(frame: pd.DataFrame) -> pd.Series:
        derived = derive(frame)
        met = [
            pd.Series(derived.eval(c), index=derived.index).fillna(False).astype(int)
            for c in conditions
        ]
        return pd.Series(np.sum(met, axis=0), index=frame.index)

    return as_probability(rule, TARGET)


RULES: dict[str, Scorer] = {
    "any missed payment": _points("total_missed >= 1"),
    "two or more missed payments": _points("total_missed >= 2"),
    "income not stated": _points("income_missing == 1"),
    "debt over half of income": _points("debt_to_income > 0.5"),
    "missed + income not stated points": _points("total_missed >= 1", "income_missing == 1"),
    "missed + unstated + debt + utilisation points": _points(
        "total_missed >= 1", "income_missing == 1", "debt_to_income > 0.5", "utilisation > 0.6"
    ),
}

TASK = TaskField(TARGET, NUMERIC, CATEGORICAL, feature_sets(), RULES)


def entries() -> dict[str, Solution]:
    """Every reference solution, by team name."""
    return field_solutions(TASK)


if __name__ == "__main__":
    sys.exit(builder.main(HERE, entries, lower_is_better=False, threads=1))
