"""Prompt caching end to end: the real openai / anthropic / litellm clients over HTTP against
the fakes, which cache as the providers do (Anthropic: at ``cache_control`` breakpoints;
OpenAI: automatically, from 1024 tokens, in 128-token steps). A tool conversation's later turns
read the earlier turns' prompt from the cache, and the cost prices those tokens at the cache
rates."""

from __future__ import annotations

import asyncio
import math
from typing import Any

import anthropic
import openai
import pytest

from podium.plugins.backends.common import ChatBackend
from podium.plugins.gateway import ModelGateway
from podium.records import Message, ModelRequest, ModelResponse, ToolSpec, Usage
from podium.testing import FakeAnthropic, FakeOpenAI, FakeServer, Received, Reply
from tests.plugins.backends.conftest import (
    ANTHROPIC_WIRE,
    FAKE_KEY,
    OPENAI_WIRE,
    MakeBackend,
    Provider,
)

RUN_CELL = ToolSpec(
    name="run_cell",
    description="Run Python code as the next cell of your kernel; returns its output.",
    parameters={
        "type": "object",
        "properties": {"code": {"type": "string"}},
        "required": ["code"],
    },
)
FINISH = ToolSpec(
    name="finish",
    description="End the node, giving the plan.",
    parameters={"type": "object", "properties": {"plan": {"type": "string"}}},
)
# long enough for both providers' 1024-token minimum (the fakes count 4 characters a token)
SYSTEM = "You are a careful ML engineer. " + " ".join(f"rule-{i}." for i in range(700))
TASK = "Predict y from x1 and x2. " + " ".join(f"x1={i} x2={i % 7} y={i % 2};" for i in range(120))
EPHEMERAL = {"type": "ephemeral"}


def converse(
    backend: ChatBackend, gateway: ModelGateway, turns: int, *, shorten: bool = False
) -> list[tuple[ModelRequest, ModelResponse]]:
    """A tool conversation as an agentic node holds it: each turn resends the whole prompt
    with the model's call and its result appended. ``shorten``: older results are cut before
    each turn (the scaffold's context rule), so a turn does not repeat the previous one."""
    messages = [Message(role="system", content=SYSTEM), Message(role="user", content=TASK)]
    results: list[int] = []
    done: list[tuple[ModelRequest, ModelResponse]] = []

    async def go() -> None:
        try:
            for turn in range(turns):
                shown = [
                    m.model_copy(update={"content": m.content[:20]})
                    if shorten and i in results[:-1]
                    else m
                    for i, m in enumerate(messages)
                ]
                request = ModelRequest(messages=shown, tools=[RUN_CELL, FINISH])
                response, _ = await gateway.complete(backend, request)
                done.append((request, response))
                call = response.tool_call
                assert call is not None and call.id
                messages.append(Message(role="assistant", content=response.text, tool_calls=[call]))
                results.append(len(messages))
                output = f"[cell {turn + 1}] ok in 0.1 s\n" + "loss 0.5\n" * 40
                messages.append(Message(role="tool", content=output, tool_call_id=call.id))
        finally:
            await backend.aclose()

    asyncio.run(go())
    return done


def script(fake: FakeServer, turns: int) -> None:
    fake.queue(
        *(Reply.tool_call("run_cell", {"code": f"print({i})"}) for i in range(turns - 1)),
        Reply.tool_call("finish", {"plan": "A logistic regression."}),
    )


def hand_cost(
    usage: Usage, input_price: float, output_price: float, read: float, write: float
) -> float:
    uncached = usage.input_tokens - usage.cache_read_tokens - usage.cache_write_tokens
    return (
        uncached * input_price
        + usage.cache_read_tokens * read
        + usage.cache_write_tokens * write
        + usage.output_tokens * output_price
    )


def completions(fake: FakeServer) -> list[Received]:
    return [r for r in fake.received if r.path == fake.completion_path]


