"""Which model answers a role, and what a role may be called."""

from __future__ import annotations

import asyncio

import pytest
from pydantic import ValidationError

from podium.interfaces import Backend
from podium.records import ModelCall, ModelRequest, ModelResponse, RequestMeta
from podium.scaffolds import RoleModels


class Closing(Backend):
    """A backend that counts how often it is closed (RoleModels never calls it)."""

    def __init__(self, model: str) -> None:
        self.model, self.closed = model, 0

    async def complete(self, request: ModelRequest) -> ModelResponse:
        raise AssertionError("not asked here")

    async def aclose(self) -> None:
        self.closed += 1


def test_a_role_without_its_own_model_is_answered_by_the_code_model() -> None:
    code, review = Closing("openai/a"), Closing("openai/b")
    models = RoleModels({"code": code, "plan": code, "review": review})
    assert models.for_role("plan") is code and models.for_role("critic") is code
    assert models.for_role("review") is review and models.reviews
    assert models.backends() == [code, review]  # each closed once
    asyncio.run(models.aclose())
    assert (code.closed, review.closed) == (1, 1)
    assert RoleModels({"review": review}).for_role("plan") is None  # baseline: no code model


@pytest.mark.parametrize("role", ["", "Plan", "plan me", "x" * 33, "1st"])
def test_a_role_is_a_lower_case_word(role: str) -> None:
    with pytest.raises(ValidationError):
        RequestMeta(role=role)
    ModelCall(node_id=1, role="critic_2", seq=0, request=ModelRequest(messages=[]))
