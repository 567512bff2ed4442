"""A relay between Podium's ZMQ sockets and one kernel's, which caps every message it passes.

libzmq offers no bound on a whole message: ``ZMQ_MAXMSGSIZE`` is per frame, and a multipart
message is buffered in full before the application sees any of it, so a kernel sending one
message of many large frames (on any channel) grows the host without limit. The relay makes that
impossible: the kernel binds its sockets in a directory of its own, Podium connects to the
relay's sockets of the same names elsewhere, and every byte from the kernel is read as ZMTP 3
frames before it is passed on. A message whose frames together pass ``max_message_bytes``, one of
more than ``MAX_FRAMES`` frames, or anything that is not plain ZMTP 3 as libzmq speaks it ends
both connections *before* the offending bytes reach the host; ``overflow`` then says why and the
caller kills the kernel. The host's libzmq drops the incomplete message with the connection.

ZMTP commands are held to what a kernel's libzmq sends: READY first (the NULL handshake), then
only PING and PONG (heartbeats), never flagged MORE (ZMTP forbids it), a few dozen bytes each.
Anything else is a protocol violation: the host's libzmq queued SUBSCRIBE commands flagged MORE
as one endless message (1 GiB sent grew the host by 1 GiB), and dropped other commands only
after the relay had parsed them. Every byte passed, commands and headers included, counts
toward the message it came in.

The relay's own work is bounded too: frames are sliced out of each read in bulk (Python work per
frame and per read, never per byte), and a kernel's connections share a ``FrameBudget`` of
``FRAMES_PER_S`` frames a second (``FRAME_BURST`` at once): a connection that has spent it is not
read until it is back. A flood of tiny frames (heartbeats the host's libzmq answers and drops, or
one-byte messages) so costs the event loop a bounded share, and at most ``FRAME_BURST`` frames'
work in one callback, instead of all of it.

Bytes from the host to the kernel pass unread. Everything flows with back-pressure (a relay
reads from one side only as fast as the other takes), so the relay itself holds at most a
transport's buffer and one read per connection.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import stat
import time
from collections.abc import Callable, Sequence
from pathlib import Path

GREETING_BYTES = 64  # ZMTP 3: signature (10), version (2), mechanism (20), as-server, filler
MAX_FRAMES = 4096  # a Jupyter message has about ten
MAX_COMMAND_BYTES = 64 * 1024  # READY: the socket type, the routing id (<= 255), a few more
# After READY only heartbeats: PING is its name (1 + 4 bytes), a TTL (2) and a context of at
# most 16 bytes; PONG echoes the context (libzmq sends PING with none, and truncates to 16).
HEARTBEAT_BYTES = {b"PING": (7, 23), b"PONG": (5, 21)}  # the body's least and most bytes
MAX_HEARTBEAT_BYTES = 23
FRAME_OVERHEAD = 64  # what the host spends per frame beyond its bytes (libzmq's msg_t)
# The relay's work for one kernel: frames a second (~7k Jupyter messages, more than the host
# reads; a PING flood's 0.6 us a frame makes it ~3% of a core) and at once (~5 ms; one whole
# message of MAX_FRAMES fits).
FRAMES_PER_S = 50_000
FRAME_BURST = 8192
RETRY_S = 0.01  # while the kernel has not bound its socket yet
MAX_LINKS = 64  # connections open at once through one relay
_MORE, _LONG, _COMMAND = 0x01, 0x02, 0x04


class Overflow(Exception):
    """The kernel sent something the host will not take; the message says what."""

    kind = "output limit"

    @property
    def reason(self) -> str:
        """Why the kernel is killed, as ``LiveKernel`` reports it: ``output limit: ...``."""
        return f"{self.kind}: {self}"


class ProtocolViolation(Overflow):
    """The kernel's bytes are not the ZMTP 3 that a kernel's libzmq speaks."""

    kind = "protocol violation"


class FrameBudget:
    """How many frames the relay of one kernel may still parse now: a token bucket.

    Each read costs a token and each frame header another; tokens come back at ``rate`` a
    second, up to ``burst``. All the kernel's connections draw on one budget, so whatever the
    kernel sends (and on however many channels), the relay parses at most ``rate`` frames a
    second and ``burst`` in one go for it; a connection that finds none left waits
    ``resume_s()`` (until half the burst is back) before it is read again.
    """

    def __init__(
        self,
        rate: float = FRAMES_PER_S,
        burst: int = FRAME_BURST,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.rate, self.burst, self._clock = rate, burst, clock
        self._tokens = float(burst)
        self._at = clock()

    def available(self) -> int:
        """The tokens there are now (refilled for the time since the last look)."""
        now = self._clock()
        self._tokens = min(float(self.burst), self._tokens + (now - self._at) * self.rate)
        self._at = now
        return int(self._tokens)

    def spend(self, tokens: int) -> None:
        self._tokens -= tokens

    def resume_s(self) -> float:
        """How long a connection that ran out waits: until half the burst is back."""
        return max(0.0, (self.burst / 2 - self._tokens) / self.rate)


class ZmtpMeter:
    """Follows the ZMTP 3 frames of one byte stream from the kernel, and refuses excess.

    ``feed`` reads a chunk as far as ``budget`` allows and says how many of its bytes may pass
    now (the rest must be fed again once the budget is back); it raises :class:`Overflow` on
    the chunk that would pass a bound or break the protocol. Until then every message seen (all
    its frames, their headers and any command among them) has stayed within the bound, and no
    complete command but READY, PING and PONG has been seen.
    """

    def __init__(self, max_message_bytes: int, budget: FrameBudget | None = None) -> None:
        self.max_message_bytes = max_message_bytes
        self.budget = budget if budget is not None else FrameBudget()
        self._greeting = bytearray()
        self._head = b""  # a frame header split between two reads
        self._body_left = 0  # bytes of the current frame's body still to come
        self._command: bytearray | None = None  # the body of a command, while it comes
        self._ready = False  # READY is in: the handshake is over
        self._message_bytes = 0
        self._frames = 0

    def feed(self, data: bytes) -> int:
        allowed = self.budget.available() - 1  # the read itself costs one
        if allowed < 0:
            return 0
        pos, end, frames = 0, len(data), 0
        try:
            while pos < end:
                if len(self._greeting) < GREETING_BYTES:
                    pos = self._read_greeting(data, pos)
                elif self._body_left:
                    pos = self._read_body(data, pos, self._body_left)
                elif self._head:  # a header split between reads is finished regardless
                    pos = self._read_frame(data, pos)
                    frames += 1
                elif frames < allowed:
                    pos, run = self._read_run(data, pos, allowed - frames)
                    frames += run
                    if pos < end and frames < allowed:  # what stopped the run: one by one
                        pos = self._read_frame(data, pos)
                        frames += 1
                else:
                    break
        finally:
            self.budget.spend(frames + 1)
        return pos

    def _read_run(self, data: bytes, pos: int, most: int) -> tuple[int, int]:
        """A run of whole short frames from ``pos`` (a flood's, and most of Jupyter's), read
        in one loop with no call per message frame; up to ``most`` of them: (where it
        stopped, how many). It stops before anything else, and before a frame that would
        break a bound: ``_read_frame`` reads (and refuses) those."""
        if not self._ready:
            return pos, 0
        end, run = len(data), 0
        message_bytes, frames = self._message_bytes, self._frames
        room = self.max_message_bytes - 2 - FRAME_OVERHEAD  # what a short frame may add
        while run < most and pos + 2 <= end:
            flags, size = data[pos], data[pos + 1]
            after = pos + 2 + size
            if after > end or frames >= MAX_FRAMES or message_bytes + size > room:
                break
            if flags <= _MORE:
                more = flags
            elif flags == _COMMAND and 0 < size <= MAX_HEARTBEAT_BYTES:  # a heartbeat, maybe
                self._check_command(data[pos + 2 : after])  # (within a message, part of it)
                more = frames
            else:
                break
            if more:
                message_bytes += size + 2 + FRAME_OVERHEAD
                frames += 1
            else:
                message_bytes = frames = 0
            pos = after
            run += 1
        self._message_bytes, self._frames = message_bytes, frames
        return pos, run

    def _read_greeting(self, data: bytes, pos: int) -> int:
        take = min(GREETING_BYTES - len(self._greeting), len(data) - pos)
        self._greeting += data[pos : pos + take]
        self._check_greeting()
        return pos + take

    def _check_greeting(self) -> None:
        g = self._greeting
        if g[0] != 0xFF or (len(g) > 9 and g[9] & 0x01 != 0x01):
            raise ProtocolViolation("the kernel does not speak ZMTP")
        if len(g) > 10 and g[10] < 3:
            raise ProtocolViolation(f"the kernel speaks ZMTP {g[10]}, not 3")
        if len(g) >= 32 and bytes(g[12:32]).rstrip(b"\x00") != b"NULL":
            raise ProtocolViolation(
                "the kernel asks for an encrypted or authenticated ZMTP connection"
            )

    def _read_frame(self, data: bytes, pos: int) -> int:
        """The frame at ``pos`` (or the rest of a header split between reads): its header
        checked and counted, its body read as far as ``data`` goes; where reading goes on."""
        held = len(self._head)
        buf, at = (self._head + data[pos : pos + 9], 0) if held else (data, pos)
        header = _header(buf, at)
        if header is None:  # the read ends within the header
            self._head = buf[at:]
            return len(data)
        self._head = b""
        flags, size, length = header
        start = pos + length - held
        command = self._frame(flags, size, length)
        if command and start + size <= len(data):  # whole in this read: no copy kept
            self._check_command(data[start : start + size])
            return start + size
        self._command = bytearray() if command else None
        return self._read_body(data, start, size)

    def _frame(self, flags: int, size: int, length: int) -> bool:
        """Check and count a frame by its header; whether it is a command."""
        if flags & _COMMAND:
            most = MAX_HEARTBEAT_BYTES if self._ready else MAX_COMMAND_BYTES
            if not 0 < size <= most:
                after = " after READY" if self._ready else ""
                raise ProtocolViolation(f"a ZMTP command of {size} bytes{after}")
            self._count(size + length, more=self._frames > 0)  # within a message, part of it
            return True
        if not self._ready:
            raise ProtocolViolation("a ZMTP message before the handshake's READY")
        self._count(size + length, more=bool(flags & _MORE))
        return False

    def _read_body(self, data: bytes, pos: int, size: int) -> int:
        """``size`` bytes of a body from ``pos`` on, as far as ``data`` goes; a command's is
        kept until whole (at most ``MAX_COMMAND_BYTES``), then checked."""
        take = min(size, len(data) - pos)
        self._body_left = size - take
        if self._command is not None:
            self._command += data[pos : pos + take]
            if not self._body_left:
                body, self._command = bytes(self._command), None
                self._check_command(body)
        return pos + take

    def _check_command(self, body: bytes) -> None:
        """A whole command: READY first, then PING or PONG of their sizes, nothing else."""
        if len(body) < 1 + body[0]:
            raise ProtocolViolation("a malformed ZMTP command")
        name = body[1 : 1 + body[0]]
        if not self._ready:
            if name != b"READY":
                raise ProtocolViolation(f"a ZMTP {_shown(name)} command in place of READY")
            self._ready = True
            return
        least, most = HEARTBEAT_BYTES.get(name, (1, 0))
        if not least <= len(body) <= most:
            what = f"{len(body)}-byte {name.decode()}" if most else _shown(name)
            raise ProtocolViolation(f"a ZMTP {what} command after READY")

    def _count(self, size: int, more: bool) -> None:
        self._frames += 1
        self._message_bytes += size + FRAME_OVERHEAD
        if self._message_bytes > self.max_message_bytes:
            raise Overflow(f"one message of more than {self.max_message_bytes} bytes")
        if self._frames > MAX_FRAMES:
            raise Overflow(f"one message of more than {MAX_FRAMES} frames")
        if not more:
            self._message_bytes = self._frames = 0


def _header(buf: bytes, i: int) -> tuple[int, int, int] | None:
    """The frame header at ``buf[i:]``: (flags, body size, header length); None if ``buf``
    ends within it. Reserved flag bits, and a command flagged MORE, are refused at the first
    byte."""
    flags = buf[i]
    if flags & ~(_MORE | _LONG | _COMMAND):
        raise ProtocolViolation(f"a malformed ZMTP frame (flags {flags:#04x})")
    if flags & _COMMAND and flags & _MORE:  # ZMTP forbids it; libzmq queued them endlessly
        raise ProtocolViolation("a ZMTP command flagged MORE")
    if flags & _LONG:
        if len(buf) - i < 9:
            return None
        return flags, int.from_bytes(buf[i + 1 : i + 9], "big"), 9
    if len(buf) - i < 2:
        return None
    return flags, buf[i + 1], 2


def _shown(name: bytes) -> str:
    """A command's name as a reason may show it: ZMTP names are letters; anything else in hex."""
    if name.isalnum() and len(name) <= 32:
        return name.decode("ascii")
    return f"0x{name[:16].hex()}" if name else "unnamed"


