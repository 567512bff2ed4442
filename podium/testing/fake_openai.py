"""A fake OpenAI Chat Completions API: ``POST /v1/chat/completions`` and ``GET /v1/models``.

It checks requests the way the real API does (and a little stricter where our own bugs would
hide), answers in the real wire format, and emulates the reasoning models' parameter quirks,
so code that passes against it passes against api.openai.com.

Prompt caching works as the API's does: automatic, for prompts of ``cache_min_tokens``
(1024) estimated tokens and more. A prompt that repeats the start of one seen before (the same
model and tools, then the same messages: whole ones, and the common start of the first that
differs) reports that part as ``usage.prompt_tokens_details.cached_tokens``, in steps of 128
tokens from 1024 on, inside ``prompt_tokens``.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from podium.testing.fake_server import (
    TOOL_NAME,
    FakeServer,
    HttpReply,
    Problem,
    Received,
    TextCounter,
    canonical,
    content_texts,
    is_int,
    is_number,
    next_id,
    present,
    range_problem,
)
from podium.testing.replies import Reply

ALLOWED_KEYS = frozenset(
    {
        "model", "messages", "tools", "tool_choice", "max_tokens", "max_completion_tokens",
        "temperature", "top_p", "n", "stream", "stop", "seed", "user", "response_format",
        "reasoning_effort", "parallel_tool_calls", "store", "metadata", "stream_options",
        "logprobs", "top_logprobs", "presence_penalty", "frequency_penalty", "logit_bias",
        "service_tier", "prediction", "modalities", "audio", "web_search_options", "verbosity",
        "prompt_cache_key", "safety_identifier", "prompt_cache_retention", "prompt_cache_options",
        "moderation", "functions", "function_call",
    }
)  # fmt: skip
ROLES = ("system", "developer", "user", "assistant", "tool")
REASONING_MODEL = re.compile(r"^(o\d|gpt-5)")
"""Models that take ``max_completion_tokens`` only and no temperature but 1."""
DEFAULT_MODELS = ("gpt-4.1", "gpt-4.1-mini", "gpt-4o", "o3-mini", "gpt-5")
_KEYS_URL = "https://platform.openai.com/account/api-keys"
CACHE_STEP = 128
"""Cached tokens come in steps of this many (after the first 1024)."""


class FakeOpenAI(FakeServer):
    """A fake OpenAI server; give the SDK ``base_url=fake.url, api_key=fake.api_key``."""

    completion_path = "/v1/chat/completions"
    models_path = "/v1/models"
    url_suffix = "/v1"
    auth_order = ("bearer",)
    request_id_header = "x-request-id"
    malformed_body = b'{"id": "chatcmpl-1", "object": "chat.completion", "choi'

    def _validate(self, received: Received) -> list[Problem]:
        assert received.body is not None  # the base rejects a missing body first
        return validate_chat_request(received.body)

    def _default_error_type(self, status: int) -> str:
        if status == 429:
            return "requests"
        return "server_error" if status >= 500 else "invalid_request_error"

    def _error_payload(
        self, status: int, message: str, error_type: str, code: str | None, param: str | None
    ) -> dict[str, Any]:
        if code is None and status == 429:
            code = "rate_limit_exceeded"
        return {"error": {"message": message, "type": error_type, "param": param, "code": code}}

    def _auth_failure(self, received: Received) -> HttpReply:
        if received.key is None:
            message = (
                "You didn't provide an API key. You need to provide your API key in an "
                "Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY)."
            )
            return self.error_reply(401, message)
        shown = received.key if self.echo_key_in_errors else mask_key(received.key)
        message = f"Incorrect API key provided: {shown}. You can find your API key at {_KEYS_URL}."
        return self.error_reply(401, message, code="invalid_api_key")

    def _unknown_model(self, model: str) -> HttpReply:
        message = f"The model `{model}` does not exist or you do not have access to it."
        return self.error_reply(404, message, code="model_not_found")

    def _special_error(self, reply: Reply) -> HttpReply:
        if reply.kind == "overloaded":
            return self.error_reply(
                503, "The engine is currently overloaded, please try again later."
            )
        message = (
            "This model's maximum context length is 128000 tokens. However, your messages "
            "resulted in 250000 tokens. Please reduce the length of the messages."
        )
        return self.error_reply(400, message, param="messages", code="context_length_exceeded")

    def _cache_usage(self, received: Received, prompt_tokens: int) -> tuple[int, int]:
        """The longest start this prompt shares with one stored, in 128-token steps; then the
        prompt itself is stored, when it is long enough. OpenAI charges no cache writes."""
        prompt = CachedPrompt.of(received.body or {})
        shared = max((prompt.shared_tokens(seen) for seen in self._cached()), default=0)
        if prompt.tokens >= self.cache_min_tokens:
            self._cache_store(prompt.key, prompt)
        if shared < self.cache_min_tokens:
            return 0, 0
        return min(shared - shared % CACHE_STEP, prompt_tokens), 0

    def _message_payload(
        self, reply: Reply, received: Received, usage: tuple[int, int]
    ) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": reply.content, "refusal": None}
        finish: str = reply.finish
        if reply.kind == "tool_call":
            message["content"] = reply.content or None
            message["tool_calls"] = [_tool_call(reply)]
            finish = "tool_calls"
        prompt_tokens, completion_tokens = usage
        return {
            "id": next_id("chatcmpl-"),
            "object": "chat.completion",
            "created": int(time.time()),
            "model": received.body.get("model") if received.body else None,
            "choices": [
                {"index": 0, "message": message, "finish_reason": finish, "logprobs": None}
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
                "prompt_tokens_details": {
                    "cached_tokens": received.cache_read_tokens,
                    "audio_tokens": 0,
                },
                "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0},
            },
            "service_tier": "default",
            "system_fingerprint": "fp_fake",
        }

    def _models_payload(self) -> dict[str, Any]:
        names = self.models if self.models is not None else DEFAULT_MODELS
        models = [{"id": n, "object": "model", "created": 0, "owned_by": "system"} for n in names]
        return {"object": "list", "data": models}


@dataclass(frozen=True)
class CachedPrompt:
    """A prompt as the prompt cache compares it: what comes before the messages (model, tools,
    output format), then each message whole, its shape (all but its text) and its text."""

    key: str
    head: str
    messages: tuple[tuple[str, str, str], ...]
    """(the message, its shape, its text) per message."""
    tokens: int
    """The whole prompt's estimated tokens."""

    @classmethod
    def of(cls, body: Mapping[str, Any]) -> CachedPrompt:
        head = canonical([body.get(k) for k in ("model", "tools", "response_format")])
        messages = body.get("messages")
        found: list[tuple[str, str, str]] = []
        counter = TextCounter()
        for message in messages if isinstance(messages, list) else []:
            fields = message if isinstance(message, dict) else {}
            texts = content_texts(fields.get("content"))
            counter.add(texts)
            shape = canonical({k: v for k, v in fields.items() if k != "content"})
            found.append((canonical(message), shape, "\n".join(t for t in texts if t)))
        key = canonical([head, [whole for whole, _, _ in found]])
        return cls(key, head, tuple(found), counter.tokens)

    def shared_tokens(self, other: CachedPrompt) -> int:
        """Estimated tokens of the start this prompt shares with ``other`` (none unless what
        precedes the messages is the same): whole messages alike, then the common start of
        the first text that differs, in a message of the same shape."""
        if self.head != other.head:
            return 0
        counter = TextCounter()
        for (whole, shape, text), (other_whole, other_shape, other_text) in zip(
            self.messages, other.messages, strict=False
        ):
            if whole == other_whole:
                counter.add([text])
                continue
            common = _common_start(text, other_text) if shape == other_shape else 0
            if common:
                counter.chars += counter.separator() + common
            break
        return counter.chars // 4


