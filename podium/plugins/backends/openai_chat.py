"""The ``openai`` backend: Chat Completions through the official SDK.

Works with OpenAI and with any OpenAI-compatible server (vLLM, llama.cpp, Ollama, proxies) given
``--base-url``; such a server may need no key. Quirks handled here: reasoning models (o-series,
gpt-5) take ``max_completion_tokens`` and no temperature; tool-call arguments arrive as a JSON
*string*. Prompt caching is automatic (prompts of 1024 tokens and more): nothing to send, and
the answer says how much of the prompt came from the cache (:func:`cache_usage`).

The SDK is imported on first use (``sdk``), not when the backend is made: ~0.3 CPU s that a
run then spends while its kernel factory loads (on another core), not before it starts it.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Mapping
from types import ModuleType
from typing import TYPE_CHECKING, Any

from podium.plugins.backends.common import (
    ChatBackend,
    connection_failure,
    empty_answer,
    error_message,
)
from podium.records import Finish, Message, ModelRequest, ModelResponse, ToolCall

if TYPE_CHECKING:
    import openai

REASONING = re.compile(r"^(o\d|gpt-5)")
NO_KEY = "none"  # what a local server gets when no key is set: the SDK insists on one
FINISH: dict[str | None, Finish] = {"stop": "stop", "length": "length", "tool_calls": "tool_call"}


class OpenAIBackend(ChatBackend):
    provider_name = "openai"
    key_env = "OPENAI_API_KEY"
    example = "openai/gpt-4.1"

    def __init__(self, model_id: str, options: Mapping[str, Any]) -> None:
        super().__init__(model_id, options)
        local = self.options.base_url is not None
        self._key = self.api_key(required=not local) or NO_KEY  # a missing key: said now
        self._client: openai.AsyncOpenAI | None = None
        self.reasoning = bool(REASONING.match(model_id.rsplit("/", 1)[-1]))

    @property
    def client(self) -> openai.AsyncOpenAI:
        """The SDK's client, made on first use."""
        if self._client is None:
            self._client = sdk().AsyncOpenAI(
                api_key=self._key,
                base_url=self.options.base_url,
                timeout=self.options.timeout_s,
                max_retries=0,  # Podium's retry policy is the only one
            )
        return self._client

    def body(self, request: ModelRequest) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.model_id,
            "messages": chat_messages(request),
        }
        body |= chat_tools(request)
        if (cap := self.output_cap(request)) is not None:
            body["max_completion_tokens" if self.reasoning else "max_tokens"] = cap
        temperature = self.temperature(request)
        if temperature is not None and not self.reasoning:
            body["temperature"] = temperature
        return body

    async def complete(self, request: ModelRequest) -> ModelResponse:
        openai = sdk()
        started = time.perf_counter()
        try:
            answer = await self.client.chat.completions.create(**self.body(request))
        except openai.APIStatusError as exc:
            message = error_message(exc.body) or exc.message
            raise self.http_error(exc.status_code, message, exc.response.headers) from None
        except openai.APIConnectionError as exc:  # APITimeoutError included
            raise self.http_error(None, describe_connection_error(exc)) from None
        except (openai.APIResponseValidationError, ValueError) as exc:
            raise self.garbled(f"{type(exc).__name__}: {exc}") from None
        return from_chat_completion(self, request, answer, time.perf_counter() - started)

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.close()


def sdk() -> ModuleType:
    """The ``openai`` SDK (imported once, on first use)."""
    import openai

    return openai


def chat_messages(request: ModelRequest) -> list[dict[str, Any]]:
    """The conversation in the Chat Completions format: an assistant turn's tool calls with
    their arguments as a JSON *string*, each result a ``tool`` message naming its call."""
    return [_chat_message(m) for m in request.messages]


def _chat_message(m: Message) -> dict[str, Any]:
    if m.role == "tool":
        return {"role": "tool", "tool_call_id": m.tool_call_id or "", "content": m.content}
    if m.role == "assistant" and m.tool_calls:
        return {
            "role": "assistant",
            "content": m.content or None,
            "tool_calls": [
                {
                    "id": call.id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": json.dumps(call.arguments)},
                }
                for call in m.tool_calls
            ],
        }
    return {"role": m.role, "content": m.content}


