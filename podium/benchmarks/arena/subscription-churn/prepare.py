"""Prepares the arena subscription-churn competition from the generator in ``raw/generate.py``.

The generator (seeded; its process is stated in ``raw/SOURCE.md``) returns 23,000 synthetic
subscribers with the outcome ``churn``. They are numbered ``id`` 1..23000 in generated order;
the first 3,000 are the training set, the other 20,000 the test set: a small training set keeps
every model quick, a large test set keeps the score's sampling noise small next to the gaps
between the medal thresholds (NOTES.md). Deterministic: byte-identical outputs every time.
Writes

- ``public/train.csv``: ``id``, the 22 features (two of them text: a promo code and a device
  list) and ``churn`` (1 = cancelled);
- ``public/test.csv``: ``id`` and the 22 features;
- ``public/sample_submission.csv``: ``id,churn`` with every probability the training share;
- ``private/test.csv``: ``id,churn``, the answers.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pandas as pd

GENERATOR = "generate.py"
N_TRAIN = 3_000
N_TEST = 20_000
TARGET = "churn"


def _generated(raw: Path) -> pd.DataFrame:
    spec = importlib.util.spec_from_file_location("subscription_churn_generate", raw / GENERATOR)
    if spec is None or spec.loader is None:
        raise ValueError(f"cannot load {raw / GENERATOR}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    frame: pd.DataFrame = module.generate()
    if len(frame) != N_TRAIN + N_TEST:
        raise ValueError(f"expected {N_TRAIN + N_TEST} rows from {GENERATOR}, got {len(frame)}")
    return frame


def prepare(raw: Path, public: Path, private: Path) -> None:
    frame = _generated(Path(raw))
    frame.insert(0, "id", np.arange(1, len(frame) + 1))
    train, test = frame.iloc[:N_TRAIN], frame.iloc[N_TRAIN:]
    public, private = Path(public), Path(private)
    train.to_csv(public / "train.csv", index=False)
    test.drop(columns=[TARGET]).to_csv(public / "test.csv", index=False)
    share = round(float(train[TARGET].mean()), 4)
    test[["id"]].assign(**{TARGET: share}).to_csv(public / "sample_submission.csv", index=False)
    test[["id", TARGET]].to_csv(private / "test.csv", index=False)
