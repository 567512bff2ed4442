"""Shared pieces of the format tests: a small sweep manifest and run dirs in every state
(the sweep tests use them too)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from podium.formats import Grid, Manifest, new_runs


def write_summary(run_dir: Path, status: str, medal: str | None = None, **extra: Any) -> None:
    run_dir.mkdir(parents=True, exist_ok=True)
    grade = {"medal": medal, "score": 0.9 if medal else 0.1}
    data = {"status": status, "grade": grade, "elapsed_s": 1.5, **extra}
    (run_dir / "summary.json").write_text(json.dumps(data))


@pytest.fixture
def manifest() -> Manifest:
    """2 tasks × 1 strategy × 1 model × 2 seeds = 4 runs."""
    grid = Grid(
        tasks=("mini/a", "mini/b"), strategies=("greedy",), models=("baseline",), seeds=(0, 1)
    )
    return Manifest(podium_version="test", tasks_spec="mini", grid=grid, runs=new_runs(grid))