def _common_start(a: str, b: str) -> int:
    """How many leading characters ``a`` and ``b`` share."""
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def mask_key(key: str) -> str:
    """A key as the real 401 shows it: the ends kept, the middle starred."""
    if len(key) <= 8:
        return "*" * len(key)
    return key[:3] + "*" * (len(key) - 7) + key[-4:]


def _tool_call(reply: Reply) -> dict[str, Any]:
    arguments = reply.raw_arguments
    if arguments is None:
        arguments = json.dumps(dict(reply.tool_input))
    return {
        "id": next_id("call_"),
        "type": "function",
        "function": {"name": reply.tool_name, "arguments": arguments},
    }


# --- request validation -----------------------------------------------------------------------


def validate_chat_request(body: Mapping[str, Any]) -> list[Problem]:
    """Every way a Chat Completions request body breaks the API's rules. The reasoning-model
    quirks come first so that, alone, they head the 400 exactly as the real API words them."""
    tools = body.get("tools")
    return [
        *_reasoning_problems(body),
        *_unknown_keys(body),
        *_model_problems(body.get("model")),
        *_messages_problems(body.get("messages")),
        *_tools_problems(tools),
        *_tool_choice_problems(body.get("tool_choice"), tools),
        *_limit_problems(body),
        *range_problem(body, "temperature", 0, 2),
        *range_problem(body, "top_p", 0, 1),
        *_stream_problems(body),
    ]


