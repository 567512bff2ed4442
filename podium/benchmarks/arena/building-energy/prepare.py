"""Prepares the arena building-energy competition from the generator in ``raw/generate.py``.

The generator (a stated process, seeded; see ``raw/SOURCE.md``) makes 19,000 surveyed
buildings; the first 3,500 are the training set and the other 15,500 the test set (a small
training set leaves room for a better model to matter, a large test set keeps the score's
sampling noise small). The buildings are independent draws, so the split is random.
Deterministic: the same generator always gives byte-identical outputs. Writes

- ``public/train.csv``: 3,500 buildings: ``id``, the 17 features and ``energy_mwh``;
- ``public/test.csv``: 15,500 buildings: ``id`` and the 17 features;
- ``public/sample_submission.csv``: ``id,energy_mwh`` with every use the training median;
- ``private/test.csv``: ``id,energy_mwh``, the answers.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import numpy as np

N_TRAIN = 3_500
N_TEST = 15_500
ID = "id"
TARGET = "energy_mwh"


def _generator(raw: Path) -> ModuleType:
    """``raw/generate.py`` as a module (it is not importable by name: raw/ is data)."""
    spec = importlib.util.spec_from_file_location("building_energy_generate", raw / "generate.py")
    if spec is None or spec.loader is None:
        raise ValueError(f"cannot load the generator {raw / 'generate.py'}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def prepare(raw: Path, public: Path, private: Path) -> None:
    frame = _generator(Path(raw)).generate(N_TRAIN + N_TEST)
    if not (frame[TARGET] > 0).all():
        raise ValueError(f"every generated {TARGET} must be positive")
    frame.insert(0, ID, np.arange(1, len(frame) + 1))
    train, test = frame.iloc[:N_TRAIN], frame.iloc[N_TRAIN:]
    public, private = Path(public), Path(private)
    train.to_csv(public / "train.csv", index=False)
    test.drop(columns=[TARGET]).to_csv(public / "test.csv", index=False)
    median = round(float(train[TARGET].median()), 1)
    test[[ID]].assign(**{TARGET: median}).to_csv(public / "sample_submission.csv", index=False)
    test[[ID, TARGET]].to_csv(private / "test.csv", index=False)