def chat_tools(request: ModelRequest) -> dict[str, Any]:
    """The request's function and forced choice, in the Chat Completions format."""
    fields: dict[str, Any] = {}
    if request.tools:
        fields["tools"] = [{"type": "function", "function": t.model_dump()} for t in request.tools]
    if request.tool_choice:
        fields["tool_choice"] = {"type": "function", "function": {"name": request.tool_choice}}
    return fields


def from_chat_completion(
    backend: ChatBackend, request: ModelRequest, answer: Any, latency_s: float
) -> ModelResponse:
    """A Chat Completions answer (the SDK's object, or litellm's look-alike) as a response."""
    if not getattr(answer, "choices", None):
        raise empty_answer(backend.provider_name, "no choices", False, backend.output_cap(request))
    choice = answer.choices[0]
    text = choice.message.content or ""
    tool_call, raw_args = tool_call_of(choice.message)
    if not text and tool_call is None:
        if raw_args is None:
            finish = choice.finish_reason
            cut_off = FINISH.get(finish) == "length"
            cap = backend.output_cap(request)
            raise empty_answer(backend.provider_name, f"finish reason {finish}", cut_off, cap)
        text = raw_args  # unparseable arguments: the reviewer's text fallback may read them
    usage = getattr(answer, "usage", None)
    prompt = "".join(m.content for m in request.messages)
    read, written = cache_usage(usage)
    return ModelResponse(
        text=text,
        tool_call=tool_call,
        usage=backend.usage(
            getattr(usage, "prompt_tokens", None),
            getattr(usage, "completion_tokens", None),
            cache_read_tokens=read,
            cache_write_tokens=written,
            prompt=prompt,
            answer=text,
        ),
        latency_s=latency_s,
        model=backend.model,
        finish=FINISH.get(choice.finish_reason, "other"),
    )


def cache_usage(usage: Any) -> tuple[int, int]:
    """(read from, written to) the prompt cache, as parts of ``prompt_tokens``.

    OpenAI says ``prompt_tokens_details.cached_tokens`` (and, for models that charge for cache
    writes, ``cache_write_tokens``); litellm says the same for every provider it translates,
    and keeps Anthropic's ``cache_read_input_tokens`` / ``cache_creation_input_tokens`` beside
    them (its ``cache_creation_tokens`` too), read here where the details lack them."""
    details = getattr(usage, "prompt_tokens_details", None)
    read = _count(details, "cached_tokens") or _count(usage, "cache_read_input_tokens")
    written = (
        _count(details, "cache_write_tokens")
        or _count(details, "cache_creation_tokens")
        or _count(usage, "cache_creation_input_tokens")
    )
    return read, written


def _count(holder: Any, name: str) -> int:
    value = getattr(holder, name, None) if holder is not None else None
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def tool_call_of(message: Any) -> tuple[ToolCall | None, str | None]:
    """The first function call, with its JSON-string arguments decoded; or (None, raw text)."""
    calls = getattr(message, "tool_calls", None) or []
    for call in calls:
        function = getattr(call, "function", None)
        if function is None:
            continue
        raw = function.arguments or "{}"
        try:
            arguments = json.loads(raw)
        except json.JSONDecodeError:
            return None, raw
        if isinstance(arguments, dict):
            call_id = getattr(call, "id", None) or ""
            return ToolCall(name=function.name, arguments=arguments, id=call_id), None
        return None, raw
    return None, None


def describe_connection_error(exc: Exception) -> str:
    """An ``openai.APIConnectionError`` (the openai and litellm backends) in the words every
    backend uses."""
    return connection_failure(exc, isinstance(exc, sdk().APITimeoutError))


def create(model_id: str, options: Mapping[str, Any]) -> OpenAIBackend:
    return OpenAIBackend(model_id, options)
