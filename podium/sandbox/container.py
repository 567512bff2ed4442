"""The ``container`` sandbox: inside MLE-bench's container, where bubblewrap cannot run.

MLE-bench's harness runs the agent in a Docker container (by default under sysbox), as an
unprivileged user, with the answers in a root-only ``/private``. Such a container often has no
user namespaces for bubblewrap, so Podium cannot add isolation of its own there: the container
*is* the isolation boundary, as it is for every agent MLE-bench runs. This sandbox says so. It
runs each node in a fresh kernel like ``local`` (the same environment with no secret in it, the
relay capping every message, the race-free hand-over), plus the limits that need no namespace:
memory and processes by cgroup where one is writable (else an RSS watchdog and
``RLIMIT_NPROC``), CPU seconds and file size by rlimit, the workspace's bytes and files by
watchdog, and a new session keyring per kernel. With a cgroup, every process a kernel left in it
is killed before the hand-over; without one, a process a solution detaches can outlive its node.

It refuses to start where no container is detected (``/.dockerenv``, ``/run/.containerenv``,
a container runtime in ``/proc/1/cgroup``, Kubernetes' variables, an overlay root filesystem):
outside one it would be ``local`` under a reassuring name. ``sandbox.assume_container = true``
starts it anyway, for a container or VM the detection misses.

**Stamped ``sandboxed: false``.** Podium's flag certifies that *Podium's* isolation held: that
a solution could not read Podium's memory, environment (the API keys) or run directory, nor
reach the network or anything else the host holds. Here a solution runs as the same user as
Podium, in the same filesystem and network, so none of that holds, and the flag says so. What
the container keeps (the answers and the host out of the solution's reach, the same boundary
MLE-bench gives AIDE and every other agent) is recorded in ``sandbox_detail``. A gap in that
boundary — kernels that are root in the container, or a readable ``/private`` — is recorded as
``isolation_gaps``.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import signal
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from podium.errors import SandboxUnavailable
from podium.sandbox import cgroups
from podium.sandbox.base import Guard, KernelSandbox
from podium.sandbox.bwrap import BwrapGuard, bwrap_problem, describe_limits, until
from podium.sandbox.identity import SandboxUser
from podium.sandbox.ipc import IpcDir
from podium.sandbox.kernel import EXIT_WAIT_S, KernelCommand, LiveKernel, ipykernel_argv
from podium.sandbox.local import kernel_env
from podium.sandbox.options import SandboxOptions, SandboxParams
from podium.sandbox.workspace import Slot

MLEBENCH_PRIVATE = Path("/private")  # where MLE-bench's container keeps the answers (root-only)
RUNTIMES = ("docker", "containerd", "kubepods", "libpod", "lxc", "sysbox", "crio")
_ASSUME = "sandbox.assume_container"
CGROUP_POLL_S = 0.005  # how often reap looks whether the cgroup is frozen or empty


def container_evidence(
    root: Path = Path("/"), environ: Mapping[str, str] | None = None
) -> str | None:
    """What shows that this process runs in a container (one phrase), or None.

    ``root`` and ``environ`` stand for ``/`` and the environment (tests pass their own)."""
    env = os.environ if environ is None else environ
    if (root / ".dockerenv").exists():
        return "/.dockerenv (Docker)"
    if (root / "run" / ".containerenv").exists():
        return "/run/.containerenv (Podman)"
    if env.get("KUBERNETES_SERVICE_HOST"):
        return "KUBERNETES_SERVICE_HOST (a Kubernetes pod)"
    if env.get("container"):
        return f"container={env['container']} in the environment"
    with contextlib.suppress(OSError):
        text = (root / "proc" / "1" / "cgroup").read_text(errors="replace").lower()
        for runtime in RUNTIMES:
            if runtime in text:
                return f"/proc/1/cgroup names {runtime}"
    with contextlib.suppress(OSError):
        for line in (root / "proc" / "self" / "mountinfo").read_text(errors="replace").splitlines():
            fields = line.split()
            if len(fields) > 4 and fields[4] == "/" and " - overlay " in line:
                return "the root filesystem is an overlay (a container image)"
    return None


class ContainerGuard(BwrapGuard):
    """bwrap's limits without bwrap: cgroup (or watchdog) memory and processes, rlimits, the
    disk watchdog, a new keyring. There is no pid namespace whose end kills the rest, so with a
    cgroup ``reap`` kills every process still in it; without one, it waits for the kernel."""

    def __init__(
        self,
        options: SandboxOptions,
        group: cgroups.KernelCgroup | None,
        slot: Slot,
        ipc: IpcDir,
        user: SandboxUser,
    ) -> None:
        # ``forked``: no bwrap, so none of the descriptors bwrap reads (passwd, seccomp, info).
        super().__init__(options.limits, group, slot, ipc, user, None, forked=True)

    async def reap(self, kernel: LiveKernel) -> str | None:
        exited = await kernel.wait_exited()
        group = self.group
        if group is None:
            return None if exited else "the kernel's process did not exit after SIGKILL"
        if group.freeze():  # nothing forks while the rest is killed
            await until(group.frozen, EXIT_WAIT_S, poll_s=CGROUP_POLL_S)
        for pid in _members(group):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        group.thaw()
        if not await until(group.empty, EXIT_WAIT_S, poll_s=CGROUP_POLL_S):
            return "processes were still in the kernel's cgroup after SIGKILL"
        return None


def _members(group: cgroups.KernelCgroup) -> set[int]:
    pids: set[int] = set()
    for procs in group.procs_files:
        with contextlib.suppress(OSError):
            pids.update(int(p) for p in Path(procs).read_text().split() if p.isdigit())
    pids.discard(os.getpid())
    return pids


def _current_user() -> SandboxUser:
    uid, gid = os.getuid(), os.getgid()
    try:
        name = pwd.getpwuid(uid).pw_name
    except KeyError:
        name = str(uid)
    return SandboxUser(uid, gid, name, switch=False)


class ContainerSandbox(KernelSandbox):
    name = "container"
    isolated = False  # Podium's own isolation does not hold here (see the module's docstring)

    def __init__(
        self,
        options: SandboxOptions | None = None,
        evidence: str | None = None,
        bwrap_why: str | None = None,
    ) -> None:
        """``evidence``: what shows that a container encloses Podium (None: refuse to start);
        ``bwrap_why``: why bubblewrap is not used, for the record."""
        if evidence is None:
            raise SandboxUnavailable(
                "the container sandbox runs solutions without Podium's isolation and is only "
                "for inside a container, and none was detected here (no /.dockerenv, "
                "/run/.containerenv, container runtime in /proc/1/cgroup or overlay root)",
                hint=f"use --sandbox bwrap (or local), or -o {_ASSUME}=true if a container or "
                "VM you trust encloses Podium",
            )
        self.options = options or SandboxOptions()
        super().__init__(self.options.python, self.options.preimports, self.options.warm_pool)
        self.evidence = evidence
        self.bwrap_why = bwrap_why or "not used"
        self.user = _current_user()
        self.cgroups = cgroups.detect()
        cgroups.sweep_leftovers(self.cgroups)  # a killed run cannot clean up after itself
        self.notice = (
            f"the container is the isolation boundary (bubblewrap: {self.bwrap_why}); "
            "solutions run as Podium's own user, with its files and network"
        )

    def describe(self) -> str:
        limits = [
            phrase
            for phrase in describe_limits(self.options.limits, self.cgroups, self.user.uid)
            if not phrase.startswith("/tmp") and phrase != "no network"
        ]
        return (
            f"container: the container is the isolation boundary (MLE-bench harness: "
            f"{self.evidence}); bubblewrap: {self.bwrap_why}; kernels run as uid "
            f"{self.user.uid} ({self.user.name}), Podium's own, with its files and network; "
            f"{'; '.join(limits)}; /tmp and /dev/shm the container's"
        )

    def isolation_gaps(self) -> list[str]:
        """Where the container's own boundary does not hold for the kernels."""
        gaps = []
        if self.user.uid == 0:
            gaps.append(
                "kernels are root in the container: MLE-bench's harness runs agents as an "
                "unprivileged user so that root-only files (its answers in /private) stay out "
                "of reach"
            )
        elif os.access(MLEBENCH_PRIVATE, os.R_OK | os.X_OK):
            gaps.append(f"{MLEBENCH_PRIVATE} (where MLE-bench keeps the answers) is readable")
        return gaps

    def launch(self, slot: Slot, ipc: IpcDir) -> tuple[KernelCommand, Guard]:
        slot.link_input()
        limits = self.options.limits
        group = None
        if self.cgroups.version is not None:
            group = cgroups.KernelCgroup(self.cgroups, limits.memory_bytes, limits.max_processes)
        guard = ContainerGuard(self.options, group, slot, ipc, self.user)
        env = kernel_env(self.options.threads)
        gpus = self.options.gpus
        if gpus and gpus != "all":
            env["CUDA_VISIBLE_DEVICES"] = ",".join(i.strip() for i in gpus.split(",") if i.strip())
        command = KernelCommand(
            argv=ipykernel_argv(self.python, ipc.kernel_connection_file),
            env=env,
            cwd=slot.root,
            preexec=guard.preexec,
            interrupt_grace_s=self.options.interrupt_grace_s,
            max_message_bytes=limits.max_message_bytes,
        )
        return command, guard


def create(options: SandboxParams | Mapping[str, Any]) -> ContainerSandbox:
    """``--sandbox container``: refuses outside a container unless ``assume_container``."""
    params = SandboxParams.of(options)
    evidence = container_evidence()
    if evidence is None and params.assume_container:
        evidence = f"{_ASSUME} = true"
    why = bwrap_problem() or "it runs here, but this run asked for the container sandbox"
    return ContainerSandbox(params.options(), evidence, why)


__all__ = ["ContainerSandbox", "container_evidence", "create"]
