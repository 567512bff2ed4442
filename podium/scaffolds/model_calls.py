"""The model client one node's operators and reviewer use: every call numbered, recorded in the
journal and accounted against the cost budget; and the models that answer each role.

Numbering is what makes runs replayable and resumable: each call gets a per-role number (its
``seq``) that is unique in the run, and a node run again after a crash asks its calls under the
numbers its earlier attempt had, so a scripted or replayed model gives it the same answers.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Mapping
from dataclasses import dataclass, field

from pydantic import ValidationError

from podium.errors import ModelError, ModelFatalError
from podium.failpoints import failpoint
from podium.formats.journal import Journal
from podium.interfaces import Backend
from podium.plugins import ModelGateway
from podium.records import (
    CODE,
    REVIEW,
    ModelCall,
    ModelRequest,
    ModelResponse,
    RequestMeta,
    Usage,
)
from podium.scaffolds.spending import Spending


@dataclass(frozen=True)
class RoleModels:
    """The backend that answers each role's calls (``podium.records.Role``).

    A role the map lacks is answered by the ``code`` model, as ``model.plan`` and
    ``model.review`` default to it; with no ``code`` model either (the ``baseline`` operator
    set writes its code itself) a call under it fails as a model error. A run without a
    ``review`` entry is judged by the metric line and the hard checks alone. One backend may
    serve several roles: it is closed once.
    """

    by_role: Mapping[str, Backend] = field(default_factory=dict)

    def for_role(self, role: str) -> Backend | None:
        return self.by_role.get(role, self.by_role.get(CODE))

    @property
    def reviews(self) -> bool:
        return REVIEW in self.by_role

    def backends(self) -> list[Backend]:
        """Each distinct backend once, in role order."""
        return list({id(b): b for b in self.by_role.values()}.values())

    async def aclose(self) -> None:
        for backend in self.backends():
            with contextlib.suppress(Exception):
                await backend.aclose()


class CallRecorder:
    """A :class:`podium.interfaces.ModelClient` for node ``node_id``.

    Each call is made through ``gateway`` (retries, concurrency) to the model ``models`` names
    for its role, after ``spending`` has reserved its worst-case cost; the call (answered or
    failed) is recorded in ``journal`` and its usage added to ``spending`` under its role.

    ``next_seq`` is the run's next unused call number per role, shared by every node's recorder
    and advanced here: one dict for the whole run, so no two calls ever share a number.
    ``usage`` and ``seconds`` (per role) add up this node's calls, for its record.
    """

    def __init__(
        self,
        node_id: int,
        *,
        journal: Journal,
        spending: Spending,
        gateway: ModelGateway,
        models: RoleModels,
        next_seq: dict[str, int],
    ) -> None:
        self.node_id = node_id
        self.journal, self.spending, self.gateway = journal, spending, gateway
        self.models = models
        self.next_seq = next_seq
        self.earlier = journal.earlier_seqs(node_id)  # a re-run asks under the same seqs
        self.turns: dict[str, int] = {}
        self.usage = Usage()
        self.seconds: dict[str, float] = {}

    async def ask(self, request: ModelRequest, role: str) -> ModelResponse:
        try:
            meta = RequestMeta(node_id=self.node_id, role=role)
        except ValidationError:
            raise ModelError(
                f"{role!r} is not a role: a role is a lower-case word (code, plan, review, or "
                "an operator's own)"
            ) from None
        backend = self.models.for_role(role)
        if backend is None:
            raise ModelError(f"this run has no {role} model")
        seq = self._seq(role)
        turn = self.turns[role] = self.turns.get(role, -1) + 1
        meta = meta.model_copy(update={"seq": seq, "turn": turn})
        request = request.model_copy(update={"meta": meta})
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
            self.seconds[role] = self.seconds.get(role, 0.0) + time.perf_counter() - t0
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

    def model_s(self, *, reviewing: bool) -> float:
        """Seconds this node waited on its review calls (``reviewing``), or on all others."""
        return sum(t for role, t in self.seconds.items() if (role == REVIEW) == reviewing)
