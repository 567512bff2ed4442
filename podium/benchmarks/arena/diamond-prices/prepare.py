"""Prepares the arena diamond-prices competition from the vendored ``raw/diamonds.csv.gz``.

``raw/diamonds.csv.gz`` is ggplot2's ``diamonds`` table (53,940 round-cut diamonds) as plotnine
ships it, gzipped. The rows are shuffled with a fixed seed; the first 6,000 are the training
set and the next 12,000 the test set (the rest are not used: a small training set leaves room
for a better model to matter, a large test set keeps the score's sampling noise small).
Deterministic: the same raw file always gives byte-identical outputs. Writes

- ``public/train.csv``: 6,000 diamonds: ``id``, the 9 features and ``price``;
- ``public/test.csv``: 12,000 diamonds: ``id`` and the 9 features;
- ``public/sample_submission.csv``: ``id,price`` with every price the training median;
- ``private/test.csv``: ``id,price``, the answers.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

RAW = "diamonds.csv.gz"
RAW_ROWS = 53_940
SEED = 2009  # the year of ggplot2's book, where the table first appeared
N_TRAIN = 6_000
N_TEST = 12_000
ID = "id"
TARGET = "price"
FEATURES = ["carat", "cut", "color", "clarity", "depth", "table", "x", "y", "z"]


def prepare(raw: Path, public: Path, private: Path) -> None:
    frame = pd.read_csv(Path(raw) / RAW)
    if len(frame) != RAW_ROWS or list(frame.columns) != [*FEATURES[:6], TARGET, *FEATURES[6:]]:
        raise ValueError(f"expected {RAW_ROWS} diamonds with ggplot2's 10 columns in {RAW}")
    if not (frame[TARGET] > 0).all():
        raise ValueError(f"every {TARGET} in {RAW} must be positive")
    order = np.random.default_rng(SEED).permutation(len(frame))[: N_TRAIN + N_TEST]
    frame = frame.iloc[order].reset_index(drop=True)[[*FEATURES, TARGET]]
    frame.insert(0, ID, np.arange(1, len(frame) + 1))

    train, test = frame.iloc[:N_TRAIN], frame.iloc[N_TRAIN:]
    public, private = Path(public), Path(private)
    train.to_csv(public / "train.csv", index=False)
    test.drop(columns=[TARGET]).to_csv(public / "test.csv", index=False)
    median = round(float(train[TARGET].median()))
    test[[ID]].assign(**{TARGET: median}).to_csv(public / "sample_submission.csv", index=False)
    test[[ID, TARGET]].to_csv(private / "test.csv", index=False)
