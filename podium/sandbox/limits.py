"""Per-kernel resource limits: the ``[sandbox]`` keys that set them (:class:`LimitParams`, where
each default is written), what they are in bytes (:class:`ResourceLimits`), and the rlimits
applied in the kernel's process.

Memory and process count are enforced by cgroups where Podium can create them (see
``cgroups.py``); rlimits cover what cgroups don't (CPU seconds, file size, core dumps) and stand
in for the process count where no pids cgroup is writable.
"""

from __future__ import annotations

import os
import re
import resource
from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

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


_UNLIMITED = ("none", "unlimited")


def _is_size(value: Any) -> bool:
    """A size as a user writes it: ``"4G"``, ``"512MiB"``, a byte count."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value >= 0
    return isinstance(value, str) and _SIZE.match(value) is not None


def _is_unlimited(value: Any) -> bool:
    return value is None or (isinstance(value, str) and value.lower() in _UNLIMITED)


def _size(value: Any) -> Any:
    """Check a size; keep it as written."""
    if _is_size(value):
        return value
    raise ValueError("not a size; write e.g. 4G or 512M")


def _size_or_none(value: Any) -> Any:
    if _is_unlimited(value) or _is_size(value):
        return value
    raise ValueError("not a size; write e.g. 4G, 512M or none")


def _memory(value: Any) -> Any:
    return value if value == "auto" else _size_or_none(value)


# The text as written stays in the config (its config.toml shows "4G", not 4294967296).
Size = Annotated[str | int, BeforeValidator(_size)]
SizeOrNone = Annotated[str | int | None, BeforeValidator(_size_or_none)]
MemorySize = Annotated[str | int | None, BeforeValidator(_memory)]  # "auto" too


def bytes_or_none(value: str | int | None) -> int | None:
    """A checked :data:`SizeOrNone` in bytes; ``None`` for none/unlimited."""
    return None if value is None or _is_unlimited(value) else parse_bytes(value)


class LimitParams(BaseModel):
    """The ``[sandbox]`` keys that bound one kernel, as a user writes them; each default is
    written here once (:class:`ResourceLimits`, the options and the config take theirs from
    here). :meth:`resource_limits` reads them."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    memory: MemorySize = Field("auto", description='per kernel; "auto": half the RAM, at most 8G')
    processes: int | None = Field(512, ge=8, description="processes + threads per kernel")
    cpu_time_s: int | None = Field(None, ge=1, description="CPU seconds per process")
    workspace_size: SizeOrNone = Field("20G", description="bytes a node may write to its workspace")
    max_files: int | None = Field(
        500_000, ge=1, description="files + directories a node may create in its workspace"
    )
    tmp_size: Size = Field("2G", description="the kernel's /tmp (a tmpfs)")
    shm_size: Size = Field("1G", description="the kernel's /dev/shm (a tmpfs)")
    max_message_size: Size = Field("32M", description="one output message past this kills it")

    def resource_limits(self) -> ResourceLimits:
        """The limits in bytes (``memory = "auto"``: :func:`default_memory_bytes` here)."""
        return ResourceLimits(**self._in_bytes())

    def _in_bytes(self) -> dict[str, Any]:
        memory = default_memory_bytes() if self.memory == "auto" else bytes_or_none(self.memory)
        return {
            "memory_bytes": memory,
            "max_processes": self.processes,
            "cpu_time_s": self.cpu_time_s,
            "workspace_bytes": bytes_or_none(self.workspace_size),
            "max_files": self.max_files,
            "tmp_bytes": parse_bytes(self.tmp_size),
            "shm_bytes": parse_bytes(self.shm_size),
            "max_message_bytes": parse_bytes(self.max_message_size),
        }


_DEFAULT = LimitParams()._in_bytes()


@dataclass(frozen=True)
class ResourceLimits:
    """What one kernel (and everything it starts) may use. ``None`` means no limit. The
    defaults are :class:`LimitParams`' (a bare ``ResourceLimits()`` is what a run gets)."""

    memory_bytes: int | None = _DEFAULT["memory_bytes"]
    max_processes: int | None = _DEFAULT["max_processes"]
    cpu_time_s: int | None = _DEFAULT["cpu_time_s"]
    workspace_bytes: int | None = _DEFAULT["workspace_bytes"]
    max_files: int | None = _DEFAULT["max_files"]  # files + directories + links it may create
    tmp_bytes: int = _DEFAULT["tmp_bytes"]
    shm_bytes: int = _DEFAULT["shm_bytes"]
    max_message_bytes: int = _DEFAULT["max_message_bytes"]  # one message past this kills it


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
