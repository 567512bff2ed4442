"""The ``bwrap`` sandbox: each kernel in bubblewrap, in its own cgroup, as an unprivileged uid.

What holds a kernel, and where each protection comes from (``protections()`` reports each, and
why one is missing on this machine):

* **an unprivileged host uid** (``identity.py``): never host root, whoever runs Podium,
  and as root a uid of its own per kernel (no per-uid limit shared with another);
* **a seccomp filter** (``seccomp.py``) over every process of the kernel;
* **namespaces**: no network (the kernel talks to Podium over unix sockets in its ipc
  directory), its own pid, ipc, uts and mount namespaces, a read-only /proc;
* **a fresh session keyring**, joined before bwrap starts: no key of Podium's session is
  reachable, and none is shared between kernels;
* **every message capped** on every channel (``relay.py``);
* **no kernel outlives Podium**, however and whenever it is killed: the parent-death signal,
  re-checked (``podium.processes.die_with_parent``), a lifeline each cold kernel watches
  (``lifeline.py``), and a warden that kills what bwrap itself may leave (``warden.py``);
* **limits**: memory and process count by cgroup (v2 or v1) when writable, else an RSS
  watchdog and RLIMIT_NPROC; CPU seconds and file size by rlimit; the bytes and the entries
  the kernel may create (its workspace and its ipc directory: everything it can write on the
  host's disk) by a watchdog; /tmp and /dev/shm by their tmpfs size.

Once a kernel is killed, ``reap`` returns only when none of its processes can run any more, and
only then is the workspace handed over: frozen by its cgroup's freezer where there is one (they
die when thawed, in the background: a large kernel takes tens of milliseconds per GiB to exit,
which the node need not wait for), else dead: its pid namespace gone (bwrap reports the
namespace's init, which the kernel keeps alive until every process in it has exited) and its
cgroup empty.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import functools
import json
import os
import platform
import shutil
import signal
import subprocess
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from podium.errors import SandboxError, SandboxUnavailable
from podium.processes import die_with_parent
from podium.records import ExecResult, ExecStatus
from podium.sandbox import cgroups
from podium.sandbox.base import Guard, KernelSandbox
from podium.sandbox.bwrap_command import (
    WORKSPACE,
    BwrapFds,
    BwrapLayout,
    FactoryLayout,
    bwrap_argv,
    check_hideable,
    factory_argv,
    isolation_flags,
)
from podium.sandbox.factory import (
    FACTORY_CAPS,
    ZYGOTE,
    FactorySpec,
    ForkedProcess,
    KernelFactory,
    factory_config,
)
from podium.sandbox.forking import Forking
from podium.sandbox.hidden import python_paths, secret_paths
from podium.sandbox.identity import KernelIdentity, SandboxUser, UidLease, kernel_identity
from podium.sandbox.ipc import IpcDir, ipc_root, sweep_leftovers
from podium.sandbox.kernel import (
    EXIT_WAIT_S,
    KernelCommand,
    LiveKernel,
)
from podium.sandbox.lifeline import Lifeline
from podium.sandbox.limits import (
    ResourceLimits,
    apply_rlimits,
    format_bytes,
    processes_of,
    rlimits,
)
from podium.sandbox.local import KERNEL_ENV
from podium.sandbox.options import SandboxOptions, SandboxParams, thread_env
from podium.sandbox.seccomp import filter_bpf, seccomp_problem
from podium.sandbox.trees import MAX_DEPTH, disk_usage
from podium.sandbox.warden import ensure_warden, warden_pid
from podium.sandbox.workspace import Slot
from podium.sandbox.zygote import STAGING

DISK_WATCH_EVERY_S = 0.5  # at least; a walk that takes long is repeated less often
KEYCTL = {"x86_64": 250, "aarch64": 219}  # syscall numbers of keyctl(2)
KEYCTL_JOIN_SESSION_KEYRING = 1


def sandbox_env(python: str, threads: int | None) -> dict[str, str]:
    bindir = str(Path(python).parent)
    return {
        "PATH": f"{bindir}:/usr/local/bin:/usr/bin:/bin",
        "HOME": "/tmp",
        "TMPDIR": "/tmp",
        "LANG": "C.UTF-8",
        **KERNEL_ENV,
        **thread_env(threads),
    }


def _memfd(name: str, data: bytes) -> int:
    fd = os.memfd_create(name)
    os.write(fd, data)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


def join_new_session_keyring() -> None:
    """keyctl(KEYCTL_JOIN_SESSION_KEYRING, NULL): an anonymous keyring of our own (in the
    child, before bwrap): whatever session Podium was started in, its keys stay out."""
    number = KEYCTL.get(platform.machine())
    if number is not None:
        ctypes.CDLL(None, use_errno=True).syscall(number, KEYCTL_JOIN_SESSION_KEYRING, None)


class BwrapGuard(Guard):
    """Limits one kernel: its cgroup, or the watchdogs standing in for one; reaps it."""

    def __init__(
        self,
        limits: ResourceLimits,
        group: cgroups.KernelCgroup | None,
        slot: Slot,
        ipc: IpcDir,
        user: SandboxUser,
        seccomp: bytes | None,
        forked: bool = False,
        lease: UidLease | None = None,
    ) -> None:
        self.limits, self.group, self.slot, self.ipc = limits, group, slot, ipc
        self.lease = lease  # the kernel's uid, given back in ``release`` once none runs as it
        self.kernel: LiveKernel | None = None
        self.peak_rss = 0
        self._next_disk = 0.0
        self._memory_watched = limits.memory_bytes is not None and (
            group is None or group.memory is None
        )
        self._nproc: int | None = None  # RLIMIT_NPROC, only where no pids cgroup counts
        if limits.max_processes and (group is None or group.pids is None):
            self._nproc = processes_of(user.uid) + limits.max_processes
        self._info_read: int | None = None
        self._sent: list[int] = []  # the parent's copies of what bwrap reads, closed once started
        self._pidfd: int | None = None
        self.lifeline: Lifeline | None = None
        if not forked:  # a forked kernel's factory has all of these already
            self.lifeline = Lifeline()
            self._info_read, info_write = os.pipe()
            self.fds = BwrapFds(
                passwd=_memfd("passwd", user.passwd()),
                group=_memfd("group", user.group()),
                seccomp=_memfd("seccomp", seccomp) if seccomp is not None else None,
                info=info_write,
            )
            self._sent = list(self.fds.all)

    @property
    def rlimits(self) -> list[tuple[int, int, int]]:
        return rlimits(self.limits, self._nproc)

    def preexec(self) -> None:
        """Runs in the child before exec: join the cgroups, set rlimits, a new keyring."""
        cgroups.join(self.group.procs_files if self.group else [])
        apply_rlimits(self.limits, self._nproc)
        join_new_session_keyring()

    @property
    def pass_fds(self) -> tuple[int, ...]:
        """What the launched bwrap must hold open: what it reads, and the kernel's lifeline."""
        lifeline = (self.lifeline.kernel_fd,) if self.lifeline else ()
        return (*self.fds.all, *lifeline)

    def started(self, kernel: LiveKernel) -> None:
        self.kernel = kernel
        self._close_sent()
        if self.lifeline is not None:
            self.lifeline.launched()
        process = kernel.process
        if isinstance(process, ForkedProcess):  # it is the namespace's init
            self._pidfd = os.dup(process.pidfd)
        elif process is not None and self._info_read is not None:
            self._pidfd = _namespace_init(self._info_read, process.pid)

    def _close_sent(self) -> None:
        for fd in self._sent:
            with contextlib.suppress(OSError):
                os.close(fd)
        self._sent.clear()

    async def reap(self, kernel: LiveKernel) -> str | None:
        group = self.group
        if group is not None and group.freeze() and await until(group.frozen, EXIT_WAIT_S):
            return None  # nothing runs; handed_over() thaws them into the SIGKILL they have
        exited = await kernel.wait_exited()
        if self._pidfd is not None:
            with contextlib.suppress(OSError):
                signal.pidfd_send_signal(self._pidfd, signal.SIGKILL)
            if not await _readable(self._pidfd, EXIT_WAIT_S):
                return "the sandbox's processes were still alive after SIGKILL"
        elif not exited:
            return "bwrap did not exit after SIGKILL"
        if self.group is not None and not await until(self.group.empty, EXIT_WAIT_S):
            return "processes were still in the kernel's cgroup after SIGKILL"
        return None

    def handed_over(self) -> None:
        if self.group is not None:
            self.group.thaw()

    async def pause(self) -> bool:
        group = self.group
        # cgroup v1 holds even a frozen process's SIGKILL: frozen for a model's turn only where
        # the warden thaws it if Podium is killed meanwhile (v2 lets a fatal signal through).
        unwarded = group is not None and group.version == "v1" and warden_pid() is None
        if group is None or unwarded or not group.freeze():
            return False
        if not await until(group.frozen, EXIT_WAIT_S):
            group.thaw()  # it cannot be stopped: it is watched instead
            return False
        self._next_disk = 0.0  # all it wrote until it stopped: the next watch looks, in full
        return True

    def resume(self) -> None:
        if self.group is not None:
            self.group.thaw()

    async def watch(self) -> str | None:
        if self._memory_watched and (reason := self._check_memory()):
            return reason
        now = time.monotonic()
        limits = self.limits
        if now < self._next_disk or (limits.workspace_bytes is None and limits.max_files is None):
            return None
        roots = [self.slot.root, self.ipc.kernel]
        used = await asyncio.to_thread(disk_usage, roots, limits.workspace_bytes, limits.max_files)
        took = time.monotonic() - now
        self._next_disk = time.monotonic() + max(DISK_WATCH_EVERY_S, 4 * took)
        if limits.workspace_bytes is not None and used.bytes > limits.workspace_bytes:
            return f"workspace size limit ({format_bytes(limits.workspace_bytes)})"
        if limits.max_files is not None and used.entries > limits.max_files:
            return f"file count limit ({limits.max_files} files and directories)"
        if used.too_deep:
            return f"directory depth limit ({MAX_DEPTH} levels)"
        return None

    def _check_memory(self) -> str | None:
        process = self.kernel.process if self.kernel else None
        if process is None or self.limits.memory_bytes is None:
            return None
        rss = tree_rss(process.pid)
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
        self._close_sent()
        if self.lifeline is not None:
            self.lifeline.cut()
        if self._pidfd is not None:
            with contextlib.suppress(OSError):
                signal.pidfd_send_signal(self._pidfd, signal.SIGKILL)
        for fd in (self._pidfd, self._info_read):
            if fd is not None:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self._pidfd = None
        if self.group is not None:
            self.group.thaw()
            for _ in range(50):  # the namespace's processes may take a moment to be reaped
                if self.group.remove():
                    break
                time.sleep(0.1)
        if self.lease is not None:
            self.lease.release()  # once no process has the uid: a later kernel shares nothing


