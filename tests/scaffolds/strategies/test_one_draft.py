"""One draft, the floor of comparisons (``podium.scaffolds.strategies.one_draft``): it hands out a
single draft, whatever the tree and the RNG, and then stops the run, even with several workers,
buggy or not; on the real loop its run stops after one node under any step budget."""

from __future__ import annotations

import json
import random
from pathlib import Path

from podium.records import Action
from podium.scaffolds.strategies.one_draft import OneDraft
from podium.tree import SearchTree
from tests.scaffolds.strategies.trees import node, tree_of
from tests.support import TITANIC, podium_cli


def test_one_draft_then_nothing() -> None:
    strategy = OneDraft(None)
    assert strategy.name == "one-draft"
    empty = tree_of()
    assert strategy.next_action(empty, random.Random(0)) == Action(operator="draft")
    handed_out = SearchTree(lower_is_better=False)
    handed_out.pending.append(Action(operator="draft"))  # a second worker asks meanwhile
    assert strategy.next_action(handed_out, random.Random(0)) is None
    for finished in (tree_of(node(1, metric=0.5)), tree_of(node(1, buggy=True))):
        assert strategy.next_action(finished, random.Random(1)) is None


def test_a_run_stops_after_its_one_draft(tmp_path: Path, data_dir: Path) -> None:
    out = tmp_path / "run"
    result = podium_cli(
        "run", str(TITANIC), "--strategy", "one-draft", "--steps", "20", "--workers", "2",
        "--out", str(out), "--data-dir", str(data_dir),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert (summary["steps"], summary["best_node"]) == (1, 1), summary
    assert "stopped: the strategy had nothing left to try — 1 step," in result.stdout
