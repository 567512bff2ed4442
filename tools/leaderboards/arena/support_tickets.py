"""Builds ``leaderboard.csv`` for the arena Support Tickets competition (multi-class log loss).

Run from the repository root::

    .venv/bin/python -m tools.leaderboards.arena.support_tickets

The field is :mod:`tools.leaderboards.arena.text_field`'s fixed ladder of text representations
crossed with its fixed grid of models, plus constants, random probabilities, learning curves and
the hand-written routing rules below, the ones a support lead would write before training
anything: a keyword list per queue, each ticket's probabilities from how many of a queue's
keywords it holds (blended with the training frequencies, or as sharp as the counts allow).
"""

from __future__ import annotations

import re
import sys

import numpy as np
import pandas as pd

from tools.leaderboards import builder
from tools.leaderboards.arena.text_field import Predictor, TextTask, solutions
from tools.leaderboards.builder import Solution

HERE = builder.task_folder("support-tickets", "arena")
QUEUES = ("account", "billing", "cancellation", "returns", "shipping", "technical")
WORD = re.compile(r"[a-z']+")
FEW = {
    "account": {"login", "password", "account"},
    "billing": {"charged", "invoice", "payment"},
    "cancellation": {"cancel", "subscription", "unsubscribe"},
    "returns": {"return", "refund", "exchange"},
    "shipping": {"delivery", "tracking", "arrived"},
    "technical": {"error", "crash", "bug"},
}
MORE = {
    "account": FEW["account"] | {"log", "sign", "email", "username", "locked", "reset", "profile"},
    "billing": FEW["billing"] | {"charge", "card", "bank", "fee", "billed", "price", "paid"},
    "cancellation": FEW["cancellation"] | {"plan", "membership", "renewal", "stop", "end"},
    "returns": FEW["returns"] | {"label", "damaged", "faulty", "replacement", "back"},
    "shipping": FEW["shipping"] | {"package", "courier", "shipping", "transit", "address"},
    "technical": FEW["technical"] | {"app", "crashes", "load", "bluetooth", "update", "slow"},
}


def keywords(lists: dict[str, set[str]], strength: float, blend_prior: bool) -> Predictor:
    """Route by keyword counts: probabilities proportional to exp(strength * hits), times the
    training frequencies when ``blend_prior`` (no training beyond those frequencies)."""

    def predict(train: pd.Series, y: np.ndarray, test: pd.Series) -> np.ndarray:
        counts = pd.Series(y).value_counts()
        prior = np.array([counts.get(q, 0) for q in QUEUES], dtype=float) / len(y)
        rows = []
        for text in test:
            words = WORD.findall(text.lower())
            hits = np.array([sum(w in lists[q] for w in words) for q in QUEUES], dtype=float)
            weights = np.exp(strength * hits) * (prior if blend_prior else 1.0)
            rows.append(weights / weights.sum())
        return np.array(rows)

    return predict


RULES: dict[str, Predictor] = {}
for _name, _lists in (("3 keywords per queue", FEW), ("about 10 keywords per queue", MORE)):
    for _strength in (0.5, 1.5, 4.0):
        RULES[f"rule: {_name}, strength {_strength:g}"] = keywords(_lists, _strength, False)
        RULES[f"rule: {_name}, strength {_strength:g}, times the prior"] = keywords(
            _lists, _strength, True
        )
TASK = TextTask(text="message", target="queue", classes=QUEUES, rules=RULES)


def entries() -> dict[str, Solution]:
    """Every reference solution, by team name."""
    return solutions(TASK)


if __name__ == "__main__":
    sys.exit(builder.main(HERE, entries, lower_is_better=True, threads=1))
