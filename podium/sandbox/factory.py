"""A kernel factory (zygote): node kernels at the cost of a fork, each isolated on its own.

One per warm pool: a bubblewrap sandbox laid out like a kernel's, in which ``zygote.py`` has
loaded ipykernel and the pre-imports once. For each kernel it forks a child that joins the
kernel's cgroup (through descriptors Podium opened), unshares its own mount, pid, network,
ipc, uts and cgroup namespaces, binds only its own slot, public data and ipc directory, mounts
a fresh /proc, /tmp and /dev/shm, and drops to the kernel's own uid, no capabilities and the
seccomp filter before the kernel starts. A forked kernel then looks to the solution as a cold
one does, but for its speed.

The protocol with ``zygote.py`` (one JSON message per packet of a SOCK_SEQPACKET socket pair,
descriptors alongside) is ``zygote.send`` and ``zygote.receive``, used on both sides. The
factory needs the seccomp filter (it stands in for bwrap's ``--disable-userns``) and the ipc
root under /tmp; where either is missing, or the factory fails, kernels start cold, and the
reason is said.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import select
import signal
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from podium.errors import SandboxError
from podium.sandbox.identity import SandboxUser
from podium.sandbox.ipc import new_ipc_base
from podium.sandbox.kernel_args import ARG_TEMPLATES
from podium.sandbox.zygote import receive, send
from podium.untrusted import remove_tree

ZYGOTE = Path(__file__).with_name("zygote.py")
READY_TIMEOUT_S = 180.0  # loading the pre-imports from a cold disk
SPAWN_TIMEOUT_S = 60.0
FACTORY_CAPS = ("CAP_SYS_ADMIN", "CAP_NET_ADMIN", "CAP_SETUID", "CAP_SETGID", "CAP_SETPCAP")


class ForkFailed(SandboxError):
    """A kernel could not be forked: the sandbox starts it cold instead."""


class FactoryGone(ForkFailed):
    """The factory cannot fork kernels any more (it died, or never started)."""


async def _receive_async(
    sock: socket.socket, timeout_s: float, process: subprocess.Popen[bytes] | None = None
) -> tuple[dict[str, Any] | None, list[int]]:
    """One packet, waited for on the event loop (``recvmsg`` has no asyncio form); None when
    the peer closed, or ``process`` exited first."""
    loop = asyncio.get_running_loop()
    ready = loop.create_future()
    loop.add_reader(sock.fileno(), lambda: None if ready.done() else ready.set_result(None))
    deadline = time.monotonic() + timeout_s
    try:
        while not ready.done():
            if process is not None and process.poll() is not None:
                return None, []
            if time.monotonic() > deadline:
                raise TimeoutError(f"no answer within {timeout_s:g} s")
            await asyncio.wait({ready}, timeout=0.05 if process is not None else timeout_s)
    finally:
        loop.remove_reader(sock.fileno())
    return receive(sock)


class ForkedProcess:
    """A forked kernel's namespace init, as ``subprocess.Popen`` is for a launched one.

    Its pidfd is the handle: readable once it and, with it, its whole pid namespace is gone.
    It reports the kernel's exit status on its socket before it exits; killed itself, it
    reads as killed by SIGKILL.
    """

    stdin = stdout = stderr = None

    def __init__(self, pidfd: int, reply: socket.socket) -> None:
        self.pidfd, self._reply = pidfd, reply
        self.pid = _pid_of(pidfd)
        self.returncode: int | None = None
        self.error: str | None = None  # why it could not start the kernel, as it said

    def poll(self) -> int | None:
        if self.returncode is None and _readable(self.pidfd):
            self.returncode = self._reported()
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        select.select([self.pidfd], [], [], timeout)
        code = self.poll()
        if code is None:
            raise subprocess.TimeoutExpired("forked kernel", timeout or 0)
        return code

    def _reported(self) -> int:
        with contextlib.suppress(OSError, ValueError):
            self._reply.setblocking(False)
            message, fds = receive(self._reply)
            for fd in fds:
                os.close(fd)
            if message and isinstance(message.get("exit"), int):
                return int(message["exit"])
            if message and message.get("error"):
                self.error = str(message["error"])[:500]
        return -signal.SIGKILL

    def send_signal(self, signum: int) -> None:
        with contextlib.suppress(ProcessLookupError):
            signal.pidfd_send_signal(self.pidfd, signum)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def close(self) -> None:
        with contextlib.suppress(OSError):
            os.close(self.pidfd)
        self._reply.close()


def _pid_of(pidfd: int) -> int:
    """The pid, in Podium's namespace, of the process a pidfd names (0 if it is gone)."""
    with open(f"/proc/self/fdinfo/{pidfd}") as info:
        for line in info:
            if line.startswith("Pid:"):
                return max(int(line.split()[1]), 0)
    return 0


def _readable(fd: int) -> bool:
    return bool(select.select([fd], [], [], 0)[0])


@dataclass(frozen=True)
class FactorySpec:
    """What a factory is made for: one run's slots, public data and ipc root."""

    scratch: Path
    input_dir: Path
    ipc_base: Path

    def renewed(self) -> FactorySpec:
        """The same for a replacement factory (the old ipc root stays with the old one)."""
        return FactorySpec(self.scratch, self.input_dir, new_ipc_base())


