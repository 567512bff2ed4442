"""What the perf scripts record about the machine they measured on (shared by all of them)."""

from __future__ import annotations

import contextlib
import os
import platform
import shutil
import subprocess
import time
from collections.abc import Iterator
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


CPUACCT = Path("/sys/fs/cgroup/cpuacct")


class CpuCgroup:
    """A cpuacct cgroup (v1, root) of a perf script's own: the CPU of every process started in
    it, dead or alive, sandboxed kernels included (Podium moves a kernel into memory and pids
    cgroups only, so it stays here; bwrap kernels die in a pid namespace, so RUSAGE_CHILDREN
    never sees them), and nothing else's. Where no such cgroup can be made, ``cpu_s`` is None.
    """

    def __init__(self, name: str) -> None:
        self.group: Path | None = None
        self.home = Path("/")
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            _, controllers, path = line.split(":", 2)
            if "cpuacct" in controllers.split(","):
                self.home = CPUACCT / path.lstrip("/")
                with contextlib.suppress(OSError):
                    group = self.home / f"podium-perf-{os.getpid()}-{name}"
                    group.mkdir()
                    self.group = group

    def join(self) -> None:
        """This process (and what it starts from now on) in the group."""
        if self.group is not None:
            (self.group / "cgroup.procs").write_text(str(os.getpid()))

    def leave(self) -> None:
        if self.group is not None:
            (self.home / "cgroup.procs").write_text(str(os.getpid()))

    @contextlib.contextmanager
    def joined(self) -> Iterator[None]:
        """This process in the group meanwhile: a child started now begins its life there."""
        self.join()
        try:
            yield
        finally:
            self.leave()

    def cpu_s(self) -> float | None:
        if self.group is None:
            return None
        return int((self.group / "cpuacct.usage").read_text()) / 1e9

    def close(self) -> float | None:
        """The group's CPU seconds; the group is removed once its last process is gone."""
        seconds = self.cpu_s()
        self.leave()
        for _ in range(50):  # a process being reaped may still be in it for a moment
            if self.group is None:
                break
            try:
                self.group.rmdir()
                break
            except OSError:
                time.sleep(0.1)
        return seconds
