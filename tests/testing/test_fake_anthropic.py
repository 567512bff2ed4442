"""The fake Anthropic server against the real ``anthropic`` SDK: answers, faults, validation."""

from __future__ import annotations

import functools
import json
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import anthropic
import pytest

from podium.testing import FakeAnthropic, Received, Reply
from tests.support import scaled

pytest_plugins = ["podium.testing.fixtures"]

MODEL = "claude-sonnet-4-6"
USER: Any = [{"role": "user", "content": "hello world!"}]  # 12 characters: 3 input tokens
SUBMIT = {
    "name": "submit",
    "description": "Submit a file.",
    "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}},
}


@pytest.fixture
def fake() -> Iterator[FakeAnthropic]:
    with FakeAnthropic(api_key="sk-ant-test-0123456789") as server:
        yield server


def client(fake: FakeAnthropic, *, timeout: float = 5.0, **auth: Any) -> anthropic.Anthropic:
    auth = auth or {"api_key": fake.api_key}
    return anthropic.Anthropic(
        base_url=fake.url,
        max_retries=0,
        timeout=timeout,
        # plain HTTP needs no CA bundle, whose loading costs ~30 ms a client
        http_client=anthropic.DefaultHttpxClient(verify=False),
        **auth,
    )


@functools.cache
def shared_client(fake: FakeAnthropic) -> anthropic.Anthropic:
    """One client per fake, so that its requests share keep-alive connections."""
    return client(fake)


def ask(fake: FakeAnthropic, **kwargs: Any) -> Any:
    options: dict[str, Any] = {"model": MODEL, "max_tokens": 100, "messages": USER, **kwargs}
    return shared_client(fake).messages.create(**options)


def test_text_round_trip_reports_estimated_usage(fake: FakeAnthropic) -> None:
    fake.queue(Reply.text("abcdefgh"))
    answer = ask(fake, system="Be brief.")
    assert [(b.type, b.text) for b in answer.content] == [("text", "abcdefgh")]
    assert answer.stop_reason == "end_turn"
    assert answer.id.startswith("msg_") and answer.model == MODEL
    # "Be brief.\nhello world!" is 22 characters: 6 tokens
    assert (answer.usage.input_tokens, answer.usage.output_tokens) == (6, 2)
    got = fake.received[-1]
    assert (got.path, got.key) == ("/v1/messages", fake.api_key)
    assert got.prompt_text == "Be brief.\nhello world!"
    assert got.problems == [] and fake.problems == [] and fake.hits == 1


def test_truncated_reply_stops_at_max_tokens(fake: FakeAnthropic) -> None:
    fake.queue(Reply.truncated("half an ans"))
    assert ask(fake).stop_reason == "max_tokens"


def test_tool_call_input_arrives_as_an_object(fake: FakeAnthropic) -> None:
    fake.queue(Reply.tool_call("submit", {"path": "a.csv"}, text="Submitting."))
    answer = ask(fake, tools=[SUBMIT])
    assert answer.stop_reason == "tool_use"
    text, call = answer.content
    assert (text.type, text.text) == ("text", "Submitting.")
    assert call.type == "tool_use" and call.id.startswith("toolu_")
    assert (call.name, call.input) == ("submit", {"path": "a.csv"})
    assert fake.received[-1].tools == ["submit"]


def test_default_answer_calls_the_forced_tool(fake: FakeAnthropic) -> None:
    answer = ask(fake, tools=[SUBMIT], tool_choice={"type": "tool", "name": "submit"})
    assert [(b.type, b.name, b.input) for b in answer.content] == [("tool_use", "submit", {})]
    assert fake.received[-1].forced_tool == "submit"
    assert ask(fake, tools=[SUBMIT], tool_choice={"type": "any"}).content[0].name == "submit"


def test_queue_first_then_responder(fake: FakeAnthropic) -> None:
    def responder(received: Received) -> Reply:
        return Reply.text(f"echo: {received.prompt_text}")

    fake.responder = responder
    fake.queue(Reply.text("one"), Reply.text("two"))
    answers = [ask(fake).content[0].text for _ in range(3)]
    assert answers == ["one", "two", "echo: hello world!"]


