"""The gateway every model call takes: which failures it retries, how long it waits, how it
bounds retries, caps concurrency per provider and scrubs secrets. A scripted in-test backend
stands in for a provider (no HTTP); ``retry_after`` parses the providers' headers."""

from __future__ import annotations

import asyncio
import email.utils
import time
from collections.abc import Sequence

import pytest
from tenacity import Future, RetryCallState

from podium.errors import (
    ModelAuthError,
    ModelContextLengthError,
    ModelError,
    ModelFatalError,
    ModelTransientError,
)
from podium.interfaces import Backend
from podium.plugins.backends.common import retry_after
from podium.plugins.gateway import ModelGateway, RetryPolicy
from podium.records import Message, ModelRequest, ModelResponse

FAST = RetryPolicy(attempts=3, total_s=5, first_wait_s=0.01, max_wait_s=0.05)
REQUEST = ModelRequest(messages=[Message(role="user", content="hi")])
SECRET = "sk-live-7d3f9a1c5e2b8046"


class Scripted(Backend):
    """Answers each call with the next outcome: a response, or an exception to raise."""

    def __init__(
        self, outcomes: Sequence[ModelResponse | Exception], model: str = "stub/model-1"
    ) -> None:
        self.model = model
        self.outcomes = list(outcomes)
        self.calls = 0

    async def complete(self, request: ModelRequest) -> ModelResponse:
        self.calls += 1
        outcome = self.outcomes.pop(0)
        if isinstance(outcome, Exception):
            raise outcome
        return outcome


def ok(text: str = "done") -> ModelResponse:
    return ModelResponse(text=text, model="stub/model-1")


def complete(backend: Backend, policy: RetryPolicy = FAST) -> tuple[ModelResponse, int]:
    return asyncio.run(ModelGateway(policy).complete(backend, REQUEST))


def fail(backend: Backend, policy: RetryPolicy = FAST) -> ModelError:
    with pytest.raises(ModelError) as caught:
        complete(backend, policy)
    return caught.value


# --- what is retried ----------------------------------------------------------------------


def test_transient_error_is_retried() -> None:
    backend = Scripted([ModelTransientError("stub: 503", "stub"), ok()])
    response, attempts = complete(backend)

    assert response.text == "done"
    assert attempts == 2
    assert backend.calls == 2


@pytest.mark.parametrize(
    "error",
    [
        ModelError("stub: refused (400)", "stub"),
        ModelContextLengthError("stub: prompt too long", "stub"),
        ModelFatalError("stub: unknown model", "stub", hint="check the name"),
        ModelAuthError("stub: key rejected", "stub", hint="check STUB_API_KEY"),
    ],
    ids=lambda e: type(e).__name__,
)
def test_other_model_errors_are_not_retried(error: ModelError) -> None:
    backend = Scripted([error, ok()])
    raised = fail(backend)

    assert type(raised) is type(error)
    assert str(raised) == str(error)
    assert raised.hint == error.hint
    assert raised.attempts == 1
    assert backend.calls == 1


def test_transient_errors_past_the_limit_become_a_plain_model_error() -> None:
    backend = Scripted([ModelTransientError("stub: 503", "stub", hint="try later")] * 4)
    error = fail(backend)

    assert type(error) is ModelError  # the caller must not retry it again
    assert str(error).startswith("stub: 503 (gave up after 3 attempts in ")
    assert (error.provider, error.hint, error.attempts) == ("stub", "try later", 3)
    assert backend.calls == 3


def test_a_backend_breaking_its_contract_fails_only_the_call() -> None:
    boom = RuntimeError("boom")
    backend = Scripted([boom, ok()])
    error = fail(backend)

    assert type(error) is ModelError
    assert str(error) == "stub/model-1: RuntimeError: boom"
    assert error.provider == "stub"
    assert error.__cause__ is boom
    assert backend.calls == 1


# --- how long it waits --------------------------------------------------------------------


def test_waits_what_the_provider_says() -> None:
    backend = Scripted([ModelTransientError("stub: 429", "stub", retry_after=0.2), ok()])
    started = time.monotonic()
    _, attempts = complete(backend)

    assert attempts == 2
    assert 0.2 <= time.monotonic() - started < 1.0  # not the policy's 10-50 ms


def test_a_wait_past_the_total_time_gives_up_at_once() -> None:
    backend = Scripted([ModelTransientError("stub: 429", "stub", retry_after=30), ok()])
    started = time.monotonic()
    error = fail(backend, RetryPolicy(attempts=5, total_s=2, first_wait_s=0.01))

    assert time.monotonic() - started < 0.5  # did not sleep 30 s, nor 2
    assert "gave up after 1 attempt in" in str(error)
    assert error.attempts == 1
    assert backend.calls == 1


