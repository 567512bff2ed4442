"""The ``scripted`` backend: answers from a JSONL file, for tests and for demos of the LLM path.

The file format is :mod:`podium.plugins.backends.answers` (``podium calls export`` writes it
from a real run). The n-th code call of a run gets the n-th code line (likewise for review),
counted by the search's deterministic call sequence, so a resumed run receives exactly the
answers an uninterrupted one would. ``delay_s`` simulates latency; ``error`` fails the call.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from podium.errors import ScriptExhaustedError, UserError
from podium.interfaces import Backend
from podium.plugins.backends import answers
from podium.records import ModelRequest, ModelResponse, Usage


class ScriptedBackend(Backend):
    def __init__(self, path: Path) -> None:
        self.path = path
        self.model = f"scripted:{path}"
        script = answers.load(path)
        self.answers = {role: [a for a in script if a.role == role] for role in ("code", "review")}

    def _answer(self, request: ModelRequest) -> answers.RecordedAnswer:
        role, seq = request.meta.role, request.meta.seq
        script = self.answers[role]
        if seq >= len(script):
            raise ScriptExhaustedError(
                f"scripted model has no answer for {role} call #{seq + 1} "
                f"({self.path} holds {len(script)} {role} answers)",
                provider="scripted",
            )
        return script[seq]

    def max_cost_usd(self, request: ModelRequest) -> float | None:
        """Exact: the script says what the next answer costs."""
        seq, script = request.meta.seq, self.answers[request.meta.role]
        usage = script[seq].usage if seq < len(script) else None
        return usage.cost_usd if usage else 0.0

    async def complete(self, request: ModelRequest) -> ModelResponse:
        answer = self._answer(request)
        started = time.perf_counter()
        if answer.delay_s:
            await asyncio.sleep(answer.delay_s)
        if answer.usage is None:  # a rough count, so hand-written scripts show some usage
            usage = Usage(
                input_tokens=sum(len(m.content) for m in request.messages) // 4,
                output_tokens=len(answer.text) // 4,
            )
            answer = answer.model_copy(update={"usage": usage})
        return answer.response(self.model, time.perf_counter() - started)


def create(arg: str, options: Mapping[str, Any]) -> ScriptedBackend:
    if not arg:
        raise UserError("scripted model needs a file", hint="--model scripted:<file.jsonl>")
    return ScriptedBackend(Path(arg))
