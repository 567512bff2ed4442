"""Stopping on SIGINT/SIGTERM in two stages, as ``podium run`` and ``podium bench`` both do:
the first signal asks for a graceful stop, a second one quits at once.

Quitting at once is safe for both: journal writes are transactions, and a sweep's runs are told
to stop by the kernel when their driver dies.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Callable, Iterator


@contextlib.contextmanager
def two_stage_stop(on_first: Callable[[int], None]) -> Iterator[None]:
    """Within the running asyncio loop: the first SIGINT/SIGTERM calls ``on_first(signum)``,
    the second exits the process with status 128 + signum. Outside the main thread nothing is
    installed (the loop cannot take signal handlers there)."""
    loop = asyncio.get_running_loop()
    hits = 0

    def on_signal(signum: int) -> None:
        nonlocal hits
        hits += 1
        if hits > 1:
            os._exit(128 + signum)
        on_first(signum)

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
