"""The ``bwrap`` sandbox: each kernel in bubblewrap, in its own cgroup, over the ipc transport.

No network namespace is shared with the host, so the kernel talks to Podium over unix sockets
in a per-kernel directory bound into the sandbox. Limits, by what the machine allows: memory and
process count by cgroup (v2 or v1) when writable, else an RSS watchdog and RLIMIT_NPROC; CPU
seconds and file size by rlimit; the workspace's total size by a watchdog; /tmp and /dev/shm by
their tmpfs size. ``describe()`` states which is in force.
"""

from __future__ import annotations

import asyncio
import functools
import json
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from podium.errors import SandboxError, SandboxUnavailable
from podium.records import ExecResult, ExecStatus
from podium.sandbox import cgroups
from podium.sandbox.base import Guard, KernelSandbox
from podium.sandbox.bwrap_command import ISOLATION_FLAGS, WORKSPACE, BwrapLayout, bwrap_argv
from podium.sandbox.kernel import KernelCommand, LiveKernel, ipykernel_argv
from podium.sandbox.limits import (
    ResourceLimits,
    apply_rlimits,
    format_bytes,
    processes_of_current_user,
)
from podium.sandbox.local import KERNEL_ENV
from podium.sandbox.options import SandboxOptions
from podium.sandbox.workspace import Slot, directory_size

DISK_WATCH_EVERY_S = 0.5

_PATHS_PROBE = (
    "import json, os, sys; print(json.dumps([sys.prefix, sys.base_prefix, sys.exec_prefix,"
    " sys.base_exec_prefix, os.path.dirname(os.path.dirname(os.path.realpath(sys.executable)))]))"
)


@functools.cache
def python_paths(python: str) -> tuple[Path, ...]:
    """The directories an interpreter needs (venv and base installation), to bind read-only."""
    try:
        out = subprocess.run(
            [python, "-c", _PATHS_PROBE], capture_output=True, text=True, timeout=60, check=True
        ).stdout
    except (OSError, subprocess.SubprocessError) as exc:
        raise SandboxError(f"cannot run the solutions' interpreter {python}: {exc}") from exc
    return tuple(sorted({Path(p) for p in json.loads(out)}))


def _ipc_base() -> str | None:
    return "/tmp" if os.access("/tmp", os.W_OK) else None


def _ipc_dir() -> Path:
    """Short path (unix socket paths are limited to 107 bytes), named after our pid."""
    return Path(tempfile.mkdtemp(prefix=f"podium-{os.getpid()}-", dir=_ipc_base()))


def sweep_ipc_leftovers() -> None:
    """Remove the ipc directories of Podium processes that were killed (their pid is gone)."""
    base = Path(_ipc_base() or tempfile.gettempdir())
    for entry in base.glob("podium-*"):
        match = cgroups.LEFTOVER.match(entry.name)
        if match and entry.is_dir() and not Path(f"/proc/{match.group(1)}").exists():
            shutil.rmtree(entry, ignore_errors=True)


def sandbox_env(python: str) -> dict[str, str]:
    bindir = str(Path(python).parent)
    return {
        "PATH": f"{bindir}:/usr/local/bin:/usr/bin:/bin",
        "HOME": "/tmp",
        "TMPDIR": "/tmp",
        "LANG": "C.UTF-8",
        **KERNEL_ENV,
    }


