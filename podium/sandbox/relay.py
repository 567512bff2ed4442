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
transport's buffer per connection.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import stat
from collections.abc import Sequence
from pathlib import Path

GREETING_BYTES = 64  # ZMTP 3: signature (10), version (2), mechanism (20), as-server, filler
MAX_FRAMES = 4096  # a Jupyter message has about ten
MAX_COMMAND_BYTES = 64 * 1024  # READY, PING and ERROR commands are a few dozen bytes
FRAME_OVERHEAD = 64  # what the host spends per frame beyond its bytes (libzmq's msg_t)
RETRY_S = 0.01  # while the kernel has not bound its socket yet
MAX_LINKS = 64  # connections open at once through one relay
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

    The kernel's sockets are ``kernel_dir/NAME``; the relay listens on ``host_dir/NAME``. Each
    connection Podium makes is paired with one to the kernel's socket (made as soon as the
    kernel has bound it); bytes are passed on from the protocol callbacks, with no task per
    chunk, and a side whose peer cannot take more stops being read.
    """

    def __init__(
        self, host_dir: Path, kernel_dir: Path, names: Sequence[str], max_message_bytes: int
    ) -> None:
        self.host_dir, self.kernel_dir, self.names = host_dir, kernel_dir, tuple(names)
        self.max_message_bytes = max_message_bytes
        self.overflow: str | None = None  # why it stopped relaying: a broken bound, in words
        self._servers: list[asyncio.Server] = []
        self._links: set[_Link] = set()
        self._closed = False
        self._kernel_fd: int | None = None
        self._bound = asyncio.Event()  # set once the kernel has bound its sockets

    async def start(self) -> None:
        loop = asyncio.get_running_loop()
        self._kernel_fd = os.open(self.kernel_dir, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
        for name in self.names:
            server = await loop.create_unix_server(
                functools.partial(self._accepted, name), path=str(self.host_dir / name)
            )
            self._servers.append(server)

    def kernel_bound(self) -> None:
        """The kernel's sockets exist: connect to them (until then Podium's wait, unpolled)."""
        self._bound.set()

    def close(self) -> None:
        """Stop relaying now: every connection is cut, nothing more is accepted."""
        self._closed = True
        self._bound.set()
        for server in self._servers:
            server.close()
        for link in list(self._links):
            link.close()

    async def aclose(self) -> None:
        self.close()
        for server in self._servers:
            with contextlib.suppress(Exception):
                await server.wait_closed()
        self._servers.clear()
        if self._kernel_fd is not None:
            os.close(self._kernel_fd)
            self._kernel_fd = None

    def refused(self, why: str) -> None:
        """A kernel's message broke a bound: remember why, and relay nothing more."""
        if self.overflow is None:
            self.overflow = why
        self.close()

    # --- internals ------------------------------------------------------------------------

    def _accepted(self, name: str) -> asyncio.Protocol:
        link = _Link(self, name)
        self._links.add(link)
        if len(self._links) > MAX_LINKS:  # Podium keeps one per channel, reconnects included
            self.refused(f"protocol violation: more than {MAX_LINKS} connections")
        return link.host

    async def connect(self, link: _Link) -> None:
        """Connect ``link`` to the kernel's socket, waiting for the kernel to bind it.

        The kernel's directory is the solution's to change, and connect() follows links: a
        socket swapped for a link would have the host (root, maybe) connect wherever it points,
        or back to the relay itself, over and over. So the name is opened without following
        a link, checked to be a socket, and connected through that descriptor.
        """
        loop = asyncio.get_running_loop()
        await self._bound.wait()
        while not (self._closed or link.closed):
            try:
                fd = os.open(link.name, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC,
                             dir_fd=self._kernel_fd)  # fmt: skip
            except FileNotFoundError:
                await asyncio.sleep(RETRY_S)
                continue
            try:
                if not stat.S_ISSOCK(os.fstat(fd).st_mode):
                    why = f"protocol violation: its socket {link.name} replaced by a non-socket"
                    self.refused(why)
                    return
                await loop.create_unix_connection(lambda: link.kernel, f"/proc/self/fd/{fd}")
                return
            except ConnectionRefusedError:
                await asyncio.sleep(RETRY_S)
            finally:
                os.close(fd)
        link.close()

    def forget(self, link: _Link) -> None:
        self._links.discard(link)


class _Side(asyncio.Protocol):
    """One end of a relayed connection: what it receives is written to the other end."""

    def __init__(self, link: _Link, meter: ZmtpMeter | None) -> None:
        self.link, self.meter = link, meter
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        self.link.made(self)

    def data_received(self, data: bytes) -> None:
        if self.meter is not None:
            try:
                self.meter.feed(data)
            except Overflow as exc:
                self.link.relay.refused(f"output limit: {exc}")
                return
        peer = self.link.peer(self).transport
        if peer is None:  # Podium's first bytes, before the kernel's end exists (see made)
            self.link.early += data
        elif not peer.is_closing():
            peer.write(data)

    def connection_lost(self, exc: Exception | None) -> None:
        self.link.close()

    def pause_writing(self) -> None:  # the peer of this side must stop being read
        if (peer := self.link.peer(self).transport) is not None:
            peer.pause_reading()

    def resume_writing(self) -> None:
        if (peer := self.link.peer(self).transport) is not None:
            peer.resume_reading()


class _Link:
    """A connection from Podium and its twin to the kernel; the kernel's bytes are metered."""

    def __init__(self, relay: Relay, name: str) -> None:
        self.relay, self.name = relay, name
        self.host = _Side(self, None)
        self.kernel = _Side(self, ZmtpMeter(relay.max_message_bytes))
        self.closed = False
        self.early = bytearray()  # from Podium, before the kernel's end was connected
        self._connecting: asyncio.Task[None] | None = None

    def peer(self, side: _Side) -> _Side:
        return self.kernel if side is self.host else self.host

    def made(self, side: _Side) -> None:
        """Podium's end: connect the kernel's. Until then Podium's bytes are held (reading is
        paused, and kept in ``early`` where an older asyncio reads anyway: Python 3.11.2's
        transports ignore a pause made in ``connection_made``)."""
        assert side.transport is not None
        if side is self.host:
            side.transport.pause_reading()
            self._connecting = asyncio.ensure_future(self.relay.connect(self))
            return
        if self.early:
            side.transport.write(bytes(self.early))
            self.early.clear()
        if self.host.transport is not None:
            self.host.transport.resume_reading()

    def close(self) -> None:
        """Cut both ends at once: no linger, so Podium never gets the tail of a message."""
        if self.closed:
            return
        self.closed = True
        for side in (self.host, self.kernel):
            if side.transport is not None:
                side.transport.abort()
        if self._connecting is not None:
            self._connecting.cancel()
        self.relay.forget(self)
