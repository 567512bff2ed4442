"""Podium's exception hierarchy.

Everything Podium raises on purpose derives from :class:`PodiumError`. The CLI prints a
:class:`UserError` as one line (plus its hint) and exits non-zero; anything else is a bug and
keeps its traceback. Model failures have their own branch because the loop treats them
differently: a failed call fails one node, an auth failure stops the run.
"""

from __future__ import annotations


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
    """A model call failed. The node that made it is finished as buggy; the run goes on."""

    def __init__(self, message: str, provider: str = "") -> None:
        super().__init__(message)
        self.provider = provider


class ModelAuthError(ModelError):
    """The provider rejected the credentials: every later call would fail too, so the run stops."""


class ScriptExhaustedError(ModelError):
    """A scripted backend has no answer left for the request."""


class SandboxError(PodiumError):
    """The sandbox could not start or drive a kernel (not the solution's own failure)."""


class SandboxUnavailable(UserError):
    """The sandbox asked for cannot work on this machine (bwrap missing, namespaces off)."""
