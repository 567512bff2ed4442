"""One Jupyter kernel process, driven over ZMQ: start, execute with a deadline, kill.

Shared by every sandbox: a sandbox decides *how* the kernel process is launched (plain, or
wrapped in bubblewrap) by the argv, environment and pre-exec hook it passes; this module owns
the protocol side: start, execute, watch for the deadline, for kernel death and for limits,
interrupt, kill.

Host memory stays bounded whatever the kernel sends, on every channel: Podium's sockets never
talk to the kernel's directly but through a relay that refuses any message (all its frames
together) over ``max_message_bytes`` and then has the kernel killed (``relay.py``), and each of
Podium's sockets queues only ``HOST_QUEUE_MESSAGES`` messages before the relay stops reading.
Every kernel uses the ``ipc`` transport in a directory pair of its own (``ipc.py``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
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
from jupyter_client.provisioning.local_provisioner import LocalProvisioner

from podium.errors import SandboxError
from podium.exec_output import CappedOutput, capped, died_note, limit_note, timeout_note
from podium.failpoints import failpoint
from podium.processes import die_with_parent
from podium.records import ExecResult, ExecStatus
from podium.sandbox.ipc import IpcDir
from podium.sandbox.kernel_args import kernel_args
from podium.sandbox.messages import BoundedSession
from podium.sandbox.output import LiveOutput
from podium.sandbox.relay import Relay
from podium.untrusted import inert

POLL_S = 0.1  # how often a silent kernel is checked for death / deadline
BIND_POLL_S = 0.01  # how often a starting kernel's socket directory is looked at
WATCH_EVERY_S = 0.25  # how often a sandbox's watchdog (memory, disk) is consulted
HOST_QUEUE_MESSAGES = 8  # per Podium socket: host memory <= this x max_message_bytes
EXIT_WAIT_S = 10.0  # after SIGKILL, how long the launched process may take to be reaped
REPLY_WAIT_S = 5.0  # after idle, for the execute_reply (normally already there)
LIMIT_ERROR = "ResourceLimitExceeded"  # the error name of an execution a limit stopped
MAX_NAME_BYTES = 1024  # of an error's name (an exception class: a few dozen)

Watch = Callable[[], Awaitable[str | None]]  # returns why the kernel must die, or None
# Starts a kernel's process some other way than by exec (a kernel factory forks it): returns
# an object that behaves as ``subprocess.Popen`` does (pid, poll, wait, send_signal, kill).
Launcher = Callable[[], Awaitable[Any]]


class _OneSpec(KernelSpecManager):
    """A kernel-spec manager that knows exactly one kernel: the argv the sandbox chose."""

    def __init__(self, spec: KernelSpec) -> None:
        super().__init__()
        self._spec = spec

    def get_kernel_spec(self, kernel_name: str) -> KernelSpec:
        return self._spec


@dataclass(frozen=True)
class KernelCommand:
    """How to start the kernel process, whose argv reads the kernel's connection file
    (``IpcDir.kernel_connection_file``, see ``ipykernel_argv``).

    ``preexec`` runs in the child between fork and exec (joining cgroups, setting rlimits); it
    must not touch Python objects shared with the parent. ``pass_fds`` stay open in the child.
    With a ``launcher``, none of argv, env, cwd, preexec and pass_fds is used: it starts the
    process itself.
    """

    argv: Sequence[str]
    env: Mapping[str, str]
    cwd: Path
    interrupt_mode: str = "signal"
    preexec: Callable[[], None] | None = None
    pass_fds: tuple[int, ...] = ()
    startup_timeout_s: float = 60.0
    interrupt_grace_s: float = 3.0
    max_message_bytes: int = 32 * 1024**2
    launcher: Launcher | None = None


_QUIET = logging.getLogger("podium.sandbox.launched")
_QUIET.propagate = False
_QUIET.addHandler(logging.NullHandler())


class _LaunchedProvisioner(LocalProvisioner):
    """jupyter_client's local provisioner, but the process comes from a ``Launcher``."""

    launcher: Launcher | None = None

    async def launch_kernel(self, cmd: list[str], **kwargs: Any) -> Any:
        assert self.launcher is not None
        self.process = self.launched = await self.launcher()
        self.pid, self.pgid = self.process.pid, None  # signals go to the process itself
        return self.connection_info

    async def cleanup(self, restart: bool = False) -> None:
        close = getattr(getattr(self, "launched", None), "close", None)
        if close is not None:  # wait() forgets the process; its descriptors are closed here
            close()
        await super().cleanup(restart=restart)


def ipykernel_argv(python: str, connection_file: Path) -> list[str]:
    connection = str(connection_file)
    return [python, "-m", "ipykernel_launcher", "-f", connection, *kernel_args(connection)]