class BwrapGuard(Guard):
    """Limits one kernel: its cgroup, or the watchdogs standing in for one."""

    def __init__(self, limits: ResourceLimits, group: cgroups.KernelCgroup | None, slot: Slot):
        self.limits, self.group, self.slot = limits, group, slot
        self.ipc_dir = _ipc_dir()
        self.kernel: LiveKernel | None = None
        self.peak_rss = 0
        self._next_disk = 0.0
        self._memory_watched = limits.memory_bytes is not None and (
            group is None or group.memory is None
        )
        self._nproc: int | None = None  # RLIMIT_NPROC, only where no pids cgroup counts
        if limits.max_processes and (group is None or group.pids is None):
            self._nproc = processes_of_current_user() + limits.max_processes

    def preexec(self) -> None:
        """Runs in the child before exec: join the cgroups, set rlimits."""
        cgroups.join(self.group.procs_files if self.group else [])
        apply_rlimits(self.limits, self._nproc)

    def started(self, kernel: LiveKernel) -> None:
        self.kernel = kernel

    async def watch(self) -> str | None:
        if self._memory_watched and (reason := self._check_memory()):
            return reason
        now = time.monotonic()
        if self.limits.workspace_bytes is not None and now >= self._next_disk:
            self._next_disk = now + DISK_WATCH_EVERY_S
            limit = self.limits.workspace_bytes
            used = await asyncio.to_thread(directory_size, self.slot.root, limit)
            if used > self.limits.workspace_bytes:
                return f"workspace size limit ({format_bytes(self.limits.workspace_bytes)})"
        return None

    def _check_memory(self) -> str | None:
        pid = _kernel_pid(self.kernel)
        if pid is None or self.limits.memory_bytes is None:
            return None
        rss = tree_rss(pid)
        self.peak_rss = max(self.peak_rss, rss)
        if rss > self.limits.memory_bytes:
            return f"memory limit ({format_bytes(self.limits.memory_bytes)}, watchdog)"
        return None

    def finish(self, result: ExecResult) -> ExecResult:
        update: dict[str, Any] = {}
        peak = self.group.peak_memory() if self.group else None
        update["peak_memory_bytes"] = peak if peak is not None else (self.peak_rss or None)
        if result.status is ExecStatus.DIED and self.group and self.group.oom_killed():
            assert self.limits.memory_bytes is not None
            reason = f"memory limit ({format_bytes(self.limits.memory_bytes)}) exceeded"
            update.update(killed_reason=reason, error_name="MemoryLimitExceeded",
                          error_value=reason,
                          output=result.output + f"MemoryLimitExceeded: {reason}\n")  # fmt: skip
        elif result.failed and not result.killed_reason and self._pids_limited():
            update["killed_reason"] = f"process limit ({self.limits.max_processes}) reached"
        return result.model_copy(update=update)

    def _pids_limited(self) -> bool:
        return self.group is not None and self.group.pids_limited()

    def release(self) -> None:
        shutil.rmtree(self.ipc_dir, ignore_errors=True)
        if self.group is not None:
            for _ in range(50):  # the namespace's processes may take a moment to be reaped
                if self.group.remove():
                    break
                time.sleep(0.1)


def _kernel_pid(kernel: LiveKernel | None) -> int | None:
    if kernel is None:
        return None
    process = getattr(kernel.km.provisioner, "process", None)
    return getattr(process, "pid", None)


def tree_rss(root: int) -> int:
    """Resident bytes of ``root`` and all its descendants, from /proc."""
    children: dict[int, list[int]] = {}
    rss: dict[int, int] = {}
    page = os.sysconf("SC_PAGE_SIZE")
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            stat = Path(entry.path, "stat").read_text()
            statm = Path(entry.path, "statm").read_text().split()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(ppid, []).append(int(entry.name))
        rss[int(entry.name)] = int(statm[1]) * page
    total, stack = 0, [root]
    while stack:
        pid = stack.pop()
        total += rss.get(pid, 0)
        stack.extend(children.get(pid, []))
    return total


