"""Prepares the arena App Reviews competition from the generator in ``raw/generate.py``.

``generate.generate()`` returns 20,000 reviews (``review``, ``recommended``) in generation order,
independent draws of one process. The first 4,000 are the training set and the other 16,000 the
test set: a small training set (a model trains in about a second) and a large test set (so the
score's sampling noise is small next to the gaps between good and better solutions). Writes

- ``public/train.csv``: ``id,review,recommended`` (1 = recommends the app);
- ``public/test.csv``: ``id,review``;
- ``public/sample_submission.csv``: ``id,recommended`` with every value 0.5;
- ``private/test.csv``: ``id,recommended``, the answers.

Ids are 1..20000 after a seeded shuffle of all reviews, so neither an id nor the row order says
which set a review is in or what its label is. Deterministic: seeded, no clock.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import numpy as np
import pandas as pd

SEED = 4_117
N_TRAIN = 4_000


def _generator(raw: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location("app_reviews_generate", raw / "generate.py")
    if spec is None or spec.loader is None:
        raise FileNotFoundError(f"no generator at {raw / 'generate.py'}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def prepare(raw: Path, public: Path, private: Path) -> None:
    reviews = _generator(Path(raw)).generate()
    ids = np.random.default_rng(SEED).permutation(len(reviews)) + 1
    table = pd.DataFrame(
        {"id": ids, "review": reviews["review"], "recommended": reviews["recommended"]}
    )
    train = table.iloc[:N_TRAIN].sort_values("id")
    test = table.iloc[N_TRAIN:].sort_values("id")
    public, private = Path(public), Path(private)
    train.to_csv(public / "train.csv", index=False)
    test[["id", "review"]].to_csv(public / "test.csv", index=False)
    test[["id"]].assign(recommended=0.5).to_csv(public / "sample_submission.csv", index=False)
    test[["id", "recommended"]].to_csv(private / "test.csv", index=False)
