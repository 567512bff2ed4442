"""One Jupyter kernel process, driven over ZMQ: start, execute with a deadline, kill.

Shared by every sandbox: a sandbox decides *how* the kernel process is launched (plain, or
wrapped in bubblewrap) by the argv, environment and pre-exec hook it passes; this module owns
the protocol side: start, execute, watch for the deadline, for kernel death and for limits,
interrupt, kill.

Host memory stays bounded whatever the kernel prints: the iopub socket refuses any message over
``max_message_bytes`` (ZMQ drops the connection instead of buffering it), which Podium notices
through a socket monitor and answers by killing the kernel.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import itertools
import signal
import subprocess
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from queue import Empty
from typing import Any

import zmq
from jupyter_client.kernelspec import KernelSpec, KernelSpecManager
from jupyter_client.manager import AsyncKernelManager

from podium.errors import SandboxError
from podium.failpoints import failpoint
from podium.records import ExecResult, ExecStatus
from podium.sandbox.output import CappedOutput, strip_ansi

POLL_S = 0.1  # how often a silent kernel is checked for death / deadline
DEATH_GRACE_S = 0.5  # after iopub drops: time for a dying kernel to be seen dead
WATCH_EVERY_S = 0.25  # how often a sandbox's watchdog (memory, disk) is consulted
_monitors = itertools.count()

Watch = Callable[[], Awaitable[str | None]]  # returns why the kernel must die, or None


class _OneSpec(KernelSpecManager):
    """A kernel-spec manager that knows exactly one kernel: the argv the sandbox chose."""

    def __init__(self, spec: KernelSpec) -> None:
        super().__init__()
        self._spec = spec

    def get_kernel_spec(self, kernel_name: str) -> KernelSpec:
        return self._spec


def die_with_parent() -> None:
    """PR_SET_PDEATHSIG: the kernel (or bwrap) gets SIGKILL when Podium dies, however it dies."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)
    except (OSError, AttributeError):
        pass


@dataclass(frozen=True)
class KernelCommand:
    """How to start the kernel process: ``{connection_file}`` in argv is filled in by Jupyter.

    ``preexec`` runs in the child between fork and exec (joining cgroups, setting rlimits); it
    must not touch Python objects shared with the parent.
    """

    argv: Sequence[str]
    env: Mapping[str, str]
    cwd: Path
    transport: str = "tcp"
    connection_file: Path | None = None
    interrupt_mode: str = "signal"
    preexec: Callable[[], None] | None = None
    startup_timeout_s: float = 60.0
    interrupt_grace_s: float = 3.0
    max_message_bytes: int = 32 * 1024**2


def ipykernel_argv(python: str) -> list[str]:
    return [python, "-m", "ipykernel_launcher", "-f", "{connection_file}"]


@dataclass
class LiveKernel:
    """A started kernel that has answered ``kernel_info``. Used for exactly one execution."""

    km: AsyncKernelManager
    client: Any
    command: KernelCommand
    start_s: float
    monitor: Any = None
    on_cleanup: list[Callable[[], None]] = field(default_factory=list)

    async def execute(
        self, code: str, timeout_s: float, max_output_bytes: int, watch: Watch | None = None
    ) -> ExecResult:
        run = _Execution(self, CappedOutput(max_output_bytes), watch)
        return await run.execute(code, timeout_s)

    async def run_silently(self, code: str, timeout_s: float) -> bool:
        """Run set-up code (pre-imports) whose output nobody reads; True if it finished."""
        msg_id = self.client.execute(code, silent=True, store_history=False)
        deadline = time.perf_counter() + timeout_s
        while time.perf_counter() < deadline:
            try:
                reply = await self.client.get_shell_msg(timeout=POLL_S)
            except Empty:
                if not await self.km.is_alive():
                    return False
                continue
            if reply["parent_header"].get("msg_id") == msg_id:
                return True
        return False

    async def exit_description(self) -> str:
        """'kernel died (signal SIGSEGV)' or '... (exit status 1)', from the launched process.

        Under bwrap the launched process is bwrap, which exits with 128 + the signal number
        when its command is killed by a signal.
        """
        process = getattr(self.km.provisioner, "process", None)
        code = None
        for _ in range(20):
            code = process.poll() if process is not None else None
            if code is not None:
                break
            await asyncio.sleep(0.05)
        if code is None:
            return "kernel died"
        signum = -code if code < 0 else code - 128 if code > 128 else None
        if signum is not None:
            with contextlib.suppress(ValueError):
                return f"kernel died (signal {signal.Signals(signum).name})"
        return f"kernel died (exit status {code})"

    async def is_alive(self) -> bool:
        return bool(await self.km.is_alive())

    async def kill(self) -> None:
        """SIGKILL now (the kernel's process group; bwrap takes its namespace down with it)."""
        if self.monitor is not None:  # before stop_channels, whose context.term waits for it
            with contextlib.suppress(Exception):
                self.monitor.close(linger=0)
            self.monitor = None
        with contextlib.suppress(Exception):
            self.client.stop_channels()
        with contextlib.suppress(Exception):
            await self.km.signal_kernel(signal.SIGKILL)

    async def cleanup(self) -> None:
        """Reap the process and remove its files (~0.1 s of polling, off the critical path)."""
        with contextlib.suppress(Exception):
            await self.km.shutdown_kernel(now=True)
        for callback in self.on_cleanup:  # file-system work (rmtree, cgroup rmdir): off the loop
            with contextlib.suppress(Exception):
                await asyncio.to_thread(callback)


