"""What every kernel sandbox shares: slots, the warm pool, one kernel per execution, hand-over.

A concrete sandbox says only how to launch a kernel for a slot (``launch``) and may watch it
while it runs (the ``Guard`` it returns): the bwrap sandbox wraps the kernel in bubblewrap and a
cgroup; the local one runs it as a plain child process.

The hand-over is race-free by construction: the slot is touched only once the guard has seen
every process of the kernel dead (``Guard.reap``), and then only through ``Slot.hand_over``,
which copies the submission by descriptor into a file the host creates.
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import sys
import time
from abc import abstractmethod
from dataclasses import dataclass
from pathlib import Path

from podium.errors import SandboxError
from podium.interfaces import KernelSession, Limits, Sandbox, Workspace
from podium.records import EnvironmentInfo, ExecResult, ExecStatus
from podium.sandbox.environment import probe_environment
from podium.sandbox.ipc import IpcDir
from podium.sandbox.kernel import (
    WATCH_EVERY_S,
    KernelCommand,
    LiveKernel,
    Reaper,
    limit_result,
    start_kernel,
)
from podium.sandbox.options import DEFAULT_PREIMPORTS
from podium.sandbox.output import LiveOutput
from podium.sandbox.pool import KernelPool
from podium.sandbox.workspace import Slot

PREIMPORT_TIMEOUT_S = 120.0
COLD_SCRATCH = ".podium-slots"  # in the workspace, for a kernel started without the pool


class Guard:
    """Watches one kernel's resources; the default watches nothing."""

    def started(self, kernel: LiveKernel) -> None:
        """The kernel is up (its process can now be watched)."""

    async def reap(self, kernel: LiveKernel) -> str | None:
        """After ``kernel.kill()``: return once no process the kernel started can run any more
        (dead, or frozen until ``handed_over``), or why that could not be confirmed. The
        default waits for the launched process only."""
        if await kernel.wait_exited():
            return None
        return "the kernel's process did not exit after SIGKILL"

    def handed_over(self) -> None:
        """The workspace is handed over: frozen processes may now go on dying."""

    async def watch(self) -> str | None:
        """Why the running kernel must be killed now (a limit was passed), or None. Asked while
        a cell runs and, for a kernel kept across cells, between cells too."""
        return None

    async def pause(self) -> bool:
        """Between two cells: stop every process of the kernel where it stands, until
        ``resume``; True once none can run (the next ``watch`` then looks at everything, and
        nothing changes after it). The default cannot: False, and the kernel goes on running
        (and is watched) between cells."""
        return False

    def resume(self) -> None:
        """Before the next cell: let what ``pause`` stopped run again."""

    def finish(self, result: ExecResult) -> ExecResult:
        """Add what only the guard knows (peak memory, an OOM kill's reason)."""
        return result

    def release(self) -> None:
        """Free what the guard holds (its cgroup); called once the kernel is dead."""


@dataclass
class Prepared:
    kernel: LiveKernel
    slot: Slot
    guard: Guard


def _preimport_code(modules: tuple[str, ...]) -> str:
    """Import modules without binding any name in the solution's namespace."""
    return (
        "import importlib as _podium_il\n"
        f"for _podium_m in {list(modules)!r}:\n"
        "    try:\n        _podium_il.import_module(_podium_m)\n"
        "    except Exception:\n        pass\n"
        "del _podium_il, _podium_m\n"
    )


