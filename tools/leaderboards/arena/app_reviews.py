"""Builds ``leaderboard.csv`` for the arena App Reviews competition (ROC AUC).

Run from the repository root::

    .venv/bin/python -m tools.leaderboards.arena.app_reviews

The field is :mod:`tools.leaderboards.arena.text_field`'s fixed ladder of text representations
crossed with its fixed grid of models, plus constants, random scores, learning curves and the
hand-written rules below, the ones a product analyst would write before training anything: the
review's length, an exclamation or a "but", emoticons, and generic lists of positive and
negative words counted plainly or with negation ("not good" counts as negative).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable

import numpy as np
import pandas as pd

from tools.leaderboards import builder
from tools.leaderboards.arena.text_field import Predictor, TextTask, solutions
from tools.leaderboards.builder import Solution

HERE = builder.task_folder("app-reviews", "arena")
WORD = re.compile(r"[a-z']+")
NEGATIONS = {"not", "never", "no", "don't", "doesn't", "isn't", "hardly"}
POSITIVE = {"good", "great", "love", "excellent", "amazing", "awesome", "best", "nice", "easy",
            "perfect", "recommend", "useful", "fast", "like", "works"}  # fmt: skip
NEGATIVE = {"bad", "terrible", "awful", "hate", "worst", "slow", "buggy", "crash", "crashes",
            "useless", "broken", "annoying", "waste", "refund", "uninstalled"}  # fmt: skip
HAPPY, SAD = (":)", ":D", ":-)", "<3"), (":(", ":/", ":-(", ">:(")


def measure(score: Callable[[str], float]) -> Predictor:
    """A score computed from the review alone (no training)."""

    def predict(train: pd.Series, y: np.ndarray, test: pd.Series) -> np.ndarray:
        return np.array([score(text) for text in test], dtype=float)

    return predict


def lexicon(text: str, negation: bool = False, per_word: bool = False) -> float:
    """Positive minus negative words; with ``negation`` a listed word right after a negation
    counts for the other side."""
    words = WORD.findall(text.lower())
    total = 0.0
    for before, word in zip(["", *words], words, strict=False):
        sign = -1.0 if negation and before in NEGATIONS else 1.0
        total += sign * ((word in POSITIVE) - (word in NEGATIVE))
    return total / max(len(words), 1) if per_word else total


def faces(text: str) -> float:
    return float(sum(text.count(f) for f in HAPPY) - sum(text.count(f) for f in SAD))


RULES: dict[str, Predictor] = {
    "rule: longer is better": measure(lambda t: float(len(t))),
    "rule: shorter is better": measure(lambda t: -float(len(t))),
    "rule: an exclamation mark is positive": measure(lambda t: float(t.count("!"))),
    "rule: a 'but' is negative": measure(lambda t: -float(" but " in t.lower())),
    "rule: emoticons (happy minus sad)": measure(faces),
    "rule: 15 positive minus 15 negative words": measure(lexicon),
    "rule: 15 positive minus 15 negative words per word": measure(
        lambda t: lexicon(t, per_word=True)
    ),
    "rule: 15 positive minus 15 negative words, negation-aware": measure(
        lambda t: lexicon(t, negation=True)
    ),
    "rule: negation-aware word lists plus emoticons": measure(
        lambda t: lexicon(t, negation=True) + faces(t)
    ),
}
TASK = TextTask(text="review", target="recommended", rules=RULES)


def entries() -> dict[str, Solution]:
    """Every reference solution, by team name."""
    return solutions(TASK)


if __name__ == "__main__":
    sys.exit(builder.main(HERE, entries, lower_is_better=False, threads=1))
