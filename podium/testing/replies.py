"""What a fake provider answers to one request: the provider-neutral :class:`Reply`.

A test says *what* should happen ("a tool call", "a 429 with retry-after 2") and each fake
renders that into its own provider's wire format, so one scripted conversation can be replayed
against both the OpenAI and the Anthropic fake.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

ReplyKind = Literal[
    "text", "tool_call", "error", "overloaded", "context_too_long", "malformed", "disconnect"
]
"""``text`` / ``tool_call``: a 200 answer. ``error``: an HTTP error in the provider's format.
``overloaded`` / ``context_too_long``: errors whose status and wording differ per provider.
``malformed``: a 200 whose body is not JSON. ``disconnect``: the socket closes, no answer."""

Finish = Literal["stop", "length"]
"""Why the answer ended: ``stop`` (naturally) or ``length`` (cut off by the token limit)."""

_DEFAULT_MESSAGES: dict[int, str] = {
    400: "Bad request.",
    401: "Invalid authentication.",
    403: "Permission denied.",
    404: "Not found.",
    408: "Request timed out.",
    409: "Conflict.",
    413: "Request too large.",
    422: "Unprocessable entity.",
    429: "Rate limit reached for requests. Please try again later.",
    500: "The server had an error while processing your request.",
    502: "Bad gateway.",
    503: "The service is temporarily unavailable.",
    504: "Gateway timeout.",
    529: "Overloaded.",
}


def default_error_message(status: int) -> str:
    """A plausible message for an error status, so ``Reply.error(503)`` needs no wording."""
    return _DEFAULT_MESSAGES.get(status, f"HTTP error {status}.")


@dataclass(frozen=True)
class Reply:
    """What a fake answers to one request. Build one with the constructors below, not directly.

    Token counts left as ``None`` are estimated by the server (about four characters a token),
    ``delay_s`` is waited before answering (a slow model, or a client timeout when it is long).
    """

    kind: ReplyKind
    content: str = ""
    finish: Finish = "stop"
    tool_name: str | None = None
    tool_input: Mapping[str, Any] = field(default_factory=dict)
    raw_arguments: str | None = None
    status: int = 200
    message: str = ""
    error_type: str | None = None
    error_code: str | None = None
    retry_after: float | None = None
    retry_after_ms: int | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    delay_s: float = 0.0

    def __post_init__(self) -> None:
        if self.finish not in ("stop", "length"):
            raise ValueError(f"finish must be 'stop' or 'length', not {self.finish!r}")
        if self.kind == "error" and not 400 <= self.status <= 599:
            raise ValueError(f"an error reply needs a 4xx or 5xx status, not {self.status}")
        if not math.isfinite(self.delay_s) or self.delay_s < 0:
            raise ValueError(f"delay_s must be a finite number >= 0, not {self.delay_s}")
        for name in ("input_tokens", "output_tokens"):
            value = getattr(self, name)
            if value is not None and value < 0:
                raise ValueError(f"{name} must be >= 0, not {value}")

    @classmethod
    def text(
        cls,
        text: str,
        *,
        finish: Finish = "stop",
        input_tokens: int | None = None,
        output_tokens: int | None = None,
        delay_s: float = 0.0,
    ) -> Reply:
        """A plain text answer; ``finish="length"`` marks it cut off by the token limit."""
        return cls(
            "text",
            content=text,
            finish=finish,
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            delay_s=delay_s,
        )

    @classmethod
    def tool_call(
        cls,
        name: str,
        arguments: Mapping[str, Any],
        *,
        text: str = "",
        raw_arguments: str | None = None,
        delay_s: float = 0.0,
    ) -> Reply:
        """The model calls tool ``name``. ``raw_arguments`` (OpenAI only, where arguments travel
        as a JSON string) is sent verbatim instead of ``arguments``, to test malformed JSON."""
        return cls(
            "tool_call",
            content=text,
            tool_name=name,
            tool_input=dict(arguments),
            raw_arguments=raw_arguments,
            delay_s=delay_s,
        )

    @classmethod
    def truncated(cls, text: str) -> Reply:
        """A text answer cut off by the token limit."""
        return cls.text(text, finish="length")

    @classmethod
    def empty(cls) -> Reply:
        """A 200 with no content at all (OpenAI ``content: ""``, Anthropic ``content: []``)."""
        return cls.text("")

    @classmethod
    def error(
        cls,
        status: int,
        message: str | None = None,
        *,
        kind: str | None = None,
        code: str | None = None,
        retry_after: float | None = None,
        retry_after_ms: int | None = None,
        delay_s: float = 0.0,
    ) -> Reply:
        """An HTTP error in the provider's format. ``kind`` is the provider's error type (each
        fake has a default per status); ``code`` is OpenAI's ``error.code`` (e.g.
        ``"insufficient_quota"``) or Anthropic's ``error.details.error_code``."""
        return cls(
            "error",
            status=status,
            message=message if message is not None else default_error_message(status),
            error_type=kind,
            error_code=code,
            retry_after=retry_after,
            retry_after_ms=retry_after_ms,
            delay_s=delay_s,
        )

    @classmethod
    def rate_limited(cls, retry_after: float | None = 1.0) -> Reply:
        """A 429, with a ``retry-after`` header (seconds) unless ``retry_after`` is None."""
        return cls.error(429, retry_after=retry_after)

    @classmethod
    def server_error(cls, status: int = 500) -> Reply:
        """A 5xx server error."""
        if not 500 <= status <= 599:
            raise ValueError(f"a server error needs a 5xx status, not {status}")
        return cls.error(status)

    @classmethod
    def overloaded(cls) -> Reply:
        """The provider is overloaded: Anthropic 529 ``overloaded_error``, OpenAI 503."""
        return cls("overloaded", status=529)

    @classmethod
    def context_too_long(cls) -> Reply:
        """A 400 saying the prompt exceeds the model's context window, in the provider's words."""
        return cls("context_too_long", status=400)

    @classmethod
    def malformed(cls) -> Reply:
        """A 200 declared ``application/json`` whose body is cut-off, invalid JSON."""
        return cls("malformed")

    @classmethod
    def hang(cls, seconds: float) -> Reply:
        """Wait ``seconds`` before answering "OK": longer than the client's timeout, it times
        out. Stopping the server ends the wait early."""
        return cls.text("OK", delay_s=seconds)

    @classmethod
    def disconnect(cls) -> Reply:
        """Close the connection without answering: the client sees a connection error."""
        return cls("disconnect")