def marks(body: dict[str, Any]) -> list[str]:
    """Where an Anthropic request's ``cache_control`` breakpoints are."""
    found = [f"tools.{j}" for j, t in enumerate(body.get("tools") or []) if "cache_control" in t]
    system = body.get("system")
    if isinstance(system, list):
        found += [f"system.{j}" for j, b in enumerate(system) if "cache_control" in b]
    for i, message in enumerate(body["messages"]):
        content = message["content"]
        if isinstance(content, list):
            found += [f"messages.{i}.{j}" for j, b in enumerate(content) if "cache_control" in b]
    return found


# --- a three-turn tool conversation, every provider -----------------------------------------


def test_later_turns_read_the_cache_and_are_priced_for_it(
    provider: Provider, fake: FakeServer, make_backend: MakeBackend, gateway: ModelGateway
) -> None:
    script(fake, 3)
    backend = make_backend(fake)
    done = converse(backend, gateway, 3)

    assert fake.problems == []
    assert [r.tool_call.name if r.tool_call else None for _, r in done] == [
        "run_cell",
        "run_cell",
        "finish",
    ]
    usages = [response.usage for _, response in done]
    sent = completions(fake)
    assert usages[0].cache_read_tokens == 0
    for turn in (1, 2):
        before, now = usages[turn - 1], usages[turn]
        assert now.cache_read_tokens > 0
        if provider.wire == "anthropic":
            # the whole previous prompt is read; what the turn added is written for the next
            assert now.cache_read_tokens == before.input_tokens
            assert now.cache_write_tokens == now.input_tokens - before.input_tokens
        else:
            # what the previous prompt shares with this one, in 128-token steps; no writes
            shared = len(sent[turn - 1].prompt_text) // 4
            assert now.cache_read_tokens == shared - shared % 128
            assert now.cache_write_tokens == 0
    if provider.wire == "anthropic":
        assert usages[0].cache_write_tokens == usages[0].input_tokens  # all of it, for turn 2

    info = provider.info()
    assert info.input_price and info.output_price and info.cache_read_price
    write_price = info.cache_write_price or info.input_price
    for (request, _), usage in zip(done, usages, strict=True):
        assert usage.calls == 1
        assert usage.cost_usd == pytest.approx(
            hand_cost(
                usage, info.input_price, info.output_price, info.cache_read_price, write_price
            )
        )
        assert usage.cost_usd <= (backend.max_cost_usd(request) or 0)  # still a bound
    # in all, cheaper than the input price for every prompt token
    full = info.input_price
    uncached = sum(hand_cost(u, full, info.output_price, full, full) for u in usages)
    assert sum(u.cost_usd for u in usages) < uncached


@pytest.mark.parametrize("provider", ANTHROPIC_WIRE, indirect=True)
def test_anthropic_conversations_carry_breakpoints(
    provider: Provider, fake: FakeServer, make_backend: MakeBackend, gateway: ModelGateway
) -> None:
    """The system prompt, the task (the first user turn, once more turns follow) and the last
    turn's last block: three of the API's four breakpoints."""
    script(fake, 3)
    converse(make_backend(fake), gateway, 3)

    bodies = [r.body or {} for r in completions(fake)]
    assert [marks(b) for b in bodies] == [
        ["system.0", "messages.0.0"],
        ["system.0", "messages.0.0", "messages.2.0"],
        ["system.0", "messages.0.0", "messages.4.0"],
    ]
    system = bodies[-1]["system"]
    assert system == [{"type": "text", "text": SYSTEM, "cache_control": EPHEMERAL}]
    last = bodies[-1]["messages"][-1]["content"][-1]
    assert last["type"] == "tool_result" and last["cache_control"] == EPHEMERAL


@pytest.mark.parametrize("provider", ANTHROPIC_WIRE, indirect=True)
def test_anthropic_one_shot_requests_are_sent_unmarked(
    provider: Provider,
    fake: FakeServer,
    make_backend: MakeBackend,
    gateway: ModelGateway,
    ask: ModelRequest,
    review: ModelRequest,
) -> None:
    """A plain question and the review (a forced tool) are asked once: no cache write premium
    is paid for a prompt no later request is known to repeat."""
    backend = make_backend(fake)

    async def both() -> None:
        try:
            await gateway.complete(backend, ask)
            await gateway.complete(backend, review)
        finally:
            await backend.aclose()

    fake.queue(Reply.text("hello"), Reply.tool_call("submit_review", {"is_bug": False}))
    asyncio.run(both())

    assert fake.problems == []
    for sent in completions(fake):
        assert sent.body is not None
        assert marks(sent.body) == [] and "cache_control" not in sent.body
        assert (sent.cache_read_tokens, sent.cache_write_tokens) == (0, 0)