def _namespace_init(info_read: int, bwrap_pid: int) -> int | None:
    """A pidfd for the pid namespace's init, from what bwrap wrote to ``--info-fd``.

    It is checked to still be bwrap's child after the pidfd is opened, so a pid reused in
    between cannot be mistaken for it. None when it cannot be had (then the launched process
    and the cgroup are what ``reap`` waits for).
    """
    try:
        os.set_blocking(info_read, False)
        data = os.read(info_read, 65536)
        pid = int(json.loads(data)["child-pid"])
        pidfd = os.pidfd_open(pid)
    except (OSError, ValueError, KeyError, TypeError):
        return None
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        if int(stat.rsplit(")", 1)[1].split()[1]) == bwrap_pid:
            return pidfd
    except (OSError, ValueError, IndexError):
        pass
    os.close(pidfd)
    return None


async def _readable(fd: int, within_s: float) -> bool:
    loop = asyncio.get_running_loop()
    ready = loop.create_future()
    loop.add_reader(fd, lambda: None if ready.done() else ready.set_result(None))
    try:
        await asyncio.wait_for(ready, within_s)
        return True
    except TimeoutError:
        return False
    finally:
        loop.remove_reader(fd)


async def until(condition: Callable[[], bool], within_s: float, poll_s: float = 0.001) -> bool:
    """Whether ``condition`` comes true within ``within_s`` (a kernel's cgroup frozen or
    empty), checked every ``poll_s`` without blocking the event loop."""
    deadline = time.monotonic() + within_s
    while not condition():
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(poll_s)
    return True


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


