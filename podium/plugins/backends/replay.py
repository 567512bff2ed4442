"""``--replay``: answer a run's model calls from another run's record, without the network.

A request is matched by its content (role, messages, tools), not by its position, so a replay
follows the recorded run exactly as long as the search asks the same things; identical requests
are answered in the order they were recorded (the same node's answer first, so workers asking in
another order get what each node got). The budget sentence of the prompts ("Steps left
...", "Time left ...") is ignored when matching, so a replay may run under another budget.
A request with no recorded answer means the run has diverged: that is an error saying where the
closest recorded request differs, or, with ``--replay-miss live``, a call to the real model.
Once every recorded answer is used the record has simply run out: the run stops cleanly.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections import deque
from collections.abc import Callable, Iterable
from typing import Any, Literal

from podium.errors import RecordExhausted, ReplayMissError
from podium.interfaces import Backend
from podium.plugins.backends.answers import RecordedAnswer
from podium.records import Message, ModelRequest, ModelResponse

# The sentences of scaffolds.operators.budget_line: they vary with the budget, not the search.
_BUDGET = re.compile(
    r"Steps left in this search, including this one: \d+\.|Time left: about [^.\n]*\."
)
Miss = Literal["error", "live"]


def request_text(role: str, request: ModelRequest) -> str:
    """The canonical content a recorded request is matched on."""
    content = {
        "role": role,
        "messages": [_message_key(m) for m in request.messages],
        "tools": [t.model_dump() for t in request.tools],
        "tool_choice": request.tool_choice,
    }
    return json.dumps(content, sort_keys=True, ensure_ascii=False)


def _message_key(m: Message) -> list[Any]:
    """A message as it is matched: role and text, plus a tool turn's calls or call id (only
    where it has them, so a one-shot run's keys are what they always were).

    A tool result (an agentic node's cell output) is matched by the call it answers, not by
    its text: a replay answers the model's side of the conversation, and a cell that prints a
    time or a random number would otherwise end every replay of it."""
    if m.role == "tool":
        return [m.role, m.tool_call_id]
    key: list[Any] = [m.role, _BUDGET.sub("<budget>", m.content)]
    if m.tool_calls:
        key.append([c.model_dump() for c in m.tool_calls])
    if m.tool_call_id is not None:
        key.append(m.tool_call_id)
    return key


def request_key(role: str, request: ModelRequest) -> str:
    return hashlib.sha256(request_text(role, request).encode()).hexdigest()


class ReplayBackend(Backend):
    """Serves one role's calls from recorded answers; ``live`` makes the fallback backend."""

    def __init__(
        self,
        model: str,
        recorded: Iterable[RecordedAnswer],
        source: str,
        live: Callable[[], Backend] | None = None,
    ) -> None:
        self.model, self.source, self._make_live = model, source, live
        self._live: Backend | None = None
        self._queues: dict[str, deque[RecordedAnswer]] = {}
        self._requests: list[tuple[str, ModelRequest]] = []
        for answer in recorded:
            if answer.request is None:
                continue
            key = request_key(answer.role, answer.request)
            self._queues.setdefault(key, deque()).append(answer)
            self._requests.append((answer.role, answer.request))

    def _next(self, request: ModelRequest) -> RecordedAnswer | None:
        """The answer for ``request``: among identical recorded requests (drafts on the same
        tree ask the same thing), the one the same node got, so the order in which workers
        ask does not matter; else the earliest."""
        queue = self._queues.get(request_key(request.meta.role, request))
        if not queue:
            return None
        return next((a for a in queue if a.node_id == request.meta.node_id), queue[0])

    def max_cost_usd(self, request: ModelRequest) -> float | None:
        answer = self._next(request)
        if answer is not None:
            return answer.usage.cost_usd if answer.usage else 0.0
        return self.live().max_cost_usd(request) if self._make_live else 0.0

    async def complete(self, request: ModelRequest) -> ModelResponse:
        answer = self._next(request)
        if answer is not None:
            self._queues[request_key(request.meta.role, request)].remove(answer)
            return answer.response(self.model, answer.latency_s or 0.0, replayed=True)
        if self._make_live is not None:
            return await self.live().complete(request)
        if not any(self._queues.values()):
            raise RecordExhausted(f"every recorded {request.meta.role} answer in {self.source} "
                                  "has been replayed")  # fmt: skip
        raise ReplayMissError(
            f"replay: no recorded answer for {request.meta.role} call #{request.meta.seq + 1} "
            f"(node {request.meta.node_id}) in {self.source}: {self._closest(request)}",
            provider="replay",
            hint="the run has diverged from the record; --replay-miss live asks the model instead",
        )

    def live(self) -> Backend:
        if self._live is None:
            assert self._make_live is not None
            self._live = self._make_live()
        return self._live

    def _closest(self, request: ModelRequest) -> str:
        """Where this request first differs from the most similar recorded one."""
        role = request.meta.role
        mine = request_text(role, request)
        candidates = [request_text(r, q) for r, q in self._requests if r == role]
        if not candidates:
            return f"the record holds no {role} calls"
        best = max(candidates, key=lambda other: _common_prefix(mine, other))
        at = _common_prefix(mine, best)
        return (
            f"the closest recorded request differs at character {at}: "
            f"recorded {best[max(at - 30, 0) : at + 30]!r}, now {mine[max(at - 30, 0) : at + 30]!r}"
        )

    async def aclose(self) -> None:
        if self._live is not None:
            await self._live.aclose()


def _common_prefix(a: str, b: str) -> int:
    return len(os.path.commonprefix([a, b]))  # noqa: RUF071 - characters, on purpose
