"""Tokens and dollars spent on model calls — per role, per model, per run — and the cost budget.

Every call counts, including those of nodes a crash discarded: that money was spent. The budget
is enforced *before* a call: the call's worst case (its backend's ``max_cost_usd``) is reserved
while it is in flight, and a call that could push spending past the budget is not made.
"""

from __future__ import annotations

from collections.abc import Iterable

from podium.errors import CostLimitReached
from podium.interfaces import Backend
from podium.records import ModelRequest, Usage


class Spending:
    def __init__(
        self, limit_usd: float | None, spent: Iterable[tuple[str, str, bool, Usage]] = ()
    ) -> None:
        self.limit_usd = limit_usd
        self.total = Usage()
        self.replayed = Usage()  # answers taken from a record: counted, but not bought now
        self.by_role: dict[str, Usage] = {}
        self.by_model: dict[str, Usage] = {}
        self.reserved_usd = 0.0
        for role, model, replayed, usage in spent:
            self.add(role, model, usage, replayed)

    def add(self, role: str, model: str, usage: Usage, replayed: bool = False) -> None:
        """Count a call. Replayed answers count like bought ones, so a replay stops where the
        recorded run stopped; ``report`` shows them apart."""
        self.total += usage
        if replayed:
            self.replayed += usage
        self.by_role[role] = self.by_role.get(role, Usage()) + usage
        self.by_model[model] = self.by_model.get(model, Usage()) + usage

    @property
    def exhausted(self) -> bool:
        return self.limit_usd is not None and self.total.cost_usd >= self.limit_usd

    def reserve(self, backend: Backend, request: ModelRequest, role: str) -> float:
        """Hold the call's worst-case cost, or raise :class:`CostLimitReached`; returns the hold."""
        if self.limit_usd is None:
            return 0.0
        worst = backend.max_cost_usd(request) or 0.0
        committed = self.total.cost_usd + self.reserved_usd
        if committed + worst > self.limit_usd:
            in_flight = (
                f" and ${self.reserved_usd:.4f} held by calls in flight"
                if self.reserved_usd
                else ""
            )
            raise CostLimitReached(
                f"the next {role} call to {backend.model} could cost up to ${worst:.4f}; "
                f"${self.total.cost_usd:.4f} of the ${self.limit_usd:.2f} budget is spent"
                f"{in_flight}"
            )
        self.reserved_usd += worst
        return worst

    def release(self, held: float) -> None:
        self.reserved_usd = max(self.reserved_usd - held, 0.0)

    def report(self) -> dict[str, object]:
        """For ``summary.json``."""
        return {
            **self.total.model_dump(),
            "replayed": self.replayed.model_dump(),
            "by_role": {k: v.model_dump() for k, v in sorted(self.by_role.items())},
            "by_model": {k: v.model_dump() for k, v in sorted(self.by_model.items())},
        }
