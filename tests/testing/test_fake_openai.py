"""The fake OpenAI server against the real ``openai`` SDK: answers, faults, and validation."""

from __future__ import annotations

import functools
import http.client
import json
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import openai
import pytest

from podium.testing import FakeOpenAI, Received, Reply
from tests.support import scaled

pytest_plugins = ["podium.testing.fixtures"]

USER: Any = [{"role": "user", "content": "hello world!"}]  # 12 characters: 3 prompt tokens
SUBMIT = {
    "type": "function",
    "function": {
        "name": "submit",
        "description": "Submit a file.",
        "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
    },
}


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(api_key="sk-test-0123456789") as server:
        yield server


def client(fake: FakeOpenAI, *, key: str | None = None, timeout: float = 5.0) -> openai.OpenAI:
    return openai.OpenAI(
        base_url=fake.url,
        api_key=key or fake.api_key,
        max_retries=0,
        timeout=timeout,
        # plain HTTP needs no CA bundle, whose loading costs ~30 ms a client
        http_client=openai.DefaultHttpx2Client(verify=False),
    )


@functools.cache
def shared_client(fake: FakeOpenAI) -> openai.OpenAI:
    """One client per fake, so that its requests share keep-alive connections."""
    return client(fake)


def ask(fake: FakeOpenAI, **kwargs: Any) -> Any:
    options: dict[str, Any] = {"model": "gpt-4.1", "messages": USER, **kwargs}
    return shared_client(fake).chat.completions.create(**options)


def test_text_round_trip_reports_estimated_usage(fake: FakeOpenAI) -> None:
    fake.queue(Reply.text("abcdefgh"))
    answer = ask(fake)
    assert answer.choices[0].message.content == "abcdefgh"
    assert answer.choices[0].finish_reason == "stop"
    assert answer.id.startswith("chatcmpl-")
    assert (answer.usage.prompt_tokens, answer.usage.completion_tokens) == (3, 2)
    assert answer.usage.total_tokens == 5
    got = fake.received[-1]
    assert (got.method, got.path, got.auth, got.key) == (
        "POST",
        "/v1/chat/completions",
        "bearer",
        fake.api_key,
    )
    assert got.prompt_text == "hello world!"
    assert got.problems == [] and fake.problems == [] and fake.hits == 1


def test_explicit_usage_and_truncation(fake: FakeOpenAI) -> None:
    fake.queue(
        Reply.text("cut", input_tokens=1000, output_tokens=7), Reply.truncated("half an ans")
    )
    first, second = ask(fake), ask(fake)
    assert (first.usage.prompt_tokens, first.usage.completion_tokens) == (1000, 7)
    assert second.choices[0].finish_reason == "length"


def test_tool_call_arguments_arrive_as_a_json_string(fake: FakeOpenAI) -> None:
    fake.queue(Reply.tool_call("submit", {"path": "a.csv"}))
    answer = ask(fake, tools=[SUBMIT])
    choice = answer.choices[0]
    assert choice.finish_reason == "tool_calls"
    assert choice.message.content is None
    call = choice.message.tool_calls[0]
    assert call.id.startswith("call_") and call.function.name == "submit"
    assert isinstance(call.function.arguments, str)
    assert json.loads(call.function.arguments) == {"path": "a.csv"}
    assert fake.received[-1].tools == ["submit"]


def test_raw_arguments_are_sent_verbatim(fake: FakeOpenAI) -> None:
    fake.queue(Reply.tool_call("submit", {}, raw_arguments='{"path": "a.cs'))
    call = ask(fake, tools=[SUBMIT]).choices[0].message.tool_calls[0]
    assert call.function.arguments == '{"path": "a.cs'


def test_default_answer_calls_the_forced_tool(fake: FakeOpenAI) -> None:
    forced = {"type": "function", "function": {"name": "submit"}}
    call = ask(fake, tools=[SUBMIT], tool_choice=forced).choices[0].message.tool_calls[0]
    assert (call.function.name, call.function.arguments) == ("submit", "{}")
    assert fake.received[-1].forced_tool == "submit"
    assert ask(fake).choices[0].message.content == "OK"


def test_queue_first_then_responder(fake: FakeOpenAI) -> None:
    def responder(received: Received) -> Reply:
        return Reply.text(f"echo: {received.prompt_text}")

    fake.responder = responder
    fake.queue(Reply.text("one"), Reply.text("two"))
    answers = [ask(fake).choices[0].message.content for _ in range(3)]
    assert answers == ["one", "two", "echo: hello world!"]


def test_empty_reply_has_empty_content(fake: FakeOpenAI) -> None:
    fake.queue(Reply.empty())
    answer = ask(fake)
    assert answer.choices[0].message.content == ""
    assert answer.usage.completion_tokens == 0