def _reasoning_problems(body: Mapping[str, Any]) -> list[Problem]:
    model = body.get("model")
    if not isinstance(model, str) or not REASONING_MODEL.match(model.removeprefix("openai/")):
        return []
    problems: list[Problem] = []
    if present(body, "max_tokens"):
        problems.append(
            Problem(
                "Unsupported parameter: 'max_tokens' is not supported with this model. "
                "Use 'max_completion_tokens' instead.",
                param="max_tokens",
                code="unsupported_parameter",
            )
        )
    temperature = body.get("temperature")
    if is_number(temperature) and temperature != 1:
        problems.append(
            Problem(
                f"Unsupported value: 'temperature' does not support {temperature} with this "
                "model. Only the default (1) value is supported.",
                param="temperature",
                code="unsupported_value",
            )
        )
    return problems


def _unknown_keys(body: Mapping[str, Any]) -> list[Problem]:
    return [
        Problem(f"Unrecognized request argument supplied: {key}", param=key)
        for key in body
        if key not in ALLOWED_KEYS
    ]


def _model_problems(model: object) -> list[Problem]:
    if isinstance(model, str) and model:
        return []
    return [Problem("You must provide a model parameter (a non-empty string).", param="model")]


def _messages_problems(messages: object) -> list[Problem]:
    if not isinstance(messages, list) or not messages:
        return [Problem("'messages' must be a non-empty array.", param="messages")]
    problems: list[Problem] = []
    for i, message in enumerate(messages):
        problems.extend(_message_problems(f"messages[{i}]", message))
    problems.extend(_tool_response_problems(messages))
    return problems


def _message_problems(where: str, message: object) -> list[Problem]:
    if not isinstance(message, dict):
        return [Problem(f"Invalid type for '{where}': expected an object.", param=where)]
    role = message.get("role")
    if role not in ROLES:
        supported = ", ".join(repr(r) for r in ROLES)
        return [
            Problem(
                f"Invalid value for '{where}.role': {role!r}. Supported values are: {supported}.",
                param=f"{where}.role",
            )
        ]
    problems = _content_problems(where, message, role)
    tool_calls = message.get("tool_calls")
    if tool_calls is not None:
        if role == "assistant":
            problems.extend(_tool_calls_problems(f"{where}.tool_calls", tool_calls))
        else:
            problems.append(Problem(f"'{where}.tool_calls': only assistant messages have them."))
    if role == "tool" and not isinstance(message.get("tool_call_id"), str):
        problems.append(Problem(f"Missing required parameter: '{where}.tool_call_id'."))
    return problems


