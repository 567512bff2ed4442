"""``podium models check``: one tiny call to a model, reporting what a user needs to trust it
before a long run — the key is accepted, the endpoint answers, function calls work, and what
it costs."""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from podium.errors import ModelError, ModelFatalError
from podium.interfaces import Backend
from podium.plugins import ModelGateway, Registry, RetryPolicy
from podium.records import Message, ModelRequest, ModelResponse, RequestMeta, ToolSpec

REPLY_TOOL = ToolSpec(
    name="reply",
    description="Reply with one word.",
    parameters={
        "type": "object",
        "properties": {"word": {"type": "string"}},
        "required": ["word"],
    },
)
CHECK_MAX_TOKENS = 512  # reasoning models think before even one word
CHECK_POLICY = RetryPolicy(attempts=3, total_s=60.0, first_wait_s=1.0)


@dataclass
class ModelCheck:
    model: str
    endpoint: str
    key: str
    price: str
    answer: ModelResponse | None = None
    attempts: int = 0
    latency_s: float = 0.0
    tools: str = "not tried"
    error: ModelError | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


def check_model(registry: Registry, name: str, options: Mapping[str, Any]) -> ModelCheck:
    backend = registry.backend(name, options)
    return asyncio.run(_check(backend, options))


async def _check(backend: Backend, options: Mapping[str, Any]) -> ModelCheck:
    info = getattr(backend, "info", None)
    var = getattr(backend, "key_variable", None)
    report = ModelCheck(
        model=backend.model,
        endpoint=options.get("base_url") or "the provider's default",
        key=f"{var} ({'set' if _is_set(var) else 'not set'})" if var else "chosen by the backend",
        price=info.describe() if info is not None else "not reported by this backend",
    )
    gateway = ModelGateway(CHECK_POLICY, concurrency=1)
    started = time.perf_counter()
    try:
        try:
            report.answer, report.attempts = await gateway.complete(backend, _request(tools=True))
            called = report.answer.tool_call is not None
            report.tools = "function calls work" if called else "answered in text, no call"
        except ModelFatalError:
            raise
        except ModelError as exc:  # some servers refuse tools: try plain text
            report.answer, report.attempts = await gateway.complete(backend, _request(False))
            report.tools = f"not supported ({exc}); reviews fall back to JSON in text"
    except ModelError as exc:
        report.error = exc
    finally:
        report.latency_s = time.perf_counter() - started
        with contextlib.suppress(Exception):
            await backend.aclose()
    return report


def _request(tools: bool) -> ModelRequest:
    ask = "Call the function reply with the word OK." if tools else "Answer with the word OK."
    return ModelRequest(
        messages=[
            Message(role="system", content="You are a connectivity check. Be brief."),
            Message(role="user", content=ask),
        ],
        tools=[REPLY_TOOL] if tools else [],
        tool_choice=REPLY_TOOL.name if tools else None,
        max_tokens=CHECK_MAX_TOKENS,
        meta=RequestMeta(role="code"),
    )


def _is_set(var: str) -> bool:
    return bool(os.environ.get(var))
