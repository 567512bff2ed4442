"""A fake Anthropic Messages API: ``POST /v1/messages`` and ``GET /v1/models``.

It checks requests the way the real API does (top-level ``system``, required ``max_tokens``,
``tool_use`` / ``tool_result`` pairing, non-empty text blocks, ``cache_control`` breakpoints...)
and answers in the real wire format, so code that passes against it passes against
api.anthropic.com.

Prompt caching works as the API's does: opt-in, by ``cache_control`` breakpoints (on tools,
system blocks, message blocks, or top-level for the last block; at most four). A breakpoint's
prefix (tools, system, messages up to its block) is stored when it holds ``cache_min_tokens``
estimated tokens or more; a later request whose prefix matches a stored one at a breakpoint, or
at one of the 20 blocks before it, reads it. The usage says so as the API does:
``cache_read_input_tokens`` and ``cache_creation_input_tokens`` beside ``input_tokens``, which
then counts only the rest.
"""

from __future__ import annotations

import hashlib
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
    next_id,
    range_problem,
)
from podium.testing.replies import Reply

ALLOWED_KEYS = frozenset(
    {
        "model", "max_tokens", "messages", "system", "tools", "tool_choice", "temperature",
        "top_p", "top_k", "stop_sequences", "metadata", "stream", "thinking", "service_tier",
        "container", "mcp_servers", "context_management", "cache_control", "diagnostics",
        "inference_geo", "output_config", "speed",
    }
)  # fmt: skip
BLOCK_TYPES = (
    "text",
    "image",
    "document",
    "tool_use",
    "tool_result",
    "thinking",
    "redacted_thinking",
)
TOOL_CHOICES = ("auto", "any", "tool", "none")
DEFAULT_MODELS = ("claude-sonnet-4-6", "claude-opus-4-6", "claude-haiku-4-5")
ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    402: "billing_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    504: "timeout_error",
    529: "overloaded_error",
}
MAX_BREAKPOINTS = 4
LOOKBACK_BLOCKS = 20
"""How far before a breakpoint the API looks for a cached prefix (the breakpoint's included)."""
UNMARKABLE = ("thinking", "redacted_thinking")
"""Blocks that take no ``cache_control``."""
CACHE_TTLS = ("5m", "1h")
_STOP_REASONS = {"stop": "end_turn", "length": "max_tokens"}
_EMPTY_CONTENT = (
    "messages: all messages must have non-empty content except for the optional final "
    "assistant message"
)