@pytest.mark.parametrize("provider", ["anthropic"], indirect=True)
def test_a_rewritten_older_result_still_reads_the_task_from_the_cache(
    provider: Provider, fake: FakeServer, make_backend: MakeBackend, gateway: ModelGateway
) -> None:
    """When a turn does not repeat the previous one (an older tool result shortened), the
    breakpoint on the task keeps the system prompt and the task cached."""
    script(fake, 4)
    done = converse(make_backend(fake), gateway, 4, shorten=True)

    assert fake.problems == []
    sent = completions(fake)
    task_tokens = math.ceil(len(f"{SYSTEM}\n{TASK}") / 4)
    fourth = done[3][1].usage
    assert fourth.cache_read_tokens == task_tokens  # result 2 changed: the task is what is left
    assert fourth.cache_write_tokens == fourth.input_tokens - task_tokens
    assert sent[3].cache_read_tokens == task_tokens


# --- litellm and OpenAI's reported cache writes ---------------------------------------------


class WritingOpenAI(FakeOpenAI):
    """A model that charges for cache writes (GPT-5.6 and later), reporting
    ``prompt_tokens_details.cache_write_tokens`` beside ``cached_tokens``."""

    def _message_payload(self, reply: Reply, received: Received, usage: tuple[int, int]) -> Any:
        payload = super()._message_payload(reply, received, usage)
        payload["usage"]["prompt_tokens_details"] |= {
            "cached_tokens": 600,
            "cache_write_tokens": 300,
        }
        return payload


@pytest.mark.parametrize("provider", OPENAI_WIRE, indirect=True)
def test_openai_cache_writes_are_read_and_priced(
    provider: Provider, make_backend: MakeBackend, gateway: ModelGateway, ask: ModelRequest
) -> None:
    local = provider.local_model
    prices = {local: {"input": 2.0, "output": 8.0, "cached_input": 0.2, "cache_write": 2.5}}
    with WritingOpenAI(api_key=FAKE_KEY) as fake:
        fake.queue(Reply.text("hi", input_tokens=1000, output_tokens=100))
        backend = make_backend(fake, local, prices=prices)

        async def once() -> ModelResponse:
            try:
                return (await gateway.complete(backend, ask))[0]
            finally:
                await backend.aclose()

        usage = asyncio.run(once()).usage

    assert (usage.input_tokens, usage.cache_read_tokens, usage.cache_write_tokens) == (
        1000,
        600,
        300,
    )
    # 100 uncached at $2, 600 read at $0.2, 300 written at $2.5, 100 out at $8, per million
    assert usage.cost_usd == pytest.approx((100 * 2 + 600 * 0.2 + 300 * 2.5 + 100 * 8) / 1e6)


# --- the fakes cache as the providers do ----------------------------------------------------


def anthropic_client(fake: FakeAnthropic) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=fake.url, api_key=fake.api_key, max_retries=0)


def cached_text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text, "cache_control": EPHEMERAL}