def test_rate_limit_carries_retry_after(fake: FakeOpenAI) -> None:
    fake.queue(Reply.rate_limited(2.5))
    with pytest.raises(openai.RateLimitError) as caught:
        ask(fake)
    assert caught.value.response.headers["retry-after"] == "2.5"
    assert caught.value.code == "rate_limit_exceeded"
    assert caught.value.type == "requests"


FAULTS = [
    (Reply.server_error(), openai.InternalServerError),
    (Reply.server_error(502), openai.InternalServerError),
    (Reply.overloaded(), openai.InternalServerError),
    (Reply.error(403), openai.PermissionDeniedError),
    (Reply.error(429, code="insufficient_quota"), openai.RateLimitError),
    (Reply.malformed(), json.JSONDecodeError),
    (Reply.disconnect(), openai.APIConnectionError),
]


@pytest.mark.parametrize(("reply", "error"), FAULTS, ids=lambda x: getattr(x, "kind", None))
def test_faults_raise_the_sdk_exception(
    fake: FakeOpenAI, reply: Reply, error: type[Exception]
) -> None:
    fake.queue(reply)
    with pytest.raises(error) as caught:
        ask(fake)
    assert type(caught.value) is error  # exactly, not a subclass
    assert ask(fake).choices[0].message.content == "OK"  # the server is still fine


def test_overloaded_is_a_503(fake: FakeOpenAI) -> None:
    fake.queue(Reply.overloaded())
    with pytest.raises(openai.InternalServerError) as caught:
        ask(fake)
    assert caught.value.status_code == 503


def test_context_too_long(fake: FakeOpenAI) -> None:
    fake.queue(Reply.context_too_long())
    with pytest.raises(openai.BadRequestError) as caught:
        ask(fake)
    assert caught.value.code == "context_length_exceeded"
    assert "maximum context length is 128000 tokens" in str(caught.value)


def test_hang_times_the_client_out(fake: FakeOpenAI) -> None:
    fake.queue(Reply.hang(5))
    started = time.monotonic()
    with pytest.raises(openai.APITimeoutError):
        client(fake, timeout=0.3).chat.completions.create(model="gpt-4.1", messages=USER)
    assert time.monotonic() - started < scaled(2)


def test_stop_does_not_wait_for_a_hanging_handler() -> None:
    fake = FakeOpenAI().start()
    fake.queue(Reply.hang(30))
    with pytest.raises(openai.APITimeoutError):
        client(fake, timeout=0.2).chat.completions.create(model="gpt-4.1", messages=USER)
    started = time.monotonic()
    fake.stop()
    assert time.monotonic() - started < scaled(1)
    fake.stop()  # idempotent


def test_wrong_key_is_an_authentication_error_with_the_key_masked(fake: FakeOpenAI) -> None:
    with pytest.raises(openai.AuthenticationError) as caught:
        client(fake, key="sk-wrong-secret-9999").chat.completions.create(
            model="gpt-4.1", messages=USER
        )
    assert caught.value.code == "invalid_api_key"
    assert "sk-wrong-secret-9999" not in str(caught.value)
    assert fake.received[-1].key == "sk-wrong-secret-9999"
    assert fake.problems == []  # a bad key is not a schema problem


@pytest.mark.parametrize("fake_openai", [{"echo_key_in_errors": True}], indirect=True)
def test_echo_key_in_errors_puts_the_key_in_the_message(fake_openai: FakeOpenAI) -> None:
    with pytest.raises(openai.AuthenticationError) as caught:
        client(fake_openai, key="sk-wrong-secret-9999").chat.completions.create(
            model="gpt-4.1", messages=USER
        )
    assert "sk-wrong-secret-9999" in str(caught.value)


@pytest.mark.parametrize("fake_openai", [{"models": ["gpt-4.1"]}], indirect=True)
def test_unknown_model_is_not_found(fake_openai: FakeOpenAI) -> None:
    with pytest.raises(openai.NotFoundError) as caught:
        ask(fake_openai, model="gpt-9")
    assert caught.value.code == "model_not_found"
    assert ask(fake_openai).choices[0].message.content == "OK"
    assert [m.id for m in client(fake_openai).models.list()] == ["gpt-4.1"]


INVALID = [
    ({"extra_body": {"tools": [{"type": "function", "function": {"name": "f"}}]}}, "parameters"),
    ({"extra_body": {"frobnicate": 1}}, "Unrecognized request argument supplied: frobnicate"),
    ({"messages": [{"role": "robot", "content": "hi"}]}, "'messages[0].role'"),
    ({"messages": []}, "'messages' must be a non-empty array"),
    ({"tool_choice": "auto"}, "only allowed when 'tools' are specified"),
    ({"tools": [SUBMIT], "tool_choice": {"type": "function", "function": {"name": "x"}}}, "'x'"),
    ({"max_tokens": 0}, "'max_tokens'"),
    ({"max_tokens": 5, "max_completion_tokens": 5}, "not both"),
    ({"temperature": 2.5}, "'temperature'"),
    ({"extra_body": {"stream": True}}, "'stream'"),
    (
        {
            "messages": [
                *USER,
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": "c1",
                            "type": "function",
                            "function": {"name": "f", "arguments": "{}"},
                        }
                    ],
                },
                {"role": "user", "content": "and?"},
            ]
        },
        "did not have response messages: c1",
    ),
    (
        {"messages": [*USER, {"role": "tool", "tool_call_id": "c9", "content": "x"}]},
        "must be a response to a preceding message with 'tool_calls'",
    ),
]