class KernelSandbox(Sandbox):
    """Fresh kernel per execution; from the warm pool once ``warm_up`` was called."""

    def __init__(
        self,
        python: str | None = None,
        preimports: tuple[str, ...] = DEFAULT_PREIMPORTS,
        warm_pool: bool = True,
    ) -> None:
        self.python = python or sys.executable
        self.preimports = preimports
        self.warm_pool = warm_pool
        self._environment: EnvironmentInfo | None = None
        self._pool: KernelPool[Prepared] | None = None
        self._pool_key: tuple[Path, Path] | None = None
        self._reaper = Reaper()

    @abstractmethod
    def launch(self, slot: Slot, ipc: IpcDir) -> tuple[KernelCommand, Guard]:
        """How to start a kernel working in ``slot`` that reads ``ipc``'s kernel connection
        file (and what watches it)."""

    def ipc_for(self, slot: Slot, cold: bool = False) -> IpcDir:
        """The ipc directory pair for a kernel about to be launched in ``slot`` (``cold``:
        started the plain way, whatever else the sandbox can do)."""
        return IpcDir.create()

    async def pool_starting(self, scratch: Path, input_dir: Path) -> None:
        """The warm pool for ``scratch`` and ``input_dir`` is about to fill (a sandbox may
        start something that serves it, a kernel factory say; it must not wait for it)."""

    async def before_launch(self) -> None:
        """Called before each kernel is launched (a sandbox may wait here for what launches
        it, a kernel factory that is starting, say)."""

    def retry_cold(self, error: SandboxError, command: KernelCommand) -> bool:
        """Whether a kernel that failed to start with ``error`` should be launched again (the
        sandbox has changed how it launches: its kernel factory failed, say)."""
        return False

    async def environment(self) -> EnvironmentInfo:
        if self._environment is None:
            self._environment = await probe_environment(self.python)
        return self._environment

    async def warm_up(self, scratch: Path, input_dir: Path, kernels: int) -> None:
        if not self.warm_pool or kernels < 1:
            return
        if self._pool is not None:
            await self._pool.aclose()
        await asyncio.to_thread(shutil.rmtree, scratch, True)  # slots a crashed run left behind
        scratch.mkdir(parents=True, exist_ok=True)
        self._pool_key = (scratch, input_dir)
        await self.pool_starting(scratch, input_dir)
        self._pool = KernelPool(
            lambda: self._prepare(scratch, input_dir, self.preimports), self._dispose, kernels
        )
        self._pool.fill()

    async def execute(self, code: str, workspace: Workspace, limits: Limits) -> ExecResult:
        asked = time.perf_counter()
        prepared = await self._acquire(workspace)
        kernel, guard = prepared.kernel, prepared.guard
        kernel.start_s = time.perf_counter() - asked  # what the node waited, pooled or not
        live = LiveOutput(workspace.on_output) if workspace.on_output is not None else None
        try:
            result = await kernel.execute(
                code, limits.timeout_s, limits.max_output_bytes, guard.watch, live
            )
            result = guard.finish(result)
        except BaseException:
            await self._end(prepared, None)
            raise
        if live is not None:  # the guard may have added to it (a memory limit's kill)
            live.final(result.output)
        refused = await self._end(prepared, workspace)
        return result.model_copy(update={"submission_refused": refused}) if refused else result

    async def open_session(self, workspace: Workspace, limits: Limits) -> KernelSession:
        asked = time.perf_counter()
        prepared = await self._acquire(workspace)
        prepared.kernel.start_s = time.perf_counter() - asked
        return _Session(self, prepared, workspace, limits)

    async def settle(self) -> None:
        """Wait until the pool is full and finished kernels are cleaned up (for measurements
        and tests: nothing of the sandbox's own is then still using the CPU)."""
        if self._pool is not None:
            await self._pool.ready()
        await self._reaper.drain()

    async def aclose(self) -> None:
        if self._pool is not None:
            await self._pool.aclose()
        await self._reaper.aclose()
        if self._pool_key is not None:
            _remove_empty(self._pool_key[0])

    # --- internals ------------------------------------------------------------------------

    async def _acquire(self, workspace: Workspace) -> Prepared:
        key = self._pool_key
        if self._pool is not None and key is not None and key[1] == workspace.input_dir:
            prepared = await self._pool.take()
            if await prepared.kernel.is_alive():
                return prepared
            await self._dispose(prepared)
        scratch = workspace.root / COLD_SCRATCH
        scratch.mkdir(parents=True, exist_ok=True)
        return await self._prepare(scratch, workspace.input_dir, ())

    async def _prepare(self, scratch: Path, input_dir: Path, imports: tuple[str, ...]) -> Prepared:
        slot = Slot.create(scratch, input_dir)
        try:
            prepared = await self._start(slot)
        except BaseException:
            slot.discard()
            raise
        if imports:
            try:
                await prepared.kernel.run_silently(_preimport_code(imports), PREIMPORT_TIMEOUT_S)
            except BaseException:
                await self._dispose(prepared)
                raise
        return prepared

    async def _start(self, slot: Slot, cold: bool = False) -> Prepared:
        """Launch and start a kernel in ``slot`` (once more if ``retry_cold`` says so: nothing
        of a solution's has run in the slot yet); on failure all but the slot is gone."""
        if not cold:
            await self.before_launch()
        ipc = self.ipc_for(slot, cold)
        try:
            command, guard = self.launch(slot, ipc)
        except BaseException:
            ipc.remove()
            raise
        try:
            kernel = await start_kernel(command, ipc)
        except BaseException as exc:
            guard.release()
            ipc.remove()
            if not cold and isinstance(exc, SandboxError) and self.retry_cold(exc, command):
                return await self._start(slot, cold=True)
            raise
        guard.started(kernel)
        return Prepared(kernel, slot, guard)

    async def _dispose(self, prepared: Prepared) -> None:
        """An unused kernel: nothing to hand over, so no need to wait for it to stop."""
        await prepared.kernel.kill()
        await prepared.kernel.cleanup()
        await asyncio.to_thread(self._release, prepared)

    async def _end(self, prepared: Prepared, workspace: Workspace | None) -> str | None:
        """Kill the kernel; once all its processes are dead, hand the outputs over to
        ``workspace`` (None: to nobody) and clean up the rest in the background. Returns why
        the submission was refused, if it was."""
        kernel = prepared.kernel
        await kernel.kill()
        not_dead = await prepared.guard.reap(kernel)
        refused: str | None = None
        try:
            if workspace is not None and not_dead is None:
                refused = await asyncio.to_thread(prepared.slot.hand_over, workspace)
            elif workspace is not None:
                refused = f"nothing was handed over: {not_dead}"
        except Exception as exc:  # whatever the tree holds, the node ends and the kernel dies
            refused = f"nothing was handed over: {type(exc).__name__}: {exc}"
        finally:
            # Thawed at once, in a worker thread: the write blocks ~10 ms, which neither the
            # event loop nor the node need wait for; but a Podium killed before it would leave
            # the kernel frozen, so it is not left for the clean-up task to start.
            thawing = asyncio.get_running_loop().run_in_executor(None, prepared.guard.handed_over)
            kernel.before_shutdown.append(thawing)
            kernel.on_cleanup.append(lambda: self._release(prepared))
            scratch = workspace.root / COLD_SCRATCH if workspace is not None else None
            if scratch is not None and prepared.slot.root.parent == scratch:
                kernel.on_cleanup.append(lambda: _remove_empty(scratch))
            self._reaper.clean_up(kernel)
        return refused

    @staticmethod
    def _release(prepared: Prepared) -> None:
        prepared.guard.release()
        prepared.slot.discard()


