"""Per-kernel resource limits: what they are, and the rlimits applied in the kernel's process.

Memory and process count are enforced by cgroups where Podium can create them (see
``cgroups.py``); rlimits cover what cgroups don't (CPU seconds, file size, core dumps) and stand
in for the process count where no pids cgroup is writable.
"""

from __future__ import annotations

import os
import re
import resource
from dataclasses import dataclass

from podium.errors import ConfigError

_UNITS = {"": 1, "K": 1024, "M": 1024**2, "G": 1024**3, "T": 1024**4}
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([KMGT]?)(?:i?B)?\s*$", re.IGNORECASE)


def parse_bytes(text: str | int, what: str = "size") -> int:
    """``"4G"``, ``"512MiB"``, ``"1.5GB"`` or a plain byte count → bytes (binary units)."""
    if isinstance(text, int):
        return text
    match = _SIZE.match(text)
    if not match:
        raise ConfigError(f"{what}: cannot read {text!r} as a size", hint="write e.g. 4G or 512M")
    return int(float(match.group(1)) * _UNITS[match.group(2).upper()])


def format_bytes(n: int) -> str:
    for unit in ("T", "G", "M", "K"):
        if n >= _UNITS[unit]:
            return f"{n / _UNITS[unit]:.3g} {unit}iB"
    return f"{n} B"


def default_memory_bytes() -> int:
    """Half the machine's memory, at most 8 GiB: room for the host and a second worker."""
    total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    return min(total // 2, 8 * 1024**3)


@dataclass(frozen=True)
class ResourceLimits:
    """What one kernel (and everything it starts) may use. ``None`` means no limit."""

    memory_bytes: int | None = None
    max_processes: int | None = 512
    cpu_time_s: int | None = None
    workspace_bytes: int | None = 20 * 1024**3
    max_files: int | None = 500_000  # files + directories + links the kernel may create
    tmp_bytes: int = 2 * 1024**3
    shm_bytes: int = 1024**3
    max_message_bytes: int = 32 * 1024**2  # one output message larger than this kills the kernel


def rlimits(limits: ResourceLimits, nproc: int | None) -> list[tuple[int, int, int]]:
    """(resource, soft, hard) for every rlimit a kernel gets.

    ``nproc`` is RLIMIT_NPROC, which counts every process of the real uid machine-wide, so the
    caller passes the uid's current count plus the allowance; it does nothing for uid 0.
    """
    found = [(resource.RLIMIT_CORE, 0, 0)]
    if limits.cpu_time_s is not None:
        found.append((resource.RLIMIT_CPU, limits.cpu_time_s, limits.cpu_time_s + 5))
    if limits.workspace_bytes is not None:
        found.append((resource.RLIMIT_FSIZE, limits.workspace_bytes, limits.workspace_bytes))
    if nproc is not None:
        found.append((resource.RLIMIT_NPROC, nproc, nproc))
    return found


def apply_rlimits(limits: ResourceLimits, nproc: int | None) -> None:
    """Set ``rlimits`` in the current process (the kernel's, between fork and exec)."""
    for which, soft, hard in rlimits(limits, nproc):
        resource.setrlimit(which, (soft, hard))


def processes_of(uid: int) -> int:
    """How many processes ``uid`` has on the machine (what RLIMIT_NPROC counts)."""
    count = 0
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                count += entry.stat().st_uid == uid
            except OSError:
                pass
    return count
