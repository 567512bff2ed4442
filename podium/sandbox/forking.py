"""Which kernel factory serves a sandbox's pool now, and what happens when one fails.

A failure never costs a node: the kernel that could not be forked is started cold, the run's
log says why, and a replacement factory is started in the background (at most
``MAX_STARTS`` in a run: a factory that keeps failing is given up, and every kernel is cold).
Factories that were replaced stay until the sandbox closes: their forked kernels may still
be running, and need their ipc root.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path

from podium.errors import SandboxError
from podium.sandbox.factory import FactoryGone, FactorySpec, KernelFactory, new_spec
from podium.untrusted import remove_tree

log = logging.getLogger("podium")
MAX_STARTS = 4

Starter = Callable[[FactorySpec], Awaitable[KernelFactory]]


class Forking:
    def __init__(self, start: Starter, problem: str | None) -> None:
        self._start = start
        self.problem = problem  # why kernels are not forked, or None
        self.current: KernelFactory | None = None
        self._retired: list[KernelFactory] = []
        self._starts = 0
        self._starting: asyncio.Future[None] | None = None
        self._replacing: asyncio.Future[None] | None = None

    def serve(self, scratch: Path, input_dir: Path) -> None:
        """Start a factory for this pool's slots (the old one, for another pool, goes); kernels
        launched meanwhile wait for it (``settled``), the caller need not."""
        if self.problem is not None:
            return
        self._retire()
        self._starting = asyncio.ensure_future(self._launch(new_spec(scratch, input_dir)))

    async def settled(self) -> None:
        """Until no factory is starting (it is serving, or failed and is not)."""
        for task in (self._starting, self._replacing):
            if task is not None and not task.done():
                await asyncio.shield(task)

    def serving(self, slot_parent: Path, input_dir: Path) -> KernelFactory | None:
        """The factory that can fork a kernel for a slot in ``slot_parent``, if one can."""
        factory = self.current
        if factory is None:
            return None
        if not factory.alive():
            self.failed(factory, FactoryGone(factory.gone or "the kernel factory exited"))
            return None
        spec = factory.spec
        if slot_parent.resolve() != spec.scratch or input_dir.resolve() != spec.input_dir:
            return None
        return factory

    def failed(self, factory: KernelFactory, error: SandboxError) -> None:
        """A kernel could not be forked by ``factory``: it is replaced."""
        if factory is not self.current:
            return
        self._retire()
        if self._starts >= MAX_STARTS:
            self.problem = f"the kernel factory failed {self._starts} times ({error})"
            log.warning("kernel factory: %s; every kernel now starts cold", error)
            return
        log.warning("kernel factory: %s; this kernel starts cold, a new factory is started", error)
        self._replacing = asyncio.ensure_future(self._launch(factory.spec.renewed()))

    async def _launch(self, spec: FactorySpec) -> None:
        self._starts += 1
        try:
            self.current = await self._start(spec)
        except SandboxError as exc:
            remove_tree(spec.ipc_base)
            self.problem = str(exc)
            log.warning("kernel factory: %s; kernels start cold", exc)
        except BaseException:
            remove_tree(spec.ipc_base)
            raise

    def _retire(self) -> None:
        if self.current is not None:
            self._retired.append(self.current)
            self.current = None

    async def aclose(self) -> None:
        for task in (self._starting, self._replacing):
            if task is not None:
                task.cancel()
                with contextlib.suppress(BaseException):
                    await task
        self._retire()
        retired, self._retired = self._retired, []
        for factory in retired:
            await asyncio.to_thread(factory.close)