class FakeAnthropic(FakeServer):
    """A fake Anthropic server; give the SDK ``base_url=fake.url, api_key=fake.api_key``.
    Takes the key as ``x-api-key`` or as ``Authorization: Bearer`` (``Received.auth`` says
    which came)."""

    completion_path = "/v1/messages"
    models_path = "/v1/models"
    url_suffix = ""
    auth_order = ("x-api-key", "bearer")
    request_id_header = "request-id"
    malformed_body = b'{"id": "msg_1", "type": "message", "role": "assistant", "cont'

    def _validate(self, received: Received) -> list[Problem]:
        assert received.body is not None  # the base rejects a missing body first
        problems = validate_messages_request(received.body)
        if "anthropic-version" not in received.headers:
            problems.insert(0, Problem("anthropic-version: header is required"))
        return problems

    def _default_error_type(self, status: int) -> str:
        return ERROR_TYPES.get(status, "api_error" if status >= 500 else "invalid_request_error")

    def _error_payload(
        self, status: int, message: str, error_type: str, code: str | None, param: str | None
    ) -> dict[str, Any]:
        error: dict[str, Any] = {"type": error_type, "message": message}
        if code is not None:
            error["details"] = {"error_code": code}
        return {"type": "error", "error": error}

    def _auth_failure(self, received: Received) -> HttpReply:
        if received.key is None:
            return self.error_reply(401, "x-api-key header is required")
        message = "invalid x-api-key"
        if self.echo_key_in_errors:
            message += f": {received.key}"
        return self.error_reply(401, message)

    def _unknown_model(self, model: str) -> HttpReply:
        return self.error_reply(404, f"model: {model}")

    def _special_error(self, reply: Reply) -> HttpReply:
        if reply.kind == "overloaded":
            return self.error_reply(529, "Overloaded")
        return self.error_reply(400, "prompt is too long: 250000 tokens > 200000 maximum")

    def _cache_usage(self, received: Received, prompt_tokens: int) -> tuple[int, int]:
        """Read the longest stored prefix found at (or up to 20 blocks before) a breakpoint;
        store each later breakpoint's prefix that is long enough, counting it as written."""
        blocks = prefix_blocks(received.body or {})
        marks = [i for i, block in enumerate(blocks) if block.marked]
        read_at = -1
        for mark in marks:
            for i in range(mark, max(mark - LOOKBACK_BLOCKS, read_at), -1):
                if self._cache_entry(blocks[i].key) is not None:
                    read_at = i
                    break
        read = blocks[read_at].tokens if read_at >= 0 else 0
        covered, written = read, 0
        for mark in marks:
            if mark > read_at and blocks[mark].tokens >= self.cache_min_tokens:
                self._cache_store(blocks[mark].key, blocks[mark].tokens)
                written += blocks[mark].tokens - covered
                covered = blocks[mark].tokens
        read = min(read, prompt_tokens)
        return read, min(written, prompt_tokens - read)

    def _message_payload(
        self, reply: Reply, received: Received, usage: tuple[int, int]
    ) -> dict[str, Any]:
        content: list[dict[str, Any]] = []
        if reply.content:
            content.append({"type": "text", "text": reply.content})
        stop_reason = _STOP_REASONS[reply.finish]
        if reply.kind == "tool_call":
            content.append(
                {
                    "type": "tool_use",
                    "id": next_id("toolu_"),
                    "name": reply.tool_name,
                    "input": dict(reply.tool_input),
                }
            )
            stop_reason = "tool_use"
        return {
            "id": next_id("msg_"),
            "type": "message",
            "role": "assistant",
            "model": received.body.get("model") if received.body else None,
            "content": content,
            "stop_reason": stop_reason,
            "stop_sequence": None,
            "usage": {
                "input_tokens": usage[0] - received.cache_read_tokens - received.cache_write_tokens,
                "output_tokens": usage[1],
                "cache_creation_input_tokens": received.cache_write_tokens,
                "cache_read_input_tokens": received.cache_read_tokens,
            },
        }

    def _models_payload(self) -> dict[str, Any]:
        names = self.models if self.models is not None else DEFAULT_MODELS
        models = [
            {"type": "model", "id": n, "display_name": n, "created_at": "2025-01-01T00:00:00Z"}
            for n in names
        ]
        first, last = (names[0], names[-1]) if names else (None, None)
        return {"data": models, "has_more": False, "first_id": first, "last_id": last}


# --- the prompt cache ---------------------------------------------------------------------------


@dataclass(frozen=True)
class PrefixBlock:
    """One block of a request in the order the API reads it (tools, system, messages)."""

    key: str
    """Names the prompt up to and including this block (the model's, marks left out)."""
    tokens: int
    """That prefix's estimated tokens (tools count none, as in the usage estimate)."""
    marked: bool
    """A ``cache_control`` breakpoint: on the block, inside it (a tool result's), or the
    request's top-level one on its last block."""