class BwrapSandbox(KernelSandbox):
    name = "bwrap"
    isolated = True

    def __init__(self, options: SandboxOptions | None = None, bwrap: str | None = None) -> None:
        self.options = options or SandboxOptions()
        super().__init__(self.options.python, self.options.preimports, self.options.warm_pool)
        found = bwrap or shutil.which("bwrap")
        if found is None:
            raise SandboxUnavailable(
                "bubblewrap (bwrap) is not installed",
                hint="apt install bubblewrap, or see `podium sandbox check`",
            )
        self.bwrap = found
        self.cgroups = cgroups.detect()
        self.notice: str | None = None
        cgroups.sweep_leftovers(self.cgroups)  # a killed run cannot clean up after itself
        sweep_ipc_leftovers()

    def describe(self) -> str:
        return f"bwrap: {'; '.join(describe_limits(self.options.limits, self.cgroups))}"

    def launch(self, slot: Slot) -> tuple[KernelCommand, Guard]:
        limits = self.options.limits
        group = None
        if self.cgroups.version is not None:
            group = cgroups.KernelCgroup(self.cgroups, limits.memory_bytes, limits.max_processes)
        guard = BwrapGuard(limits, group, slot)
        layout = BwrapLayout(
            workspace=slot.root,
            input_dir=slot.input_dir.resolve(),
            ipc_dir=guard.ipc_dir,
            python_paths=python_paths(self.python),
            env=sandbox_env(self.python),
            tmp_bytes=limits.tmp_bytes,
            shm_bytes=limits.shm_bytes,
            gpus=self.options.gpus,
        )
        command = KernelCommand(
            argv=bwrap_argv(self.bwrap, layout, ipykernel_argv(self.python)),
            env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")},
            cwd=slot.root,
            transport="ipc",
            connection_file=guard.ipc_dir / "kernel.json",
            interrupt_mode="message",
            preexec=guard.preexec,
            interrupt_grace_s=self.options.interrupt_grace_s,
            max_message_bytes=limits.max_message_bytes,
        )
        return command, guard


def describe_limits(limits: ResourceLimits, support: cgroups.CgroupSupport) -> list[str]:
    """One phrase per limit, naming the mechanism that enforces it."""
    memory = "memory unlimited"
    if limits.memory_bytes is not None:
        how = f"cgroup {support.version}" if support.memory else "RSS watchdog (no cgroup)"
        memory = f"memory {format_bytes(limits.memory_bytes)} by {how}"
    procs = "processes unlimited"
    if limits.max_processes:
        how = f"cgroup {support.version} pids" if support.pids else "RLIMIT_NPROC"
        if not support.pids and os.getuid() == 0:
            how = "nothing (RLIMIT_NPROC does not apply to root and no pids cgroup is writable)"
        procs = f"processes {limits.max_processes} by {how}"
    cpu = f"CPU {limits.cpu_time_s} s by RLIMIT_CPU" if limits.cpu_time_s else "CPU time unlimited"
    disk = "workspace unlimited"
    if limits.workspace_bytes is not None:
        disk = f"workspace {format_bytes(limits.workspace_bytes)} by watchdog + RLIMIT_FSIZE"
    tmp = f"/tmp {format_bytes(limits.tmp_bytes)}, /dev/shm {format_bytes(limits.shm_bytes)} tmpfs"
    return [memory, procs, cpu, disk, tmp, "no network"]


def bwrap_problem(bwrap: str | None = None) -> str | None:
    """Why bubblewrap cannot isolate here (one line), or None when it can."""
    found = bwrap or shutil.which("bwrap")
    if found is None:
        return "bubblewrap is not installed (apt install bubblewrap)"
    argv = [found, *ISOLATION_FLAGS, "--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev",
            "--", "/bin/true"]  # fmt: skip
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError) as exc:
        return f"bwrap could not run: {exc}"
    if proc.returncode != 0:
        err = proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else "no message"
        hint = ""
        if "namespace" in err.lower() or "permission" in err.lower():
            hint = " (user namespaces disabled? check sysctl user.max_user_namespaces)"
        return f"bwrap fails: {err}{hint}"
    return None


def create(options: Mapping[str, Any]) -> BwrapSandbox:
    """``--sandbox bwrap`` asked for isolation: refuse to start without it."""
    if problem := bwrap_problem():
        raise SandboxUnavailable(
            f"the bwrap sandbox cannot run here: {problem}",
            hint="see `podium sandbox check`, or use --sandbox local",
        )
    return BwrapSandbox(SandboxOptions.from_config(options))


__all__ = [
    "WORKSPACE", "BwrapSandbox", "bwrap_problem", "create", "describe_limits", "python_paths",
]  # fmt: skip
