"""The ``anthropic`` backend: the Messages API through the official SDK, with tool use.

Quirks handled here: the system prompt is a top-level field, not a message; ``max_tokens`` is
required; consecutive messages of one role are merged; the tool call's input arrives as a JSON
*object*; the key may travel as ``x-api-key`` or as a bearer token (the SDK decides).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

import anthropic

from podium.plugins.backends.common import (
    ANTHROPIC_DEFAULT_MAX_TOKENS,
    ChatBackend,
    connection_failure,
    empty_answer,
    error_message,
)
from podium.records import Finish, ModelRequest, ModelResponse, ToolCall

FINISH: dict[str | None, Finish] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
    "tool_use": "tool_call",
}


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

    def output_cap(self, request: ModelRequest) -> int:
        cap = super().output_cap(request)
        return cap or min(self.info.max_output_tokens or 10**9, ANTHROPIC_DEFAULT_MAX_TOKENS)

    def body(self, request: ModelRequest) -> dict[str, Any]:
        system = "\n\n".join(m.content for m in request.messages if m.role == "system")
        turns: list[dict[str, Any]] = []
        for m in request.messages:
            if m.role == "system":
                continue
            if turns and turns[-1]["role"] == m.role:
                turns[-1]["content"] += "\n\n" + m.content
            else:
                turns.append({"role": m.role, "content": m.content})
        body: dict[str, Any] = {
            "model": self.model_id,
            "max_tokens": self.output_cap(request),
            "messages": turns,
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
                ToolCall(name=b.name, arguments=dict(b.input))
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
        input_tokens = (
            usage.input_tokens
            + (getattr(usage, "cache_creation_input_tokens", 0) or 0)
            + (getattr(usage, "cache_read_input_tokens", 0) or 0)
        )
        return ModelResponse(
            text=text,
            tool_call=tool_call,
            usage=self.usage(input_tokens, usage.output_tokens),
            latency_s=latency_s,
            model=self.model,
            finish=FINISH.get(answer.stop_reason, "other"),
        )

    async def aclose(self) -> None:
        await self.client.close()


def create(model_id: str, options: Mapping[str, Any]) -> AnthropicBackend:
    return AnthropicBackend(model_id, options)
