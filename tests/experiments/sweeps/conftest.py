"""Shared pieces of the sweep tests: a small manifest, run dirs in every state, and jobs whose
worker is a stand-in script (the real worker runs a whole Podium run)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from podium.benchmarks.sweeps import Grid, Job, Manifest, new_runs


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


@dataclass(frozen=True)
class ScriptJob(Job):
    """A job whose worker is ``python SCRIPT RUN_DIR`` instead of the Podium worker."""

    script: Path = Path()

    def argv(self, python: str, run_dir: Path | None = None) -> list[str]:
        return [python, str(self.script), str(run_dir or self.run_dir)]


def script(tmp_path: Path, body: str, name: str = "worker.py") -> Path:
    path = tmp_path / name
    path.write_text(
        "import os, sys, signal, time, json, pathlib\nrun_dir = pathlib.Path(sys.argv[1])\n" + body
    )
    return path
