"""Prepares the mini Seattle weather competition from the vendored ``raw/seattle-weather.csv``.

Deterministic: the same raw file always gives byte-identical outputs. Writes

- ``public/train.csv``: 1,000 days with ``weather``;
- ``public/test.csv``: 461 days without ``weather``;
- ``public/sample_submission.csv``: ``id`` and one probability column per class, all 0.2;
- ``private/test.csv``: ``id,weather``, the answers.

The split is random over days but stratified by ``weather``, so that every class (snow has only
23 days in all) appears in both parts in about its overall share. A split by time would leave
the test set with no snow and almost no rain, because the labelling changes over the years (see
NOTES.md).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

SEED = 20151231
N_TRAIN = 1000
N_TEST = 461
# The five weather types, in the order of the submission's probability columns (alphabetical).
CLASSES = ["drizzle", "fog", "rain", "snow", "sun"]
RAW_COLUMNS = ["date", "precipitation", "temp_max", "temp_min", "wind", "weather"]


def prepare(raw: Path, public: Path, private: Path) -> None:
    frame = pd.read_csv(Path(raw) / "seattle-weather.csv", dtype={"date": str, "weather": str})
    if list(frame.columns) != RAW_COLUMNS:
        raise ValueError(f"expected the columns {RAW_COLUMNS}, found {list(frame.columns)}")
    if len(frame) != N_TRAIN + N_TEST:
        raise ValueError(f"expected {N_TRAIN + N_TEST} days, found {len(frame)}")
    if sorted(frame["weather"].unique()) != CLASSES:
        raise ValueError(
            f"expected the classes {CLASSES}, found {sorted(frame['weather'].unique())}"
        )
    # ISO dates (the raw file writes 2012/01/01), which every date parser reads the same way.
    frame["date"] = pd.to_datetime(frame["date"], format="%Y/%m/%d").dt.strftime("%Y-%m-%d")

    rng = np.random.default_rng(SEED)
    order = rng.permutation(len(frame))
    frame = frame.iloc[order].reset_index(drop=True)
    frame.insert(0, "id", np.arange(1, len(frame) + 1))
    in_test = _stratified_test_rows(frame["weather"], N_TEST, rng)

    train = frame[~in_test]
    test = frame[in_test]
    public, private = Path(public), Path(private)
    train.to_csv(public / "train.csv", index=False)
    test.drop(columns=["weather"]).to_csv(public / "test.csv", index=False)
    sample = pd.DataFrame({"id": test["id"]})
    for name in CLASSES:
        sample[name] = 0.2
    sample.to_csv(public / "sample_submission.csv", index=False)
    test[["id", "weather"]].to_csv(private / "test.csv", index=False)


def _stratified_test_rows(labels: pd.Series, n_test: int, rng: np.random.Generator) -> pd.Series:
    """A mask choosing ``n_test`` rows, each class in proportion to its size (largest-remainder
    rounding, equal remainders in alphabetical order), the rows within a class drawn at
    random."""
    counts = labels.value_counts().sort_index()
    quotas = counts * n_test / counts.sum()
    taken = (quotas // 1).astype(int)
    remainders = (quotas - taken).sort_values(ascending=False, kind="mergesort")
    for name in remainders.index[: n_test - int(taken.sum())]:
        taken[name] += 1
    mask = pd.Series(False, index=labels.index)
    for name, k in taken.items():
        rows = labels.index[labels == name].to_numpy()
        mask[rng.choice(rows, size=int(k), replace=False)] = True
    return mask
