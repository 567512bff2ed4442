"""Podium's exception hierarchy.

Everything Podium raises on purpose derives from :class:`PodiumError`. The CLI prints a
:class:`UserError` as one line (plus its hint) and exits non-zero; anything else is a bug and
keeps its traceback. Model failures have their own branch because the loop treats them
differently: a failed call fails one node, an auth failure stops the run.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable


class PodiumError(Exception):
    """Base class of every error Podium raises deliberately."""


class UserError(PodiumError):
    """Bad input from the user: printed as one line, never with a traceback.

    ``hint`` is an optional second line telling the user what to do about it.
    """

    exit_code = 2

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint


class ConfigError(UserError):
    """A configuration value is invalid or unknown (names the key and the reason)."""


class TaskError(UserError):
    """A task cannot be found, loaded or prepared."""


class UnknownNameError(UserError):
    """A plugin-provided name (model, strategy, sandbox, benchmark...) does not exist."""


class PluginError(UserError):
    """A plugin could not be loaded or broke the plugin contract."""


class RunDirError(UserError):
    """A run directory is missing, incompatible, or in use by another process."""


class ModelError(PodiumError):
    """A model call failed. The node that made it is finished as buggy; the run goes on.

    The message names the provider; ``hint`` (optional) says what to do about it. Backends
    raise a subclass when they know more, because the caller acts on the class:
    """

    def __init__(self, message: str, provider: str = "", hint: str | None = None) -> None:
        super().__init__(message)
        self.provider = provider
        self.hint = hint
        self.attempts = 1  # tries made under the retry policy, set by the caller


class ModelTransientError(ModelError):
    """Worth another try (rate limit, timeout, lost connection, 5xx, a garbled answer).

    Podium's one retry policy retries these, waiting ``retry_after`` seconds when the provider
    said so; backends must not retry by themselves.
    """

    def __init__(
        self,
        message: str,
        provider: str = "",
        hint: str | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message, provider, hint)
        self.retry_after = retry_after


class ModelContextLengthError(ModelError):
    """The prompt is longer than the model's context: the operator trims it and asks once more."""


class ModelFatalError(ModelError):
    """Every later call would fail the same way (bad key, no access, unknown model): the run
    stops instead of burning its steps."""


class ModelAuthError(ModelFatalError):
    """The provider rejected the credentials (or none were found)."""


class ReplayMissError(ModelFatalError):
    """``--replay`` has no recorded answer for a request: the run has diverged from the record."""


class RecordExhausted(PodiumError):
    """``--replay`` has answered every call of its record: the run stops cleanly (stop reason
    ``replayed``); the node that wanted another answer stays unfinished, like one a budget
    stopped. Not a divergence: nothing the record holds was asked differently."""


class ScriptExhaustedError(ModelError):
    """A scripted backend has no answer left for the request."""


class CostLimitReached(PodiumError):
    """A model call could push spending past ``budget.cost``: it is not made and the run stops.

    The node that wanted it stays unfinished, so ``podium resume --cost <more>`` re-runs it.
    """


class SandboxError(PodiumError):
    """The sandbox could not start or drive a kernel (not the solution's own failure)."""


class SandboxUnavailable(UserError):
    """The sandbox asked for cannot work on this machine (bwrap missing, namespaces off)."""


def did_you_mean(name: str, choices: Iterable[str], listing: str = "available") -> str:
    """A hint for an unknown ``name``: the closest choices first (difflib), then all of them.

    ``did you mean mcts? available: evolutionary, greedy, mcts, random``; without a close one,
    ``available: ...`` alone. ``listing`` names the list (``available``, ``presets``...).
    """
    options = list(choices)
    close = difflib.get_close_matches(name, options, n=1, cutoff=0.6)
    head = f"did you mean {close[0]}? " if close else ""
    return f"{head}{listing}: {', '.join(options) or '(none)'}"
