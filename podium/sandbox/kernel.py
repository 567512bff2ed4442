"""Runs one piece of code in a fresh Jupyter kernel and turns what happened into an ExecResult.

Shared by every sandbox: a sandbox decides *how* the kernel process is launched (plain, or
wrapped in bubblewrap) by the argv and environment it passes; this module owns the protocol
side: start, execute, watch for the deadline and for kernel death, interrupt, kill.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from queue import Empty
from typing import Any

from jupyter_client.kernelspec import KernelSpec, KernelSpecManager
from jupyter_client.manager import AsyncKernelManager

from podium.errors import SandboxError
from podium.failpoints import failpoint
from podium.records import ExecResult, ExecStatus
from podium.sandbox.output import CappedOutput, strip_ansi

POLL_S = 0.1  # how often a silent kernel is checked for death / deadline


class _OneSpec(KernelSpecManager):
    """A kernel-spec manager that knows exactly one kernel: the argv the sandbox chose."""

    def __init__(self, spec: KernelSpec) -> None:
        super().__init__()
        self._spec = spec

    def get_kernel_spec(self, kernel_name: str) -> KernelSpec:
        return self._spec


def _die_with_parent() -> None:  # runs in the child between fork and exec
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


@dataclass(frozen=True)
class KernelCommand:
    """How to start the kernel process: ``{connection_file}`` in argv is filled in by Jupyter."""

    argv: Sequence[str]
    env: Mapping[str, str]
    cwd: Path
    transport: str = "tcp"
    startup_timeout_s: float = 60.0
    interrupt_grace_s: float = 3.0


def ipykernel_argv(python: str) -> list[str]:
    return [python, "-m", "ipykernel_launcher", "-f", "{connection_file}"]


class FreshKernels:
    """Runs each piece of code in a kernel of its own, killed as soon as the code is done.

    The kill (SIGKILL to the kernel's process group) is immediate; reaping the process and
    removing its connection file (~0.1 s of polling in jupyter_client) happens in the
    background, off the node's critical path. ``aclose`` waits for that cleanup.
    """

    def __init__(self) -> None:
        self._cleanups: set[asyncio.Task[None]] = set()

    async def run(
        self, code: str, command: KernelCommand, timeout_s: float, max_output_bytes: int
    ) -> ExecResult:
        """Start a kernel, run ``code`` with a deadline, always kill the kernel afterwards."""
        started = time.perf_counter()
        km = await _start(command)
        client = km.client()
        try:
            client.start_channels()
            await _wait_ready(km, client, command.startup_timeout_s)
            kernel_start_s = time.perf_counter() - started
            run = _Execution(km, client, CappedOutput(max_output_bytes), command.interrupt_grace_s)
            result = await run.execute(code, timeout_s)
            return result.model_copy(update={"kernel_start_s": kernel_start_s})
        finally:
            client.stop_channels()
            with contextlib.suppress(Exception):
                await km.signal_kernel(signal.SIGKILL)
            task = asyncio.get_running_loop().create_task(_shutdown(km))
            self._cleanups.add(task)
            task.add_done_callback(self._cleanups.discard)

    async def aclose(self) -> None:
        if self._cleanups:
            await asyncio.gather(*self._cleanups, return_exceptions=True)


async def _start(command: KernelCommand) -> AsyncKernelManager:
    km = AsyncKernelManager(
        kernel_name="podium",
        kernel_spec_manager=_OneSpec(
            KernelSpec(argv=list(command.argv), display_name="podium", language="python")
        ),
        transport=command.transport,
    )
    try:
        await km.start_kernel(
            cwd=str(command.cwd),
            env=dict(command.env),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            preexec_fn=_die_with_parent,
        )
    except Exception as exc:
        raise SandboxError(f"kernel failed to start: {type(exc).__name__}: {exc}") from exc
    return km


async def _wait_ready(km: AsyncKernelManager, client: Any, timeout_s: float) -> None:
    try:
        await client.wait_for_ready(timeout=timeout_s)
    except RuntimeError as exc:  # raised when the kernel died or never answered
        alive = await km.is_alive()
        why = "did not answer" if alive else "exited during start-up"
        raise SandboxError(f"kernel {why}: {exc}") from None


async def _shutdown(km: AsyncKernelManager) -> None:
    try:
        await km.shutdown_kernel(now=True)
    except Exception:
        pass


class _Execution:
    def __init__(
        self, km: AsyncKernelManager, client: Any, output: CappedOutput, grace_s: float
    ) -> None:
        self.km, self.client, self.output, self.grace_s = km, client, output, grace_s
        self.error: dict[str, Any] | None = None

    async def execute(self, code: str, timeout_s: float) -> ExecResult:
        t0 = time.perf_counter()
        msg_id = self.client.execute(code, store_history=False, allow_stdin=False)
        failpoint("exec.running")  # crash while the solution runs
        outcome = await self._collect(msg_id, deadline=t0 + timeout_s)
        name: str | None
        value: str | None
        if outcome == "deadline":
            await self.km.interrupt_kernel()
            outcome = await self._collect(msg_id, deadline=time.perf_counter() + self.grace_s)
            killed = "timeout"
            if outcome != "idle":
                killed = "timeout (the kernel ignored the interrupt and was killed)"
            status, name, value = ExecStatus.TIMEOUT, "TimeoutError", killed
            self.output.write(
                f"\nTimeoutError: execution exceeded {timeout_s:g} s and was stopped\n"
            )
        elif outcome == "died":
            status, name, value, killed = (
                ExecStatus.DIED,
                "KernelDied",
                "kernel died",
                "kernel died",
            )
            self.output.write("\nKernelDied: the kernel process exited during execution\n")
        elif self.error:
            status, killed = ExecStatus.ERROR, None
            name, value = self.error.get("ename"), self.error.get("evalue")
        else:
            status, name, value, killed = ExecStatus.OK, None, None, None
        return ExecResult(
            status=status,
            output=self.output.text(),
            output_bytes=self.output.total_bytes,
            output_truncated=self.output.truncated,
            error_name=name,
            error_value=value,
            traceback=strip_ansi("\n".join(self.error.get("traceback", [])))
            if self.error
            else None,
            duration_s=time.perf_counter() - t0,
            timed_out=status is ExecStatus.TIMEOUT,
            killed_reason=killed,
        )

    async def _collect(self, msg_id: str, deadline: float) -> str:
        """Read iopub until the kernel is idle again: 'idle', 'deadline' or 'died'."""
        while True:
            left = deadline - time.perf_counter()
            if left <= 0:
                return "deadline"
            try:
                msg = await self.client.get_iopub_msg(timeout=min(POLL_S, left))
            except Empty:
                if not await self.km.is_alive():
                    return "died"
                continue
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            if self._handle(msg):
                return "idle"

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
