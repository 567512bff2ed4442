"""A relay between Podium's ZMQ sockets and one kernel's, which caps every message it passes.

libzmq offers no bound on a whole message: ``ZMQ_MAXMSGSIZE`` is per frame, and a multipart
message is buffered in full before the application sees any of it, so a kernel sending one
message of many large frames (on any channel) grows the host without limit. The relay makes that
impossible: the kernel binds its sockets in a directory of its own, Podium connects to the
relay's sockets of the same names elsewhere, and every byte from the kernel is read as ZMTP 3
frames before it is passed on. A message whose frames together pass ``max_message_bytes``, one of
more than ``MAX_FRAMES`` frames, an oversized command, or anything that is not plain ZMTP 3 ends
both connections *before* the offending bytes reach the host; ``overflow`` then says why and the
caller kills the kernel. The host's libzmq drops the incomplete message with the connection.

Bytes from the host to the kernel pass unread. Everything flows with back-pressure (a relay
reads from one side only as fast as the other takes), so the relay itself holds at most a
buffer per connection.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
from collections.abc import Sequence
from pathlib import Path

GREETING_BYTES = 64  # ZMTP 3: signature (10), version (2), mechanism (20), as-server, filler
MAX_FRAMES = 4096  # a Jupyter message has about ten
MAX_COMMAND_BYTES = 64 * 1024  # READY, PING and ERROR commands are a few dozen bytes
FRAME_OVERHEAD = 64  # what the host spends per frame beyond its bytes (libzmq's msg_t)
READ_BYTES = 256 * 1024
RETRY_S = 0.01  # while the kernel has not bound its socket yet
_MORE, _LONG, _COMMAND = 0x01, 0x02, 0x04


class Overflow(Exception):
    """The kernel sent something the host will not take; the message says what."""


class ZmtpMeter:
    """Follows the ZMTP 3 frames of one byte stream from the kernel, and refuses excess.

    ``feed`` raises :class:`Overflow` on the chunk that would pass a bound; until then every
    message seen (all its frames and their headers together) has stayed within the bound.
    """

    def __init__(self, max_message_bytes: int) -> None:
        self.max_message_bytes = max_message_bytes
        self._greeting = bytearray()
        self._header = bytearray()
        self._body_left = 0
        self._message_bytes = 0
        self._frames = 0

    def feed(self, data: bytes) -> None:
        i, n = 0, len(data)
        while i < n:
            if len(self._greeting) < GREETING_BYTES:
                take = min(GREETING_BYTES - len(self._greeting), n - i)
                self._greeting += data[i : i + take]
                i += take
                self._check_greeting()
            elif self._body_left:
                take = min(self._body_left, n - i)
                self._body_left -= take
                i += take
            else:
                self._header.append(data[i])
                i += 1
                self._parse_header()

    def _check_greeting(self) -> None:
        g = self._greeting
        if g[0] != 0xFF or (len(g) > 9 and g[9] & 0x01 != 0x01):
            raise Overflow("the kernel does not speak ZMTP")
        if len(g) > 10 and g[10] < 3:
            raise Overflow(f"the kernel speaks ZMTP {g[10]}, not 3")
        if len(g) >= 32 and bytes(g[12:32]).rstrip(b"\x00") != b"NULL":
            raise Overflow("the kernel asks for an encrypted or authenticated ZMTP connection")

    def _parse_header(self) -> None:
        flags = self._header[0]
        if flags & ~(_MORE | _LONG | _COMMAND):
            raise Overflow(f"the kernel sent a malformed ZMTP frame (flags {flags:#04x})")
        need = 9 if flags & _LONG else 2
        if len(self._header) < need:
            return
        size = int.from_bytes(self._header[1:need], "big")
        self._header.clear()
        if flags & _COMMAND:
            if size > MAX_COMMAND_BYTES:
                raise Overflow(f"the kernel sent a ZMTP command of {size} bytes")
        else:
            self._count_frame(size + need, more=bool(flags & _MORE))
        self._body_left = size

    def _count_frame(self, size: int, more: bool) -> None:
        self._frames += 1
        self._message_bytes += size + FRAME_OVERHEAD
        if self._message_bytes > self.max_message_bytes:
            raise Overflow(f"one message of more than {self.max_message_bytes} bytes")
        if self._frames > MAX_FRAMES:
            raise Overflow(f"one message of more than {MAX_FRAMES} frames")
        if not more:
            self._message_bytes = self._frames = 0


class Relay:
    """The relay for one kernel: ``names`` are its socket files (``k-1`` ...).

    The kernel's sockets are ``kernel_dir/NAME``; the relay listens on ``host_dir/NAME``.
    """

    def __init__(
        self, host_dir: Path, kernel_dir: Path, names: Sequence[str], max_message_bytes: int
    ) -> None:
        self.host_dir, self.kernel_dir, self.names = host_dir, kernel_dir, tuple(names)
        self.max_message_bytes = max_message_bytes
        self.overflow: str | None = None
        self._servers: list[asyncio.Server] = []
        self._tasks: set[asyncio.Task[None]] = set()
        self._closed = False

    async def start(self) -> None:
        for name in self.names:
            server = await asyncio.start_unix_server(
                functools.partial(self._accepted, name), path=str(self.host_dir / name)
            )
            self._servers.append(server)

    async def aclose(self) -> None:
        self._closed = True
        for server in self._servers:
            server.close()
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
        for server in self._servers:
            with contextlib.suppress(Exception):
                await server.wait_closed()
        self._servers.clear()

    # --- internals ------------------------------------------------------------------------

    def _accepted(
        self, name: str, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        task = asyncio.ensure_future(self._serve(name, reader, writer))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _serve(
        self, name: str, host_r: asyncio.StreamReader, host_w: asyncio.StreamWriter
    ) -> None:
        kernel = await self._connect(name)
        if kernel is None:
            host_w.close()
            return
        kernel_r, kernel_w = kernel
        meter = ZmtpMeter(self.max_message_bytes)
        pumps = [
            asyncio.ensure_future(_pump(host_r, kernel_w, None)),
            asyncio.ensure_future(_pump(kernel_r, host_w, meter)),
        ]
        try:
            done, _ = await asyncio.wait(pumps, return_when=asyncio.FIRST_COMPLETED)
            for pump in done:
                if isinstance(pump.exception(), Overflow) and self.overflow is None:
                    self.overflow = str(pump.exception())
        finally:
            for pump in pumps:
                pump.cancel()
            await asyncio.gather(*pumps, return_exceptions=True)
            for writer in (host_w, kernel_w):
                with contextlib.suppress(Exception):
                    writer.transport.abort()  # no linger: the host must not get a partial tail
        if self.overflow is not None:  # nothing more is accepted (libzmq would reconnect)
            self._closed = True
            for server in self._servers:
                server.close()

    async def _connect(self, name: str) -> tuple[asyncio.StreamReader, asyncio.StreamWriter] | None:
        """Connect to the kernel's socket, waiting for the kernel to bind it."""
        while not self._closed and self.overflow is None:
            try:
                return await asyncio.open_unix_connection(str(self.kernel_dir / name))
            except (FileNotFoundError, ConnectionRefusedError):
                await asyncio.sleep(RETRY_S)
        return None


async def _pump(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, meter: ZmtpMeter | None
) -> None:
    """Copy until end of stream; ``meter`` sees each chunk before it is passed on."""
    while chunk := await reader.read(READ_BYTES):
        if meter is not None:
            meter.feed(chunk)
        writer.write(chunk)
        await writer.drain()
