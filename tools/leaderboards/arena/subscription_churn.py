"""Builds ``leaderboard.csv`` for the arena subscription-churn competition (log loss).

Run from the repository root::

    .venv/bin/python -m tools.leaderboards.arena.subscription_churn

The field is :mod:`tools.leaderboards.arena.tabular_field`'s fixed grid of model families
crossed with the ladder of feature sets below, chosen from what a churn analyst would try (the
billing cycle and tenure first, then viewing, then every raw column; then the engineered
columns a churn model usually gets: the sign-up campaign read from the promo code, the number of
registered devices counted from the device list, the total of service problems, the viewing
trend, a renewal-due flag for annual subscribers and logs of the skewed columns), plus
constants, random scores, one-feature scores, point rules and learning curves. The promo code
and the device list are parsed, never used raw (a code and a list are not categories). Every
entry submits probabilities (lower log loss is better).
"""

from __future__ import annotations

import sys

import numpy as np
import pandas as pd

from tools.leaderboards import builder
from tools.leaderboards.arena.tabular_field import FeatureSet, Scorer, TaskField, as_probability
from tools.leaderboards.arena.tabular_field import solutions as field_solutions
from tools.leaderboards.builder import Solution

HERE = builder.task_folder("subscription-churn", "arena")
TARGET = "churn"
PROBLEMS = (
    "failed_payments", "playback_errors", "login_problems", "support_tickets",
    "billing_disputes", "app_crashes", "outage_reports",
)  # fmt: skip
VIEWING = ("avg_monthly_hours_prior", "hours_last_30d")
NUMERIC = (
    "age", "tenure_months", "monthly_fee", "days_to_renewal", *VIEWING, "avg_session_minutes",
    "downloads_gb", "survey_score", *PROBLEMS,
)  # fmt: skip
CATEGORICAL = ("billing_cycle", "plan", "payment_method", "region")
SKEWED = (*VIEWING, "downloads_gb", "avg_session_minutes")


def derive(frame: pd.DataFrame) -> pd.DataFrame:
    """The engineered columns: the sign-up campaign (the promo code's first letter), the number
    of registered devices (entries of the ``;``-separated list), total service problems, viewing
    trend (log of recent over prior hours), renewal due within 30 days on an annual plan, and
    logs of the skewed columns."""
    out = frame.copy()
    out["campaign"] = out["promo_code"].astype(str).str[0]
    out["device_count"] = out["devices"].astype(str).str.count(";") + 1
    out["total_problems"] = out[list(PROBLEMS)].sum(axis=1)
    out["viewing_trend"] = np.log1p(out["hours_last_30d"]) - np.log1p(
        out["avg_monthly_hours_prior"]
    )
    out["renewal_due"] = (
        (out["billing_cycle"] == "annual") & (out["days_to_renewal"] < 30)
    ).astype(int)
    for column in SKEWED:
        out[f"log_{column}"] = np.log1p(out[column].clip(lower=0))
    return out


RAW_LADDER: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    # name -> (columns, the categorical ones among them)
    "billing+tenure": (("tenure_months", "billing_cycle"), ("billing_cycle",)),
    "billing+tenure+viewing": (
        ("tenure_months", *VIEWING, "monthly_fee", "billing_cycle", "plan"),
        ("billing_cycle", "plan"),
    ),
    "all raw numbers": (NUMERIC, ()),
}
LOGS = tuple(f"log_{column}" for column in SKEWED)
# name -> (engineered numeric columns, engineered categorical columns) added to all raw features
ENGINEERED: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "all raw features": ((), ()),
    "all raw features+campaign": ((), ("campaign",)),
    "all raw features+device count": (("device_count",), ()),
    "all raw features+total problems": (("total_problems",), ()),
    "all raw features+viewing trend": (("viewing_trend",), ()),
    "all raw features+renewal due": (("renewal_due",), ()),
    "all raw features+logs": (LOGS, ()),
    "all raw features+all engineered": (
        ("device_count", "total_problems", "viewing_trend", "renewal_due", *LOGS),
        ("campaign",),
    ),
}
COMPACT = (
    "device_count", "total_problems", "viewing_trend", "renewal_due", "survey_score",
    "tenure_months", "campaign", "billing_cycle", "payment_method",
)  # fmt: skip
COMPACT_CATEGORICAL = ("campaign", "billing_cycle", "payment_method")


def feature_sets() -> dict[str, FeatureSet]:
    sets = {name: FeatureSet(cols, cats) for name, (cols, cats) in RAW_LADDER.items()}
    for name, (numbers, categories) in ENGINEERED.items():
        sets[name] = FeatureSet(
            (*NUMERIC, *numbers, *CATEGORICAL, *categories), (*CATEGORICAL, *categories), derive
        )
    sets["compact engineered set"] = FeatureSet(COMPACT, COMPACT_CATEGORICAL, derive)
    return sets


def _points(*conditions: str) -> Scorer:
    """One point per condition met (a ``DataFrame.eval`` expression over the derived frame),
    as the training share of churners with as many points."""

    def rule(frame: pd.DataFrame) -> pd.Series:
        derived = derive(frame)
        met = [
            pd.Series(derived.eval(c), index=derived.index).fillna(False).astype(int)
            for c in conditions
        ]
        return pd.Series(np.sum(met, axis=0), index=frame.index)

    return as_probability(rule, TARGET)


OFFER = "campaign in ['W', 'T']"
RULES: dict[str, Scorer] = {
    "monthly billing": _points("billing_cycle == 'monthly'"),
    "three or more service problems": _points("total_problems >= 3"),
    "win-back or free-trial code": _points(OFFER),
    "a single device": _points("device_count == 1"),
    "viewing halved": _points("hours_last_30d < 0.5 * avg_monthly_hours_prior"),
    "problems + offer + single device points": _points(
        "total_problems >= 3", OFFER, "device_count == 1"
    ),
    "problems + offer + single device + viewing halved + renewal due points": _points(
        "total_problems >= 3",
        OFFER,
        "device_count == 1",
        "hours_last_30d < 0.5 * avg_monthly_hours_prior",
        "renewal_due == 1",
    ),
}

TASK = TaskField(TARGET, NUMERIC, CATEGORICAL, feature_sets(), RULES)


def entries() -> dict[str, Solution]:
    """Every reference solution, by team name."""
    return field_solutions(TASK)


if __name__ == "__main__":
    sys.exit(builder.main(HERE, entries, lower_is_better=True, threads=1))
