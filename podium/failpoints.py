"""Crash injection for the crash-safety tests: ``PODIUM_FAILPOINTS=journal.write:3`` makes the
process SIGKILL itself the third time it reaches ``failpoint("journal.write")``.

Named points sit exactly where a crash is most dangerous (mid-transaction, between file copies),
places a randomly timed kill would rarely hit. Unset, a failpoint costs one dict lookup.
"""

from __future__ import annotations

import os
import signal

_counts: dict[str, int] = {}


def _armed() -> dict[str, int]:
    spec = os.environ.get("PODIUM_FAILPOINTS", "")
    armed: dict[str, int] = {}
    for item in filter(None, (s.strip() for s in spec.split(","))):
        name, _, nth = item.partition(":")
        armed[name] = int(nth or 1)
    return armed


_ARMED = _armed()


def failpoint(name: str) -> None:
    nth = _ARMED.get(name)
    if nth is None:
        return
    _counts[name] = _counts.get(name, 0) + 1
    if _counts[name] == nth:
        os.kill(os.getpid(), signal.SIGKILL)
