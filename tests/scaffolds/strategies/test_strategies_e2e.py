"""Every builtin strategy searches mini/titanic with the baseline model, and reproduces itself:
one worker, the same seed and the same answers give the identical tree."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import podium
from podium.formats import Journal
from podium.scaffolds.baseline import MODEL_NAME

pytestmark = pytest.mark.slow

SEARCH: dict[str, dict[str, Any]] = {
    "greedy": {"num_drafts": 2},
    "mcts": {"num_children": 2},
    "evolutionary": {"population": 2, "crossover_prob": 1.0},  # generation 2 from step 5
    "random": {},
    "mcgs": {"num_drafts": 2, "num_improves": 1},
    "refine": {"num_solutions": 2, "outer_steps": 1, "inner_steps": 1, "ensemble_rounds": 1},
}
STEPS = {"evolutionary": 5}


def titanic_run(out: Path, data_dir: Path, strategy: str, **extra: Any) -> Any:
    config = {
        "task": "mini/titanic", "out": str(out), "data_dir": str(data_dir), "seed": 3,
        "model": {"name": MODEL_NAME}, "budget": {"steps": STEPS.get(strategy, 4)},
        "search": {"strategy": strategy, **SEARCH[strategy]}, **extra,
    }  # fmt: skip
    return podium.run(config)


def tree(run_dir: Path) -> list[tuple[Any, ...]]:
    journal = Journal.open(run_dir / "journal.sqlite")
    try:
        return [(n.id, n.operator, n.parent_ids, n.code, n.is_buggy) for n in journal.nodes()]
    finally:
        journal.close()


@pytest.mark.parametrize("strategy", list(SEARCH))
def test_each_strategy_searches_and_reproduces(
    strategy: str, tmp_path: Path, titanic: Any, data_dir: Path
) -> None:
    first = titanic_run(tmp_path / "a", data_dir, strategy)
    second = titanic_run(tmp_path / "b", data_dir, strategy)
    assert first.summary["steps"] == STEPS.get(strategy, 4) and first.summary["good_nodes"] >= 2
    assert first.grade is not None and first.grade.valid_submission
    assert tree(first.run_dir) == tree(second.run_dir)
    operators = {op for _, op, *_ in tree(first.run_dir)}
    if strategy in ("greedy", "mcts", "mcgs"):
        assert "improve" in operators
    if strategy == "evolutionary":
        assert "crossover" in operators
    if strategy == "refine":  # the budget ends with the ensemble of the two paths
        assert {"ablate", "ensemble"} <= operators


def test_mcts_with_two_workers(tmp_path: Path, titanic: Any, data_dir: Path) -> None:
    result = titanic_run(tmp_path / "run", data_dir, "mcts", workers=2)
    nodes = Journal.open(result.run_dir / "journal.sqlite").nodes()
    assert len(nodes) == 4 and {n.worker for n in nodes} == {0, 1}
    assert result.summary["best_node"] is not None
