"""Every new operator through each builtin backend's real SDK against the fake servers: a
planner and a coder, a leak flagged, an ablation (an analysis node), a refine given as an edit
that cites it, and an ensemble of three parents, in one run per wire format."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from podium.api import runs as api
from podium.code_edit import render_edits
from podium.formats import Journal
from podium.records import Action, NodeState
from podium.testing import Received, Reply
from tests.api.test_backends_e2e import BACKENDS, model_config
from tests.scaffolds.strategies.trees import in_order
from tests.support import solution

pytestmark = pytest.mark.slow

ABLATION = """\
print("ABLATION baseline: 0.7")
print("ABLATION model replaced by a constant: 0.5")
"""
EVIDENCE = "fit(X_all) uses the validation rows"
FINDINGS = "The model matters: without it the score falls from 0.7 to 0.5."


# Three drafts; then an ablation of node 2, a refine of node 2 citing it, an ensemble.
Tour = in_order(
    *[Action(operator="draft")] * 3,
    Action(operator="ablate", parent_ids=(2,)),
    Action(operator="refine", parent_ids=(2,), ref_ids=(4,)),
    Action(operator="ensemble", parent_ids=(2, 3, 5)),
)


def responder() -> Callable[[Received], Reply]:
    """A fake server playing the whole model: the operator is read from its prompt."""
    drafts = iter([solution(1.0), solution(0.6), solution(0.7)])

    def respond(received: Received) -> Reply:
        text = received.prompt_text
        if received.forced_tool == "report_leakage":
            return Reply.tool_call("report_leakage", {"leakage": True, "evidence": EVIDENCE})
        if received.forced_tool == "submit_review":
            summary = FINDINGS if "is an analysis of a solution" in text else "Ran."
            return Reply.tool_call("submit_review", {"is_bug": False, "summary": summary,
                                                     "metric": None})  # fmt: skip
        if "Do not write the code" in text:
            return Reply.text("Plan: do what the job says, carefully.")
        if "Write an ablation study" in text:
            code = ABLATION
        elif "# What the analyses of this solution found" in text:
            edit = render_edits([('print("VALIDATION_METRIC: 0.6")\n',
                                  'print("VALIDATION_METRIC: 0.65")\n')])  # fmt: skip
            return Reply.text(f"Tune the model.\n\n{edit}")
        elif "# Solutions to ensemble" in text:
            code = solution(0.75)
        else:
            code = next(drafts)
        return Reply.text(f"As planned.\n\n```python\n{code}```\n")

    return respond


@pytest.mark.parametrize("provider", list(BACKENDS))
def test_every_new_operator_through_each_wire_format(
    provider: str, tmp_path: Path, data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    model, key_var, fake_type = BACKENDS[provider]
    with fake_type(responder=responder()) as fake:
        monkeypatch.setenv(key_var, fake.api_key)
        search = {"strategy": f"{__name__}:Tour", "planning": "separate",
                  "leak_check": "suspicious"}  # fmt: skip
        config = model_config(tmp_path, data_dir, model, fake.url, search=search)
        config["budget"]["steps"] = 6
        result = api.run(config)
    assert fake.problems == []
    journal = Journal.open(result.run_dir / "journal.sqlite")
    nodes = {n.id: n for n in journal.nodes(NodeState.DONE)}
    calls = journal.calls()
    journal.close()

    assert nodes[1].is_buggy and nodes[1].bug_reason == f"leak: {EVIDENCE}"
    ablation = nodes[4]
    assert (ablation.kind, ablation.summary, ablation.metric) == ("analysis", FINDINGS, None)
    refine = nodes[5]
    assert refine.ref_ids == (4,) and refine.code == nodes[2].code.replace("0.6", "0.65")
    ensemble = nodes[6]
    assert (ensemble.parent_ids, ensemble.is_good) == ((2, 3, 5), True)
    assert all(n.plan == "Plan: do what the job says, carefully." for n in nodes.values())
    by_role = result.summary["usage"]["by_role"]
    assert {r: u["calls"] for r, u in by_role.items()} == {"plan": 6, "code": 6, "review": 7}
    assert [c.request.tool_choice for c in calls if c.node_id == 1 and c.role == "review"] == [
        "submit_review",
        "report_leakage",
    ]
    assert result.summary["best_node"] == 6