class _Session(KernelSession):
    """A kernel of a :class:`KernelSandbox` kept across cells; ended as ``execute`` ends one.

    Its limits hold for its whole life, not only while a cell runs: a thread or a process that
    a cell started goes on between cells, and a model's turn lasts seconds to minutes. So from
    the opening to the close, whenever no cell runs, the kernel is paused (``Guard.pause``: its
    cgroup frozen, so nothing of it runs, uses CPU or writes, and one look at what it left
    suffices) or, where it cannot be, watched by its guard as a running cell is. A limit
    passed between cells kills the kernel at once: the next cell does not run and its result
    says why, as ``stopped_between_cells`` does if no cell comes.

    Live output: while a cell runs, ``workspace.on_output`` is told the cell's output so far
    after what the earlier cells printed (``earlier``, capped as one output is), so a reader
    of the node's output file sees the session as it goes."""

    def __init__(
        self, sandbox: KernelSandbox, prepared: Prepared, workspace: Workspace, limits: Limits
    ) -> None:
        self.sandbox, self.prepared, self.workspace, self.limits = (
            sandbox, prepared, workspace, limits
        )  # fmt: skip
        self.earlier = ""
        self.running = True  # False once a cell stopped the kernel, or it was closed
        self.closed = False
        self.refused: str | None = None  # what close found, once closed
        self._stop: ExecResult | None = None  # the kernel killed between cells, and why
        self._stop_told = False  # a cell's result has said it
        self._between: asyncio.Task[None] | None = None
        self._rest()

    @property
    def stopped_between_cells(self) -> ExecResult | None:
        return self._stop

    async def run_cell(self, code: str, timeout_s: float) -> ExecResult:
        await self._wake()
        if self._stop is not None and not self._stop_told:
            self._stop_told = True
            return self._told(self._stop)
        if not self.running:
            raise SandboxError("the kernel of this session has stopped: no more cells run")
        kernel, guard = self.prepared.kernel, self.prepared.guard
        live = self._live()
        try:
            result = await kernel.execute(
                code, min(timeout_s, self.limits.timeout_s), self.limits.max_output_bytes,
                guard.watch, live,
            )  # fmt: skip
            result = guard.finish(result)
        except BaseException:
            self.running = False
            raise
        if result.status in (ExecStatus.TIMEOUT, ExecStatus.DIED):
            self.running = False  # interrupted or killed: what it holds can no longer be trusted
            await kernel.kill()  # no cell runs in it again; what it started stops now
        self._rest()
        return self._told(result, live)

    def _told(self, result: ExecResult, live: LiveOutput | None = None) -> ExecResult:
        """``result`` as the session's output so far has it (live output, ``earlier``)."""
        live = live or self._live()
        if live is not None:
            live.final(self.earlier + result.output)
        self.earlier = _joined(self.earlier, result.output, self.limits.max_output_bytes)
        return result

    @property
    def alive(self) -> bool:
        return self.running

    def _live(self) -> LiveOutput | None:
        listener = self.workspace.on_output
        if listener is None:
            return None
        earlier = self.earlier
        return LiveOutput(lambda text: listener(earlier + text))

    def _rest(self) -> None:
        """No cell runs from now until ``_wake``: pause or watch the kernel meanwhile."""
        self._between = asyncio.get_running_loop().create_task(self._between_cells())

    async def _between_cells(self) -> None:
        kernel, guard = self.prepared.kernel, self.prepared.guard
        paused = await guard.pause()
        if not self.running:
            return  # killed by its last cell: what is left is paused or dying until the close
        while (reason := kernel.relay.overflow or await guard.watch()) is None:
            if paused or not await kernel.is_alive():
                return  # nothing of it runs until resumed: nothing more can change
            await asyncio.sleep(WATCH_EVERY_S)
        self.running = False
        note = "(this cell did not run: the kernel was stopped between cells)\n"
        self._stop = guard.finish(limit_result(reason, note, kernel.start_s))
        await kernel.kill()
        await asyncio.to_thread(guard.resume)  # frozen, it would die only once thawed

    async def _wake(self) -> None:
        """A cell is about to run (or the session to close): stop pausing or watching."""
        between, self._between = self._between, None
        if between is not None:
            between.cancel()
            await asyncio.wait({between})
        try:
            if between is not None and not between.cancelled() and between.exception():
                self.running = False
                between.result()  # what went wrong there is this cell's to raise
            if self._stop is not None:
                await self.prepared.kernel.kill()  # again: the watch may have been cut short
        finally:  # off the loop: a thaw may block ~10 ms (see ``_end``)
            await asyncio.to_thread(self.prepared.guard.resume)  # a killed kernel dies now

    async def close(self) -> str | None:
        if not self.closed:
            self.running, self.closed = False, True
            try:
                await self._wake()
            finally:
                self.refused = await self.sandbox._end(self.prepared, self.workspace)
        return self.refused


def _joined(earlier: str, more: str, max_bytes: int) -> str:
    """The outputs of the cells so far, as one capped text (its tail kept: the newest)."""
    text = earlier + more
    if len(text.encode("utf-8", "replace")) <= max_bytes:
        return text
    return text[-max_bytes:]


def _remove_empty(path: Path) -> None:
    with contextlib.suppress(OSError):
        path.rmdir()