@dataclass(frozen=True)
class Protection:
    """One protection of the bwrap sandbox, and whether it holds on this machine."""

    name: str
    active: bool
    detail: str


@dataclass(frozen=True)
class BwrapMode:
    """How bubblewrap can run here. ``problem``: it cannot; ``root_gap``: Podium is root but
    bubblewrap works only in a user namespace, where the kernels would be host root."""

    switch: bool
    problem: str | None = None
    root_gap: str | None = None


def _probe(bwrap: str, switch: bool) -> str | None:
    argv = [bwrap, *isolation_flags(switch), "--ro-bind", "/", "/", "--proc", "/proc",
            "--dev", "/dev", "--", "/bin/true"]  # fmt: skip
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


@functools.cache
def bwrap_mode(bwrap: str) -> BwrapMode:
    if os.getuid() != 0:
        return BwrapMode(False, _probe(bwrap, switch=False))
    privileged = _probe(bwrap, switch=True)
    if privileged is None:
        return BwrapMode(True)
    mapped = _probe(bwrap, switch=False)
    gap = f"kernels run as host root: bubblewrap cannot run privileged here ({privileged})"
    return BwrapMode(False, mapped, None if mapped else gap)


def bwrap_problem(bwrap: str | None = None) -> str | None:
    """Why bubblewrap cannot isolate here (one line), or None when it can."""
    found = bwrap or shutil.which("bwrap")
    if found is None:
        return "bubblewrap is not installed (apt install bubblewrap)"
    return bwrap_mode(found).problem


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
        self.mode = bwrap_mode(found)
        self.identity = kernel_identity(self.options.user)
        if os.getuid() == 0 and not self.mode.switch:
            self.identity = KernelIdentity(SandboxUser(0, 0, "root", switch=False))
        self.identity.check()
        self.seccomp_problem = seccomp_problem()
        self.cgroups = cgroups.detect()
        self.notice: str | None = None
        self._readable: set[Path] = set()
        self._hidden: set[Path] = set()  # what the run declared (``hide``)
        self.forking = Forking(self._start_factory, self._fork_problem())
        cgroups.sweep_leftovers(self.cgroups)  # a killed run cannot clean up after itself
        sweep_leftovers()

    def _fork_problem(self) -> str | None:
        """Why pooled kernels cannot be forked from a factory here, or None."""
        if not self.options.fork:
            return "off (sandbox.fork = false)"
        if self.seccomp_problem is not None:
            return f"they need the seccomp filter ({self.seccomp_problem})"
        if self.identity.root:
            return "kernels would run as root here"
        if not self.identity.switch:  # tried: the factory could not re-enter its pid namespace,
            # detach bwrap's (locked) mounts, nor mount a new /proc (locked overmounts of it)
            return "they need Podium to run as root (in a user namespace no new /proc mounts)"
        if ipc_root() != Path("/tmp"):
            return "they need a writable /tmp"
        return None

    def hide(self, paths: Iterable[Path]) -> None:
        """Mask ``paths`` too in every kernel from now on (see ``Sandbox.hide``); refused, in
        one line, when one cannot be masked, and once the pool has started (its kernels and
        factory were laid out without them)."""
        added = {Path(p) for p in paths} - self._hidden
        if not added:
            return
        if self._pool is not None:
            raise SandboxError("paths to hide must be given before the warm pool starts")
        hidden = self._hidden | added
        check_hideable(python_paths(self.python), secret_paths(self.python, hidden))
        self._hidden = hidden

    def _secrets(self, paths: tuple[Path, ...], public: Path) -> tuple[Path, ...]:
        """Every path a kernel must not read, checked to be maskable before anything starts."""
        secrets = secret_paths(self.python, self._hidden)
        check_hideable(paths, secrets, public)
        return secrets

    async def pool_starting(self, scratch: Path, input_dir: Path) -> None:
        self.forking.serve(scratch, input_dir)

    async def before_launch(self) -> None:
        await self.forking.settled()

    async def _start_factory(self, spec: FactorySpec) -> KernelFactory:
        limits = self.options.limits
        self._check_readable(spec.input_dir, "the task's public data")
        paths = python_paths(self.python)
        for path in paths:
            self._check_readable(path, "the solutions' Python environment")
        secrets = self._secrets(paths, spec.input_dir)
        # The factory is root in its sandbox; each kernel it forks gets its own user's files.
        user = SandboxUser(0, 0, "root", switch=self.identity.switch)
        fds = BwrapFds(passwd=_memfd("passwd", user.passwd()), group=_memfd("group", user.group()))
        env = sandbox_env(self.python, self.options.threads)
        layout = FactoryLayout(
            kernel=BwrapLayout(
                workspace=spec.scratch, input_dir=spec.input_dir, ipc_dir=spec.ipc_base,
                user=user, fds=fds, python_paths=paths, env=env,
                tmp_bytes=limits.tmp_bytes, shm_bytes=limits.shm_bytes, gpus=self.options.gpus,
                secrets=secrets,
            ),
            program=ZYGOTE, staging=STAGING, caps=FACTORY_CAPS,
        )  # fmt: skip
        argv = factory_argv(self.bwrap, layout, [self.python, f"{STAGING}/{ZYGOTE.name}"])
        ensure_warden()
        config = factory_config(
            self.preimports, filter_bpf(), user.switch,
            limits.tmp_bytes, limits.shm_bytes, spec.ipc_base, paths,
        )  # fmt: skip
        try:
            preexec = functools.partial(_factory_preexec, os.getpid())
            return await KernelFactory.start(spec, argv, fds.all, preexec, config)
        finally:
            for fd in fds.all:
                os.close(fd)

    def ipc_for(self, slot: Slot, cold: bool = False) -> IpcDir:
        factory = None if cold else self.forking.serving(slot.root.parent, slot.input_dir)
        return IpcDir.create(factory.spec.ipc_base if factory else None)

    def retry_cold(self, error: SandboxError, command: KernelCommand) -> bool:
        factory = getattr(command.launcher, "factory", None)
        if factory is None:
            return False
        self.forking.failed(factory, error)
        return True

    async def aclose(self) -> None:
        await super().aclose()
        await self.forking.aclose()

    def describe(self) -> str:
        limits = describe_limits(self.options.limits, self.cgroups, self.identity.any_uid)
        return f"bwrap: {'; '.join(limits)}; as {self.identity.describe()}"

    def protections(self) -> list[Protection]:
        identity, cap = self.identity, format_bytes(self.options.limits.max_message_bytes)
        if identity.root:
            uid = Protection("unprivileged uid", False, self.mode.root_gap or "kernels are root")
        else:
            how = (
                "switched to inside the sandbox, before the kernel starts"
                if identity.switch
                else "Podium's own, in an unprivileged user namespace"
            )
            uid = Protection("unprivileged uid", True, f"{identity.describe()}: {how}")
        filtered = self.seccomp_problem is None
        denied = "keyring, io_uring, ptrace, bpf, mounts, namespaces, modules, setuid bits, ..."
        keyring = "a new session keyring per kernel" + ("; keyctl denied" if filtered else "")
        return [
            uid,
            Protection("seccomp", filtered, self.seccomp_problem or f"libseccomp filter: {denied}"),
            Protection("read-only /proc", True, "/proc/sys and /proc/sysrq-trigger not writable"),
            Protection("keyring", True, keyring),
            Protection("message cap", True, f"every channel, {cap} per message (all frames)"),
        ]

    def isolation_gaps(self) -> list[str]:
        return [f"{p.name}: {p.detail}" for p in self.protections() if not p.active]

    def launch(self, slot: Slot, ipc: IpcDir) -> tuple[KernelCommand, Guard]:
        self._check_readable(slot.input_dir.resolve(), "the task's public data")
        paths = python_paths(self.python)
        for path in paths:
            self._check_readable(path, "the solutions' Python environment")
        self._secrets(paths, slot.input_dir.resolve())  # refused before anything is made
        lease = self.identity.lease()  # the guard gives it back once the kernel is gone
        try:
            return self._launch(slot, ipc, paths, lease)
        except BaseException:
            lease.release()
            raise

    def _launch(
        self, slot: Slot, ipc: IpcDir, paths: tuple[Path, ...], lease: UidLease
    ) -> tuple[KernelCommand, Guard]:
        limits, user = self.options.limits, lease.user
        if user.switch:
            for path in slot.writable:
                os.chown(path, user.uid, user.gid)
            ipc.hand_kernel_side_to(user.uid, user.gid)
        group = None
        if self.cgroups.version is not None:
            group = cgroups.KernelCgroup(self.cgroups, limits.memory_bytes, limits.max_processes)
        factory = self.forking.serving(slot.root.parent, slot.input_dir)
        if factory is not None and ipc.root.parent == factory.spec.ipc_base:
            return self._forked(factory, slot, ipc, group, lease)
        ensure_warden()
        seccomp = filter_bpf() if self.seccomp_problem is None else None
        guard = BwrapGuard(limits, group, slot, ipc, user, seccomp, lease=lease)
        layout = BwrapLayout(
            workspace=slot.root,
            input_dir=slot.input_dir.resolve(),
            ipc_dir=ipc.kernel,
            user=user,
            fds=guard.fds,
            python_paths=paths,
            env=sandbox_env(self.python, self.options.threads),
            tmp_bytes=limits.tmp_bytes,
            shm_bytes=limits.shm_bytes,
            gpus=self.options.gpus,
            secrets=secret_paths(self.python, self._hidden),
        )
        assert guard.lifeline is not None
        kernel_argv = guard.lifeline.argv(self.python, ipc.kernel_connection_file)
        command = KernelCommand(
            argv=bwrap_argv(self.bwrap, layout, user.launch(self.python, kernel_argv)),
            env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")},
            cwd=slot.root,
            interrupt_mode="message",
            preexec=guard.preexec,
            pass_fds=guard.pass_fds,
            interrupt_grace_s=self.options.interrupt_grace_s,
            max_message_bytes=limits.max_message_bytes,
        )
        return command, guard

    def _forked(
        self, factory: KernelFactory, slot: Slot, ipc: IpcDir, group: cgroups.KernelCgroup | None,
        lease: UidLease,
    ) -> tuple[KernelCommand, Guard]:  # fmt: skip
        limits = self.options.limits
        guard = BwrapGuard(limits, group, slot, ipc, lease.user, None, forked=True, lease=lease)
        (slot.root / "input").mkdir(exist_ok=True)  # the public data's mount point
        launcher = _ForkLauncher(factory, slot, ipc, group.procs_files if group else [],
                                 guard.rlimits, lease.user)  # fmt: skip
        command = KernelCommand(
            argv=(), env={}, cwd=slot.root, interrupt_mode="message", launcher=launcher,
            interrupt_grace_s=self.options.interrupt_grace_s,
            max_message_bytes=limits.max_message_bytes,
        )  # fmt: skip
        return command, guard

    def _check_readable(self, path: Path, what: str) -> None:
        """The sandbox's uid must read it: said once, clearly, rather than as a kernel that
        does not start or a solution that cannot open its data."""
        if path in self._readable:
            return
        identity = self.identity
        unreadable = [p for p in (path, *_first_entries(path)) if not identity.can_read(p)]
        if unreadable:
            whom = f"the sandbox's {identity.describe()}"
            if identity.per_kernel:  # a uid that owns nothing, in no group: others' bits
                uids = identity.uids
                whom = f"others (each kernel is a uid of its own, from {uids[0]}–{uids[-1]})"
            raise SandboxUnavailable(
                f"{what} ({unreadable[0]}) is not readable by {whom}",
                hint=f"chmod -R o+rX {path}, or set sandbox.user to an account that can read it"
                " (kernels then share its per-uid limits)",
            )
        self._readable.add(path)


