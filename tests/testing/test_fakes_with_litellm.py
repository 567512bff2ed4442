"""litellm against both fakes: the requests it sends pass their checks, and their faults
surface as litellm's exceptions. Slow: importing litellm takes seconds, so it happens in a
fixture, only when these tests run."""

from __future__ import annotations

import json
from collections.abc import Iterator
from types import ModuleType
from typing import Any

import pytest

from podium.testing import FakeAnthropic, FakeOpenAI, Reply

pytestmark = pytest.mark.slow

USER: Any = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "hello"}]
SUBMIT = {
    "type": "function",
    "function": {
        "name": "submit",
        "description": "Submit a file.",
        "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
    },
}


@pytest.fixture(scope="module")
def litellm() -> Iterator[ModuleType]:
    with pytest.MonkeyPatch.context() as patch:
        # Without this litellm fetches its price map from the network at import.
        patch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        import litellm

        yield litellm


def test_litellm_with_fake_openai(litellm: ModuleType) -> None:
    with FakeOpenAI() as fake:
        options: dict[str, Any] = {"api_base": fake.url, "api_key": fake.api_key, "num_retries": 0}
        fake.queue(Reply.text("hi there"), Reply.tool_call("submit", {"path": "a.csv"}))
        answer = litellm.completion(
            model="openai/gpt-4.1", messages=USER, max_tokens=50, temperature=0.2, **options
        )
        assert answer.choices[0].message.content == "hi there"
        # litellm turns max_tokens into max_completion_tokens for a reasoning model
        answer = litellm.completion(
            model="openai/o3-mini",
            messages=USER,
            max_tokens=50,
            tools=[SUBMIT],
            tool_choice="required",
            **options,
        )
        call = answer.choices[0].message.tool_calls[0]
        assert json.loads(call.function.arguments) == {"path": "a.csv"}
        assert "max_completion_tokens" in (fake.received[-1].body or {})
        fake.queue(Reply.rate_limited(2))
        with pytest.raises(litellm.RateLimitError) as caught:
            litellm.completion(model="openai/gpt-4.1", messages=USER, **options)
        assert caught.value.response.headers["retry-after"] == "2"
        assert fake.problems == []


def test_litellm_with_fake_anthropic(litellm: ModuleType) -> None:
    with FakeAnthropic() as fake:
        options: dict[str, Any] = {"api_base": fake.url, "api_key": fake.api_key, "num_retries": 0}
        model = "anthropic/claude-sonnet-4-5"
        fake.queue(Reply.text("hi there"), Reply.tool_call("submit", {"path": "a.csv"}))
        answer = litellm.completion(
            model=model, messages=USER, max_tokens=50, temperature=0.2, **options
        )
        assert answer.choices[0].message.content == "hi there"
        sent = fake.received[-1]
        assert (sent.auth, (sent.body or {})["system"]) == (
            "x-api-key",
            [{"type": "text", "text": "Be brief."}],
        )
        answer = litellm.completion(
            model=model,
            messages=USER,
            max_tokens=50,
            tools=[SUBMIT],
            tool_choice="required",
            **options,
        )
        call = answer.choices[0].message.tool_calls[0]
        assert json.loads(call.function.arguments) == {"path": "a.csv"}
        assert fake.received[-1].forced_tool == "submit"  # "required" became {"type": "any"}
        fake.queue(Reply.rate_limited(2))
        with pytest.raises(litellm.RateLimitError) as caught:
            litellm.completion(model=model, messages=USER, max_tokens=50, **options)
        # litellm keeps the Anthropic response's headers here, not on .response
        assert caught.value.litellm_response_headers["retry-after"] == "2"
        assert fake.problems == []
