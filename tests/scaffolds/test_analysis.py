"""Analysis nodes through the LLM operators: an ablation study of a solution, run and
summarised as findings, then a refinement of the part the findings name, given as an edit."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import podium
from podium.code_edit import render_edits
from podium.exec_output import ablation_results
from podium.formats import Journal
from podium.records import Action, NodeState
from tests.scaffolds.strategies.trees import in_order, node, tree_of
from tests.support import code_answer, review_answer, run_config, solution, write_script

pytestmark = pytest.mark.slow

STUDY = f"{__name__}:Study"
FINDINGS = "The model matters most: replaced by a constant the score falls from 0.8 to 0.5."
ABLATION = """\
import shutil
print("ABLATION baseline: 0.8")
print("ABLATION model replaced by a constant: 0.5")
print("ABLATION without feature x: 0.79")
shutil.copy("input/sample_submission.csv", "submission/submission.csv")
"""


# A draft, an ablation of it, a refinement of it citing the ablation.
Study = in_order(
    Action(operator="draft"),
    Action(operator="ablate", parent_ids=(1,)),
    Action(operator="refine", parent_ids=(1,), ref_ids=(2,)),
)


def test_an_analysis_is_never_good_never_debugged_and_its_ablation_lines_read() -> None:
    study = node(2, "ablate", (1,), buggy=True).model_copy(update={"kind": "analysis"})
    tree = tree_of(node(1, metric=0.8), study)
    assert tree.debuggable(3) == [] and [n.id for n in tree.analyses(1)] == [2]
    assert not study.model_copy(update={"is_buggy": False}).is_good
    output = "ABLATION baseline: 0.8\nABLATION  no   model :0.5\nABLATION x: nan\nABLATION y: z\n"
    assert ablation_results(output) == [("baseline", 0.8), ("no model", 0.5)]
    assert len(ablation_results("ABLATION p: 1\n" * 1000)) == 50


def test_an_ablation_is_summarised_and_its_findings_drive_the_refinement(
    tmp_path: Path, data_dir: Path
) -> None:
    draft = solution(0.8)
    edit = render_edits(
        [('print("VALIDATION_METRIC: 0.8")\n', 'print("VALIDATION_METRIC: 0.9")\n')]
    )
    script = write_script(
        tmp_path / "s.jsonl",
        [
            code_answer(draft, plan="A forest."),
            review_answer(summary="Fine."),
            code_answer(ABLATION, plan="Ablate the model and feature x."),
            review_answer(summary=FINDINGS),
            {"role": "code", "text": f"Tune the model, the part that matters.\n\n{edit}"},
            review_answer(summary="Better."),
        ],
    )
    result = podium.run(
        run_config(script, tmp_path / "run", data_dir, steps=3, search={"strategy": STUDY})
    )
    journal = Journal.open(result.run_dir / "journal.sqlite")
    _, two, three = journal.nodes(NodeState.DONE)
    calls = journal.calls()
    journal.close()

    assert (two.kind, two.operator, two.is_buggy, two.metric) == ("analysis", "ablate", False, None)
    assert two.summary == FINDINGS and not two.is_good and not two.has_submission
    review_prompt = next(c for c in calls if c.node_id == 2 and c.role == "review")
    assert "is an analysis of a solution" in review_prompt.request.messages[-1].content
    refine_prompt = next(c for c in calls if c.node_id == 3 and c.role == "code")
    text = refine_prompt.request.messages[-1].content
    assert f"# What the analyses of this solution found\n- node 2 (ablate): {FINDINGS}" in text
    assert "SEARCH/REPLACE" in text and "elsewhere in the search" not in text  # not as a solution
    assert (three.kind, three.ref_ids, three.code) == (
        "solution",
        (2,),
        draft.replace("0.8", "0.9"),
    )
    summary = result.summary
    assert (summary["best_node"], summary["analysis_nodes"], summary["good_nodes"]) == (3, 1, 2)
    assert json.loads((result.run_dir / "best" / "node.json").read_text())["node_id"] == 3


def test_a_failed_analysis_is_buggy_and_asks_no_review(tmp_path: Path, data_dir: Path) -> None:
    script = write_script(
        tmp_path / "s.jsonl",
        [
            code_answer(solution(0.8)),
            review_answer(),
            code_answer("raise ValueError('no such column')\n"),
        ],
    )
    result = podium.run(
        run_config(script, tmp_path / "run", data_dir, steps=2, search={"strategy": STUDY})
    )
    journal = Journal.open(result.run_dir / "journal.sqlite")
    two = journal.nodes(NodeState.DONE)[1]
    roles = [(c.node_id, c.role) for c in journal.calls()]
    journal.close()
    assert two.kind == "analysis" and two.is_buggy
    assert two.bug_reason == "ValueError: no such column" and (2, "review") not in roles
