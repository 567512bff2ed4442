"""Whole runs through each builtin backend's real SDK, against the fake servers on 127.0.0.1."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from podium.api import runs as api
from podium.code_edit import render_edits
from podium.formats import Journal
from podium.records import NodeState
from podium.testing import FakeAnthropic, FakeOpenAI, Received, Reply
from tests.support import agent_responder, cli_env, podium_cli, run_config, solution

pytestmark = pytest.mark.slow

BACKENDS = {
    "openai": ("openai/gpt-4.1", "OPENAI_API_KEY", FakeOpenAI),
    "anthropic": ("anthropic/claude-sonnet-4-6", "ANTHROPIC_API_KEY", FakeAnthropic),
    "litellm": ("litellm/openai/gpt-4.1", "OPENAI_API_KEY", FakeOpenAI),
}


def model_config(tmp_path: Path, data_dir: Path, model: str, url: str, **extra: Any) -> Any:
    config = run_config(Path("unused"), tmp_path / "run", data_dir, steps=2, **extra)
    config["model"] = {"name": model, "base_url": url, "retry_wait": 0.01, **extra.get("model", {})}
    return config


@pytest.mark.parametrize("provider", list(BACKENDS))
def test_a_run_completes_through_each_backend(
    provider: str, tmp_path: Path, data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    model, key_var, fake_type = BACKENDS[provider]
    with fake_type(responder=agent_responder()) as fake:
        monkeypatch.setenv(key_var, fake.api_key)
        fake.queue(Reply.rate_limited(0.05))  # the first call is retried, the run never sees it
        result = api.run(model_config(tmp_path, data_dir, model, fake.url))
    assert fake.problems == []
    s = result.summary
    assert (s["status"], s["steps"], s["good_nodes"]) == ("finished", 2, 2)
    journal = Journal.open(result.run_dir / "journal.sqlite")
    calls = journal.calls()
    assert [(c.role, c.model) for c in calls] == [("code", model), ("review", model)] * 2
    assert calls[0].attempts == 2 and fake.hits == 5
    cost = sum(c.response.usage.cost_usd for c in calls if c.response)
    assert cost > 0
    assert s["usage"]["cost_usd"] == pytest.approx(cost)
    assert s["usage"]["by_role"]["review"]["calls"] == 2
    nodes = journal.nodes(NodeState.DONE)
    assert sum(n.usage.cost_usd for n in nodes) == pytest.approx(cost)
    journal.close()


def test_context_overflow_trims_and_a_cut_off_answer_fails_the_node(
    fake_openai: FakeOpenAI, tmp_path: Path, data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", fake_openai.api_key)
    fake_openai.responder = agent_responder()
    fake_openai.queue(Reply.context_too_long())
    result = api.run(model_config(tmp_path, data_dir, "openai/gpt-4.1", fake_openai.url))
    first, second = fake_openai.received[0].prompt_text, fake_openai.received[1].prompt_text
    assert "(none yet)" in first and "(none yet)" not in second  # the memory went
    assert "left out: the prompt was too long" in second
    assert result.summary["good_nodes"] == 2

    fake_openai.queue(Reply.truncated("Plan.\n\n```python\nimport os\nprint(os.listdir("))
    cut = api.run(model_config(tmp_path / "b", data_dir, "openai/gpt-4.1", fake_openai.url))
    journal = Journal.open(cut.run_dir / "journal.sqlite")
    node = journal.nodes(NodeState.DONE)[0]
    journal.close()
    assert node.is_buggy and "cut off at the model's token limit" in (node.bug_reason or "")
    assert node.exec is None  # incomplete code is not run


def test_a_review_in_json_text_is_understood(
    fake_openai: FakeOpenAI, tmp_path: Path, data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A server that ignores tool_choice and answers in text still gets its review read."""
    monkeypatch.setenv("OPENAI_API_KEY", fake_openai.api_key)
    fake_openai.queue(
        Reply.text(f"Plan.\n\n```python\n{solution(metric=None)}```\n"),
        Reply.text('Verdict:\n```json\n{"is_bug": false, "summary": "ok", "metric": 0.75}\n```'),
    )
    config = model_config(tmp_path, data_dir, "openai/gpt-4.1", fake_openai.url)
    config["budget"]["steps"] = 1
    result = api.run(config)
    assert result.summary["best_metric"] == 0.75


