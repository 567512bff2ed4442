"""What the builtin SDK backends share: options, the API key, prices and token limits, usage,
and turning an HTTP failure into the right :class:`podium.errors.ModelError`.

Provider modules keep only their wire format: how a :class:`ModelRequest` becomes a request
body and how the answer comes back.
"""

from __future__ import annotations

import email.utils
import math
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC
from typing import Any, ClassVar

from podium.errors import (
    ModelAuthError,
    ModelContextLengthError,
    ModelError,
    ModelFatalError,
    ModelTransientError,
    UserError,
)
from podium.interfaces import Backend
from podium.plugins import pricing
from podium.records import ModelRequest, Usage
from podium.redact import redact, register_url_credentials, secret_env

DEFAULT_TIMEOUT_S = 600.0
ANTHROPIC_DEFAULT_MAX_TOKENS = 16384  # the API requires a value; more needs streaming
ANTHROPIC_CACHE_RULE = (0.1, 1.25)
"""Anthropic's prompt-cache prices as multiples of the input price: a cache read, a 5-minute
cache write (the default TTL, the only one Podium asks for). What a Claude model's cache costs
when neither the config nor litellm's map says (both usually do)."""
CONTEXT_MARKERS = (
    "context_length_exceeded",
    "maximum context length",
    "context window",
    "prompt is too long",
    "too many tokens",
    "input is too long",
)


@dataclass(frozen=True)
class BackendOptions:
    """The ``model`` config section, as the builtin backends read it."""

    base_url: str | None = None
    timeout_s: float = DEFAULT_TIMEOUT_S
    temperature: float | None = None
    max_tokens: int | None = None
    api_key_env: str | None = None
    prices: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def from_config(cls, options: Mapping[str, Any]) -> BackendOptions:
        return cls(
            base_url=options.get("base_url") or None,
            timeout_s=float(options.get("timeout") or DEFAULT_TIMEOUT_S),
            temperature=options.get("temperature"),
            max_tokens=options.get("max_tokens"),
            api_key_env=options.get("api_key_env") or None,
            prices=options.get("prices") or {},
        )


class ChatBackend(Backend):
    """Base of the builtin backends. Subclasses set ``provider_name`` and ``key_env``."""

    provider_name: ClassVar[str]
    key_env: ClassVar[str | None]
    example: ClassVar[str]

    def __init__(self, model_id: str, options: Mapping[str, Any]) -> None:
        if not model_id:
            raise UserError(
                f"{self.provider_name}: no model named",
                hint=f"--model {self.provider_name}/<model>, e.g. --model {self.example}",
            )
        self.model_id = model_id
        self.model = f"{self.provider_name}/{model_id}"
        self.options = BackendOptions.from_config(options)
        register_url_credentials(self.options.base_url)
        self.info = pricing.model_info(self.model, model_id, self.options.prices)

    # --- credentials ----------------------------------------------------------------------

    @property
    def key_variable(self) -> str | None:
        return self.options.api_key_env or self.key_env

    def api_key(self, required: bool = True) -> str | None:
        """The key from the environment, registered as a secret as it is read (so it is masked
        wherever it could show up later); missing and required is a one-line error. A variable
        named by ``api_key_env`` is always required: naming it says that a key is wanted."""
        var = self.key_variable
        key = secret_env(var)
        if key or not (required or self.options.api_key_env):
            return key or None
        raise UserError(
            f"{self.provider_name}: no API key: {var} is not set",
            hint=f"export {var}=...; or name another variable with -o model.api_key_env=NAME",
        )

    # --- tokens and money -----------------------------------------------------------------

    def output_cap(self, request: ModelRequest) -> int | None:
        """The answer's token limit sent to the provider (None: the provider's default)."""
        return request.max_tokens or self.options.max_tokens

    def temperature(self, request: ModelRequest) -> float | None:
        """The sampling temperature to send: the request's, else the config's (None: send none,
        the provider's default). A backend whose model takes none leaves it out itself."""
        if request.temperature is not None:
            return request.temperature
        return self.options.temperature

    def max_cost_usd(self, request: ModelRequest) -> float | None:
        """The worst case of the call: a generous prompt estimate and the full answer, every
        prompt token at the dearest of the input and cache prices (a cache write costs more
        than plain input), so it bounds the cost whatever the provider caches."""
        if not self.info.priced:
            return None
        most_out = self.output_cap(request) or self.info.max_output_tokens or 32768
        return self.info.most_cost(pricing.input_tokens_bound(request), most_out)

    def usage(
        self,
        input_tokens: int | None,
        output_tokens: int | None,
        *,
        cache_read_tokens: int | None = None,
        cache_write_tokens: int | None = None,
        prompt: str = "",
        answer: str = "",
    ) -> Usage:
        """Usage with its cost. ``input_tokens`` is the whole prompt, the cache's reads and
        writes included (they are priced apart: :meth:`pricing.ModelInfo.cost`); a server
        that counts them outside its prompt tokens gets its prompt raised to their sum. A
        server that reports no counts gets a chars/4 estimate of ``prompt`` and ``answer``."""
        read = max(cache_read_tokens or 0, 0)
        write = max(cache_write_tokens or 0, 0)
        i = input_tokens if input_tokens is not None else _tokens(prompt)
        i = max(i, read + write)
        o = output_tokens if output_tokens is not None else _tokens(answer)
        return Usage(
            input_tokens=i,
            output_tokens=o,
            cost_usd=self.info.cost(i, o, read, write),
            calls=1,
            cache_read_tokens=read,
            cache_write_tokens=write,
        )

    # --- failures -------------------------------------------------------------------------

    def http_error(
        self, status: int | None, message: str, headers: Mapping[str, str] | None = None
    ) -> ModelError:
        """The ModelError for a failed HTTP exchange (``status`` None: no answer at all)."""
        name, msg = self.provider_name, redact(message)
        where = f" at {self.options.base_url}" if self.options.base_url else ""
        if status is None or status in (408, 409) or status >= 500:
            code = f"{status} " if status else ""
            return ModelTransientError(
                f"{name}: {code}{msg}", name, retry_after=retry_after(headers or {})
            )
        if status == 429:
            if "quota" in msg.lower() and "exceeded your current quota" in msg.lower():
                return ModelFatalError(
                    f"{name}: 429 {msg}", name, hint="the account is out of credit: check billing"
                )
            return ModelTransientError(
                f"{name}: 429 rate limited: {msg}", name, retry_after=retry_after(headers or {})
            )
        if status == 401:
            hint = f"check {self.key_variable}" if self.key_variable else "check the API key"
            return ModelAuthError(f"{name}: API key rejected{where} (401): {msg}", name, hint)
        if status == 403:
            return ModelFatalError(
                f"{name}: permission denied{where} (403): {msg}",
                name,
                hint=f"does this key have access to {self.model_id}?",
            )
        if status == 404:
            return ModelFatalError(
                f"{name}: unknown model {self.model_id!r}{where} (404): {msg}",
                name,
                hint=f"check the model name; try: podium models check {self.model}",
            )
        if status == 413 or looks_like_context_overflow(msg):
            return ModelContextLengthError(f"{name}: prompt too long ({status}): {msg}", name)
        return ModelError(f"{name}: the request was refused ({status}): {msg}", name)

    def garbled(self, what: str) -> ModelTransientError:
        name = self.provider_name
        return ModelTransientError(f"{name}: unreadable answer: {redact(what)}", name)


