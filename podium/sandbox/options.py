"""The sandbox settings a run's config holds (``[sandbox]``), parsed once for every sandbox."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from podium.sandbox.limits import ResourceLimits, default_memory_bytes, parse_bytes

# What tabular solutions import nearly always; scikit-learn's submodules load separately (and
# pull in SciPy), so they are listed. Imported in the pool, off the node's critical path.
DEFAULT_PREIMPORTS = (
    "numpy", "pandas", "sklearn", "sklearn.linear_model", "sklearn.model_selection",
    "sklearn.metrics", "sklearn.ensemble", "sklearn.preprocessing",
)  # fmt: skip


def _size(value: Any, what: str) -> int | None:
    if value is None or (isinstance(value, str) and value.lower() in ("none", "unlimited")):
        return None
    return parse_bytes(value, what)


def limits_from_config(options: Mapping[str, Any]) -> ResourceLimits:
    memory = options.get("memory", "auto")
    memory_bytes = default_memory_bytes() if memory == "auto" else _size(memory, "sandbox.memory")
    defaults = ResourceLimits()
    return ResourceLimits(
        memory_bytes=memory_bytes,
        max_processes=options.get("processes", defaults.max_processes),
        cpu_time_s=options.get("cpu_time_s"),
        workspace_bytes=_size(
            options.get("workspace_size", defaults.workspace_bytes), "sandbox.workspace_size"
        ),
        max_files=options.get("max_files", defaults.max_files),
        tmp_bytes=parse_bytes(options.get("tmp_size", defaults.tmp_bytes), "sandbox.tmp_size"),
        shm_bytes=parse_bytes(options.get("shm_size", defaults.shm_bytes), "sandbox.shm_size"),
        max_message_bytes=parse_bytes(
            options.get("max_message_size", defaults.max_message_bytes), "sandbox.max_message_size"
        ),
    )


@dataclass(frozen=True)
class SandboxOptions:
    python: str | None = None
    limits: ResourceLimits = field(default_factory=ResourceLimits)
    warm_pool: bool = True
    preimports: tuple[str, ...] = DEFAULT_PREIMPORTS
    gpus: str | None = None  # None, "all", or device indices "0,1"
    interrupt_grace_s: float = 3.0
    user: str | int = "auto"  # who the kernels are on the host (see identity.py)
    fork: bool = True  # pooled kernels forked from a kernel factory (see factory.py)

    @classmethod
    def from_config(cls, options: Mapping[str, Any]) -> SandboxOptions:
        preimports = options.get("preimports")
        return cls(
            python=options.get("python") or None,
            limits=limits_from_config(options),
            warm_pool=bool(options.get("warm_pool", True)),
            preimports=DEFAULT_PREIMPORTS if preimports is None else tuple(preimports),
            gpus=options.get("gpus") or None,
            interrupt_grace_s=float(options.get("interrupt_grace_s", 3.0)),
            user=options.get("user") or "auto",
            fork=bool(options.get("fork", True)),
        )
