"""The ``anthropic`` backend: the Messages API through the official SDK, with tool use.

Quirks handled here: the system prompt is a top-level field, not a message; ``max_tokens`` is
required; consecutive messages of one role are merged; the tool call's input arrives as a JSON
*object*; the key may travel as ``x-api-key`` or as a bearer token (the SDK decides); prompt
caching is opt-in, by ``cache_control`` breakpoints (:func:`cache_breakpoints`), and its reads
and writes come back as usage fields of their own, outside ``input_tokens``.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

import anthropic

from podium.plugins.backends.common import (
    ANTHROPIC_CACHE_RULE,
    ANTHROPIC_DEFAULT_MAX_TOKENS,
    ChatBackend,
    connection_failure,
    empty_answer,
    error_message,
    is_conversation,
)
from podium.records import Finish, Message, ModelRequest, ModelResponse, ToolCall

FINISH: dict[str | None, Finish] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
    "tool_use": "tool_call",
}
EPHEMERAL = {"type": "ephemeral"}  # the default 5-minute TTL: a node's turns come seconds apart
UNMARKABLE = ("thinking", "redacted_thinking")  # blocks the API refuses a cache_control on


class AnthropicBackend(ChatBackend):
    provider_name = "anthropic"
    key_env = "ANTHROPIC_API_KEY"
    example = "anthropic/claude-sonnet-4-6"

    def __init__(self, model_id: str, options: Mapping[str, Any]) -> None:
        super().__init__(model_id, options)
        self.client = anthropic.AsyncAnthropic(
            api_key=self.api_key(required=True),
            base_url=self.options.base_url,
            timeout=self.options.timeout_s,
            max_retries=0,  # Podium's retry policy is the only one
        )
        self.info = self.info.with_cache_rule(*ANTHROPIC_CACHE_RULE)

    def output_cap(self, request: ModelRequest) -> int:
        cap = super().output_cap(request)
        return cap or min(self.info.max_output_tokens or 10**9, ANTHROPIC_DEFAULT_MAX_TOKENS)

    def body(self, request: ModelRequest) -> dict[str, Any]:
        system = "\n\n".join(m.content for m in request.messages if m.role == "system")
        body: dict[str, Any] = {
            "model": self.model_id,
            "max_tokens": self.output_cap(request),
            "messages": messages_turns(request.messages),
        }
        if system:
            body["system"] = system
        if request.tools:
            body["tools"] = [
                {"name": t.name, "description": t.description, "input_schema": t.parameters}
                for t in request.tools
            ]
        if request.tool_choice:
            body["tool_choice"] = {"type": "tool", "name": request.tool_choice}
        temperature = self.temperature(request)
        if temperature is not None:  # anthropic 2.x's create() has no such argument any more
            body["extra_body"] = {"temperature": temperature}
        if is_conversation(request):
            cache_breakpoints(body)
        return body

    async def complete(self, request: ModelRequest) -> ModelResponse:
        started = time.perf_counter()
        try:
            answer = await self.client.messages.create(**self.body(request))
        except anthropic.APIStatusError as exc:
            message = error_message(exc.body) or exc.message
            raise self.http_error(exc.status_code, message, exc.response.headers) from None
        except anthropic.APIConnectionError as exc:  # APITimeoutError included
            timed_out = isinstance(exc, anthropic.APITimeoutError)
            raise self.http_error(None, connection_failure(exc, timed_out)) from None
        except (anthropic.APIResponseValidationError, ValueError) as exc:
            raise self.garbled(f"{type(exc).__name__}: {exc}") from None
        return self.response(request, answer, time.perf_counter() - started)

    def response(self, request: ModelRequest, answer: Any, latency_s: float) -> ModelResponse:
        blocks = getattr(answer, "content", None)
        if blocks is None:
            raise self.garbled("no content in the answer")
        text = "".join(b.text for b in blocks if getattr(b, "type", "") == "text")
        tool_call = next(
            (
                ToolCall(name=b.name, arguments=dict(b.input), id=getattr(b, "id", "") or "")
                for b in blocks
                if getattr(b, "type", "") == "tool_use" and isinstance(b.input, Mapping)
            ),
            None,
        )
        if not text and tool_call is None:
            stop = answer.stop_reason
            cut_off = FINISH.get(stop) == "length"
            cap = self.output_cap(request)
            raise empty_answer(self.provider_name, f"finish reason {stop}", cut_off, cap)
        usage = answer.usage
        read = getattr(usage, "cache_read_input_tokens", None) or 0
        written = getattr(usage, "cache_creation_input_tokens", None) or 0
        return ModelResponse(
            text=text,
            tool_call=tool_call,
            usage=self.usage(
                usage.input_tokens + read + written,  # the API counts only the uncached part
                usage.output_tokens,
                cache_read_tokens=read,
                cache_write_tokens=written,
            ),
            latency_s=latency_s,
            model=self.model,
            finish=FINISH.get(answer.stop_reason, "other"),
        )

    async def aclose(self) -> None:
        await self.client.close()


def cache_breakpoints(body: dict[str, Any]) -> None:
    """Mark ``body`` (a Messages request) for prompt caching, in place: a conversation's turns
    resend everything before them, and Anthropic caches a prefix only where a block says so.

    At most three of the API's four breakpoints, each on the last block of a part that the
    next turn repeats:

    * the system prompt (or, without one, the last tool): the tools and instructions, which
      every node of a run shares;
    * the first user turn (the task: data, parents, memory), the node's large part that never
      changes, when more turns follow it;
    * the last turn, so that the next request reads all of this one (the API finds the entry
      up to 20 blocks before its own last breakpoint).

    The first user turn's mark matters where the next turn does not repeat this one exactly
    (a scaffold that shortens older tool results): the task is then still read from the
    cache. Only conversations are marked (``common.is_conversation``): a cache write costs
    1.25x the input price, which a one-shot prompt that no later request repeats would pay
    for nothing. A prefix shorter than the model's minimum (1024 tokens for most Claude
    models) is simply not cached: no error, no write.
    """
    system = body.get("system")
    if isinstance(system, str) and system.strip():
        body["system"] = [{"type": "text", "text": system, "cache_control": dict(EPHEMERAL)}]
    elif body.get("tools"):
        body["tools"][-1]["cache_control"] = dict(EPHEMERAL)
    turns = body["messages"]
    marked = [turns[0], turns[-1]] if len(turns) > 1 else turns[-1:]
    for turn in marked:
        _mark_last_block(turn)


def _mark_last_block(turn: dict[str, Any]) -> None:
    """Put the breakpoint on the turn's last block that can carry one (not an empty text, not
    thinking); a turn of plain text becomes that one text block, which the API reads alike."""
    content = turn["content"]
    if isinstance(content, str):
        if not content.strip():
            return
        content = turn["content"] = [{"type": "text", "text": content}]
    for block in reversed(content):
        if block["type"] in UNMARKABLE or (
            block["type"] == "text" and not str(block.get("text", "")).strip()
        ):
            continue
        block["cache_control"] = dict(EPHEMERAL)
        return


def messages_turns(messages: list[Message]) -> list[dict[str, Any]]:
    """The conversation (less the system prompt) as the Messages API's alternating turns.

    A tool call is a ``tool_use`` block of the assistant's turn, its result a ``tool_result``
    block of the next user turn (results first in it, as the API requires); consecutive turns
    of one role are merged. A turn of text alone stays a string, as it always was."""
    turns: list[tuple[str, list[dict[str, Any]]]] = []
    for m in messages:
        if m.role == "system":
            continue
        role = "user" if m.role == "tool" else m.role
        blocks = _blocks(m)
        if turns and turns[-1][0] == role:
            turns[-1][1].extend(blocks)
        else:
            turns.append((role, blocks))
    return [{"role": role, "content": _content(blocks)} for role, blocks in turns]


def _blocks(m: Message) -> list[dict[str, Any]]:
    if m.role == "tool":
        return [{"type": "tool_result", "tool_use_id": m.tool_call_id or "", "content": m.content}]
    blocks: list[dict[str, Any]] = [{"type": "text", "text": m.content}] if m.content else []
    for call in m.tool_calls:
        blocks.append(
            {"type": "tool_use", "id": call.id, "name": call.name, "input": call.arguments}
        )
    return blocks


def _content(blocks: list[dict[str, Any]]) -> str | list[dict[str, Any]]:
    if all(b["type"] == "text" for b in blocks):
        return "\n\n".join(b["text"] for b in blocks)
    return blocks


def create(model_id: str, options: Mapping[str, Any]) -> AnthropicBackend:
    return AnthropicBackend(model_id, options)
