"""The ``scripted`` backend: answers from a JSONL file, for tests and for demos of the LLM path.

Each line is one answer: ``{"role": "code", "text": "..."}`` or ``{"role": "review",
"tool_call": {"name": "submit_review", "arguments": {...}}}``; optional ``usage``
(input_tokens, output_tokens, cost_usd), ``delay_s`` (simulated latency) and ``error`` (the
call fails with that message; with ``"fatal": true`` it fails as a rejected API key would).
``role`` defaults to ``code``. The n-th code call of a run gets the n-th code line (likewise
for review), counted by the search's deterministic call sequence, so a resumed run receives
exactly the answers an uninterrupted one would.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from podium.errors import ModelAuthError, ModelError, ScriptExhaustedError, UserError
from podium.interfaces import Backend
from podium.records import ModelRequest, ModelResponse, ToolCall, Usage


class ScriptedAnswer(BaseModel):
    model_config = ConfigDict(extra="forbid")

    role: Literal["code", "review"] = "code"
    text: str = ""
    tool_call: ToolCall | None = None
    usage: Usage | None = None
    delay_s: float = 0.0
    error: str | None = None
    fatal: bool = False


def load_script(path: Path) -> dict[str, list[ScriptedAnswer]]:
    if not path.is_file():
        raise UserError(
            f"scripted model file not found: {path}",
            hint="use --model scripted:<file.jsonl> with one JSON answer per line",
        )
    answers: dict[str, list[ScriptedAnswer]] = {"code": [], "review": []}
    for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("//"):
            continue
        try:
            answer = ScriptedAnswer.model_validate(json.loads(line))
        except (json.JSONDecodeError, ValidationError) as exc:
            reason = (
                str(exc).splitlines()[0]
                if isinstance(exc, json.JSONDecodeError)
                else (
                    "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
                )
            )
            raise UserError(f"{path}:{lineno}: not a valid scripted answer: {reason}") from None
        answers[answer.role].append(answer)
    return answers


class ScriptedBackend(Backend):
    def __init__(self, path: Path) -> None:
        self.path = path
        self.model = f"scripted:{path}"
        self.answers = load_script(path)

    async def complete(self, request: ModelRequest) -> ModelResponse:
        role, seq = request.meta.role, request.meta.seq
        script = self.answers[role]
        if seq >= len(script):
            raise ScriptExhaustedError(
                f"scripted model has no answer for {role} call #{seq + 1} "
                f"({self.path} holds {len(script)} {role} answers)",
                provider="scripted",
            )
        answer = script[seq]
        started = time.perf_counter()
        if answer.delay_s:
            await asyncio.sleep(answer.delay_s)
        if answer.error:
            kind = ModelAuthError if answer.fatal else ModelError
            raise kind(answer.error, provider="scripted")
        usage = answer.usage or Usage(
            input_tokens=sum(len(m.content) for m in request.messages) // 4,
            output_tokens=len(answer.text) // 4,
        )
        return ModelResponse(
            text=answer.text,
            tool_call=answer.tool_call,
            usage=usage.model_copy(update={"calls": 1}),
            latency_s=time.perf_counter() - started,
            model=self.model,
        )


def create(arg: str, options: Mapping[str, Any]) -> ScriptedBackend:
    if not arg:
        raise UserError("scripted model needs a file", hint="--model scripted:<file.jsonl>")
    return ScriptedBackend(Path(arg))