@dataclass(frozen=True)
class _ForkLauncher:
    """Starts one kernel by asking ``factory`` to fork it (``retry_cold`` reads ``factory``)."""

    factory: KernelFactory
    slot: Slot
    ipc: IpcDir
    procs_files: list[str]
    rlimits: list[tuple[int, int, int]]
    user: SandboxUser  # the kernel's own, as its factory must be told

    async def __call__(self) -> ForkedProcess:
        return await self.factory.spawn(self.slot.root, self.ipc.kernel,
                                        self.ipc.kernel_connection_file, self.procs_files,
                                        self.rlimits, self.user)  # fmt: skip


def _factory_preexec(podium: int) -> None:
    """In the factory's bwrap, before exec: dies with Podium (pid ``podium``, read before the
    fork); holds no key of its session."""
    die_with_parent(podium)
    join_new_session_keyring()


def _first_entries(path: Path, count: int = 20) -> list[Path]:
    with contextlib.suppress(OSError), os.scandir(path) as found:
        return [Path(entry.path) for _, entry in zip(range(count), found, strict=False)]
    return []


def describe_limits(
    limits: ResourceLimits, support: cgroups.CgroupSupport, kernel_uid: int
) -> list[str]:
    """One phrase per limit, naming the mechanism that enforces it."""
    memory = "memory unlimited"
    if limits.memory_bytes is not None:
        how = f"cgroup {support.version}" if support.memory else "RSS watchdog (no cgroup)"
        memory = f"memory {format_bytes(limits.memory_bytes)} by {how}"
    procs = "processes unlimited"
    if limits.max_processes:
        how = f"cgroup {support.version} pids" if support.pids else "RLIMIT_NPROC"
        if not support.pids and kernel_uid == 0:
            how = "nothing (RLIMIT_NPROC does not apply to root and no pids cgroup is writable)"
        procs = f"processes {limits.max_processes} by {how}"
    cpu = f"CPU {limits.cpu_time_s} s by RLIMIT_CPU" if limits.cpu_time_s else "CPU time unlimited"
    disk = "workspace unlimited"
    if limits.workspace_bytes is not None:
        disk = f"workspace {format_bytes(limits.workspace_bytes)} by watchdog + RLIMIT_FSIZE"
    files = "files unlimited"
    if limits.max_files is not None:
        files = f"{limits.max_files} files by watchdog"
    tmp = f"/tmp {format_bytes(limits.tmp_bytes)}, /dev/shm {format_bytes(limits.shm_bytes)} tmpfs"
    return [memory, procs, cpu, disk, files, tmp, "no network"]


def create(options: SandboxParams | Mapping[str, Any]) -> BwrapSandbox:
    """``--sandbox bwrap`` asked for isolation: refuse to start without it."""
    if problem := bwrap_problem():
        raise SandboxUnavailable(
            f"the bwrap sandbox cannot run here: {problem}",
            hint="see `podium sandbox check`, or use --sandbox local",
        )
    return BwrapSandbox(SandboxParams.of(options).options())


__all__ = [
    "WORKSPACE", "BwrapSandbox", "Protection", "bwrap_problem", "create", "describe_limits",
    "python_paths",
]  # fmt: skip
