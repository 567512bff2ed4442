"""Prepares the arena Support Tickets competition from the generator in ``raw/generate.py``.

``generate.generate()`` returns 15,000 tickets (``message``, ``queue``) in generation order,
independent draws of one process. The first 3,000 are the training set and the other 12,000 the
test set: a small training set (a model trains in about a second) and a large test set (so the
score's sampling noise is small next to the gaps between good and better solutions). Writes

- ``public/train.csv``: ``id,message,queue``;
- ``public/test.csv``: ``id,message``;
- ``public/sample_submission.csv``: ``id`` and one probability column per queue (``account``,
  ``billing``, ``cancellation``, ``returns``, ``shipping``, ``technical``), every value 1/6;
- ``private/test.csv``: ``id,queue``, the answers.

Ids are 1..15000 after a seeded shuffle of all tickets, so neither an id nor the row order says
which set a ticket is in or what its queue is. Deterministic: seeded, no clock.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import numpy as np
import pandas as pd

SEED = 6_021
N_TRAIN = 3_000
QUEUES = ["account", "billing", "cancellation", "returns", "shipping", "technical"]


def _generator(raw: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location("support_tickets_generate", raw / "generate.py")
    if spec is None or spec.loader is None:
        raise FileNotFoundError(f"no generator at {raw / 'generate.py'}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def prepare(raw: Path, public: Path, private: Path) -> None:
    tickets = _generator(Path(raw)).generate()
    if sorted(tickets["queue"].unique()) != QUEUES:
        raise ValueError(f"expected the queues {QUEUES}, found {sorted(tickets['queue'].unique())}")
    ids = np.random.default_rng(SEED).permutation(len(tickets)) + 1
    table = pd.DataFrame({"id": ids, "message": tickets["message"], "queue": tickets["queue"]})
    train = table.iloc[:N_TRAIN].sort_values("id")
    test = table.iloc[N_TRAIN:].sort_values("id")
    public, private = Path(public), Path(private)
    train.to_csv(public / "train.csv", index=False)
    test[["id", "message"]].to_csv(public / "test.csv", index=False)
    sample = test[["id"]].assign(**{queue: 1 / len(QUEUES) for queue in QUEUES})
    sample.to_csv(public / "sample_submission.csv", index=False)
    test[["id", "queue"]].to_csv(private / "test.csv", index=False)