@pytest.mark.parametrize(("options", "named"), INVALID)
def test_invalid_requests_are_rejected_and_recorded(
    fake: FakeOpenAI, options: dict[str, Any], named: str
) -> None:
    fake.queue(Reply.text("kept for the next valid request"))
    with pytest.raises(openai.BadRequestError) as caught:
        ask(fake, **options)
    assert named in str(caught.value)
    assert fake.problems and named in " ".join(fake.received[-1].problems)
    assert ask(fake).choices[0].message.content == "kept for the next valid request"


def test_a_complete_tool_conversation_is_valid(fake: FakeOpenAI) -> None:
    call = {"id": "c1", "type": "function", "function": {"name": "submit", "arguments": "{}"}}
    messages = [
        {"role": "developer", "content": "Be brief."},
        {"role": "user", "content": [{"type": "text", "text": "go"}]},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "content": "done"},
    ]
    ask(fake, messages=messages, tools=[SUBMIT], tool_choice="auto", temperature=0)
    assert fake.problems == []
    assert fake.received[-1].prompt_text == "Be brief.\ngo\ndone"


def test_reasoning_models_take_max_completion_tokens_only(fake: FakeOpenAI) -> None:
    with pytest.raises(openai.BadRequestError) as caught:
        ask(fake, model="o3-mini", max_tokens=50)
    assert caught.value.code == "unsupported_parameter"
    assert caught.value.param == "max_tokens"
    assert "Use 'max_completion_tokens' instead." in str(caught.value)
    assert ask(fake, model="o3-mini", max_completion_tokens=50).choices[0].message.content == "OK"


def test_reasoning_models_take_no_temperature_but_one(fake: FakeOpenAI) -> None:
    with pytest.raises(openai.BadRequestError) as caught:
        ask(fake, model="openai/gpt-5-mini", temperature=0.2)
    assert caught.value.code == "unsupported_value"
    assert "does not support 0.2 with this model" in str(caught.value)
    ask(fake, model="gpt-5", temperature=1)


def test_models_list_and_fixture(fake_openai: FakeOpenAI) -> None:
    assert "gpt-4.1" in [m.id for m in client(fake_openai).models.list()]
    assert fake_openai.hits == 0  # only completions count


def test_keep_alive_and_content_length_on_the_wire(fake: FakeOpenAI) -> None:
    connection = http.client.HTTPConnection("127.0.0.1", fake.port, timeout=5)
    headers = {"Authorization": f"Bearer {fake.api_key}", "Content-Type": "application/json"}
    body = json.dumps({"model": "gpt-4.1", "messages": USER})
    for _ in range(2):  # the second request reuses the connection
        connection.request("POST", "/v1/chat/completions", body, headers)
        response = connection.getresponse()
        data = response.read()
        assert response.status == 200
        assert int(response.headers["Content-Length"]) == len(data)
        assert response.headers["x-request-id"].startswith("req_")
        assert json.loads(data)["object"] == "chat.completion"
    connection.request("POST", "/v1/chat/completions", "{not json", headers)
    response = connection.getresponse()
    assert response.status == 400 and b"JSON object" in response.read()
    connection.close()


def test_a_responder_that_raises_becomes_a_500_naming_it(fake: FakeOpenAI) -> None:
    def responder(received: Received) -> Reply:
        raise ValueError("boom")

    fake.responder = responder
    with pytest.raises(openai.InternalServerError, match="fake server error: ValueError: boom"):
        ask(fake)


def test_a_wrong_base_url_is_a_404_and_still_logged(fake: FakeOpenAI) -> None:
    sdk = openai.OpenAI(base_url=f"http://127.0.0.1:{fake.port}", api_key="k", max_retries=0)
    with pytest.raises(openai.NotFoundError):
        sdk.chat.completions.create(model="gpt-4.1", messages=USER)
    assert fake.received[-1].path == "/chat/completions"
    assert fake.hits == 0


def test_requests_are_served_concurrently(fake: FakeOpenAI) -> None:
    fake.queue(*[Reply.text("slow", delay_s=0.3) for _ in range(8)])
    started = time.monotonic()
    with ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(lambda _: ask(fake).choices[0].message.content, range(8)))
    assert answers == ["slow"] * 8
    assert time.monotonic() - started < scaled(1.5)
    assert fake.hits == 8
