"""The one road every model call takes: a concurrency cap per provider, one retry policy,
and secrets scrubbed from whatever comes back, answer or error.

Backends make a single attempt and classify their failures (see :class:`podium.interfaces.
Backend`); the SDKs' own retries are switched off, so the policy here is the only one: transient
failures (rate limits, timeouts, lost connections, 5xx, garbled answers) are retried with
exponential backoff and jitter, waiting exactly ``retry-after`` when the provider names it,
within a bounded number of attempts and a bounded total time. Anything else fails at once.

Everything a call returns or raises leaves here through :func:`podium.redact.redact`: the
error's message and hint, the retry log line, the answer's text and tool-call arguments (a
provider or proxy may echo the key it was sent). The journal, ``summary.json`` and every export
are built from what leaves here, so they hold no key.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from dataclasses import dataclass, field

from tenacity import (
    AsyncRetrying,
    RetryCallState,
    retry_if_exception_type,
    stop_after_attempt,
    stop_before_delay,
)

from podium.errors import ModelError, ModelTransientError, RecordExhausted
from podium.interfaces import Backend
from podium.records import ModelRequest, ModelResponse
from podium.redact import redact, redact_data, secret_values

log = logging.getLogger("podium")


@dataclass(frozen=True)
class RetryPolicy:
    """``attempts`` tries at most, none starting later than ``total_s`` after the first."""

    attempts: int = 6
    total_s: float = 900.0
    first_wait_s: float = 1.0
    max_wait_s: float = 60.0

    def wait_s(self, state: RetryCallState) -> float:
        outcome = state.outcome
        exc = outcome.exception() if outcome else None
        hinted = exc.retry_after if isinstance(exc, ModelTransientError) else None
        if hinted is not None:
            return max(hinted, 0.0)
        # first_wait_s doubled each retry, plus up to first_wait_s of jitter (tenacity's
        # wait_exponential_jitter, whose parameter names differ between its versions)
        doubled = self.first_wait_s * 2.0 ** min(state.attempt_number - 1, 64)
        return min(doubled + random.uniform(0, self.first_wait_s), self.max_wait_s)


@dataclass
class ModelGateway:
    """Shared by all of a run's backends (one asyncio loop): caps, retries, redaction."""

    policy: RetryPolicy = field(default_factory=RetryPolicy)
    concurrency: int = 8
    _slots: dict[str, asyncio.Semaphore] = field(default_factory=dict)

    async def complete(self, backend: Backend, request: ModelRequest) -> tuple[ModelResponse, int]:
        """The response (no secret in it) and the number of attempts it took.

        Raises a :class:`ModelError` (its ``attempts`` set) whose message holds no secret.
        """
        slot = self._slots.setdefault(backend.provider, asyncio.Semaphore(self.concurrency))
        attempts = 0
        started = time.monotonic()
        try:
            async with slot:
                async for attempt in self._retrying(backend):
                    with attempt:
                        attempts += 1
                        return _masked(await backend.complete(request)), attempts
        except ModelTransientError as exc:
            waited = time.monotonic() - started
            raise _scrubbed(
                ModelError(
                    f"{exc} (gave up after {attempts} attempt{'s' * (attempts > 1)} "
                    f"in {waited:.1f}s)",
                    exc.provider,
                    exc.hint,
                ),
                attempts,
            ) from None
        except ModelError as exc:
            raise _scrubbed(exc, attempts) from None
        except (asyncio.CancelledError, KeyboardInterrupt, RecordExhausted):
            raise  # RecordExhausted: a clean end of a replay, not a failed call
        except Exception as exc:  # a backend broke its contract: still only this node fails
            error = ModelError(f"{backend.model}: {type(exc).__name__}: {exc}", backend.provider)
            raise _scrubbed(error, attempts) from exc
        raise AssertionError("unreachable: tenacity either returns or raises")

    def _retrying(self, backend: Backend) -> AsyncRetrying:
        policy = self.policy

        def before_sleep(state: RetryCallState) -> None:
            exc = state.outcome.exception() if state.outcome else None
            wait = state.upcoming_sleep
            log.info(
                "%s: %s; attempt %d of %d in %.1fs",
                backend.model, redact(str(exc)), state.attempt_number + 1, policy.attempts, wait,
            )  # fmt: skip

        return AsyncRetrying(
            retry=retry_if_exception_type(ModelTransientError),
            stop=stop_after_attempt(policy.attempts) | stop_before_delay(policy.total_s),
            wait=policy.wait_s,
            before_sleep=before_sleep,
            reraise=True,
        )


def _masked(response: ModelResponse) -> ModelResponse:
    """``response`` with every secret masked in its text and tool call (itself when none is)."""
    secrets = secret_values()
    text = redact(response.text, secrets)
    call = response.tool_call
    masked_call = None
    if call is not None:
        arguments = redact_data(call.arguments, secrets)
        name = redact(call.name, secrets)
        if arguments != call.arguments or name != call.name:
            masked_call = call.model_copy(update={"name": name, "arguments": arguments})
    if text == response.text and masked_call is None:
        return response
    return response.model_copy(update={"text": text, "tool_call": masked_call or call})


def _scrubbed(exc: ModelError, attempts: int) -> ModelError:
    exc.args = (redact(str(exc)),)
    exc.hint = redact(exc.hint) if exc.hint else exc.hint
    exc.attempts = max(attempts, 1)
    return exc
