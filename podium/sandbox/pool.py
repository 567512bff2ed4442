"""A warm pool: kernels started (and their heavy imports done) before a node asks for one.

Each kernel serves exactly one node and is then killed; taking one starts its replacement at
once, so the start-up cost overlaps the node's own run. The pool holds start-up *tasks*: taking
one that is still starting simply waits for it, which is never slower than a cold start.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class KernelPool(Generic[T]):
    def __init__(
        self,
        start: Callable[[], Awaitable[T]],
        stop: Callable[[T], Awaitable[None]],
        size: int,
    ) -> None:
        self._start, self._stop, self.size = start, stop, size
        self._ready: deque[asyncio.Task[T]] = deque()
        self._closed = False

    def fill(self) -> None:
        while not self._closed and len(self._ready) < self.size:
            self._ready.append(asyncio.ensure_future(self._start()))

    async def take(self) -> T:
        """The oldest pre-started item; a fresh one is started in its place."""
        if not self._ready:
            self.fill()
        task = self._ready.popleft()
        self.fill()
        return await task

    async def ready(self) -> None:
        """Wait until every pre-started item has finished starting (or failed to)."""
        await asyncio.gather(*self._ready, return_exceptions=True)

    async def aclose(self) -> None:
        """Stop every pre-started item; starts still in progress are cancelled.

        ``start`` must clean up after itself when cancelled (the sandbox kills a kernel it
        launched); finished items are handed to ``stop``.
        """
        self._closed = True
        tasks = list(self._ready)
        self._ready.clear()
        for task in tasks:
            if not task.done():
                task.cancel()
        for task in tasks:
            with contextlib.suppress(BaseException):
                await self._stop(await task)