def prefix_blocks(body: Mapping[str, Any]) -> list[PrefixBlock]:
    """The request's blocks, each with the key and size of the prefix it ends."""
    blocks: list[PrefixBlock] = []
    key = hashlib.sha256(canonical(body.get("model")).encode()).hexdigest()
    counter = TextCounter()

    def add(where: str, block: Any, texts: list[str]) -> None:
        nonlocal key
        seen = canonical([where, _unmarked(block)])
        key = hashlib.sha256((key + seen).encode()).hexdigest()
        counter.add(texts)
        blocks.append(PrefixBlock(key, counter.tokens, _marks(block) > 0))

    tools = body.get("tools")
    for tool in tools if isinstance(tools, list) else []:
        add("tool", tool, [])
    for block in _as_blocks(body.get("system")):
        add("system", block, content_texts([block]))
    messages = body.get("messages")
    for message in messages if isinstance(messages, list) else []:
        role = message.get("role") if isinstance(message, dict) else None
        content = message.get("content") if isinstance(message, dict) else None
        for block in _as_blocks(content):
            add(str(role), block, content_texts([block]))
    if blocks and body.get("cache_control") is not None:
        blocks[-1] = PrefixBlock(blocks[-1].key, blocks[-1].tokens, True)
    return blocks


def _as_blocks(content: Any) -> list[Any]:
    """A content as blocks: a string is one text block (the API reads the two alike)."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return content if isinstance(content, list) else []


def _marks(block: Any) -> int:
    """``cache_control`` marks on a block (a tool, a system or message block, a message) or a
    list of them, and on the blocks nested in their ``content`` (a tool result's)."""
    if isinstance(block, list):
        return sum(_marks(item) for item in block)
    if not isinstance(block, dict):
        return 0
    return (1 if block.get("cache_control") is not None else 0) + _marks(block.get("content"))


def _unmarked(block: Any) -> Any:
    """A block as the prompt holds it: its mark, and those of the blocks in its ``content``,
    are no part of it."""
    if not isinstance(block, dict):
        return block
    found = {k: v for k, v in block.items() if k != "cache_control"}
    if isinstance(found.get("content"), list):
        found["content"] = [_unmarked(inner) for inner in found["content"]]
    return found


def _cache_control_problems(where: str, block: Mapping[str, Any]) -> list[Problem]:
    """A breakpoint's own shape: ``{"type": "ephemeral"}``, with an optional ``ttl``."""
    if "cache_control" not in block or block["cache_control"] is None:
        return []
    value = block["cache_control"]
    at = f"{where}.cache_control" if where else "cache_control"
    if not isinstance(value, dict) or value.get("type") != "ephemeral":
        return [Problem(f"{at}.type: Input should be 'ephemeral'")]
    problems = [
        Problem(f"{at}.{k}: Extra inputs are not permitted")
        for k in value
        if k not in ("type", "ttl")
    ]
    if "ttl" in value and value["ttl"] not in CACHE_TTLS:
        problems.append(Problem(f"{at}.ttl: Input should be '5m' or '1h'"))
    return problems


def _breakpoints_problems(body: Mapping[str, Any]) -> list[Problem]:
    """At most four ``cache_control`` breakpoints, wherever they are."""
    found = _marks(body.get("tools")) + _marks(body.get("system")) + _marks(body.get("messages"))
    found += 1 if body.get("cache_control") is not None else 0
    if found <= MAX_BREAKPOINTS:
        return []
    return [
        Problem(
            f"A maximum of {MAX_BREAKPOINTS} blocks with cache_control may be provided. "
            f"Found {found}."
        )
    ]


# --- request validation -----------------------------------------------------------------------


def validate_messages_request(body: Mapping[str, Any]) -> list[Problem]:
    """Every way a Messages request body breaks the API's rules."""
    tools = body.get("tools")
    return [
        *_unknown_keys(body),
        *_model_problems(body.get("model")),
        *_max_tokens_problems(body),
        *_messages_problems(body.get("messages")),
        *_system_problems(body.get("system")),
        *_tools_problems(tools),
        *_tool_choice_problems(body.get("tool_choice"), tools),
        *range_problem(body, "temperature", 0, 1),
        *range_problem(body, "top_p", 0, 1),
        *_top_k_problems(body.get("top_k")),
        *_thinking_problems(body),
        *_stream_problems(body.get("stream")),
        *_cache_control_problems("", body),
        *_breakpoints_problems(body),
    ]


def _unknown_keys(body: Mapping[str, Any]) -> list[Problem]:
    return [
        Problem(f"{key}: Extra inputs are not permitted") for key in body if key not in ALLOWED_KEYS
    ]


def _model_problems(model: object) -> list[Problem]:
    if isinstance(model, str) and model:
        return []
    return [Problem("model: Field required (a non-empty string)")]


def _max_tokens_problems(body: Mapping[str, Any]) -> list[Problem]:
    value = body.get("max_tokens")
    if value is None:
        return [Problem("max_tokens: Field required")]
    if not is_int(value) or value < 1:
        return [Problem(f"max_tokens: Input should be an integer >= 1, got {value!r}")]
    return []


def _messages_problems(messages: object) -> list[Problem]:
    if not isinstance(messages, list) or not messages:
        return [Problem("messages: Field required (a non-empty list)")]
    problems: list[Problem] = []
    last = len(messages) - 1
    for i, message in enumerate(messages):
        problems.extend(_message_problems(i, message, is_last=i == last))
    first = messages[0]
    if isinstance(first, dict) and first.get("role") == "assistant":
        problems.append(Problem('messages: first message must use the "user" role'))
    problems.extend(_tool_result_problems(messages))
    return problems


def _message_problems(i: int, message: object, *, is_last: bool) -> list[Problem]:
    where = f"messages.{i}"
    if not isinstance(message, dict):
        return [Problem(f"{where}: Input should be a valid dictionary")]
    role = message.get("role")
    if role == "system":
        return [
            Problem(
                'messages: Unexpected role "system". The Messages API accepts a top-level '
                '`system` parameter, not "system" as an input message role.'
            )
        ]
    if role not in ("user", "assistant"):
        return [Problem(f"{where}.role: Input should be 'user' or 'assistant', got {role!r}")]
    extra = [  # a message-level cache_control, say: breakpoints go on blocks
        Problem(f"{where}.{key}: Extra inputs are not permitted")
        for key in message
        if key not in ("role", "content")
    ]
    return extra + _content_problems(where, message.get("content"), role, is_last=is_last)


def _content_problems(where: str, content: object, role: str, *, is_last: bool) -> list[Problem]:
    may_be_empty = is_last and role == "assistant"  # a prefill may be empty
    if isinstance(content, str):
        return [] if content or may_be_empty else [Problem(_EMPTY_CONTENT)]
    if not isinstance(content, list):
        return [Problem(f"{where}.content: Input should be a string or a list of content blocks")]
    if not content and not may_be_empty:
        return [Problem(_EMPTY_CONTENT)]
    return [
        problem
        for j, block in enumerate(content)
        for problem in _block_problems(f"{where}.content.{j}", block, role)
    ]


def _block_problems(where: str, block: object, role: str) -> list[Problem]:
    if not isinstance(block, dict):
        return [Problem(f"{where}: Input should be a valid dictionary")]
    kind = block.get("type")
    if kind not in BLOCK_TYPES:
        expected = ", ".join(repr(t) for t in BLOCK_TYPES)
        return [
            Problem(
                f"{where}.type: Input tag {kind!r} does not match the expected tags: {expected}"
            )
        ]
    if kind in UNMARKABLE and "cache_control" in block:
        return [Problem(f"{where}.{kind}.cache_control: Extra inputs are not permitted")]
    problems = _cache_control_problems(where, block)
    if kind == "text":
        problems += _text_block_problems(where, block)
    elif kind == "tool_use":
        problems += _tool_use_problems(where, block, role)
    elif kind == "tool_result":
        problems += _tool_result_block_problems(where, block, role)
    return problems


def _text_block_problems(where: str, block: Mapping[str, Any]) -> list[Problem]:
    text = block.get("text")
    if not isinstance(text, str):
        return [Problem(f"{where}.text: Field required (a string)")]
    if not text.strip():
        if block.get("cache_control") is not None:
            return [Problem(f"{where}.text: cache_control cannot be set for empty text blocks")]
        return [Problem(f"{where}: text content blocks must contain non-whitespace text")]
    return []


def _tool_use_problems(where: str, block: Mapping[str, Any], role: str) -> list[Problem]:
    problems: list[Problem] = []
    if role != "assistant":
        problems.append(Problem(f"{where}: tool_use blocks can only be in assistant messages"))
    for key, kind in (("id", str), ("name", str), ("input", dict)):
        if not isinstance(block.get(key), kind):
            problems.append(Problem(f"{where}.{key}: Field required (a {kind.__name__})"))
    return problems


def _tool_result_block_problems(where: str, block: Mapping[str, Any], role: str) -> list[Problem]:
    problems: list[Problem] = []
    if role != "user":
        problems.append(Problem(f"{where}: tool_result blocks can only be in user messages"))
    if not isinstance(block.get("tool_use_id"), str):
        problems.append(Problem(f"{where}.tool_use_id: Field required (a string)"))
    content = block.get("content")
    if content is not None and not isinstance(content, str | list):
        problems.append(Problem(f"{where}.content: Input should be a string or a list of blocks"))
    for j, inner in enumerate(content if isinstance(content, list) else []):
        if isinstance(inner, dict) and inner.get("cache_control") is not None:
            at = f"{where}.content.{j}"
            problems += _cache_control_problems(at, inner)
            if inner.get("type") == "text" and not str(inner.get("text") or "").strip():
                problems.append(
                    Problem(f"{at}.text: cache_control cannot be set for empty text blocks")
                )
    return problems


def _tool_result_problems(messages: Sequence[object]) -> list[Problem]:
    """Each assistant ``tool_use`` must be answered by a ``tool_result`` in the very next
    (user) message, and each ``tool_result`` must answer a ``tool_use`` of the message before."""
    problems: list[Problem] = []
    pending: list[str] = []
    pending_at = 0
    for i, message in enumerate(messages):
        if not isinstance(message, dict):
            continue
        role = message.get("role")
        if role == "user":
            results = _block_ids(message, "tool_result", "tool_use_id")
            problems.extend(_missing_results(pending_at, [p for p in pending if p not in results]))
            unexpected = [r for r in results if r not in pending]
            if unexpected:
                problems.append(
                    Problem(
                        f"messages.{i}.content: unexpected `tool_use_id` found in `tool_result` "
                        f"blocks: {', '.join(unexpected)}. Each `tool_result` block must have a "
                        "corresponding `tool_use` block in the previous message."
                    )
                )
            pending = []
        elif role == "assistant":
            problems.extend(_missing_results(pending_at, pending))
            pending, pending_at = _block_ids(message, "tool_use", "id"), i
    return problems


def _block_ids(message: Mapping[str, Any], kind: str, key: str) -> list[str]:
    content = message.get("content")
    return [
        block[key]
        for block in (content if isinstance(content, list) else [])
        if isinstance(block, dict) and block.get("type") == kind and isinstance(block.get(key), str)
    ]


def _missing_results(at: int, missing: Sequence[str]) -> list[Problem]:
    if not missing:
        return []
    return [
        Problem(
            f"messages.{at}: `tool_use` ids were found without `tool_result` blocks immediately "
            f"after: {', '.join(missing)}. Each `tool_use` block must have a corresponding "
            "`tool_result` block in the next message."
        )
    ]


def _system_problems(system: object) -> list[Problem]:
    if system is None or isinstance(system, str):
        return []
    if not isinstance(system, list) or not all(
        isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
        for b in system
    ):
        return [Problem("system: Input should be a string or a list of text blocks")]
    problems: list[Problem] = []
    for j, block in enumerate(system):
        problems += _cache_control_problems(f"system.{j}", block)
        if block.get("cache_control") is not None and not block["text"].strip():
            problems.append(
                Problem(f"system.{j}.text: cache_control cannot be set for empty text blocks")
            )
    return problems


def _tools_problems(tools: object) -> list[Problem]:
    if tools is None:
        return []
    if not isinstance(tools, list):
        return [Problem("tools: Input should be a valid list")]
    problems = [p for j, tool in enumerate(tools) for p in _tool_problems(f"tools.{j}", tool)]
    names = [t.get("name") for t in tools if isinstance(t, dict)]
    if len(names) != len(set(map(str, names))):
        problems.append(Problem("tools: Tool names must be unique."))
    return problems


def _tool_problems(where: str, tool: object) -> list[Problem]:
    if not isinstance(tool, dict):
        return [Problem(f"{where}: Input should be a valid dictionary")]
    name = tool.get("name")
    if not isinstance(name, str) or not TOOL_NAME.match(name):
        return [Problem(f"{where}.name: {name!r} should match pattern '^[a-zA-Z0-9_-]{{1,64}}$'")]
    if tool.get("type") not in (None, "custom"):
        return []  # a server tool (web search, code execution...): no schema of ours
    problems = _cache_control_problems(where, tool)
    if "description" in tool and not isinstance(tool["description"], str):
        problems.append(Problem(f"{where}.description: Input should be a valid string"))
    schema = tool.get("input_schema")
    if not isinstance(schema, dict):
        problems.append(Problem(f"{where}.input_schema: Field required (a JSON schema object)"))
    elif schema.get("type") != "object":
        problems.append(Problem(f"{where}.input_schema.type: Input should be 'object'"))
    return problems


def _tool_choice_problems(choice: object, tools: object) -> list[Problem]:
    if choice is None:
        return []
    kind = choice.get("type") if isinstance(choice, dict) else None
    if not isinstance(choice, dict) or kind not in TOOL_CHOICES:
        return [
            Problem(f"tool_choice: expected a type of 'auto', 'any', 'tool' or 'none': {choice!r}")
        ]
    offered = (
        [t.get("name") for t in tools if isinstance(t, dict)] if isinstance(tools, list) else []
    )
    if kind in ("any", "tool") and not offered:
        return [Problem(f"tool_choice: type {kind!r} may only be specified while providing tools")]
    if kind == "tool" and choice.get("name") not in offered:
        return [Problem(f"tool_choice.name: no tool named {choice.get('name')!r} in tools")]
    return []


def _top_k_problems(top_k: object) -> list[Problem]:
    if top_k is None or (is_int(top_k) and top_k >= 0):
        return []
    return [Problem(f"top_k: Input should be an integer >= 0, got {top_k!r}")]


def _thinking_problems(body: Mapping[str, Any]) -> list[Problem]:
    """Extended thinking's rules: a budget of at least 1024 below ``max_tokens``, and no
    temperature but 1."""
    thinking = body.get("thinking")
    if thinking is None:
        return []
    if not isinstance(thinking, dict) or thinking.get("type") not in (
        "enabled",
        "disabled",
        "adaptive",
    ):
        return [Problem("thinking: expected {'type': 'enabled', 'budget_tokens': ...} or disabled")]
    if thinking["type"] != "enabled":
        return []
    problems: list[Problem] = []
    budget = thinking.get("budget_tokens")
    if not is_int(budget) or budget < 1024:
        problems.append(Problem("thinking.enabled.budget_tokens: Input should be >= 1024"))
    elif is_int(body.get("max_tokens")) and body["max_tokens"] <= budget:
        problems.append(Problem("`max_tokens` must be greater than `thinking.budget_tokens`."))
    if body.get("temperature") not in (None, 1):
        problems.append(Problem("`temperature` may only be set to 1 when thinking is enabled."))
    return problems


def _stream_problems(stream: object) -> list[Problem]:
    if stream in (None, False):
        return []
    return [Problem(f"stream: {stream!r}: the fake answers whole messages only; send stream=false")]
