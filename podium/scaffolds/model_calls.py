"""The model client one node's operators and reviewer use: every call numbered, recorded in the
journal and accounted against the cost budget.

Numbering is what makes runs replayable and resumable: each call gets a per-role number (its
``seq``) that is unique in the run, and a node run again after a crash asks its calls under the
numbers its earlier attempt had, so a scripted or replayed model gives it the same answers.
"""

from __future__ import annotations

import time
from typing import Literal

from podium.errors import ModelError, ModelFatalError
from podium.failpoints import failpoint
from podium.formats.journal import Journal
from podium.interfaces import Backend
from podium.plugins import ModelGateway
from podium.records import ModelCall, ModelRequest, ModelResponse, RequestMeta, Usage
from podium.scaffolds.spending import Spending


class CallRecorder:
    """A :class:`podium.interfaces.ModelClient` for node ``node_id``.

    Each call is made through ``gateway`` (retries, concurrency) to ``code_model`` or
    ``review_model`` by its role, after ``spending`` has reserved its worst-case cost; the call
    (answered or failed) is recorded in ``journal`` and its usage added to ``spending``.

    ``next_seq`` is the run's next unused call number per role, shared by every node's recorder
    and advanced here: one dict for the whole run, so no two calls ever share a number.
    ``usage``, ``code_s`` and ``review_s`` add up this node's calls, for its record.
    """

    def __init__(
        self,
        node_id: int,
        *,
        journal: Journal,
        spending: Spending,
        gateway: ModelGateway,
        code_model: Backend | None,
        review_model: Backend | None,
        next_seq: dict[str, int],
    ) -> None:
        self.node_id = node_id
        self.journal, self.spending, self.gateway = journal, spending, gateway
        self.code_model, self.review_model = code_model, review_model
        self.next_seq = next_seq
        self.earlier = journal.earlier_seqs(node_id)  # a re-run asks under the same seqs
        self.turns: dict[str, int] = {}
        self.usage = Usage()
        self.code_s = 0.0
        self.review_s = 0.0

    async def ask(self, request: ModelRequest, role: Literal["code", "review"]) -> ModelResponse:
        seq = self._seq(role)
        turn = self.turns[role] = self.turns.get(role, -1) + 1
        request = request.model_copy(
            update={"meta": RequestMeta(node_id=self.node_id, role=role, seq=seq, turn=turn)}
        )
        backend = self.code_model if role == "code" else self.review_model
        if backend is None:
            raise ModelError(f"this run has no {role} model")
        call = ModelCall(
            node_id=self.node_id, role=role, seq=seq, request=request, model=backend.model
        )
        held = self.spending.reserve(backend, request, role)
        t0 = time.perf_counter()
        try:
            response, attempts = await self.gateway.complete(backend, request)
        except ModelError as exc:
            failed = {"error": str(exc), "attempts": exc.attempts,
                      "fatal": isinstance(exc, ModelFatalError)}  # fmt: skip
            self.journal.record_call(call.model_copy(update=failed))
            raise
        finally:
            self.spending.release(held)
            self._add_time(role, time.perf_counter() - t0)
        failpoint("model.call")  # crash with an answer received but not yet recorded
        self.journal.record_call(
            call.model_copy(update={"response": response, "attempts": attempts})
        )
        self.spending.add(role, backend.model, response.usage, response.replayed)
        self.usage += response.usage
        return response

    def _seq(self, role: str) -> int:
        """The call's number in the run: the one an earlier attempt at this node had, else the
        next never used."""
        if earlier := self.earlier.get(role):
            return earlier.pop(0)
        seq = self.next_seq.get(role, 0)
        self.next_seq[role] = seq + 1
        return seq

    def _add_time(self, role: str, seconds: float) -> None:
        if role == "code":
            self.code_s += seconds
        else:
            self.review_s += seconds