@dataclass
class LiveKernel:
    """A started kernel that has answered ``kernel_info``. Used for exactly one execution."""

    km: AsyncKernelManager
    client: Any
    command: KernelCommand
    ipc: IpcDir
    relay: Relay
    start_s: float
    before_shutdown: list[Awaitable[Any]] = field(default_factory=list)  # a thaw, say
    on_cleanup: list[Callable[[], None]] = field(default_factory=list)

    async def execute(
        self,
        code: str,
        timeout_s: float,
        max_output_bytes: int,
        watch: Watch | None = None,
        live: LiveOutput | None = None,
    ) -> ExecResult:
        """Run ``code`` once; ``live`` is told the output so far while it runs (its ``poll``,
        on every turn of the collecting loop: at least every ``POLL_S``)."""
        run = _Execution(self, CappedOutput(max_output_bytes), watch, live)
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

    @property
    def process(self) -> subprocess.Popen[bytes] | None:
        """The launched process (bwrap, for a bwrap kernel)."""
        return getattr(self.km.provisioner, "process", None)

    async def is_alive(self) -> bool:
        return bool(await self.km.is_alive())

    async def kill(self) -> None:
        """SIGKILL now (the kernel's process group; bwrap takes its namespace down with it)."""
        self.relay.close()
        with contextlib.suppress(Exception):
            self.client.stop_channels()
        with contextlib.suppress(Exception):
            await self.km.signal_kernel(signal.SIGKILL)

    async def wait_exited(self, within_s: float = EXIT_WAIT_S) -> bool:
        """Whether the launched process has exited (polled; it was sent SIGKILL)."""
        process = self.process
        deadline = time.monotonic() + within_s
        while process is not None and process.poll() is None:
            if time.monotonic() > deadline:
                return False
            await asyncio.sleep(0.005)
        return True

    async def cleanup(self) -> None:
        """Reap the process and remove its files (~0.1 s of polling, off the critical path)."""
        await self.relay.aclose()
        for pending in self.before_shutdown:  # what must be done before it can exit
            with contextlib.suppress(Exception):
                await pending
        # Not shutdown_kernel(now=True): it first queues an interrupt request for a kernel that
        # is already dead, and closing that socket then blocks the event loop for its 0.1 s linger.
        with contextlib.suppress(Exception):
            await self.km.finish_shutdown(pollinterval=0.01)
        with contextlib.suppress(Exception):
            await self.km.cleanup_resources()
        callbacks = [*self.on_cleanup, self.ipc.remove]
        for callback in callbacks:  # file-system work (rmtree, cgroup rmdir): off the loop
            with contextlib.suppress(Exception):
                await asyncio.to_thread(callback)


async def start_kernel(command: KernelCommand, ipc: IpcDir) -> LiveKernel:
    """Start the process and wait until it answers; raise SandboxError if it never does.

    ``ipc`` is the kernel's directory pair, its connection files written; the relay between
    its two sides runs from here until the kernel is killed.
    """
    started = time.perf_counter()
    km = _manager(command, ipc)
    relay = Relay(ipc.host, ipc.kernel, ipc.socket_names, command.max_message_bytes)
    await relay.start()
    try:
        await km.start_kernel(
            cwd=str(command.cwd),
            env=dict(command.env),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            preexec_fn=_preexec(command.preexec),
            pass_fds=command.pass_fds,
        )
        failpoint("kernel.launched")  # crash with a kernel's process just started
    except BaseException as exc:  # cancelled or failed: never leave a launched process behind
        await relay.aclose()
        with contextlib.suppress(Exception):
            if km.has_kernel:
                await km.shutdown_kernel(now=True)
        if isinstance(exc, Exception):
            raise SandboxError(f"kernel failed to start: {type(exc).__name__}: {exc}") from exc
        raise
    client = km.client()
    client.context.setsockopt(zmq.RCVHWM, HOST_QUEUE_MESSAGES)
    kernel = LiveKernel(km, client, command, ipc, relay, 0.0)
    try:
        await _bound(km, ipc, command.startup_timeout_s)
        relay.kernel_bound()
        client.start_channels()
        await _wait_ready(km, client, command.startup_timeout_s)
    except BaseException:
        await kernel.kill()
        await kernel.cleanup()
        raise
    kernel.start_s = time.perf_counter() - started
    return kernel