async def start_kernel(command: KernelCommand) -> LiveKernel:
    """Start the process and wait until it answers; raise SandboxError if it never does."""
    started = time.perf_counter()
    km = _manager(command)
    try:
        await km.start_kernel(
            cwd=str(command.cwd),
            env=dict(command.env),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            preexec_fn=_preexec(command.preexec),
        )
    except BaseException as exc:  # cancelled or failed: never leave a launched process behind
        with contextlib.suppress(Exception):
            if km.has_kernel:
                await km.shutdown_kernel(now=True)
        if isinstance(exc, Exception):
            raise SandboxError(f"kernel failed to start: {type(exc).__name__}: {exc}") from exc
        raise
    client = km.client()
    kernel = LiveKernel(km, client, command, 0.0)
    try:
        client.start_channels()
        kernel.monitor = _cap_iopub(client, command.max_message_bytes)
        await _wait_ready(km, client, command.startup_timeout_s)
        _drain(kernel.monitor)
    except BaseException:
        await kernel.kill()
        await kernel.cleanup()
        raise
    kernel.start_s = time.perf_counter() - started
    return kernel


def _manager(command: KernelCommand) -> AsyncKernelManager:
    spec = KernelSpec(
        argv=list(command.argv),
        display_name="podium",
        language="python",
        interrupt_mode=command.interrupt_mode,
    )
    km = AsyncKernelManager(
        kernel_name="podium", kernel_spec_manager=_OneSpec(spec), transport=command.transport
    )
    if command.connection_file is not None:
        km.connection_file = str(command.connection_file)
    return km


def _preexec(extra: Callable[[], None] | None) -> Callable[[], None]:
    def run() -> None:
        die_with_parent()
        if extra is not None:
            extra()

    return run


def _cap_iopub(client: Any, max_bytes: int) -> Any:
    """Reconnect iopub with ZMQ_MAXMSGSIZE set, and monitor it for the resulting disconnect.

    Socket options apply to new connections only, hence the reconnect (before any execution).
    """
    sock = client.iopub_channel.socket
    endpoint = sock.getsockopt(zmq.LAST_ENDPOINT).decode()
    sock.setsockopt(zmq.MAXMSGSIZE, max_bytes)
    sock.disconnect(endpoint)
    sock.connect(endpoint)
    address = f"inproc://podium-iopub-monitor-{next(_monitors)}"
    sock.monitor(address, zmq.EVENT_DISCONNECTED)
    monitor: zmq.Socket[bytes] = zmq.Context.shadow(client.context.underlying).socket(zmq.PAIR)
    monitor.connect(address)
    return monitor


def _drain(monitor: Any) -> None:
    """Forget the events of the set-up reconnect: only later disconnects mean an overflow."""
    with contextlib.suppress(zmq.ZMQError):
        while monitor.poll(0):
            monitor.recv_multipart()


async def _wait_ready(km: AsyncKernelManager, client: Any, timeout_s: float) -> None:
    try:
        await client.wait_for_ready(timeout=timeout_s)
    except RuntimeError as exc:  # raised when the kernel died or never answered
        alive = await km.is_alive()
        why = "did not answer" if alive else "exited during start-up"
        raise SandboxError(f"kernel {why}: {exc}") from None


class Reaper:
    """Finishes killed kernels' clean-up in the background; ``aclose`` waits for all of it."""

    def __init__(self) -> None:
        self._tasks: set[asyncio.Task[None]] = set()

    def clean_up(self, kernel: LiveKernel) -> None:
        """Reap a killed kernel and run its clean-up callbacks in the background."""
        task = asyncio.get_running_loop().create_task(kernel.cleanup())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def drain(self) -> None:
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)

    async def aclose(self) -> None:
        await self.drain()


