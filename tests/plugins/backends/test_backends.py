"""The builtin backends end to end: the real openai / anthropic / litellm clients over HTTP
against the fake servers, through the gateway a run uses. Each test checks what the caller gets
back and what reached the server (``fake.received``, ``fake.problems``)."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import pytest

from podium.api.runs import load_registry
from podium.errors import (
    ModelAuthError,
    ModelContextLengthError,
    ModelError,
    ModelFatalError,
    ModelTransientError,
    UserError,
)
from podium.plugins.gateway import ModelGateway, RetryPolicy
from podium.records import Message, ModelRequest, ModelResponse, ToolCall
from podium.scaffolds.review import REVIEW_TOOL, review_from_text
from podium.testing import FakeAnthropic, FakeOpenAI, FakeServer, Received, Reply
from tests.plugins.backends.conftest import (
    ANTHROPIC_WIRE,
    FAKE_KEY,
    FAST,
    OPENAI_WIRE,
    Complete,
    MakeBackend,
    Provider,
)

REVIEW_ARGS = {"is_bug": False, "summary": "Trained a GBM; validation accuracy 0.8.", "metric": 0.8}


def body(fake: FakeServer, i: int = -1) -> dict[str, Any]:
    """The JSON body of the ``i``-th completion request the fake received."""
    sent = [r for r in fake.received if r.path == fake.completion_path]
    found = sent[i].body
    assert found is not None
    return found


def texts(content: Any) -> str:
    """A message's (or Anthropic ``system``'s) text: a string, or text blocks."""
    if isinstance(content, str):
        return content
    return "\n".join(block["text"] for block in content if block.get("type") == "text")


# --- answers ------------------------------------------------------------------------------


def test_text_round_trip(
    provider: Provider,
    fake: FakeServer,
    make_backend: MakeBackend,
    complete: Complete,
    ask: ModelRequest,
) -> None:
    fake.queue(Reply.text("Hello!", input_tokens=1200, output_tokens=340))
    response, attempts = complete(make_backend(fake), ask)

    info = provider.info()
    assert info.priced and info.input_price and info.output_price
    assert response.text == "Hello!"
    assert response.tool_call is None
    assert response.finish == "stop" and not response.truncated
    assert response.model == provider.model
    assert response.latency_s > 0
    usage = response.usage
    assert (usage.input_tokens, usage.output_tokens, usage.calls) == (1200, 340, 1)
    assert usage.cost_usd == pytest.approx(1200 * info.input_price + 340 * info.output_price)
    assert attempts == 1

    assert fake.problems == []
    assert fake.hits == 1
    sent = fake.received[-1]
    assert sent.key == FAKE_KEY
    assert body(fake)["model"] == provider.model_id
    assert "careful ML engineer" in sent.prompt_text and "Say hello." in sent.prompt_text


def test_forced_tool_call(
    provider: Provider,
    fake: FakeServer,
    make_backend: MakeBackend,
    complete: Complete,
    review: ModelRequest,
) -> None:
    fake.queue(Reply.tool_call("submit_review", REVIEW_ARGS))
    response, _ = complete(make_backend(fake), review)

    # OpenAI sends the arguments as a JSON string, Anthropic as an object: both come back decoded
    call = response.tool_call
    assert call == ToolCall(name="submit_review", arguments=REVIEW_ARGS, id=call.id if call else "")
    assert call is not None and call.id  # the provider's id: a tool result must name it
    assert response.finish == "tool_call"

    assert fake.problems == []
    sent = body(fake)
    [tool] = sent["tools"]
    if provider.wire == "openai":
        assert tool["type"] == "function"
        function = tool["function"]
        assert function["name"] == "submit_review"
        assert function["description"] == REVIEW_TOOL.description
        assert function["parameters"] == REVIEW_TOOL.parameters
        assert sent["tool_choice"] == {"type": "function", "function": {"name": "submit_review"}}
    else:
        assert tool["name"] == "submit_review"
        assert tool["description"] == REVIEW_TOOL.description
        assert tool["input_schema"] == REVIEW_TOOL.parameters
        assert sent["tool_choice"] == {"type": "tool", "name": "submit_review"}


@pytest.mark.parametrize("provider", ANTHROPIC_WIRE, indirect=True)
def test_anthropic_system_prompt_is_top_level(
    provider: Provider, fake: FakeServer, make_backend: MakeBackend, complete: Complete
) -> None:
    request = ModelRequest(
        messages=[
            Message(role="system", content="Rule one."),
            Message(role="user", content="Part one."),
            Message(role="user", content="Part two."),
            Message(role="assistant", content="Noted."),
            Message(role="user", content="Go."),
        ]
    )
    response, _ = complete(make_backend(fake), request)

    assert response.text == "OK"
    assert fake.problems == []
    sent = body(fake)
    assert texts(sent["system"]) == "Rule one."
    assert "system" not in [m["role"] for m in sent["messages"]]
    assert "Part one." in texts(sent["messages"][0]["content"])
    assert "Part two." in fake.received[-1].prompt_text
    assert isinstance(sent["max_tokens"], int) and sent["max_tokens"] > 0


def test_configured_temperature_reaches_the_server(
    provider: Provider, fake: FakeServer, make_backend: MakeBackend, complete: Complete
) -> None:
    ask = ModelRequest(messages=[Message(role="user", content="Hi.")])
    complete(make_backend(fake, temperature=0.3), ask)
    complete(make_backend(fake, temperature=0.3), ask.model_copy(update={"temperature": 0.7}))
    assert fake.problems == []
    assert [r.body and r.body["temperature"] for r in fake.received[-2:]] == [0.3, 0.7]


@pytest.mark.parametrize("provider", ["anthropic"], indirect=True)
def test_anthropic_merges_turns_of_one_role(
    provider: Provider, fake: FakeServer, make_backend: MakeBackend, complete: Complete
) -> None:
    request = ModelRequest(
        messages=[
            Message(role="system", content="Rule one."),
            Message(role="system", content="Rule two."),
            Message(role="user", content="Part one."),
            Message(role="user", content="Part two."),
            Message(role="assistant", content="Noted."),
            Message(role="user", content="Go."),
        ]
    )
    complete(make_backend(fake), request)

    assert fake.problems == []
    sent = body(fake)
    # a conversation (it holds an assistant turn): marked for prompt caching (test_caching.py)
    cached = {"cache_control": {"type": "ephemeral"}}
    assert sent["system"] == [{"type": "text", "text": "Rule one.\n\nRule two.", **cached}]
    assert sent["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "Part one.\n\nPart two.", **cached}]},
        {"role": "assistant", "content": "Noted."},
        {"role": "user", "content": [{"type": "text", "text": "Go.", **cached}]},
    ]


@pytest.mark.parametrize("provider", ["anthropic"], indirect=True)
@pytest.mark.parametrize(
    ("configured", "asked", "sent"),
    [(None, None, 16384), (2000, None, 2000), (2000, 100, 100)],
    ids=["default", "config", "request"],
)
def test_anthropic_always_sends_max_tokens(
    provider: Provider,
    fake: FakeServer,
    make_backend: MakeBackend,
    complete: Complete,
    ask: ModelRequest,
    configured: int | None,
    asked: int | None,
    sent: int,
) -> None:
    # claude-sonnet-4-6 may write 64000 tokens; without streaming 16384 is the default
    assert (provider.info().max_output_tokens or 0) > 16384
    backend = make_backend(fake, max_tokens=configured)
    complete(backend, ask.model_copy(update={"max_tokens": asked}))

    assert fake.problems == []
    assert body(fake)["max_tokens"] == sent


@pytest.mark.parametrize("provider", OPENAI_WIRE, indirect=True)
@pytest.mark.parametrize(("model", "reasoning"), [("o3-mini", True), ("gpt-4.1", False)])
def test_openai_reasoning_models_take_max_completion_tokens(
    provider: Provider,
    fake: FakeServer,
    make_backend: MakeBackend,
    complete: Complete,
    ask: ModelRequest,
    model: str,
    reasoning: bool,
) -> None:
    family = provider.model.rsplit("/", 1)[0]  # openai, or litellm/openai
    request = ask.model_copy(update={"max_tokens": 100, "temperature": 0.2})
    response, _ = complete(make_backend(fake, f"{family}/{model}"), request)

    assert response.text == "OK"
    assert fake.problems == []
    sent = body(fake)
    if reasoning:
        assert sent["max_completion_tokens"] == 100
        assert "max_tokens" not in sent
        assert "temperature" not in sent
    else:
        assert sent["max_tokens"] == 100
        assert sent["temperature"] == 0.2
        assert "max_completion_tokens" not in sent


def test_text_instead_of_the_forced_tool(
    provider: Provider,
    fake: FakeServer,
    make_backend: MakeBackend,
    complete: Complete,
    review: ModelRequest,
) -> None:
    """Servers without tool calling answer in prose: the text is kept for the review step."""
    answer = 'The run looks fine.\n{"is_bug": false, "summary": "Trained a GBM.", "metric": 0.8}\n'
    fake.queue(Reply.text(answer))
    response, _ = complete(make_backend(fake), review)

    assert response.tool_call is None
    assert response.text == answer
    assert response.finish == "stop"
    assert review_from_text(response.text) == {
        "is_bug": False,
        "summary": "Trained a GBM.",
        "metric": 0.8,
    }
    assert fake.received[-1].forced_tool == "submit_review"
    assert fake.problems == []


@pytest.mark.parametrize("provider", OPENAI_WIRE, indirect=True)
def test_unparseable_tool_arguments_come_back_as_text(
    provider: Provider,
    fake: FakeServer,
    make_backend: MakeBackend,
    complete: Complete,
    review: ModelRequest,
) -> None:
    raw = '{"is_bug": true, "summary": "Crashed.", "metric": null'  # cut off
    fake.queue(Reply.tool_call("submit_review", {}, raw_arguments=raw))
    response, attempts = complete(make_backend(fake), review)

    assert response.tool_call is None
    assert response.text == raw
    assert attempts == 1


def test_cut_off_answer(
    provider: Provider,
    fake: FakeServer,
    make_backend: MakeBackend,
    complete: Complete,
    ask: ModelRequest,
) -> None:
    cut = "plan\n```python\nimport os\nprint("
    fake.queue(Reply.truncated(cut))
    response, attempts = complete(make_backend(fake), ask)

    assert response.text == cut
    assert response.finish == "length"
    assert response.truncated
    assert attempts == 1


# --- faults the gateway retries -------------------------------------------------------------


@pytest.mark.parametrize(
    "limited",
    [Reply.rate_limited(0.3), Reply.error(429, retry_after_ms=300)],
    ids=["retry-after", "retry-after-ms"],
)
def test_rate_limit_then_success_waits_as_told(
    provider: Provider,
    fake: FakeServer,
    make_backend: MakeBackend,
    complete: Complete,
    ask: ModelRequest,
    limited: Reply,
) -> None:
    fake.queue(limited, Reply.text("done"))
    backend = make_backend(fake)
    started = time.monotonic()
    response, attempts = complete(backend, ask)
    elapsed = time.monotonic() - started

    assert response.text == "done"
    assert attempts == 2
    assert fake.hits == 2
    assert elapsed >= 0.3  # the policy alone would have waited 10-50 ms
    assert fake.problems == []


@pytest.mark.parametrize(
    "fault",
    [Reply.server_error(500), Reply.overloaded(), Reply.disconnect()],
    ids=["500", "overloaded", "disconnect"],
)
def test_transient_faults_past_the_limit(
    provider: Provider,
    fake: FakeServer,
    make_backend: MakeBackend,
    complete: Complete,
    ask: ModelRequest,
    fault: Reply,
) -> None:
    fake.queue(*[fault] * (FAST.attempts + 1), Reply.text("too late"))
    with pytest.raises(ModelError) as caught:
        complete(make_backend(fake), ask)

    error = caught.value
    assert type(error) is ModelError  # no longer transient: the caller must not retry it
    assert str(error).startswith(f"{provider.backend_name}: ")
    assert f"gave up after {FAST.attempts} attempts" in str(error)
    assert error.attempts == FAST.attempts
    assert fake.hits == FAST.attempts


@pytest.mark.parametrize(
    ("replies", "attempts"),
    [([Reply.hang(2), Reply.text("done")], 2), ([Reply.hang(2)] * 2, None)],
    ids=["then-success", "every-time"],
)
def test_timeout(
    provider: Provider,
    fake: FakeServer,
    make_backend: MakeBackend,
    complete: Complete,
    ask: ModelRequest,
    replies: list[Reply],
    attempts: int | None,
) -> None:
    fake.queue(*replies)
    backend = make_backend(fake, timeout=0.3)
    two_tries = ModelGateway(RetryPolicy(attempts=2, total_s=5, first_wait_s=0.01, max_wait_s=0.05))
    if attempts is not None:
        response, made = complete(backend, ask, two_tries)
        assert (response.text, made) == ("done", attempts)
    else:
        with pytest.raises(ModelError) as caught:
            complete(backend, ask, two_tries)
        assert "timed out" in str(caught.value)
        assert "gave up after 2 attempts" in str(caught.value)
    assert fake.hits == 2


def test_malformed_body_is_retried(
    provider: Provider,
    fake: FakeServer,
    make_backend: MakeBackend,
    complete: Complete,
    ask: ModelRequest,
) -> None:
    fake.queue(Reply.malformed(), Reply.text("done"))
    response, attempts = complete(make_backend(fake), ask)

    assert response.text == "done"
    assert attempts == 2
    assert fake.hits == 2


class NoChoicesOpenAI(FakeOpenAI):
    """An OpenAI-compatible server that answers ``Reply.empty()`` with ``"choices": []`` (some
    proxies and local servers do, e.g. when a content filter drops the only choice)."""

    def _message_payload(self, reply: Reply, received: Received, usage: tuple[int, int]) -> Any:
        payload = super()._message_payload(reply, received, usage)
        if reply.kind == "text" and not reply.content:
            payload["choices"] = []
        return payload


def test_an_empty_answer_is_retried_like_any_glitch(
    provider: Provider,
    fake: FakeServer,
    make_backend: MakeBackend,
    complete: Complete,
    ask: ModelRequest,
) -> None:
    """OpenAI ``content: ""`` and Anthropic ``content: []`` alike: transient, retried by the one
    policy, and named when the attempts run out."""
    fake.queue(Reply.empty(), Reply.text("done"))
    response, attempts = complete(make_backend(fake), ask)
    assert (response.text, attempts, fake.hits) == ("done", 2, 2)

    fake.queue(*[Reply.empty()] * FAST.attempts)
    with pytest.raises(ModelError) as caught:
        complete(make_backend(fake), ask)
    error = caught.value
    assert not isinstance(error, ModelTransientError | ModelFatalError)  # the node fails
    assert str(error).startswith(f"{provider.backend_name}: the answer is empty (")
    assert f"gave up after {FAST.attempts} attempts" in str(error)
    assert error.attempts == FAST.attempts
    assert fake.hits == 2 + FAST.attempts


@pytest.mark.parametrize("provider", OPENAI_WIRE, indirect=True)
def test_an_answer_without_choices_is_retried_the_same_way(
    provider: Provider, make_backend: MakeBackend, complete: Complete, ask: ModelRequest
) -> None:
    with NoChoicesOpenAI(api_key=FAKE_KEY) as fake:
        fake.queue(Reply.empty(), Reply.text("done"))
        response, attempts = complete(make_backend(fake), ask)
        assert fake.hits == 2

    assert (response.text, attempts) == ("done", 2)


# --- faults that are not retried ------------------------------------------------------------


def test_an_answer_cut_off_before_any_text_fails_at_once(
    provider: Provider,
    fake: FakeServer,
    make_backend: MakeBackend,
    complete: Complete,
    ask: ModelRequest,
) -> None:
    """Empty because the token limit ran out (a reasoning model): another try would spend the
    same tokens the same way, so no provider's is retried; the hint says what fixes it."""
    fake.queue(Reply.text("", finish="length"), Reply.text("never asked for"))
    with pytest.raises(ModelError) as caught:
        complete(make_backend(fake, max_tokens=64), ask)

    error = caught.value
    assert not isinstance(error, ModelTransientError | ModelFatalError)
    assert str(error).startswith(f"{provider.backend_name}: the answer is empty: the token limit")
    assert "(64)" in str(error) and error.hint == "raise model.max_tokens"
    assert (error.attempts, fake.hits) == (1, 1)


