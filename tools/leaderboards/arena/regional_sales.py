"""Builds ``leaderboard.csv`` for the arena regional-sales competition from reference forecasters.

Run from the repository root::

    .venv/bin/python -m tools.leaderboards.arena.regional_sales

``tools.leaderboards.builder`` prepares the data into a temporary directory, runs every
forecaster of ``series_field`` (quarterly data: a yearly season of 4 quarters, series scaled by
their last 4 quarters, pooled models trained on the latest 3, 6 or 12 consecutive origins, all
that nine years leave after the field's five-season warm-up) on ``train.csv`` only, scores its
forecasts of the 4 quarters of ``test.csv`` with ``grade.py`` (sMAPE, lower is better) and
writes the leaderboard best first. Everything is deterministic or seeded, so a rerun writes the
same file.
"""

from __future__ import annotations

from tools.leaderboards import builder
from tools.leaderboards.arena import series_field
from tools.leaderboards.builder import Solution

SEASON = series_field.Season(period=4, level=4, origin_step=1, histories=(3, 6, 12))


def entries() -> dict[str, Solution]:
    return series_field.entries(SEASON, "quarters")


if __name__ == "__main__":
    raise SystemExit(
        builder.main(
            builder.task_folder("regional-sales", "arena"), entries, lower_is_better=True, threads=1
        )
    )
