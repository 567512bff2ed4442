"""Selection regret of one run, computed exactly on the toy task (no kernels: the nodes'
submissions are written here, with known accuracies)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from podium.benchmarks import FolderTask, selection_report
from podium.records import Metric, Node, NodeState


def submission(task: FolderTask, right: int) -> pd.DataFrame:
    """The toy's answers with all but the first ``right`` of 100 labels flipped."""
    answers = pd.read_csv(task.answers)
    flipped = answers["y"].where(answers.index < right, 1 - answers["y"])
    return answers.assign(y=flipped)


def node(node_id: int, metric: float, buggy: bool = False) -> Node:
    return Node(
        id=node_id, operator="draft", state=NodeState.DONE, is_buggy=buggy,
        metric=Metric(value=metric, lower_is_better=False), has_submission=True,
    )  # fmt: skip


@pytest.fixture
def nodes(toy_task: FolderTask, tmp_path: Path) -> list[Node]:
    # validation metric vs test accuracy: 0.9 → 0.60, 0.8 → 0.95, 0.7 → 0.80, buggy → 1.00
    made = [(1, 0.9, 60), (2, 0.8, 95), (3, 0.7, 80), (4, 0.99, 100)]
    for node_id, _, right in made:
        (tmp_path / str(node_id)).mkdir()
        submission(toy_task, right).to_csv(tmp_path / str(node_id) / "submission.csv", index=False)
    return [node(i, m, buggy=i == 4) for i, m, _ in made]


def test_the_regret_of_choosing_by_validation_metric(
    toy_task: FolderTask, nodes: list[Node], tmp_path: Path
) -> None:
    report = selection_report(toy_task, nodes, lambda i: tmp_path / str(i), nodes[0])
    assert report is not None
    assert report["good_nodes"] == 3  # the buggy node is never graded
    assert report["chosen_by"] == "validation" and report["held_out_rank_correlation"] is None
    assert (report["chosen"]["node_id"], report["chosen"]["score"]) == (1, 0.6)
    assert (report["best"]["node_id"], report["best"]["score"]) == (2, 0.95)
    graded = {i: toy_task.grade(tmp_path / str(i) / "submission.csv") for i in (1, 2)}
    percentiles = [graded[i].leaderboard_percentile or 0.0 for i in (1, 2)]
    assert report["regret"] == {
        "score": pytest.approx(0.35),
        "percentile": pytest.approx(percentiles[1] - percentiles[0]),
        "medals_lost": _rank(graded[2].medal) - _rank(graded[1].medal),
    }
    # ranks by metric 1, 2, 3 against by accuracy 3, 1, 2: Spearman 1 − 6·(4+1+1)/(3·8) = −0.5
    assert report["rank_correlation"] == pytest.approx(-0.5)


def test_held_out_scores_are_correlated_too_and_no_regret_when_the_best_is_chosen(
    toy_task: FolderTask, nodes: list[Node], tmp_path: Path
) -> None:
    held = {1: 0.5, 2: 0.9, 3: 0.7}.get
    report = selection_report(toy_task, nodes, lambda i: tmp_path / str(i), nodes[1], held)
    assert report is not None and report["chosen_by"] == "held-out"
    assert report["regret"] == {"score": 0.0, "percentile": 0.0, "medals_lost": 0}
    assert report["held_out_rank_correlation"] == pytest.approx(1.0)


def _rank(medal: str | None) -> int:
    return {"gold": 3, "silver": 2, "bronze": 1}.get(medal or "", 0)