def is_conversation(request: ModelRequest) -> bool:
    """Whether the request is a turn of a conversation, whose next turn will resend its prompt
    as a prefix: it holds an assistant turn or a tool result already, or it offers tools the
    model may call freely (their results come back in a next turn). A one-shot request (no
    tools, or a forced one such as the review's) is asked once: no later request is known to
    repeat its prompt, so a backend does not pay to cache it."""
    if any(m.role in ("assistant", "tool") for m in request.messages):
        return True
    return bool(request.tools) and request.tool_choice is None


def empty_answer(provider: str, why: str, cut_off: bool, cap: int | None) -> ModelError:
    """The error for an answer holding neither text nor a tool call, the same for every backend.

    An empty answer (no choices, no content blocks, a stop with nothing said) is a provider's
    hiccup, like a garbled one: :class:`ModelTransientError`, retried by the one retry policy.
    One cut off by the token limit before any text (a reasoning model thinking its whole budget
    away) is not retried, since another try would spend the same tokens the same way: the node
    fails with a hint to raise the limit. ``why`` says what was seen (``finish reason stop``).
    """
    if cut_off:
        return ModelError(
            f"{provider}: the answer is empty: the token limit ({cap or 'default'}) was used up "
            "before any text (reasoning?)",
            provider,
            hint="raise model.max_tokens",
        )
    return ModelTransientError(f"{provider}: the answer is empty ({why})", provider)


def connection_failure(exc: BaseException, timed_out: bool) -> str:
    """What an exchange that got no answer says, the same for every SDK: a timeout names
    ``model.timeout``; any other failure names its cause (what the SDK wrapped), else itself."""
    if timed_out:
        return "timed out waiting for the answer (model.timeout)"
    cause = exc.__cause__ or exc.__context__ or exc
    return f"connection failed: {cause}"


def error_message(body: object) -> str | None:
    """The human part of an error body: ``{"error": {"message": ...}}`` or ``{"message": ...}``."""
    if not isinstance(body, Mapping):
        return None
    inner = body.get("error")
    if isinstance(inner, Mapping) and isinstance(inner.get("message"), str):
        return str(inner["message"])
    message = body.get("message")
    return message if isinstance(message, str) else None


def looks_like_context_overflow(message: str) -> bool:
    text = message.lower()
    return any(marker in text for marker in CONTEXT_MARKERS)


def retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds to wait from ``retry-after-ms`` or ``retry-after`` (seconds or an HTTP date);
    None when neither says anything usable."""
    lower = {k.lower(): v for k, v in headers.items()}
    if (ms := _finite(lower.get("retry-after-ms"))) is not None:
        return max(ms / 1000, 0.0)
    raw = lower.get("retry-after")
    if raw is None:
        return None
    if (seconds := _finite(raw)) is not None:
        return max(seconds, 0.0)
    try:
        when = email.utils.parsedate_to_datetime(raw)
    except (TypeError, ValueError):  # neither seconds nor a date
        return None
    if when.tzinfo is None:  # "-0000": HTTP dates are GMT
        when = when.replace(tzinfo=UTC)
    return max(when.timestamp() - time.time(), 0.0)


def _finite(text: str | None) -> float | None:
    try:
        value = float(text) if text is not None else math.nan
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def _tokens(text: str) -> int:
    return math.ceil(len(text) / 4)
