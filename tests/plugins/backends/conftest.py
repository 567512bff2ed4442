"""Fixtures for the backend tests: each builtin backend, through its real SDK, against the fake
server that speaks its provider's wire format (``podium.testing``).

A test takes ``provider`` (parametrized over every way a user reaches a provider: the openai
and anthropic backends, and litellm in front of either fake) with ``fake``, the running fake
for it, and builds its backend with ``make_backend``. Tests that only apply to some providers
narrow the list with ``@pytest.mark.parametrize("provider", [...], indirect=True)``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Literal, Protocol

import pytest

from podium.api.runs import load_registry
from podium.plugins.backends.common import ChatBackend
from podium.plugins.gateway import ModelGateway, RetryPolicy
from podium.plugins.pricing import ModelInfo, model_info
from podium.records import Message, ModelRequest, ModelResponse
from podium.scaffolds.review import REVIEW_TOOL
from podium.testing import FakeAnthropic, FakeOpenAI, FakeServer

FAKE_KEY = "sk-fake-0123456789"
"""The key every fake expects and the environment holds (long enough for redaction to mask)."""
FAST = RetryPolicy(attempts=3, total_s=5, first_wait_s=0.01, max_wait_s=0.05)


@dataclass(frozen=True)
class Provider:
    """One way to reach a model: the ``--model`` name and the fake that answers it."""

    id: str
    model: str
    wire: Literal["openai", "anthropic"]
    key_env: str
    """The variable the key comes from (litellm reads the same ones)."""
    local_model: str
    """A model no price map knows (a local server's)."""

    @property
    def backend_name(self) -> str:
        """The provider name the backend puts in its messages."""
        return self.model.split("/", 1)[0]

    @property
    def model_id(self) -> str:
        """The model name the server gets."""
        return self.model.rsplit("/", 1)[-1]

    def info(self) -> ModelInfo:
        """The price-map entry for the model, looked up by its own provider's name."""
        native = self.model.split("/", 1)[1] if self.backend_name == "litellm" else self.model
        return model_info(native, native.split("/", 1)[1])

    def fake(self, **options: Any) -> FakeServer:
        """A fake speaking this provider's wire format (not started)."""
        options.setdefault("api_key", FAKE_KEY)
        return FakeOpenAI(**options) if self.wire == "openai" else FakeAnthropic(**options)


PROVIDERS = {
    p.id: p
    for p in (
        Provider("openai", "openai/gpt-4.1", "openai", "OPENAI_API_KEY", "openai/my-local-model"),
        Provider(
            "anthropic",
            "anthropic/claude-sonnet-4-6",
            "anthropic",
            "ANTHROPIC_API_KEY",
            "anthropic/my-local-model",
        ),
        Provider(
            "litellm-openai",
            "litellm/openai/gpt-4.1",
            "openai",
            "OPENAI_API_KEY",
            "litellm/openai/my-local-model",
        ),
        Provider(
            "litellm-anthropic",
            "litellm/anthropic/claude-sonnet-4-6",
            "anthropic",
            "ANTHROPIC_API_KEY",
            "litellm/anthropic/my-local-model",
        ),
    )
}
ALL = list(PROVIDERS)
OPENAI_WIRE = [p for p in ALL if PROVIDERS[p].wire == "openai"]
ANTHROPIC_WIRE = [p for p in ALL if PROVIDERS[p].wire == "anthropic"]


class MakeBackend(Protocol):
    def __call__(
        self, fake: FakeServer, model: str | None = None, **options: Any
    ) -> ChatBackend: ...


class Complete(Protocol):
    def __call__(
        self,
        backend: ChatBackend,
        request: ModelRequest,
        via: ModelGateway | None = None,
    ) -> tuple[ModelResponse, int]: ...


@pytest.fixture(params=ALL)
def provider(request: pytest.FixtureRequest) -> Provider:
    return PROVIDERS[request.param]


@pytest.fixture(autouse=True)
def keys(monkeypatch: pytest.MonkeyPatch) -> None:
    """The fakes' key in the providers' variables; nothing else that could redirect a client."""
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    monkeypatch.setenv("ANTHROPIC_API_KEY", FAKE_KEY)
    for name in ("OPENAI_BASE_URL", "OPENAI_API_BASE", "ANTHROPIC_BASE_URL", "ANTHROPIC_API_BASE"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def fake(provider: Provider) -> Iterator[FakeServer]:
    with provider.fake() as server:
        yield server


@pytest.fixture
def make_backend(provider: Provider) -> MakeBackend:
    """The provider's backend from the registry, pointed at ``fake`` (2 s timeout)."""
    registry = load_registry([])

    def make(fake: FakeServer, model: str | None = None, **options: Any) -> ChatBackend:
        backend = registry.backend(
            model or provider.model, {"base_url": fake.url, "timeout": 2.0, **options}
        )
        assert isinstance(backend, ChatBackend)
        return backend

    return make


@pytest.fixture
def gateway() -> ModelGateway:
    """A gateway with quick retries: 3 attempts, waits of 10-50 ms."""
    return ModelGateway(FAST)


@pytest.fixture
def complete(gateway: ModelGateway) -> Complete:
    """One call through ``gateway`` (default: the fixture's), in a fresh event loop; the backend
    is closed after it."""

    def run(
        backend: ChatBackend, request: ModelRequest, via: ModelGateway | None = None
    ) -> tuple[ModelResponse, int]:
        async def go() -> tuple[ModelResponse, int]:
            try:
                return await (via or gateway).complete(backend, request)
            finally:
                await backend.aclose()

        return asyncio.run(go())

    return run


@pytest.fixture
def ask() -> ModelRequest:
    """A plain question."""
    return ModelRequest(
        messages=[
            Message(role="system", content="You are a careful ML engineer."),
            Message(role="user", content="Say hello."),
        ]
    )


@pytest.fixture
def review() -> ModelRequest:
    """A review request forcing the ``submit_review`` tool, as the review step sends it."""
    return ModelRequest(
        messages=[
            Message(role="system", content="You review runs of ML solutions."),
            Message(role="user", content="The run printed: validation accuracy 0.8"),
        ],
        tools=[REVIEW_TOOL],
        tool_choice=REVIEW_TOOL.name,
    )