@pytest.mark.parametrize(
    ("request_fields", "message"),
    [
        (
            {
                "system": [cached_text(f"part {i}") for i in range(3)],
                "messages": [{"role": "user", "content": [cached_text("a"), cached_text("b")]}],
            },
            "A maximum of 4 blocks with cache_control may be provided. Found 5.",
        ),
        (
            {"system": [cached_text(" ")], "messages": [{"role": "user", "content": "Hi."}]},
            "system.0.text: cache_control cannot be set for empty text blocks",
        ),
        (
            {"messages": [{"role": "user", "content": [cached_text("")]}]},
            "messages.0.content.0.text: cache_control cannot be set for empty text blocks",
        ),
        (
            {"messages": [{"role": "user", "content": "Hi.", "cache_control": EPHEMERAL}]},
            "messages.0.cache_control: Extra inputs are not permitted",
        ),
        (
            {
                "messages": [
                    {
                        "role": "user",
                        "content": [
                            {**cached_text("Hi."), "cache_control": {"type": "persistent"}}
                        ],
                    }
                ]
            },
            "messages.0.content.0.cache_control.type: Input should be 'ephemeral'",
        ),
    ],
    ids=[
        "five-breakpoints",
        "empty-system-block",
        "empty-text-block",
        "on-a-message",
        "not-ephemeral",
    ],
)
def test_fake_anthropic_refuses_breakpoints_the_api_refuses(
    fake_anthropic: FakeAnthropic, request_fields: dict[str, Any], message: str
) -> None:
    with pytest.raises(anthropic.BadRequestError) as caught:
        anthropic_client(fake_anthropic).messages.create(
            model="claude-sonnet-4-6", max_tokens=10, **request_fields
        )
    assert message in str(caught.value)
    assert message in fake_anthropic.problems


def test_fake_anthropic_caches_only_at_breakpoints_and_from_the_minimum(
    fake_anthropic: FakeAnthropic,
) -> None:
    client = anthropic_client(fake_anthropic)
    long, short = "x" * 4400, "y" * 400  # 1100 and 100 estimated tokens

    def ask(system: Any) -> Any:
        user = [{"role": "user", "content": "Go."}]
        return client.messages.create(
            model="claude-sonnet-4-6", max_tokens=10, system=system, messages=user
        ).usage

    unmarked = [ask(long), ask(long)]
    assert [(u.cache_creation_input_tokens, u.cache_read_input_tokens) for u in unmarked] == [
        (0, 0)
    ] * 2
    too_short = [ask([cached_text(short)]), ask([cached_text(short)])]
    assert [(u.cache_creation_input_tokens, u.cache_read_input_tokens) for u in too_short] == [
        (0, 0)
    ] * 2
    first, second = ask([cached_text(long)]), ask([cached_text(long)])
    assert (first.cache_creation_input_tokens, first.cache_read_input_tokens) == (1100, 0)
    assert (second.cache_creation_input_tokens, second.cache_read_input_tokens) == (0, 1100)
    assert second.input_tokens == first.input_tokens == math.ceil(len(long + "\nGo.") / 4) - 1100
    # another model has a cache of its own
    other = client.messages.create(
        model="claude-opus-4-6",
        max_tokens=10,
        system=[cached_text(long)],
        messages=[{"role": "user", "content": "Go."}],
    ).usage
    assert (other.cache_creation_input_tokens, other.cache_read_input_tokens) == (1100, 0)


def test_fake_openai_caches_long_prompts_in_128_token_steps(fake_openai: FakeOpenAI) -> None:
    client = openai.OpenAI(base_url=fake_openai.url, api_key=fake_openai.api_key, max_retries=0)

    def cached(*texts: str) -> tuple[int, int]:
        messages: Any = [{"role": "user", "content": text} for text in texts]
        usage = client.chat.completions.create(model="gpt-4.1", messages=messages).usage
        assert usage is not None and usage.prompt_tokens_details is not None
        return usage.prompt_tokens, usage.prompt_tokens_details.cached_tokens or 0

    short = "s" * 3000  # 750 tokens: under the 1024 minimum, never cached
    assert cached(short) == (750, 0)
    assert cached(short) == (750, 0)
    long = "l" * 5000  # 1250 tokens
    assert cached(long) == (1250, 0)
    assert cached(long) == (1250, 1152)  # the repeated prompt, in steps of 128
    # a prompt that starts like it: its 1250 tokens shared (inside a message too)
    assert cached(long + "m" * 2000) == (1750, 1152)
    turn = "next turn " * 100  # 250 tokens
    assert cached(long, turn) == (1501, 1152)
    assert cached(long, turn, "and one more") == (1504, 1408)  # the previous turn's 1500
    assert cached("other " + long) == (1252, 0)  # a different start shares nothing