def _content_problems(where: str, message: Mapping[str, Any], role: str) -> list[Problem]:
    content = message.get("content")
    param = f"{where}.content"
    if content is None:
        if role == "assistant" and message.get("tool_calls"):
            return []
        return [
            Problem(
                f"Invalid value for '{param}': expected a string or an array of content parts, "
                "got null (only an assistant message with tool_calls may omit it).",
                param=param,
            )
        ]
    if isinstance(content, str):
        return []
    if not isinstance(content, list):
        return [
            Problem(
                f"Invalid type for '{param}': expected a string or an array of content parts.",
                param=param,
            )
        ]
    if not content:
        return [Problem(f"Invalid '{param}': empty array. Expected at least one part.", param)]
    return [p for j, part in enumerate(content) for p in _part_problems(f"{param}[{j}]", part)]


def _part_problems(where: str, part: object) -> list[Problem]:
    if not isinstance(part, dict) or not isinstance(part.get("type"), str):
        return [Problem(f"Invalid '{where}': expected an object with a string 'type'.", where)]
    if part["type"] == "text" and not isinstance(part.get("text"), str):
        return [Problem(f"Missing required parameter: '{where}.text'.", f"{where}.text")]
    return []


def _tool_calls_problems(where: str, tool_calls: object) -> list[Problem]:
    if not isinstance(tool_calls, list) or not tool_calls:
        return [Problem(f"Invalid '{where}': expected a non-empty array.", where)]
    problems: list[Problem] = []
    for j, call in enumerate(tool_calls):
        at = f"{where}[{j}]"
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(call, dict) or not isinstance(call.get("id"), str):
            problems.append(Problem(f"Missing required parameter: '{at}.id'.", f"{at}.id"))
        if not isinstance(call, dict) or call.get("type") != "function":
            problems.append(Problem(f"Invalid value for '{at}.type': expected 'function'."))
        if not isinstance(function, dict) or not isinstance(function.get("name"), str):
            problems.append(Problem(f"Missing required parameter: '{at}.function.name'."))
        elif not isinstance(function.get("arguments"), str):
            kind = type(function.get("arguments")).__name__
            problems.append(
                Problem(
                    f"Invalid type for '{at}.function.arguments': expected a string "
                    f"(JSON-encoded arguments), but got {kind} instead.",
                    param=f"{at}.function.arguments",
                )
            )
    return problems


def _tool_response_problems(messages: Sequence[object]) -> list[Problem]:
    """Each assistant ``tool_calls`` message must be followed by one tool message per call
    id, and a tool message must answer such a call."""
    problems: list[Problem] = []
    pending: list[str] = []
    for i, message in enumerate(messages):
        if not isinstance(message, dict):
            continue
        if message.get("role") == "tool":
            call_id = message.get("tool_call_id")
            if call_id in pending:
                pending.remove(call_id)
            elif isinstance(call_id, str):
                problems.append(
                    Problem(
                        f"Invalid parameter: 'messages[{i}]': messages with role 'tool' must be "
                        "a response to a preceding message with 'tool_calls' "
                        f"(no pending call has id {call_id!r}).",
                        param=f"messages[{i}]",
                    )
                )
            continue
        problems.extend(_unanswered(pending))
        pending = _call_ids(message) if message.get("role") == "assistant" else []
    problems.extend(_unanswered(pending))
    return problems


def _call_ids(message: Mapping[str, Any]) -> list[str]:
    calls = message.get("tool_calls")
    return [
        call["id"]
        for call in (calls if isinstance(calls, list) else [])
        if isinstance(call, dict) and isinstance(call.get("id"), str)
    ]


def _unanswered(pending: Sequence[str]) -> list[Problem]:
    if not pending:
        return []
    return [
        Problem(
            "An assistant message with 'tool_calls' must be followed by tool messages responding "
            "to each 'tool_call_id'. The following tool_call_ids did not have response messages: "
            + ", ".join(pending),
            param="messages",
        )
    ]


