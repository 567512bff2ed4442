"""The machine a run ran on, for the disclosure card: CPU, cores, memory, GPUs, OS, Python,
and the cores a sweep's run was given (``cpu_share``: a machine's 16 cores shared by 8 runs at
once are not 16 cores per run).

No host name or user: reports are meant to be published.
"""

from __future__ import annotations

import math
import os
import platform
import shutil
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

CPU_SHARE_ENV = "PODIUM_CPU_SHARE"  # set by the sweep's driver for each run's worker
ALL_CPUS = "all"  # the run had the worker's machine to itself


def describe_host() -> dict[str, Any]:
    """The machine, and in a sweep's worker ``cpu_share``: the cores the run was given (absent
    elsewhere: the driver's own description of its machine has no run to speak of)."""
    host: dict[str, Any] = {
        "cpu": _cpu_model(),
        "cpus": available_cpus(),
        "memory_gb": _memory_gb(),
        "gpus": nvidia_smi("name"),
        "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES"),
        "os": f"{platform.system()} {platform.release()}",
        "python": platform.python_version(),
    }
    share = cpu_share(os.environ)
    if share is not None:
        host["cpu_share"] = share
    return host


def cpu_share_env(cpus_per_run: float, parallel: int) -> dict[str, str]:
    """The environment that tells a run's worker its share of the CPUs: ``cpus_per_run`` when
    runs run side by side (``parallel`` > 1), else every CPU of the machine it runs on."""
    return {CPU_SHARE_ENV: f"{cpus_per_run:g}" if parallel > 1 else ALL_CPUS}


def cpu_share(env: Mapping[str, str]) -> float | None:
    """The cores a sweep's run was given (see :func:`cpu_share_env`); None outside a sweep's
    worker or for a value that is not a positive number."""
    value = env.get(CPU_SHARE_ENV)
    if value is None:
        return None
    if value == ALL_CPUS:
        return available_cpus()
    try:
        share = float(value)
    except ValueError:
        return None
    if not math.isfinite(share) or share <= 0:
        return None
    return int(share) if share.is_integer() else share


def kernel_threads(workers: int) -> int:
    """Threads for each kernel's native pools: the cores this run may use (its sweep share,
    else the machine's), divided among its ``workers`` kernels, at least one."""
    cores = cpu_share(os.environ) or available_cpus()
    return max(1, int(cores // max(1, workers)))


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _memory_gb() -> float | None:
    try:
        pages, size = os.sysconf("SC_PHYS_PAGES"), os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None
    return round(pages * size / 2**30, 1)


def available_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def nvidia_smi(field: str) -> list[str]:
    """One value per GPU (``index``, ``name``...) from ``nvidia-smi``; none without it."""
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return []
    try:
        listed = subprocess.run(
            [smi, f"--query-gpu={field}", "--format=csv,noheader"],
            capture_output=True, text=True, timeout=20, check=True,
        ).stdout  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return []
    return [line.strip() for line in listed.splitlines() if line.strip()]
