"""``search.final_top_k``: the k best nodes run once more; the best mean of two scores wins."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

import podium
from podium.scaffolds.final_choice import HeldOut, Rerun, best_held_out, pick, top_k
from tests.scaffolds.strategies.trees import node, tree_of
from tests.support import node_answers, run_config, solution, write_script


def test_top_k_and_pick_follow_the_direction() -> None:
    tree = tree_of(
        node(1, metric=0.3), node(2, metric=0.9), node(3, metric=0.7), node(4, buggy=True)
    )
    assert [n.id for n in top_k(tree, 2)] == [2, 3]
    reruns = [Rerun(2, 0.9, 0.5), Rerun(3, 0.7, 0.75), Rerun(1, 0.3, None, "failed")]
    assert pick(reruns, lower_is_better=False) == 3  # means 0.7 and 0.725
    assert pick(reruns, lower_is_better=True) == 2
    assert pick([Rerun(1, 0.3, None, "failed")], lower_is_better=False) is None


@pytest.mark.slow
def test_a_lucky_score_loses_to_a_steady_one(tmp_path: Path, data_dir: Path) -> None:
    marker = Path("/tmp") / f"podium-lucky-{uuid.uuid4().hex}"
    lucky = (
        f"import os\nif os.path.exists({str(marker)!r}):\n    print('VALIDATION_METRIC: 0.5')\n"
        f"else:\n    open({str(marker)!r}, 'w').close()\n    print('VALIDATION_METRIC: 0.99')\n"
    )
    answers = [node_answers(solution(0.8)), node_answers(solution(None, extra=lucky))]
    script = write_script(tmp_path / "s.jsonl", answers)
    config = run_config(
        script,
        tmp_path / "run",
        data_dir,
        steps=2,
        search={"num_drafts": 2, "final_top_k": 2},
        sandbox={"name": "local"},
    )  # fmt: skip  (the marker lives in host /tmp)
    try:
        result = podium.run(config)
    finally:
        marker.unlink(missing_ok=True)
    s = result.summary
    assert s["best_node"] == 1 and s["best_metric"] == 0.8
    assert {r["node_id"]: r["rerun_metric"] for r in s["final_reruns"]} == {2: 0.5, 1: 0.8}
    rerun_output = (result.run_dir / "nodes" / "2" / "rerun" / "output.txt").read_text()
    assert "VALIDATION_METRIC: 0.5" in rerun_output
    assert '"node_id": 1' in (result.run_dir / "best" / "node.json").read_text()


def test_on_held_out_scores_the_host_decides_and_unscored_nodes_never_win() -> None:
    tree = tree_of(
        node(1, metric=0.9), node(2, metric=0.5), node(3, metric=0.7), node(4, buggy=True)
    )
    scores = {1: 0.6, 2: 0.8, 4: 1.0}  # node 3 has none (its held-out rows were unusable)
    held = HeldOut(of_node=scores.get, of_rerun={2: 0.7, 1: 0.65}.get)
    assert [n.id for n in top_k(tree, 3, held)] == [2, 1]  # a buggy node is never a candidate
    assert best_held_out(tree, held).id == 2  # type: ignore[union-attr]
    assert best_held_out(tree, HeldOut(of_node=lambda i: None, of_rerun=lambda i: None)) is None
    tied = HeldOut(of_node={1: 0.8, 2: 0.8, 3: 0.8}.get, of_rerun=lambda i: None)
    assert [n.id for n in top_k(tree, 3, tied)] == [1, 3, 2]  # by validation metric then
