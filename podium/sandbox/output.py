"""Keeps the head and tail of a solution's output under a byte cap, and tells it while it grows.

A solution may print gigabytes; the agent and the journal need the start (what ran) and the end
(where it failed), not the middle. Memory stays bounded by the cap whatever arrives.

A long execution must not be a black box: :class:`LiveOutput` tells a listener (the
``Workspace.on_output`` contract in ``podium.interfaces``) the output so far, as the result
will hold it, without letting the listener slow the execution down or break it.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from podium.exec_output import CappedOutput
from podium.untrusted import inert

LIVE_EVERY_S = 1.0  # the output so far is told at most this often
LIVE_MAX_SHARE = 0.1  # ... and so that telling it takes at most this share of the time
log = logging.getLogger(__name__)


class LiveOutput:
    """Tells ``listener`` the output so far while an execution runs (``Workspace.on_output``).

    ``poll`` is called on every turn of the loop that collects the kernel's messages (each
    message, and each empty poll of a silent kernel), so it must cost next to nothing when
    there is nothing to tell: one comparison of byte counts, then one clock read. It tells at
    once when the first output arrived, then at most every ``every_s``, and never spends more
    than ``LIVE_MAX_SHARE`` of the time telling (a listener that takes 0.3 s, or a huge cap,
    is told less often). ``final`` tells the result's output, once, when the execution ended.

    What is told is ``inert`` of the capped text: exactly what ``ExecResult.output`` becomes.
    The listener can never break the execution: its exceptions are swallowed, the first one
    logged (a listener's failure is not the solution's).
    """

    def __init__(self, listener: Callable[[str], None], every_s: float = LIVE_EVERY_S) -> None:
        self.listener, self.every_s = listener, every_s
        self._told_bytes = 0
        self._next_s = 0.0
        self._failed = False

    def poll(self, output: CappedOutput) -> None:
        """Tell the output so far if some arrived since the last time and it is time to."""
        if output.total_bytes == self._told_bytes:
            return
        started = time.monotonic()
        if started < self._next_s:
            return
        self._told_bytes = output.total_bytes
        self._tell(inert(output.text()))
        spent = time.monotonic() - started
        self._next_s = started + max(self.every_s, spent / LIVE_MAX_SHARE)

    def final(self, text: str) -> None:
        """Tell the execution's final output (``ExecResult.output``)."""
        self._tell(text)

    def _tell(self, text: str) -> None:
        try:
            self.listener(text)
        except Exception as exc:  # the listener's failure must never end the execution
            if not self._failed:
                log.warning(
                    "the live output listener failed (%s: %s); the execution goes on, and "
                    "its output is recorded when it ends",
                    type(exc).__name__,
                    exc,
                )
            self._failed = True