def _manager(command: KernelCommand, ipc: IpcDir) -> AsyncKernelManager:
    spec = KernelSpec(
        argv=list(command.argv),
        display_name="podium",
        language="python",
        interrupt_mode=command.interrupt_mode,
    )
    km = AsyncKernelManager(
        kernel_name="podium",
        kernel_spec_manager=_OneSpec(spec),
        transport="ipc",
        connection_file=str(ipc.host_connection_file),
        session=BoundedSession(),  # what a message becomes on the host, bounded by its bytes
    )
    if km.has_trait("transport_encryption"):  # the relay reads plain ZMTP (CURVE hides frames)
        km.transport_encryption = "disabled"
    km.load_connection_file()
    km.context.setsockopt(zmq.RCVHWM, HOST_QUEUE_MESSAGES)
    if command.launcher is not None:
        km.log = _QUIET  # a launcher's failure is reported (and recovered from) by its sandbox
        provisioner = _LaunchedProvisioner(kernel_id=km.kernel_id or "podium", parent=km,
                                           kernel_spec=spec)  # fmt: skip
        provisioner.launcher = command.launcher
        km.provisioner = provisioner
    return km


def _preexec(extra: Callable[[], None] | None) -> Callable[[], None]:
    """The launched process's pre-exec hook: it dies with Podium (the parent-death signal,
    re-checked: ``die_with_parent``), then ``extra``. Built here, in Podium, which is the pid
    it must check its parent against."""
    podium = os.getpid()

    def run() -> None:
        die_with_parent(podium)
        if extra is not None:
            extra()

    return run


async def _bound(km: AsyncKernelManager, ipc: IpcDir, timeout_s: float) -> None:
    """Wait until the kernel has bound its sockets, so that the relay connects at once (one
    look at a directory per poll, where connecting would be five failed attempts)."""
    deadline = time.perf_counter() + timeout_s
    names = set(ipc.socket_names)
    while not names <= {p.name for p in ipc.kernel.iterdir()}:
        if time.perf_counter() > deadline or not await km.is_alive():
            return  # _wait_ready says what went wrong
        await asyncio.sleep(BIND_POLL_S)


async def _wait_ready(km: AsyncKernelManager, client: Any, timeout_s: float) -> None:
    try:
        await client.wait_for_ready(timeout=timeout_s)
    except RuntimeError as exc:  # raised when the kernel died or never answered
        alive = await km.is_alive()
        why = "did not answer" if alive else "exited during start-up"
        said = getattr(getattr(km.provisioner, "process", None), "error", None)
        raise SandboxError(f"kernel {why}: {said or exc}") from None


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
    def __init__(
        self,
        kernel: LiveKernel,
        output: CappedOutput,
        watch: Watch | None,
        live: LiveOutput | None = None,
    ) -> None:
        self.kernel, self.output, self.watch, self.live = kernel, output, watch, live
        self.client = kernel.client
        self.error: KernelError | None = None
        self.limit_reason: str | None = None
        self._next_watch = 0.0

    async def execute(self, code: str, timeout_s: float) -> ExecResult:
        t0 = time.perf_counter()
        msg_id = self.client.execute(code, store_history=False, allow_stdin=False)
        failpoint("exec.running")  # crash while the solution runs
        outcome = await self._collect(msg_id, deadline=t0 + timeout_s)
        if outcome == "deadline":
            await self.kernel.km.interrupt_kernel()
            grace = self.kernel.command.interrupt_grace_s
            outcome = await self._collect(msg_id, deadline=time.perf_counter() + grace)
            outcome = "limit" if outcome == "limit" else f"timeout-{outcome}"
        elif outcome == "idle":
            outcome = await self._reply(msg_id, until=t0 + timeout_s)
        fields = await self._fields(outcome, timeout_s)
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
        return self.error.traceback if self.error else None

    async def _fields(
        self, outcome: str, timeout_s: float
    ) -> tuple[ExecStatus, str | None, str | None, str | None]:
        """(status, error name, error value, killed reason) for how the execution ended."""
        if outcome.startswith("timeout-"):
            killed = "timeout"
            if outcome != "timeout-idle":
                killed = "timeout (the kernel ignored the interrupt and was killed)"
            self.output.write(timeout_note(timeout_s))
            return ExecStatus.TIMEOUT, "TimeoutError", killed, killed
        if outcome == "limit":
            reason = self.limit_reason or "resource limit"
            self.output.write(limit_note(reason))
            return ExecStatus.DIED, LIMIT_ERROR, reason, reason
        if outcome == "died":
            why = await self.kernel.exit_description()
            self.output.write(died_note(why))
            return ExecStatus.DIED, "KernelDied", why, why
        if self.error:
            return ExecStatus.ERROR, self.error.name, self.error.value, None
        return ExecStatus.OK, None, None, None

    async def _collect(self, msg_id: str, deadline: float) -> str:
        """Read iopub until the kernel is idle: 'idle', 'deadline', 'died' or 'limit'.

        Each turn (a message, or ``POLL_S`` of silence) tells ``live`` the output so far when
        it is due, so output followed by silence is told within about a second too."""
        while True:
            if self.live is not None:
                self.live.poll(self.output)
            left = deadline - time.perf_counter()
            if left <= 0:
                return "deadline"
            if reason := await self._limit_hit():
                return await self._stop(reason)
            try:
                msg = await self.client.get_iopub_msg(timeout=min(POLL_S, left))
                if msg["parent_header"].get("msg_id") != msg_id:
                    continue
                if self._handle(msg):
                    return "idle"
            except Empty:
                if not await self.kernel.is_alive():
                    return "died"
            except Exception as exc:  # the kernel signs what it likes: anything unreadable ends it
                return await self._stop(_unreadable(exc))

    async def _reply(self, msg_id: str, until: float) -> str:
        """After idle, the execute_reply (the kernel sends it first, on shell): only once it is
        in has every channel's message of this execution passed the relay's cap. A kernel that
        never sends it costs at most ``REPLY_WAIT_S``."""
        until = min(until, time.perf_counter() + REPLY_WAIT_S)
        while (left := until - time.perf_counter()) > 0:
            if reason := await self._limit_hit():  # its processes may still run meanwhile
                return await self._stop(reason)
            try:
                msg = await self.client.get_shell_msg(timeout=min(POLL_S, left))
                if msg["parent_header"].get("msg_id") == msg_id:
                    break
            except Empty:
                continue
            except Exception as exc:
                return await self._stop(_unreadable(exc))
        if overflow := self.kernel.relay.overflow:
            return await self._stop(overflow)
        return "idle"

    async def _stop(self, reason: str) -> str:
        self.limit_reason = reason
        await self.kernel.kill()
        return "limit"

    async def _limit_hit(self) -> str | None:
        if overflow := self.kernel.relay.overflow:
            return overflow
        now = time.perf_counter()
        if self.watch is None or now < self._next_watch:
            return None
        self._next_watch = now + WATCH_EVERY_S
        return await self.watch()

    def _handle(self, msg: dict[str, Any]) -> bool:
        """Take one iopub message; whether the kernel went idle. A field of the wrong type
        raises ``ValueError`` (a protocol violation): text is taken only as text, never as
        the repr of what a kernel put there (4 characters a byte, uncapped)."""
        kind, content = msg["msg_type"], msg["content"]
        if kind == "stream":
            self.output.write(_string(content.get("text"), "a stream's text"))
        elif kind in ("execute_result", "display_data"):
            data = content.get("data", {})
            text = data.get("text/plain") if isinstance(data, dict) else None
            if text:
                self.output.write(_string(text, "a result's text/plain") + "\n")
        elif kind == "error":
            self.error = KernelError.read(content, self.output.head_cap + self.output.tail_cap)
            self.output.write(self.error.traceback + "\n")
        elif kind == "status":
            return bool(content.get("execution_state") == "idle")
        return False


