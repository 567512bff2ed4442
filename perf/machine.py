"""What the perf scripts record about the machine they measured on (shared by all of them)."""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
from pathlib import Path
from typing import Any

import podium


def machine() -> dict[str, Any]:
    cpu = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    bwrap = shutil.which("bwrap")
    version = "none"
    if bwrap:
        version = subprocess.run([bwrap, "--version"], capture_output=True, text=True).stdout
    return {
        "cpu": cpu,
        "nproc": len(os.sched_getaffinity(0)),
        "kernel": platform.release(),
        "python": platform.python_version(),
        "podium": podium.__version__,
        "bwrap": version.strip(),
        "loadavg_at_start": Path("/proc/loadavg").read_text().split()[:3],
    }
