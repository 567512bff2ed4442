"""The machine a run ran on, for the disclosure card: CPU, cores, memory, GPUs, OS, Python.

No host name or user: reports are meant to be published.
"""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
from pathlib import Path
from typing import Any


def describe_host() -> dict[str, Any]:
    return {
        "cpu": _cpu_model(),
        "cpus": available_cpus(),
        "memory_gb": _memory_gb(),
        "gpus": nvidia_smi("name"),
        "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES"),
        "os": f"{platform.system()} {platform.release()}",
        "python": platform.python_version(),
    }


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