def _tools_problems(tools: object) -> list[Problem]:
    if tools is None:
        return []
    if not isinstance(tools, list) or not tools:
        return [Problem("Invalid 'tools': expected a non-empty array.", param="tools")]
    return [p for j, tool in enumerate(tools) for p in _tool_problems(f"tools[{j}]", tool)]


def _tool_problems(where: str, tool: object) -> list[Problem]:
    if not isinstance(tool, dict) or tool.get("type") != "function":
        return [Problem(f"Invalid value for '{where}.type': expected 'function'.", where)]
    function = tool.get("function")
    if not isinstance(function, dict):
        return [Problem(f"Missing required parameter: '{where}.function'.", f"{where}.function")]
    problems: list[Problem] = []
    name = function.get("name")
    if not isinstance(name, str) or not TOOL_NAME.match(name):
        problems.append(
            Problem(
                f"Invalid '{where}.function.name': {name!r} does not match the pattern "
                "'^[a-zA-Z0-9_-]{1,64}$'.",
                param=f"{where}.function.name",
            )
        )
    if "description" in function and not isinstance(function["description"], str):
        problems.append(
            Problem(f"Invalid type for '{where}.function.description': expected a string.")
        )
    parameters = function.get("parameters")
    if not isinstance(parameters, dict):
        problems.append(
            Problem(
                f"Missing required parameter: '{where}.function.parameters' (a JSON schema).",
                param=f"{where}.function.parameters",
            )
        )
    elif parameters.get("type") != "object":
        problems.append(
            Problem(
                f"Invalid schema for function {name!r}: schema must be a JSON Schema of "
                f"'type: \"object\"', got 'type: {parameters.get('type')!r}'.",
                param=f"{where}.function.parameters",
            )
        )
    return problems


def _offered(tools: object) -> list[str]:
    names: list[str] = []
    for tool in tools if isinstance(tools, list) else []:
        function = tool.get("function") if isinstance(tool, dict) else None
        if isinstance(function, dict) and isinstance(function.get("name"), str):
            names.append(function["name"])
    return names


def _tool_choice_problems(choice: object, tools: object) -> list[Problem]:
    if choice is None:
        return []
    offered = _offered(tools)
    if not offered:
        return [
            Problem(
                "Invalid value for 'tool_choice': 'tool_choice' is only allowed when 'tools' "
                "are specified.",
                param="tool_choice",
            )
        ]
    if choice in ("none", "auto", "required"):
        return []
    function = choice.get("function") if isinstance(choice, dict) else None
    if (
        not isinstance(choice, dict)
        or choice.get("type") != "function"
        or not isinstance(function, dict)
    ):
        return [
            Problem(
                f"Invalid value for 'tool_choice': {choice!r}. Expected 'none', 'auto', "
                "'required' or {'type': 'function', 'function': {'name': ...}}.",
                param="tool_choice",
            )
        ]
    if function.get("name") not in offered:
        return [
            Problem(
                f"Invalid value for 'tool_choice': no function named {function.get('name')!r} "
                f"in 'tools' (offered: {', '.join(offered)}).",
                param="tool_choice",
            )
        ]
    return []


def _limit_problems(body: Mapping[str, Any]) -> list[Problem]:
    problems = [
        Problem(
            f"Invalid '{key}': expected a positive integer, but got {body[key]!r} instead.",
            param=key,
        )
        for key in ("max_tokens", "max_completion_tokens")
        if present(body, key) and not (is_int(body[key]) and body[key] > 0)
    ]
    if present(body, "max_tokens") and present(body, "max_completion_tokens"):
        problems.append(
            Problem(
                "Send either 'max_tokens' or 'max_completion_tokens', not both.",
                param="max_tokens",
            )
        )
    return problems


def _stream_problems(body: Mapping[str, Any]) -> list[Problem]:
    if body.get("stream") in (None, False):
        return []
    return [
        Problem(
            f"Invalid 'stream': {body['stream']!r}. The fake answers whole responses only; "
            "send stream=false or leave it out.",
            param="stream",
        )
    ]