def test_context_too_long(
    provider: Provider,
    fake: FakeServer,
    make_backend: MakeBackend,
    complete: Complete,
    ask: ModelRequest,
) -> None:
    fake.queue(Reply.context_too_long(), Reply.text("never asked for"))
    with pytest.raises(ModelContextLengthError) as caught:
        complete(make_backend(fake), ask)

    assert caught.value.attempts == 1
    assert fake.hits == 1


def test_rejected_key_stops_the_run(
    provider: Provider,
    fake: FakeServer,
    make_backend: MakeBackend,
    complete: Complete,
    ask: ModelRequest,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(provider.key_env, "sk-wrong-0123456789")
    with pytest.raises(ModelAuthError) as caught:
        complete(make_backend(fake), ask)

    error = caught.value
    assert isinstance(error, ModelFatalError)
    # litellm reads the provider's variable itself: Podium cannot name it
    named = "the API key" if provider.backend_name == "litellm" else provider.key_env
    assert f"check {named}" in (error.hint or "")
    assert error.attempts == 1
    assert fake.hits == 1
    assert fake.received[-1].key == "sk-wrong-0123456789"
    assert "Error code:" not in str(error)  # the provider's message, not the SDK's wrapping


def test_key_echoed_in_an_error_is_redacted(
    provider: Provider,
    make_backend: MakeBackend,
    complete: Complete,
    ask: ModelRequest,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Masked by value: the variable's name (``ACME_LLM_AUTH``) does not look secret."""
    secret = "sk-planted-4f6a9c2e81d3b7"
    monkeypatch.setenv("ACME_LLM_AUTH", secret)
    with provider.fake(echo_key_in_errors=True) as fake:
        backend = make_backend(fake, api_key_env="ACME_LLM_AUTH")
        with pytest.raises(ModelAuthError) as caught:
            complete(backend, ask)

    assert fake.received[-1].key == secret  # sent, so the 401 echoed it
    message = str(caught.value)
    assert secret not in message
    assert secret not in (caught.value.hint or "")
    assert "***" in message or "REDACTED" in message  # litellm masks x-api-key itself


def test_key_echoed_in_an_answer_is_masked(
    provider: Provider,
    make_backend: MakeBackend,
    complete: Complete,
    ask: ModelRequest,
    review: ModelRequest,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A proxy that echoes the key in its answers: the text and the tool call's arguments come
    out of the gateway masked, so the journal only ever sees ``***``."""
    secret = "sk-planted-answer-7d02c4e9"
    monkeypatch.setenv("ACME_LLM_AUTH", secret)
    with provider.fake(api_key=secret) as fake:
        fake.queue(
            Reply.text(f"your key is {secret}"),
            Reply.tool_call("submit_review", {**REVIEW_ARGS, "summary": f"saw {secret}"}),
        )
        said, _ = complete(make_backend(fake, api_key_env="ACME_LLM_AUTH"), ask)
        called, _ = complete(make_backend(fake, api_key_env="ACME_LLM_AUTH"), review)

    assert said.text == "your key is ***"
    assert called.tool_call is not None and called.tool_call.arguments["summary"] == "saw ***"


def test_credentials_in_the_base_url_are_masked(
    provider: Provider,
    fake: FakeServer,
    make_backend: MakeBackend,
    complete: Complete,
    ask: ModelRequest,
) -> None:
    """``--base-url https://user:key@proxy/v1``: the error naming the endpoint masks the key.
    (The SDKs send the URL's credentials as Basic auth, which the fakes refuse.)"""
    secret = "url-planted-5c3e8a1f"
    url = fake.url.replace("http://", f"http://podium:{secret}@")
    with pytest.raises(ModelError) as caught:
        complete(make_backend(fake, base_url=url), ask)

    assert secret not in str(caught.value)
    if provider.backend_name != "litellm":  # litellm's message does not name the endpoint
        assert "http://podium:***@127.0.0.1" in str(caught.value)


def test_unknown_model(
    provider: Provider, make_backend: MakeBackend, complete: Complete, ask: ModelRequest
) -> None:
    with provider.fake(models=["some-other-model"]) as fake:
        fake.queue(Reply.text("never asked for"))
        with pytest.raises(ModelFatalError) as caught:
            complete(make_backend(fake), ask)

    error = caught.value
    assert not isinstance(error, ModelAuthError)
    assert f"podium models check {provider.model}" in (error.hint or "")
    assert error.attempts == 1
    assert fake.hits == 1


# --- keys ---------------------------------------------------------------------------------


def test_missing_key_is_a_user_error(provider: Provider, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(provider.key_env)
    with pytest.raises(UserError, match=provider.key_env):
        load_registry([]).backend(provider.model, {})


@pytest.mark.parametrize("provider", OPENAI_WIRE, indirect=True)
def test_local_server_needs_no_key(
    provider: Provider,
    make_backend: MakeBackend,
    complete: Complete,
    ask: ModelRequest,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY")
    with provider.fake(api_key="none") as fake:  # what the client sends in place of a key
        response, _ = complete(make_backend(fake), ask)

    assert response.text == "OK"
    assert fake.received[-1].key == "none"
    assert fake.problems == []


def test_key_from_a_named_variable(
    provider: Provider,
    fake: FakeServer,
    make_backend: MakeBackend,
    complete: Complete,
    ask: ModelRequest,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(provider.key_env, "sk-not-this-one-0123")
    monkeypatch.setenv("TEAM_LLM_KEY", FAKE_KEY)
    response, _ = complete(make_backend(fake, api_key_env="TEAM_LLM_KEY"), ask)

    assert response.text == "OK"
    assert fake.received[-1].key == FAKE_KEY


def test_named_variable_unset_is_a_user_error(
    provider: Provider, fake: FakeServer, make_backend: MakeBackend
) -> None:
    """Naming a variable means wanting its key, even for a server that might take none."""
    with pytest.raises(UserError, match="TEAM_LLM_KEY"):
        make_backend(fake, api_key_env="TEAM_LLM_KEY")


# --- concurrency and money ----------------------------------------------------------------


def test_concurrency_cap(provider: Provider, make_backend: MakeBackend, ask: ModelRequest) -> None:
    lock = threading.Lock()
    in_flight = most = 0

    def slow(received: Received) -> Reply:
        nonlocal in_flight, most
        with lock:
            in_flight += 1
            most = max(most, in_flight)
        time.sleep(0.2)
        with lock:
            in_flight -= 1
        return Reply.text("done")

    gateway = ModelGateway(FAST, concurrency=2)
    with provider.fake(responder=slow) as fake:
        backend = make_backend(fake)

        async def five() -> list[tuple[ModelResponse, int]]:
            try:
                return await asyncio.gather(*(gateway.complete(backend, ask) for _ in range(5)))
            finally:
                await backend.aclose()

        started = time.monotonic()
        results = asyncio.run(five())
        elapsed = time.monotonic() - started

    assert [(r.text, n) for r, n in results] == [("done", 1)] * 5
    assert most == 2
    assert elapsed >= 0.6  # three rounds of 0.2 s
    assert fake.hits == 5


def test_concurrency_caps_are_per_provider(ask: ModelRequest) -> None:
    """A busy provider does not hold up another: with a cap of one each, both calls are in
    flight together (each server waits for the other's request before answering)."""
    both = threading.Barrier(2, timeout=2)

    def meet(received: Received) -> Reply:
        both.wait()
        return Reply.text("done")

    gateway = ModelGateway(RetryPolicy(attempts=1), concurrency=1)
    registry = load_registry([])
    with (
        FakeOpenAI(api_key=FAKE_KEY, responder=meet) as openai_fake,
        FakeAnthropic(api_key=FAKE_KEY, responder=meet) as anthropic_fake,
    ):
        backends = [
            registry.backend("openai/gpt-4.1", {"base_url": openai_fake.url, "timeout": 5}),
            registry.backend(
                "anthropic/claude-sonnet-4-6", {"base_url": anthropic_fake.url, "timeout": 5}
            ),
        ]

        async def together() -> list[tuple[ModelResponse, int]]:
            try:
                return await asyncio.gather(*(gateway.complete(b, ask) for b in backends))
            finally:
                for backend in backends:
                    await backend.aclose()

        results = asyncio.run(together())

    assert [r.text for r, _ in results] == ["done", "done"]


def test_max_cost_bounds_the_cost(
    provider: Provider,
    fake: FakeServer,
    make_backend: MakeBackend,
    complete: Complete,
    ask: ModelRequest,
) -> None:
    request = ask.model_copy(update={"max_tokens": 64})
    fake.queue(Reply.text("word " * 64, output_tokens=64))  # input tokens: the fake estimates
    backend = make_backend(fake)
    bound = backend.max_cost_usd(request)
    response, _ = complete(backend, request)

    assert response.usage.cost_usd > 0
    assert bound is not None
    assert bound >= response.usage.cost_usd


def test_unpriced_model_has_no_bound_unless_configured(
    provider: Provider,
    fake: FakeServer,
    make_backend: MakeBackend,
    complete: Complete,
    ask: ModelRequest,
) -> None:
    local = provider.local_model
    assert make_backend(fake, local).max_cost_usd(ask) is None

    priced = make_backend(fake, local, prices={local: {"input": 1.0, "output": 2.0}})
    assert priced.max_cost_usd(ask) is not None
    fake.queue(Reply.text("hi", input_tokens=1000, output_tokens=500))
    response, _ = complete(priced, ask)
    assert response.usage.cost_usd == pytest.approx(1000 * 1e-6 + 500 * 2e-6)
    assert body(fake)["model"] == "my-local-model"