def test_empty_reply_has_no_content(fake: FakeAnthropic) -> None:
    fake.queue(Reply.empty())
    answer = ask(fake)
    assert answer.content == []
    assert answer.usage.output_tokens == 0


def test_both_key_headers_are_accepted(
    fake: FakeAnthropic, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    forms: list[dict[str, Any]] = [
        {"api_key": fake.api_key},  # anthropic 2.x sends it as a Bearer token
        {"auth_token": fake.api_key},
        {"default_headers": {"x-api-key": fake.api_key}},
    ]
    for auth in forms:
        client(fake, **auth).messages.create(model=MODEL, max_tokens=10, messages=USER)
    assert [r.auth for r in fake.received] == ["bearer", "bearer", "x-api-key"]


def test_rate_limit_carries_retry_after(fake: FakeAnthropic) -> None:
    fake.queue(Reply.rate_limited(3))
    with pytest.raises(anthropic.RateLimitError) as caught:
        ask(fake)
    assert caught.value.response.headers["retry-after"] == "3"
    assert caught.value.type == "rate_limit_error"
    assert caught.value.request_id is not None and caught.value.request_id.startswith("req_")


FAULTS = [
    (Reply.server_error(), anthropic.InternalServerError),
    (Reply.server_error(503), anthropic.ServiceUnavailableError),
    (Reply.overloaded(), anthropic.OverloadedError),
    (Reply.error(403), anthropic.PermissionDeniedError),
    (Reply.error(413), anthropic.ContentTooLargeError),
    (Reply.malformed(), json.JSONDecodeError),
    (Reply.disconnect(), anthropic.APIConnectionError),
]


@pytest.mark.parametrize(("reply", "error"), FAULTS, ids=lambda x: getattr(x, "kind", None))
def test_faults_raise_the_sdk_exception(
    fake: FakeAnthropic, reply: Reply, error: type[Exception]
) -> None:
    fake.queue(reply)
    with pytest.raises(error) as caught:
        ask(fake)
    assert type(caught.value) is error  # exactly, not a subclass
    assert ask(fake).content[0].text == "OK"  # the server is still fine


def test_overloaded_is_a_529(fake: FakeAnthropic) -> None:
    fake.queue(Reply.overloaded())
    with pytest.raises(anthropic.OverloadedError) as caught:
        ask(fake)
    assert caught.value.status_code == 529 and caught.value.type == "overloaded_error"


def test_context_too_long(fake: FakeAnthropic) -> None:
    fake.queue(Reply.context_too_long())
    with pytest.raises(anthropic.BadRequestError) as caught:
        ask(fake)
    assert caught.value.api_message == "prompt is too long: 250000 tokens > 200000 maximum"


def test_hang_times_the_client_out(fake: FakeAnthropic) -> None:
    fake.queue(Reply.hang(5))
    started = time.monotonic()
    with pytest.raises(anthropic.APITimeoutError):
        client(fake, timeout=0.3).messages.create(model=MODEL, max_tokens=10, messages=USER)
    assert time.monotonic() - started < scaled(2)


def test_wrong_key_is_an_authentication_error(fake: FakeAnthropic) -> None:
    with pytest.raises(anthropic.AuthenticationError) as caught:
        client(fake, api_key="sk-ant-wrong-9999").messages.create(
            model=MODEL, max_tokens=10, messages=USER
        )
    assert caught.value.api_message == "invalid x-api-key"
    assert fake.problems == []


@pytest.mark.parametrize("fake_anthropic", [{"echo_key_in_errors": True}], indirect=True)
def test_echo_key_in_errors_puts_the_key_in_the_message(fake_anthropic: FakeAnthropic) -> None:
    with pytest.raises(anthropic.AuthenticationError) as caught:
        client(fake_anthropic, api_key="sk-ant-wrong-9999").messages.create(
            model=MODEL, max_tokens=10, messages=USER
        )
    assert "sk-ant-wrong-9999" in str(caught.value)


@pytest.mark.parametrize("fake_anthropic", [{"models": [MODEL]}], indirect=True)
def test_unknown_model_is_not_found(fake_anthropic: FakeAnthropic) -> None:
    with pytest.raises(anthropic.NotFoundError) as caught:
        ask(fake_anthropic, model="claude-opus-4-6")
    assert caught.value.type == "not_found_error"
    assert [m.id for m in client(fake_anthropic).models.list()] == [MODEL]
    assert fake_anthropic.hits == 1  # only completions count


def tool_use(block_id: str) -> dict[str, Any]:
    return {"type": "tool_use", "id": block_id, "name": "submit", "input": {}}


def tool_result(block_id: str) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": block_id, "content": "done"}


INVALID = [
    ({"messages": [{"role": "system", "content": "Be brief."}, *USER]}, 'Unexpected role "system"'),
    ({"messages": [{"role": "assistant", "content": "hi"}]}, 'first message must use the "user"'),
    ({"messages": []}, "messages: Field required"),
    ({"messages": [{"role": "user", "content": ""}]}, "must have non-empty content"),
    (
        {"messages": [{"role": "user", "content": [{"type": "text", "text": " "}]}]},
        "non-whitespace",
    ),
    ({"max_tokens": 0}, "max_tokens"),
    ({"extra_body": {"temperature": 1.5}}, "'temperature'"),
    ({"extra_body": {"frobnicate": 1}}, "frobnicate: Extra inputs are not permitted"),
    ({"extra_body": {"stream": True}}, "stream"),
    ({"tools": [{"name": "bad name!", "input_schema": {"type": "object"}}]}, "tools.0.name"),
    ({"tools": [{"name": "submit"}]}, "tools.0.input_schema"),
    ({"tools": [SUBMIT, SUBMIT]}, "Tool names must be unique"),
    ({"tools": [SUBMIT], "tool_choice": {"type": "tool", "name": "other"}}, "'other'"),
    ({"tool_choice": {"type": "any"}}, "while providing tools"),
    (
        {"messages": [*USER, {"role": "assistant", "content": [tool_use("t1")]}, *USER]},
        "`tool_use` ids were found without `tool_result` blocks immediately after: t1",
    ),
    (
        {"messages": [{"role": "user", "content": [tool_result("t9")]}]},
        "unexpected `tool_use_id` found in `tool_result` blocks: t9",
    ),
    (
        {"extra_body": {"thinking": {"type": "enabled", "budget_tokens": 2000}}},
        "`max_tokens` must be greater than `thinking.budget_tokens`",
    ),
]


@pytest.mark.parametrize(("options", "named"), INVALID)
def test_invalid_requests_are_rejected_and_recorded(
    fake: FakeAnthropic, options: dict[str, Any], named: str
) -> None:
    fake.queue(Reply.text("kept for the next valid request"))
    with pytest.raises(anthropic.BadRequestError) as caught:
        ask(fake, **options)
    assert named in str(caught.value)
    assert caught.value.type == "invalid_request_error"
    assert fake.problems and named in " ".join(fake.received[-1].problems)
    assert ask(fake).content[0].text == "kept for the next valid request"


def test_a_complete_tool_conversation_is_valid(fake: FakeAnthropic) -> None:
    messages = [
        {"role": "user", "content": [{"type": "text", "text": "go"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "Sure."}, tool_use("t1")]},
        {"role": "user", "content": [tool_result("t1")]},
    ]
    system = [{"type": "text", "text": "Be brief."}]
    ask(fake, system=system, messages=messages, tools=[SUBMIT], tool_choice={"type": "auto"})
    assert fake.problems == []
    assert fake.received[-1].prompt_text == "Be brief.\ngo\nSure.\ndone"


def test_missing_anthropic_version_is_a_problem(fake: FakeAnthropic) -> None:
    body = json.dumps({"model": MODEL, "max_tokens": 10, "messages": USER}).encode()
    request = urllib.request.Request(
        f"{fake.url}/v1/messages",
        data=body,
        headers={"x-api-key": fake.api_key, "content-type": "application/json"},
    )
    with pytest.raises(urllib.error.HTTPError) as caught:
        urllib.request.urlopen(request, timeout=5)
    error = json.loads(caught.value.read())
    assert caught.value.code == 400 and error["type"] == "error"
    assert "anthropic-version" in error["error"]["message"]
    assert caught.value.headers["request-id"].startswith("req_")
    assert fake.received[-1].auth == "x-api-key"
    assert fake.problems == ["anthropic-version: header is required"]
