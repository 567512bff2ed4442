"""The ensemble operator through the LLM path: three parents in one prompt, one solution."""

from __future__ import annotations

from pathlib import Path

import pytest

import podium
from podium.formats import Journal
from podium.records import Action, NodeState
from tests.scaffolds.strategies.trees import in_order
from tests.support import node_answers, run_config, solution, write_script

pytestmark = pytest.mark.slow


ThreeThenEnsemble = in_order(
    *[Action(operator="draft")] * 3, Action(operator="ensemble", parent_ids=(1, 2, 3))
)


def test_an_ensemble_of_three_parents_sees_each_and_is_a_child_of_each(
    tmp_path: Path, data_dir: Path
) -> None:
    marks = [f"# member {i}: model {name}" for i, name in enumerate(("forest", "lr", "knn"), 1)]
    script = write_script(
        tmp_path / "s.jsonl",
        [
            *(node_answers(solution(0.7 + i / 100, extra=m), plan=f"Plan {i}.")
              for i, m in enumerate(marks, 1)),
            node_answers(solution(0.8, extra="# averages the three"), plan="Average them."),
        ],
    )  # fmt: skip
    search = {"strategy": f"{__name__}:ThreeThenEnsemble"}
    result = podium.run(run_config(script, tmp_path / "run", data_dir, steps=4, search=search))
    journal = Journal.open(result.run_dir / "journal.sqlite")
    *_, four = journal.nodes(NodeState.DONE)
    prompt = next(c for c in journal.calls() if c.node_id == 4 and c.role == "code")
    journal.close()
    text = prompt.request.messages[-1].content
    for i, mark in enumerate(marks, 1):
        assert f"## Solution {i} (node {i}), validation metric 0.7{i}\nPlan: Plan {i}." in text
        assert mark in text
    assert "(none yet)" in text  # the members are not repeated in the memory
    assert (four.operator, four.parent_ids, four.is_good) == ("ensemble", (1, 2, 3), True)
    assert result.summary["best_node"] == 4