@dataclass(frozen=True)
class KernelError:
    """A kernel's error message, read as text and capped as an output is (its traceback and
    value could be as large as a message, and go into the journal and every prompt)."""

    name: str
    value: str
    traceback: str

    @classmethod
    def read(cls, content: dict[str, Any], cap_bytes: int) -> KernelError:
        lines = content.get("traceback", [])
        if not isinstance(lines, list):
            raise ValueError("an error's traceback is not a list")
        traceback = "\n".join(_string(line, "a traceback's line") for line in lines)
        name, value = content.get("ename", ""), content.get("evalue", "")
        return cls(  # inert first: a lone surrogate is escaped, not lost to the cut's encoding
            name=capped(inert(_string(name, "an error's name")), MAX_NAME_BYTES)[0],
            value=capped(inert(_string(value, "an error's value")), cap_bytes)[0],
            traceback=capped(inert(traceback), cap_bytes)[0],
        )


def limit_result(reason: str, output: str, kernel_start_s: float) -> ExecResult:
    """The result of an execution that found its kernel already killed for ``reason`` (a limit
    passed while no cell ran): died as a cell killed for it dies, ``output`` said first."""
    return ExecResult(
        status=ExecStatus.DIED, output=output + limit_note(reason), error_name=LIMIT_ERROR,
        error_value=reason, killed_reason=reason, kernel_start_s=kernel_start_s,
    )  # fmt: skip


def _string(value: Any, what: str) -> str:
    """A field of a kernel's message that must be text (a hostile kernel may send any JSON
    there); ``ValueError`` when it is not."""
    if not isinstance(value, str):
        raise ValueError(f"{what} is {type(value).__name__}, not text")
    return value


def _unreadable(exc: Exception) -> str:
    why = " ".join(f"{type(exc).__name__}: {exc}".split())[:200]
    return f"protocol violation: an unreadable message ({why})"
