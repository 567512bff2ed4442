"""How ``--replay`` matches a request to the record (end to end: tests/api/test_replay.py)."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

import pytest

from podium.errors import RecordExhausted, ReplayMissError
from podium.plugins.backends.answers import RecordedAnswer
from podium.plugins.backends.replay import ReplayBackend, request_key
from podium.records import Message, ModelRequest, RequestMeta
from podium.scaffolds.operators import budget_line


def ask(prompt: str, seq: int = 0) -> ModelRequest:
    return ModelRequest(
        messages=[Message(role="user", content=prompt)], meta=RequestMeta(role="code", seq=seq)
    )


def with_budget(steps: int, time_left_s: float | None) -> str:
    ctx: Any = SimpleNamespace(budget=SimpleNamespace(steps_left=steps, time_left_s=time_left_s))
    return "Draft a solution.\n" + budget_line(ctx)


def test_the_budget_sentence_the_prompts_carry_is_ignored() -> None:
    """Pinned to the real sentence: rewording budget_line must keep replays matching."""
    a, b = with_budget(20, 7200.0), with_budget(3, 650.0)
    assert a != b
    assert request_key("code", ask(a)) == request_key("code", ask(b))
    assert request_key("code", ask(a)) != request_key("code", ask(a + " More."))
    assert request_key("code", ask(a)) != request_key("review", ask(a))


def test_identical_requests_get_the_recorded_answers_in_order_then_the_record_ends() -> None:
    recorded = [
        RecordedAnswer(role="code", text=f"answer {i}", request=ask("same", i)) for i in range(2)
    ]
    replay = ReplayBackend("openai/gpt-4.1", recorded, "runs/OLD")
    texts = [asyncio.run(replay.complete(ask("same", i))).text for i in range(2)]
    assert texts == ["answer 0", "answer 1"]
    with pytest.raises(RecordExhausted, match=r"every recorded code answer in runs/OLD"):
        asyncio.run(replay.complete(ask("same", 2)))


def test_identical_requests_get_what_the_same_node_got_whoever_asks_first() -> None:
    recorded = [
        RecordedAnswer(role="code", text=f"node {n}", request=ask("same", n), node_id=n)
        for n in (1, 2, 3)
    ]
    replay = ReplayBackend("m", recorded, "OLD")
    for n in (3, 1, 2):  # workers asking in another order than the recorded run
        request = ask("same", n).model_copy(update={"meta": RequestMeta(node_id=n)})
        assert asyncio.run(replay.complete(request)).text == f"node {n}"


def test_a_request_past_what_was_recorded_is_a_miss_while_answers_remain() -> None:
    recorded = [RecordedAnswer(role="code", text="x", request=ask("one")),
                RecordedAnswer(role="code", text="y", request=ask("two"))]  # fmt: skip
    replay = ReplayBackend("openai/gpt-4.1", recorded, "runs/OLD")
    asyncio.run(replay.complete(ask("one")))
    with pytest.raises(ReplayMissError, match=r"in runs/OLD") as miss:
        asyncio.run(replay.complete(ask("one")))
    assert miss.value.hint and "--replay-miss live" in miss.value.hint


def test_a_miss_says_where_the_request_differs() -> None:
    recorded = [RecordedAnswer(role="code", text="x", request=ask("The data has 400 rows."))]
    replay = ReplayBackend("m", recorded, "OLD")
    with pytest.raises(ReplayMissError, match="differs at character") as miss:
        asyncio.run(replay.complete(ask("The data has 500 rows.")))
    assert "400 rows" in str(miss.value) and "500 rows" in str(miss.value)