class Relay:
    """The relay for one kernel: ``names`` are its socket files (``k-1`` ...).

    The kernel's sockets are ``kernel_dir/NAME``; the relay listens on ``host_dir/NAME``. Each
    connection Podium makes is paired with one to the kernel's socket (made as soon as the
    kernel has bound it); bytes are passed on from the protocol callbacks, with no task per
    chunk, and a side whose peer cannot take more stops being read, as does a kernel's side
    once ``budget`` is spent (all its connections share it).
    """

    def __init__(
        self,
        host_dir: Path,
        kernel_dir: Path,
        names: Sequence[str],
        max_message_bytes: int,
        budget: FrameBudget | None = None,
    ) -> None:
        self.host_dir, self.kernel_dir, self.names = host_dir, kernel_dir, tuple(names)
        self.max_message_bytes = max_message_bytes
        self.budget = budget if budget is not None else FrameBudget()
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
    """One end of a relayed connection: what it receives is written to the other end.

    It is read only while nothing stops it (``stop_reading``): Podium's end until the kernel's
    is connected, either end while its peer cannot take more, the kernel's end while the
    budget is spent; bytes of a read the budget did not cover wait in ``_held`` meanwhile.
    """

    def __init__(self, link: _Link, meter: ZmtpMeter | None) -> None:
        self.link, self.meter = link, meter
        self.transport: asyncio.Transport | None = None
        self._stops: set[str] = set()  # why this end is not read now
        self._held = b""  # read, not yet metered: the budget ran out within the read
        self._wake: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        if self._stops:
            transport.pause_reading()
        self.link.made(self)

    def stop_reading(self, why: str) -> None:
        if not self._stops and self.transport is not None:
            self.transport.pause_reading()
        self._stops.add(why)

    def go_on_reading(self, why: str) -> None:
        self._stops.discard(why)
        if not self._stops and self.transport is not None and not self.transport.is_closing():
            self.transport.resume_reading()

    def data_received(self, data: bytes) -> None:
        if self._held:  # read past a pause (see _Link.made): after what waits, in order
            self._held += data
            return
        self._pass(data)

    def _pass(self, data: bytes) -> None:
        """Meter ``data`` and pass on what the meter allows now; hold the rest for later."""
        passed = len(data)
        if self.meter is not None:
            try:
                passed = self.meter.feed(data)
            except Overflow as exc:
                self.link.relay.refused(exc.reason)
                return
        if passed:
            self._forward(data if passed == len(data) else data[:passed])
        if passed < len(data) and self.meter is not None:
            self._held = data[passed:]
            self.stop_reading("budget")
            loop = asyncio.get_running_loop()
            self._wake = loop.call_later(self.meter.budget.resume_s(), self._resume)

    def _resume(self) -> None:
        self._wake = None
        held, self._held = self._held, b""
        self._pass(held)
        if not self._held and not self.link.closed:
            self.go_on_reading("budget")

    def _forward(self, data: bytes) -> None:
        peer = self.link.peer(self).transport
        if peer is None:  # Podium's first bytes, before the kernel's end exists (see made)
            self.link.early += data
        elif not peer.is_closing():
            peer.write(data)

    def connection_lost(self, exc: Exception | None) -> None:
        self.link.close()

    def pause_writing(self) -> None:  # the peer of this side must stop being read
        self.link.peer(self).stop_reading("peer full")

    def resume_writing(self) -> None:
        self.link.peer(self).go_on_reading("peer full")

    def cancel(self) -> None:
        """The link is closed: no held bytes will be passed on."""
        if self._wake is not None:
            self._wake.cancel()
            self._wake = None
        self._held = b""


class _Link:
    """A connection from Podium and its twin to the kernel; the kernel's bytes are metered."""

    def __init__(self, relay: Relay, name: str) -> None:
        self.relay, self.name = relay, name
        self.host = _Side(self, None)
        self.kernel = _Side(self, ZmtpMeter(relay.max_message_bytes, relay.budget))
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
            side.stop_reading("connecting")
            self._connecting = asyncio.ensure_future(self.relay.connect(self))
            return
        if self.early:
            side.transport.write(bytes(self.early))
            self.early.clear()
        self.host.go_on_reading("connecting")

    def close(self) -> None:
        """Cut both ends at once: no linger, so Podium never gets the tail of a message."""
        if self.closed:
            return
        self.closed = True
        for side in (self.host, self.kernel):
            side.cancel()
            if side.transport is not None:
                side.transport.abort()
        if self._connecting is not None:
            self._connecting.cancel()
        self.relay.forget(self)
