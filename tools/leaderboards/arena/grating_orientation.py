"""Builds ``leaderboard.csv`` for arena's grating-orientation competition from reference
solutions.

Run from the repository root::

    .venv/bin/python -m tools.leaderboards.arena.grating_orientation

The field is ``image_field``'s grid (constants, guesses, rules on image statistics, and
factorial grids of scikit-learn models over eight representations from raw pixels and
PCA to engineered descriptors; at least 1,000 entries, arena's field rule), trained on
``train.csv`` and the training PNGs only, submitting probabilities, scored by ``grade.py``
(multi-class log loss). Seeded: a rerun writes the same file.
"""

from __future__ import annotations

import sys

from tools.leaderboards import builder
from tools.leaderboards.arena.image_field import ImageTask
from tools.leaderboards.arena.image_field import entries as field_entries
from tools.leaderboards.builder import Solution

HERE = builder.task_folder("grating-orientation", "arena")
TASK = ImageTask(
    target="orientation",
    classes=("deg000", "deg030", "deg060", "deg090", "deg120", "deg150"),
    proba=True,
)
N_TRAIN = 2500


def entries() -> dict[str, Solution]:
    """Every reference solution, by team name."""
    return field_entries(TASK, N_TRAIN)


if __name__ == "__main__":
    # One thread: on a small shared machine the threaded BLAS spins and runs many times slower.
    sys.exit(builder.main(HERE, entries, lower_is_better=True, threads=1))
