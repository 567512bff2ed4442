"""Stopping on SIGINT/SIGTERM in two stages, as ``podium run`` and ``podium bench`` both do:
the first signal asks for a graceful stop; only a person's second Ctrl-C quits at once.

Why SIGTERM never escalates: it is what supervisors send (GNU ``timeout``, ``docker stop``,
``kill``, Podium's own sweep executors), and they often send it twice for one request — GNU
``timeout`` signals its child and then the child's process group — and escalate with SIGKILL
themselves. A second SIGTERM is the same request again. A SIGINT repeated within
``DUPLICATE_S`` of the last signal is one Ctrl-C delivered twice (a terminal signals the whole
foreground group), not a person pressing it again.

Quitting at once is safe for both: journal writes are transactions, and a sweep's runs are told
to stop by the kernel when their driver dies.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from collections.abc import Callable, Iterator

DUPLICATE_S = 1.0


@contextlib.contextmanager
def two_stage_stop(on_first: Callable[[int], None]) -> Iterator[None]:
    """Within the running asyncio loop: the first SIGINT/SIGTERM calls ``on_first(signum)``;
    a later SIGINT, at least ``DUPLICATE_S`` after the previous signal, exits the process with
    status 130. Outside the main thread nothing is installed (the loop cannot take signal
    handlers there)."""
    loop = asyncio.get_running_loop()
    last: float | None = None

    def on_signal(signum: int) -> None:
        nonlocal last
        now, previous = time.monotonic(), last
        last = now
        if previous is None:
            on_first(signum)
        elif signum == signal.SIGINT and now - previous >= DUPLICATE_S:
            os._exit(128 + signum)

    installed = []
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(ValueError, RuntimeError, NotImplementedError):
            loop.add_signal_handler(sig, on_signal, sig)
            installed.append(sig)
    try:
        yield
    finally:
        for sig in installed:
            loop.remove_signal_handler(sig)