def test_cli_run_with_base_url_reports_calls_and_cost(
    fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    fake_openai.responder = agent_responder()
    env = cli_env(OPENAI_API_KEY=fake_openai.api_key)
    done = podium_cli(
        "run", "tests/fixtures/tasks/toy", "--model", "openai/gpt-4.1", "--base-url",
        fake_openai.url, "--steps", "1", "--out", str(tmp_path / "run"), "-o",
        "sandbox.preimports=[]", env=env,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "2 model calls" in done.stdout and "$0.0" in done.stdout


PLAN_TEXT = "Plan: copy the sample submission and print the validation line."


def test_planner_coder_and_reviewer_answer_on_their_own_wires_and_are_billed_apart(
    tmp_path: Path, data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """search.planning = separate: the plan role (Anthropic's wire), then the code role
    (OpenAI's), then the review role (litellm), each recorded and costed under its role; and a
    replay of the run, with no server at all, asks the same calls and gets the same nodes."""
    models = {"plan": "anthropic/claude-sonnet-4-6", "name": "openai/gpt-4.1",
              "review": "litellm/openai/gpt-4.1-mini"}  # fmt: skip
    config = run_config(Path("unused"), tmp_path / "run", data_dir, steps=2,
                        search={"planning": "separate"})  # fmt: skip
    config["model"] = {**models, "retry_wait": 0.01}
    with (
        FakeAnthropic(responder=lambda _: Reply.text(PLAN_TEXT)) as planner,
        FakeOpenAI(responder=agent_responder()) as coder,
    ):
        for var, value in [("ANTHROPIC_API_KEY", planner.api_key), ("ANTHROPIC_BASE_URL",
                           planner.url), ("OPENAI_API_KEY", coder.api_key),
                           ("OPENAI_BASE_URL", coder.url)]:  # fmt: skip
            monkeypatch.setenv(var, value)
        result = api.run(config)
    assert planner.problems == [] and coder.problems == []
    assert all("Do not write the code" in r.prompt_text for r in planner.received)
    to_code = [r.prompt_text for r in coder.received if r.forced_tool != "submit_review"]
    assert len(to_code) == 2 and all(f"# The plan to implement\n{PLAN_TEXT}" in t for t in to_code)

    journal = Journal.open(result.run_dir / "journal.sqlite")
    calls = [(c.node_id, c.role, c.model) for c in journal.calls()]
    nodes = journal.nodes(NodeState.DONE)
    journal.close()
    assert calls == [
        (n, role, models["name" if role == "code" else role])
        for n in (1, 2)
        for role in ("plan", "code", "review")
    ]
    assert [n.plan for n in nodes] == [PLAN_TEXT] * 2 and all(n.is_good for n in nodes)
    s = result.summary
    assert (s["plan_model"], s["review_model"]) == (models["plan"], models["review"])
    by_role = s["usage"]["by_role"]
    assert {r: u["calls"] for r, u in by_role.items()} == {"code": 2, "plan": 2, "review": 2}
    assert all(u["cost_usd"] > 0 for u in by_role.values())
    assert sum(u["cost_usd"] for u in by_role.values()) == pytest.approx(s["usage"]["cost_usd"])

    replay = run_config(Path("unused"), tmp_path / "again", data_dir, steps=2,
                        search={"planning": "separate"},
                        model={"name": "baseline", "replay": str(result.run_dir)})  # fmt: skip
    again = api.run(replay)
    journal = Journal.open(again.run_dir / "journal.sqlite")
    assert [(c.node_id, c.role, c.model) for c in journal.calls()] == calls
    assert all(c.response and c.response.replayed for c in journal.calls())
    assert [(n.plan, n.code) for n in journal.nodes(NodeState.DONE)] == [
        (n.plan, n.code) for n in nodes
    ]
    journal.close()


def edit_responder(received: Received) -> Reply:
    """Drafts a whole toy solution; asked for an edit, raises the printed metric (from 0.8),
    then answers with an edit whose SEARCH the code does not have."""
    if received.forced_tool == "submit_review":
        return Reply.tool_call(
            "submit_review", {"is_bug": False, "summary": "Ran.", "metric": None}
        )
    text = received.prompt_text
    if "SEARCH/REPLACE" not in text:
        return Reply.text(f"Copy the sample.\n\n```python\n{solution(0.8)}```\n")
    if 'print("VALIDATION_METRIC: 0.8")' in text:
        change = ('print("VALIDATION_METRIC: 0.8")', 'print("VALIDATION_METRIC: 0.9")')
    else:
        change = ("import numpy as np", "import numpy")
    return Reply.text(
        "Raise the score.\n\n```\n" + render_edits([(change[0] + "\n", change[1] + "\n")]) + "```\n"
    )


@pytest.mark.parametrize("provider", list(BACKENDS))
def test_an_edit_of_the_parent_is_applied_or_fails_the_node_saying_why(
    provider: str, tmp_path: Path, data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """search.edit_format = edit through each wire format: improve answers with SEARCH/REPLACE
    blocks; node 2's applies to node 1's code and runs, node 3's does not and runs nothing."""
    model, key_var, fake_type = BACKENDS[provider]
    with fake_type(responder=edit_responder) as fake:
        monkeypatch.setenv(key_var, fake.api_key)
        config = model_config(tmp_path, data_dir, model, fake.url,
                              search={"edit_format": "edit", "num_drafts": 1})  # fmt: skip
        config["budget"]["steps"] = 3
        result = api.run(config)
    assert fake.problems == []
    journal = Journal.open(result.run_dir / "journal.sqlite")
    one, two, three = journal.nodes(NodeState.DONE)
    journal.close()
    assert (two.operator, two.parent_ids, two.plan) == ("improve", (1,), "Raise the score.")
    assert two.code == one.code.replace("0.8", "0.9") and two.metric and two.metric.value == 0.9
    assert (three.operator, three.parent_ids, three.code, three.exec) == ("improve", (2,), "", None)
    assert three.is_buggy and (three.bug_reason or "").startswith(
        "edit did not apply: block 1 of 1: its SEARCH text"
    )
    assert not (result.run_dir / "nodes" / "3" / "output.txt").exists()