def test_total_time_bounds_the_retries() -> None:
    policy = RetryPolicy(attempts=1000, total_s=0.3, first_wait_s=0.05, max_wait_s=0.05)
    backend = Scripted([ModelTransientError("stub: 503", "stub")] * 1000)
    started = time.monotonic()
    error = fail(backend, policy)
    elapsed = time.monotonic() - started

    assert elapsed < 0.3 + 0.2  # no retry started after total_s (each wait is 50 ms)
    assert 2 <= backend.calls < 10
    assert error.attempts == backend.calls


def wait_before(policy: RetryPolicy, attempt: int, error: Exception) -> float:
    """What the policy waits after the ``attempt``-th try failed with ``error``."""
    state = RetryCallState(None, None, (), {})  # type: ignore[arg-type]
    state.attempt_number = attempt
    state.outcome = Future.construct(attempt, error, True)
    return policy.wait_s(state)


def test_backoff_doubles_with_jitter_up_to_the_cap() -> None:
    policy = RetryPolicy(first_wait_s=1.0, max_wait_s=60.0)
    transient = ModelTransientError("stub: 503", "stub")
    for attempt, least in [(1, 1.0), (2, 2.0), (3, 4.0), (5, 16.0)]:
        waits = [wait_before(policy, attempt, transient) for _ in range(50)]
        assert all(least <= w <= least + 1.0 for w in waits), (attempt, waits)
        assert len(set(waits)) > 1  # jittered, so clients do not retry in step
    assert wait_before(policy, 7, transient) == 60.0
    assert wait_before(policy, 10_000, transient) == 60.0  # no overflow
    hinted = ModelTransientError("stub: 429", "stub", retry_after=7.5)
    assert wait_before(policy, 3, hinted) == 7.5


# --- concurrency and secrets ----------------------------------------------------------------


class Slow(Backend):
    """Counts the calls in flight, per provider and in all."""

    in_flight: dict[str, int]
    most: dict[str, int]

    def __init__(self, model: str, in_flight: dict[str, int], most: dict[str, int]) -> None:
        self.model = model
        self.in_flight, self.most = in_flight, most

    async def complete(self, request: ModelRequest) -> ModelResponse:
        for key in (self.provider, "all"):
            self.in_flight[key] = self.in_flight.get(key, 0) + 1
            self.most[key] = max(self.most.get(key, 0), self.in_flight[key])
        await asyncio.sleep(0.02)
        for key in (self.provider, "all"):
            self.in_flight[key] -= 1
        return ok()


def test_concurrency_is_capped_per_provider() -> None:
    in_flight: dict[str, int] = {}
    most: dict[str, int] = {}
    backends = [Slow(m, in_flight, most) for m in ("alpha/m1", "alpha/m2", "beta/m1")]
    gateway = ModelGateway(FAST, concurrency=2)

    async def many() -> list[tuple[ModelResponse, int]]:
        calls = [gateway.complete(b, REQUEST) for b in backends for _ in range(4)]
        return await asyncio.gather(*calls)

    results = asyncio.run(many())

    assert len(results) == 12
    assert most == {"alpha": 2, "beta": 2, "all": 4}  # two models of alpha share its cap


def test_secrets_are_scrubbed_from_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ACME_API_KEY", SECRET)
    echoed = ModelAuthError(f"stub: key {SECRET} rejected", "stub", hint=f"not {SECRET}")
    transient = ModelTransientError(f"stub: 503 for key {SECRET}", "stub", hint=f"not {SECRET}")
    broken = ValueError(f"cannot parse {SECRET}")
    for outcomes in ([echoed], [transient] * 3, [broken]):
        error = fail(Scripted(outcomes))
        assert SECRET not in str(error)
        assert SECRET not in (error.hint or "")
        assert "***" in str(error)


# --- retry-after headers ------------------------------------------------------------------


def http_date(seconds_from_now: float) -> str:
    return email.utils.formatdate(time.time() + seconds_from_now, usegmt=True)


@pytest.mark.parametrize(
    ("headers", "seconds"),
    [
        ({"retry-after": "2"}, 2.0),
        ({"Retry-After": "0.5"}, 0.5),
        ({"retry-after-ms": "1500"}, 1.5),
        ({"retry-after-ms": "250", "retry-after": "9"}, 0.25),  # the finer one wins
        ({"retry-after": "-3"}, 0.0),
        ({"retry-after": http_date(-60)}, 0.0),  # a date in the past: go now
        ({}, None),
        ({"retry-after": ""}, None),
        ({"retry-after": "soon"}, None),
        ({"retry-after": "nan"}, None),
        ({"retry-after-ms": "later", "retry-after": "4"}, 4.0),
    ],
)
def test_retry_after(headers: dict[str, str], seconds: float | None) -> None:
    assert retry_after(headers) == seconds


def test_retry_after_as_an_http_date() -> None:
    assert retry_after({"retry-after": http_date(30)}) == pytest.approx(30, abs=2)
    no_zone = http_date(30).replace("GMT", "-0000")  # a naive date: still GMT
    assert retry_after({"retry-after": no_zone}) == pytest.approx(30, abs=2)
