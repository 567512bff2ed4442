"""The hand-computed sweep most report tests read (fakes.py writes its files).

Grid: tasks a, b (complexity low) and c (high) × strategies greedy, mcts × model baseline ×
seeds 0, 1. Leaderboard percentile in brackets; "missing" has no run dir.

========  =====================  =====================  =============================
strategy  a                      b                      c
========  =====================  =====================  =============================
greedy 0  gold [95]              valid, no medal [40]   bronze [80]
greedy 1  silver [90]            missing                failed (its grade: gold [99])
mcts 0    gold [95]              bronze [70]            valid, no medal [60]
mcts 1    gold [96]              valid, no medal [20]   invalid submission [0]
========  =====================  =====================  =============================

Medal runs are above the median. Every run: 100 + 50 tokens, $0.01, 10 s, 4 nodes of which 1
buggy, except greedy's failed c run: 2 nodes, both buggy. Greedy's a runs and mcts's a and b
runs have curves.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from podium.experiments.reports.report import Report, build_report
from podium.experiments.reports.runs import RunSet, load_runs
from tests.experiments.reports.fakes import Spec, write_sweep

TASKS = ("mini/a", "mini/b", "mini/c")
COMPLEXITY = {"mini/a": "low", "mini/b": "low", "mini/c": "high"}


def spec(task: str, strategy: str, seed: int, medal: str | None = None, **kw: Any) -> Spec:
    """A scenario run: a medal makes it above the median; the task sets its complexity."""
    return Spec(
        task=task,
        strategy=strategy,
        seed=seed,
        medal=medal,
        above_median=medal is not None,
        complexity=COMPLEXITY[task],
        **kw,
    )


def scenario_runs() -> dict[tuple[str, str, int], Spec | str]:
    a, b, c = TASKS
    return {
        (a, "greedy", 0): spec(
            a, "greedy", 0, "gold", percentile=95.0, curve=[(1, 5.0, 40.0), (2, 10.0, 95.0)]
        ),
        (a, "greedy", 1): spec(a, "greedy", 1, "silver", percentile=90.0, curve=[(1, 4.0, 90.0)]),
        (b, "greedy", 0): spec(b, "greedy", 0, percentile=40.0),
        (c, "greedy", 0): spec(c, "greedy", 0, "bronze", percentile=80.0),
        (c, "greedy", 1): spec(
            c, "greedy", 1, "gold", percentile=99.0, status="failed", nodes=2, buggy=2
        ),
        (a, "mcts", 0): spec(a, "mcts", 0, "gold", percentile=95.0, curve=[(1, 3.0, 95.0)]),
        (a, "mcts", 1): spec(a, "mcts", 1, "gold", percentile=96.0, curve=[(1, 3.0, 96.0)]),
        (b, "mcts", 0): spec(b, "mcts", 0, "bronze", percentile=70.0, curve=[(1, 3.0, 70.0)]),
        (b, "mcts", 1): spec(b, "mcts", 1, percentile=20.0, curve=[(1, 3.0, 20.0)]),
        (c, "mcts", 0): spec(c, "mcts", 0, percentile=60.0),
        (c, "mcts", 1): spec(c, "mcts", 1, valid=False),
    }


@pytest.fixture(scope="session")
def sweep_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_sweep(
        tmp_path_factory.mktemp("sweep"), TASKS, ("greedy", "mcts"), (0, 1), scenario_runs()
    )


@pytest.fixture(scope="session")
def runset(sweep_dir: Path) -> RunSet:
    return load_runs([sweep_dir])


@pytest.fixture(scope="session")
def report(sweep_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Report:
    """The scenario's report with the paired comparison against greedy (plots included)."""
    return build_report([sweep_dir], tmp_path_factory.mktemp("report"), baseline="greedy")