class _Execution:
    def __init__(self, kernel: LiveKernel, output: CappedOutput, watch: Watch | None) -> None:
        self.kernel, self.output, self.watch = kernel, output, watch
        self.client = kernel.client
        self.error: dict[str, Any] | None = None
        self.limit_reason: str | None = None
        self._next_watch = 0.0

    async def execute(self, code: str, timeout_s: float) -> ExecResult:
        t0 = time.perf_counter()
        msg_id = self.client.execute(code, store_history=False, allow_stdin=False)
        failpoint("exec.running")  # crash while the solution runs
        outcome = await self._collect(msg_id, deadline=t0 + timeout_s)
        fields: tuple[ExecStatus, str | None, str | None, str | None]
        if outcome == "deadline":
            await self.kernel.km.interrupt_kernel()
            grace = self.kernel.command.interrupt_grace_s
            outcome = await self._collect(msg_id, deadline=time.perf_counter() + grace)
            killed = "timeout"
            if outcome != "idle":
                killed = "timeout (the kernel ignored the interrupt and was killed)"
            fields = (ExecStatus.TIMEOUT, "TimeoutError", killed, killed)
            self.output.write(
                f"\nTimeoutError: execution exceeded {timeout_s:g} s and was stopped\n"
            )
        elif outcome == "limit":
            reason = self.limit_reason or "resource limit"
            fields = (ExecStatus.DIED, "ResourceLimitExceeded", reason, reason)
            self.output.write(f"\nResourceLimitExceeded: {reason}; the kernel was killed\n")
        elif outcome == "died":
            why = await self.kernel.exit_description()
            fields = (ExecStatus.DIED, "KernelDied", why, why)
            self.output.write(f"\nKernelDied: {why} during execution\n")
        elif self.error:
            fields = (ExecStatus.ERROR, self.error.get("ename"), self.error.get("evalue"), None)
        else:
            fields = (ExecStatus.OK, None, None, None)
        status, name, value, killed_reason = fields
        return ExecResult(
            status=status,
            output=self.output.text(),
            output_bytes=self.output.total_bytes,
            output_truncated=self.output.truncated,
            error_name=name,
            error_value=value,
            traceback=self._traceback(),
            duration_s=time.perf_counter() - t0,
            kernel_start_s=self.kernel.start_s,
            timed_out=status is ExecStatus.TIMEOUT,
            killed_reason=killed_reason,
        )

    def _traceback(self) -> str | None:
        if not self.error:
            return None
        return strip_ansi("\n".join(self.error.get("traceback", [])))

    async def _collect(self, msg_id: str, deadline: float) -> str:
        """Read iopub until the kernel is idle: 'idle', 'deadline', 'died' or 'limit'."""
        while True:
            left = deadline - time.perf_counter()
            if left <= 0:
                return "deadline"
            if reason := await self._limit_hit():
                self.limit_reason = reason
                await self.kernel.kill()
                return "limit"
            try:
                msg = await self.client.get_iopub_msg(timeout=min(POLL_S, left))
            except Empty:
                if not await self.kernel.is_alive():
                    return "died"
                continue
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            if self._handle(msg):
                return "idle"

    async def _limit_hit(self) -> str | None:
        if self._disconnected() and await self._still_alive_after(DEATH_GRACE_S):
            cap = self.kernel.command.max_message_bytes
            return f"output limit: one message of more than {cap} bytes"
        now = time.perf_counter()
        if self.watch is None or now < self._next_watch:
            return None
        self._next_watch = now + WATCH_EVERY_S
        return await self.watch()

    async def _still_alive_after(self, seconds: float) -> bool:
        """A dying kernel drops its sockets too: only a live one had a message refused."""
        deadline = time.perf_counter() + seconds
        while time.perf_counter() < deadline:
            if not await self.kernel.is_alive():
                return False
            await asyncio.sleep(POLL_S / 2)
        return await self.kernel.is_alive()

    def _disconnected(self) -> bool:
        monitor = self.kernel.monitor
        if monitor is None:
            return False
        try:
            return bool(monitor.poll(0))
        except zmq.ZMQError:
            return False

    def _handle(self, msg: dict[str, Any]) -> bool:
        kind, content = msg["msg_type"], msg["content"]
        if kind == "stream":
            self.output.write(content["text"])
        elif kind in ("execute_result", "display_data"):
            text = content.get("data", {}).get("text/plain")
            if text:
                self.output.write(text + "\n")
        elif kind == "error":
            self.error = content
            self.output.write(strip_ansi("\n".join(content.get("traceback", []))) + "\n")
        elif kind == "status":
            return bool(content.get("execution_state") == "idle")
        return False
