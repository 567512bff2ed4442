"""The ``scripted`` backend: answers from a JSONL file, for tests and for demos of the LLM path.

The file format is :mod:`podium.plugins.backends.answers` (``podium calls export`` writes it
from a real run). Lines that name their node (``node_id``, as exported lines do) answer that
node's calls in order, whatever order the workers make them in. Otherwise the n-th code call of
a run gets the n-th code line (likewise for review), counted by the search's call sequence; a
node re-run on resume asks under the numbers it had, so it receives the answers it received
before. ``delay_s`` simulates latency; ``error`` fails the call.
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
        self.by_node = any(a.node_id is not None for a in script)
        self.answers: dict[tuple[str, int | None], list[answers.RecordedAnswer]] = {}
        for a in script:
            self.answers.setdefault((a.role, a.node_id if self.by_node else None), []).append(a)

    def _script(self, request: ModelRequest) -> tuple[list[answers.RecordedAnswer], int, str]:
        """The lines this request draws from, its index among them, and what to call it."""
        meta = request.meta
        if self.by_node:
            lines = self.answers.get((meta.role, meta.node_id), [])
            return lines, meta.turn, f"node {meta.node_id}'s {meta.role} call #{meta.turn + 1}"
        lines = self.answers.get((meta.role, None), [])
        return lines, meta.seq, f"{meta.role} call #{meta.seq + 1}"

    def _answer(self, request: ModelRequest) -> answers.RecordedAnswer:
        script, index, name = self._script(request)
        if index >= len(script):
            raise ScriptExhaustedError(
                f"scripted model has no answer for {name} "
                f"({self.path} holds {len(script)} such answers)",
                provider="scripted",
            )
        return script[index]

    def max_cost_usd(self, request: ModelRequest) -> float | None:
        """Exact: the script says what the next answer costs."""
        script, index, _ = self._script(request)
        usage = script[index].usage if index < len(script) else None
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