class KernelFactory:
    """The host's handle on one factory process. ``spawn`` raises ``FactoryGone`` once it is
    unusable; the sandbox then starts a replacement and kernels start cold meanwhile."""

    def __init__(
        self, spec: FactorySpec, process: subprocess.Popen[bytes], control: socket.socket,
        pidfd: int,
    ) -> None:  # fmt: skip
        self.spec, self.process, self._control, self._pidfd = spec, process, control, pidfd
        self.pid = _pid_of(pidfd)  # the factory process itself, in Podium's pid namespace
        self.gone: str | None = None

    @classmethod
    async def start(
        cls, spec: FactorySpec, argv: list[str], pass_fds: tuple[int, ...],
        preexec: Any, config: dict[str, Any],
    ) -> KernelFactory:  # fmt: skip
        """Start the factory's bwrap (``argv`` runs ``zygote.py`` on the socket's descriptor
        given as its last argument) and wait until it has loaded everything."""
        host, child = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            process = subprocess.Popen(
                [*argv, str(child.fileno())], pass_fds=(*pass_fds, child.fileno()),
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                preexec_fn=preexec, env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")},
            )  # fmt: skip
        finally:
            child.close()
        try:
            send(host, config)
            message, fds = await _receive_async(host, READY_TIMEOUT_S, process)
        except BaseException as exc:
            _stop(process)
            if isinstance(exc, Exception):
                raise FactoryGone(f"the kernel factory did not start: {exc}") from exc
            raise
        finally:
            host.close()  # bwrap's own processes hold the other end: useless from here on
        if not message or not message.get("ready") or len(fds) != 2:
            for fd in fds:
                os.close(fd)
            _stop(process)
            why = (message or {}).get("error") or "it exited while loading"
            raise FactoryGone(f"the kernel factory did not start: {why}")
        return cls(spec, process, socket.socket(fileno=fds[0]), fds[1])

    def alive(self) -> bool:
        if self.gone is None and _readable(self._pidfd):
            self.gone = "the kernel factory exited"
        return self.gone is None

    async def spawn(
        self, slot: Path, ipc_kernel: Path, connection: Path, procs_files: list[str],
        rlimits: list[tuple[int, int, int]], user: SandboxUser,
    ) -> ForkedProcess:  # fmt: skip
        """Fork a kernel for ``slot`` (under the factory's scratch) reading ``connection``, as
        ``user`` (its uid, gid, and the /etc/passwd and /etc/group listing it)."""
        if not self.alive():
            raise FactoryGone(str(self.gone))
        host, child = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        procs = [os.open(path, os.O_WRONLY | os.O_CLOEXEC) for path in procs_files]
        request = {"slot": slot.name, "ipc": str(ipc_kernel), "connection": str(connection),
                   "rlimits": rlimits, "uid": user.uid, "gid": user.gid,
                   "passwd": user.passwd().decode(), "group": user.group().decode()}  # fmt: skip
        try:
            send(self._control, request, [child.fileno(), *procs])
        except OSError as exc:
            host.close()
            self.gone = f"the kernel factory is gone ({exc.strerror or exc})"
            raise FactoryGone(self.gone) from None
        finally:
            child.close()
            for fd in procs:
                os.close(fd)
        try:
            message, fds = await _receive_async(host, SPAWN_TIMEOUT_S)
        except BaseException:
            host.close()
            raise
        if not message or not message.get("started") or len(fds) != 1:
            for fd in fds:
                os.close(fd)
            host.close()
            if message is None:  # the child died before it could say why: the factory's fault
                self.gone = "the kernel factory's child exited without a word"
                raise FactoryGone(self.gone)
            raise ForkFailed(f"the kernel factory could not fork a kernel: {message.get('error')}")
        return ForkedProcess(fds[0], host)

    def close(self) -> None:
        """Stop the factory, its supervisor and anything left in its namespace."""
        self.gone = self.gone or "closed"
        self._control.close()
        _stop(self.process)
        select.select([self._pidfd], [], [], 10.0)  # its namespace goes a moment after bwrap
        with contextlib.suppress(OSError):
            os.close(self._pidfd)
        remove_tree(self.spec.ipc_base)


def _stop(process: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(OSError):
        process.kill()
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=10)


def factory_config(
    preimports: tuple[str, ...], seccomp: bytes, switch: bool,
    tmp_bytes: int, shm_bytes: int, ipc_base: Path, python_paths: tuple[Path, ...],
) -> dict[str, Any]:  # fmt: skip
    """The first message ``zygote.py`` reads (each kernel's uid comes with its request)."""
    return {
        "kernel_args": list(ARG_TEMPLATES),  # {dir}: the kernel's connection file's folder
        "preimports": list(preimports), "seccomp": seccomp.hex(), "switch": switch,
        "tmp_bytes": tmp_bytes, "shm_bytes": shm_bytes,
        "ipc_base": str(ipc_base), "python_paths": sorted(map(str, python_paths)),
    }  # fmt: skip


def new_spec(scratch: Path, input_dir: Path) -> FactorySpec:
    return FactorySpec(scratch.resolve(), input_dir.resolve(), new_ipc_base())
