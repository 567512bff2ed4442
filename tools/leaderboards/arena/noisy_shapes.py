"""Builds ``leaderboard.csv`` for arena's noisy-shapes competition from reference solutions.

Run from the repository root::

    .venv/bin/python -m tools.leaderboards.arena.noisy_shapes

The field is ``image_field``'s grid (constants, guesses, rules on image statistics, and
factorial grids of scikit-learn models over eight representations from raw pixels and
PCA to engineered descriptors; at least 1,000 entries, arena's field rule), trained on
``train.csv`` and the training PNGs only and scored on labels by ``grade.py``. Seeded: a rerun
writes the same file.
"""

from __future__ import annotations

import sys

from tools.leaderboards import builder
from tools.leaderboards.arena.image_field import ImageTask
from tools.leaderboards.arena.image_field import entries as field_entries
from tools.leaderboards.builder import Solution

HERE = builder.task_folder("noisy-shapes", "arena")
TASK = ImageTask(
    target="label",
    classes=("disk", "ring", "square", "frame", "triangle", "plus"),
    proba=False,
)
N_TRAIN = 2500


def entries() -> dict[str, Solution]:
    """Every reference solution, by team name."""
    return field_entries(TASK, N_TRAIN)


if __name__ == "__main__":
    # One thread: on a small shared machine the threaded BLAS spins and runs many times slower.
    sys.exit(builder.main(HERE, entries, lower_is_better=False, threads=1))
