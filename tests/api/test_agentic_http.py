"""Agentic nodes through each builtin backend's real SDK, against the fake servers on 127.0.0.1.

The fakes check every request as the providers do, tool turns included (an assistant's tool
call must be answered by a result naming its id, in the next turn; a result must answer a call
of the turn before): a run whose conversation broke the wire format would show up as a
problem. Each turn's first request fails (429, 5xx, overloaded, malformed, a dropped
connection), so the one retry policy is seen to apply to every turn of a conversation.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from itertools import cycle
from pathlib import Path

import pytest

from podium.api import runs as api
from podium.formats import Journal
from podium.testing import FakeAnthropic, FakeOpenAI, Received, Reply
from tests.api.test_backends_e2e import BACKENDS, model_config

pytestmark = pytest.mark.slow

CELLS = [
    "import pandas as pd\ntrain = pd.read_csv('./input/train.csv')\nprint(train.shape)\n",
    "print(undefined_name)\n",
    "from sklearn.linear_model import LogisticRegression\n"
    "test = pd.read_csv('./input/test.csv')\n"
    "model = LogisticRegression().fit(train[['x1', 'x2']], train['y'])\n"
    "print('VALIDATION_METRIC: 0.9')\n"
    "pd.DataFrame({'id': test['id'], 'y': model.predict(test[['x1', 'x2']])})"
    ".to_csv('./submission/submission.csv', index=False)\n",
]
RESULT = re.compile(r"^\[cell (\d+)\] (\w+)", re.M)


def agentic_responder() -> Callable[[Received], Reply]:
    """A model that runs ``CELLS`` one per turn, then finishes; it reads where it is from the
    cell results the request carries, and checks that cell 2's error reached it."""

    def respond(received: Received) -> Reply:
        if received.forced_tool == "submit_review":
            return Reply.tool_call("submit_review", {"is_bug": False, "summary": "Fine."})
        done = RESULT.findall(received.prompt_text)
        if len(done) >= 2:
            assert done[1][1] == "error" and "NameError" in received.prompt_text
        if len(done) < len(CELLS):
            return Reply.tool_call(
                "run_cell", {"code": CELLS[len(done)]}, text=f"Step {len(done)}."
            )
        return Reply.tool_call("finish", {"plan": "Logistic regression on x1 and x2."})

    return respond


def failing_first(respond: Callable[[Received], Reply]) -> Callable[[Received], Reply]:
    """Every distinct request fails once (the faults in turn), then is answered."""
    faults = cycle(
        [
            Reply.rate_limited(0.01),
            Reply.server_error(500),
            Reply.overloaded(),
            Reply.malformed(),
            Reply.disconnect(),
        ]
    )
    seen: set[str] = set()

    def wrapped(received: Received) -> Reply:
        key = hashlib.sha256(json.dumps(received.body, sort_keys=True).encode()).hexdigest()
        if key not in seen:
            seen.add(key)
            return next(faults)
        return respond(received)

    return wrapped


@pytest.mark.parametrize("provider", list(BACKENDS))
def test_an_agentic_node_over_each_providers_wire_format(
    provider: str, tmp_path: Path, data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    model, key_var, fake_type = BACKENDS[provider]
    fake: FakeOpenAI | FakeAnthropic
    # The toy task's prompts are short: a lower cache minimum than the providers' 1024 tokens.
    with fake_type(responder=failing_first(agentic_responder()), cache_min_tokens=256) as fake:
        monkeypatch.setenv(key_var, fake.api_key)
        config = model_config(
            tmp_path, data_dir, model, fake.url, search={"operators": "agentic", "num_drafts": 1}
        )
        config["budget"]["steps"] = 1
        result = api.run(config)
    assert fake.problems == []
    node_dir = result.run_dir / "nodes" / "1"
    journal = Journal.open(result.run_dir / "journal.sqlite")
    node = journal.nodes()[0]
    calls = journal.calls(1)
    journal.close()
    assert not node.is_buggy, node.bug_reason
    assert node.metric is not None and node.metric.value == 0.9
    assert (node_dir / "submission.csv").is_file()
    code_calls = [c for c in calls if c.role == "code"]
    assert [c.request.meta.turn for c in code_calls] == [0, 1, 2, 3]
    assert all(c.attempts == 2 for c in calls)  # each turn failed once, then went through
    last = code_calls[-1].request.messages
    ids = [m.tool_calls[0].id for m in last if m.tool_calls]
    assert len(ids) == 3 and len(set(ids)) == 3 and all(ids)  # the provider's own ids
    assert [m.tool_call_id for m in last if m.role == "tool"] == ids
    assert node.usage.calls == len(calls) and node.usage.input_tokens > 0
    # Each turn resends the conversation: from the second on, its start is read from the
    # provider's prompt cache, and the run's usage says how much.
    usage = result.summary["usage"]
    assert usage["cache_read_tokens"] > 0, usage
    assert all(c.response.usage.cache_read_tokens > 0 for c in code_calls[2:] if c.response)
