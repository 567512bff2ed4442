"""The leak check: a good solution's score put to the review model (or, without one, a perfect
score flagged), a leaked node made buggy with the evidence, and then debugged."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

import podium
from podium.errors import ConfigError
from podium.formats import Journal
from podium.records import Metric, NodeState
from podium.scaffolds import Prompts, leakage
from tests.support import (
    code_answer,
    node_answers,
    review_answer,
    run_config,
    solution,
    write_script,
)

pytestmark = pytest.mark.slow

EVIDENCE = "model.fit(pd.concat([X_train, X_val]), ...) trains on the validation rows"


def leak_answer(leak: bool, evidence: str = "") -> dict[str, Any]:
    args = {"leakage": leak, "evidence": evidence}
    return {"role": "review", "tool_call": {"name": "report_leakage", "arguments": args}}


@pytest.mark.parametrize(
    ("value", "lower_is_better", "perfect"),
    [(1.0, False, True), (0.999, False, False), (0.0, True, True), (0.01, True, False)],
)
def test_a_perfect_score_is_what_suspicious_checks(
    value: float, lower_is_better: bool, perfect: bool
) -> None:
    metric = Metric(value=value, lower_is_better=lower_is_better)
    assert leakage.due("suspicious", metric) is perfect and leakage.due("always", metric)
    assert not leakage.due("off", metric)
    reason = asyncio.run(leakage.check(None, "", "", metric, None, Prompts()))  # type: ignore[arg-type]
    assert (reason is not None) is perfect  # without a review model, the score is the flag


def test_a_leaked_score_makes_the_node_buggy_and_a_debug_fixes_it(
    tmp_path: Path, data_dir: Path
) -> None:
    script = write_script(
        tmp_path / "s.jsonl",
        [
            code_answer(solution(1.0), plan="Fit on everything."),
            review_answer(),
            leak_answer(True, EVIDENCE),
            node_answers(solution(0.8), plan="Fit on the training rows only."),
        ],
    )
    search = {"leak_check": "suspicious", "num_drafts": 1, "debug_prob": 1.0}
    result = podium.run(run_config(script, tmp_path / "run", data_dir, steps=2, search=search))
    journal = Journal.open(result.run_dir / "journal.sqlite")
    one, two = journal.nodes(NodeState.DONE)
    calls = journal.calls()
    journal.close()
    assert one.is_buggy and one.bug_reason == f"leak: {EVIDENCE}"
    assert one.metric is not None and one.metric.value == 1.0  # kept, never ranked
    assert [c.request.tool_choice for c in calls if c.node_id == 1 and c.role == "review"] == [
        "submit_review",
        "report_leakage",
    ]
    debug_prompt = next(c for c in calls if c.node_id == 2 and c.role == "code")
    assert f"Why it failed: leak: {EVIDENCE}" in debug_prompt.request.messages[-1].content
    assert (two.operator, two.is_good) == ("debug", True)
    assert [c.role for c in calls if c.node_id == 2] == ["code", "review"]  # 0.8: not checked
    assert result.summary["best_node"] == 2


def test_always_needs_a_review_model(tmp_path: Path, data_dir: Path) -> None:
    config = run_config(Path("unused"), tmp_path / "run", data_dir, steps=1,
                        model={"name": "baseline"}, search={"leak_check": "always"})  # fmt: skip
    with pytest.raises(ConfigError, match="leak_check = always needs a review model"):
        podium.run(config)
