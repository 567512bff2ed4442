"""The relay's ZMTP meter, on byte streams built by hand: what passes, and what ends a kernel.

That the relay caps real kernels on every channel is tested by attacking it
(``test_attacks.py``: floods on iopub, shell, stdin and control); these tests pin the framing
rules, including splits at every byte.
"""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path

import pytest

from podium.sandbox.relay import (
    FRAME_OVERHEAD,
    MAX_COMMAND_BYTES,
    MAX_FRAMES,
    Overflow,
    Relay,
    ZmtpMeter,
)

GREETING = b"\xff" + b"\0" * 8 + b"\x7f" + b"\x03\x01" + b"NULL".ljust(20, b"\0") + b"\0" * 32


def frame(body: bytes, more: bool = False, command: bool = False) -> bytes:
    flags = (0x01 if more else 0) | (0x04 if command else 0)
    if len(body) > 255:
        return bytes([flags | 0x02]) + len(body).to_bytes(8, "big") + body
    return bytes([flags, len(body)]) + body


def feed_bytewise(meter: ZmtpMeter, data: bytes) -> None:
    for i in range(len(data)):
        meter.feed(data[i : i + 1])


def test_a_conversation_within_the_cap_passes_whole_and_split_at_every_byte() -> None:
    stream = GREETING + frame(b"\x05READY", command=True)
    stream += frame(b"id", more=True) + frame(b"<IDS|MSG>", more=True) + frame(b"x" * 300)
    ZmtpMeter(10_000).feed(stream)
    feed_bytewise(ZmtpMeter(10_000), stream)


def test_a_message_is_counted_over_all_its_frames() -> None:
    meter = ZmtpMeter(3 * (1000 + 9 + FRAME_OVERHEAD))
    meter.feed(GREETING)
    for _ in range(3):  # exactly at the cap: passes
        meter.feed(frame(b"x" * 1000, more=True))
    with pytest.raises(Overflow, match="one message of more than"):
        meter.feed(frame(b"x" * 1000))


def test_the_count_starts_again_with_each_message() -> None:
    meter = ZmtpMeter(2 * (1000 + 9 + FRAME_OVERHEAD))
    meter.feed(GREETING)
    for _ in range(10):
        meter.feed(frame(b"x" * 1000, more=True) + frame(b"x" * 1000))


def test_an_oversized_frame_is_refused_at_its_header_before_its_body() -> None:
    meter = ZmtpMeter(1024)
    meter.feed(GREETING)
    header = bytes([0x02]) + (200 * 1024**2).to_bytes(8, "big")
    with pytest.raises(Overflow):
        meter.feed(header)  # no body byte needed: the host never gets any of it


def test_many_empty_frames_are_refused_too() -> None:
    meter = ZmtpMeter(1024**3)
    meter.feed(GREETING)
    with pytest.raises(Overflow, match=f"more than {MAX_FRAMES} frames"):
        meter.feed(frame(b"", more=True) * (MAX_FRAMES + 1))


def test_an_oversized_command_is_refused() -> None:
    meter = ZmtpMeter(1024**3)
    meter.feed(GREETING)
    with pytest.raises(Overflow, match="command"):
        meter.feed(frame(b"x" * (MAX_COMMAND_BYTES + 1), command=True))


@pytest.mark.parametrize(
    ("greeting", "why"),
    [
        (b"GET / HTTP/1.1\r\n" + b"\0" * 48, "does not speak ZMTP"),
        (GREETING[:10] + b"\x02" + GREETING[11:], "ZMTP 2, not 3"),
        (GREETING[:12] + b"CURVE".ljust(20, b"\0") + GREETING[32:], "encrypted"),
    ],
)
def test_anything_but_plain_zmtp_3_is_refused(greeting: bytes, why: str) -> None:
    with pytest.raises(Overflow, match=why):
        feed_bytewise(ZmtpMeter(1024), greeting)


def test_reserved_flag_bits_are_refused() -> None:
    meter = ZmtpMeter(1024)
    meter.feed(GREETING)
    with pytest.raises(Overflow, match="malformed"):
        meter.feed(b"\x80\x00")


async def _relay_pair(tmp_path: Path, cap: int) -> tuple[Relay, socket.socket, socket.socket]:
    """A started relay, Podium's end connected and a first message sent *before* the kernel's
    socket exists, then the kernel's end accepted: (relay, Podium's socket, the kernel's)."""
    (tmp_path / "host").mkdir()
    (tmp_path / "kernel").mkdir()
    relay = Relay(tmp_path / "host", tmp_path / "kernel", ["k-1"], cap)
    await relay.start()
    loop = asyncio.get_running_loop()
    podium_end = socket.socket(socket.AF_UNIX)
    podium_end.setblocking(False)
    await loop.sock_connect(podium_end, str(tmp_path / "host" / "k-1"))
    await loop.sock_sendall(podium_end, b"early bytes")
    # Time for the relay to take them with nowhere to send them yet (an asyncio that ignores
    # the pause of a new transport reads them now; one that honours it leaves them in the
    # socket): either way they must reach the kernel once it is there.
    await asyncio.sleep(0.05)
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(tmp_path / "kernel" / "k-1"))
    listener.listen()
    listener.setblocking(False)
    relay.kernel_bound()
    kernel_end, _ = await loop.sock_accept(listener)
    listener.close()
    return relay, podium_end, kernel_end


async def _read_exactly(sock: socket.socket, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = await asyncio.get_running_loop().sock_recv(sock, n - len(data))
        if not chunk:
            break
        data += chunk
    return data


def test_podiums_first_bytes_wait_for_the_kernel_and_then_both_ways_flow(tmp_path: Path) -> None:
    async def go() -> None:
        relay, podium_end, kernel_end = await _relay_pair(tmp_path, 1024**2)
        kernel_end.setblocking(False)
        assert await _read_exactly(kernel_end, len(b"early bytes")) == b"early bytes"
        reply = GREETING + frame(b"hello")
        await asyncio.get_running_loop().sock_sendall(kernel_end, reply)
        assert await _read_exactly(podium_end, len(reply)) == reply
        assert relay.overflow is None
        await relay.aclose()
        podium_end.close()
        kernel_end.close()

    asyncio.run(go())


def test_an_oversized_message_cuts_podiums_end_before_its_body(tmp_path: Path) -> None:
    async def go() -> None:
        relay, podium_end, kernel_end = await _relay_pair(tmp_path, 4096)
        kernel_end.setblocking(False)
        loop = asyncio.get_running_loop()
        await loop.sock_sendall(kernel_end, GREETING + frame(b"x" * 3000, more=True))
        await loop.sock_sendall(kernel_end, frame(b"y" * 3000))  # the message passes 4096
        got = b""
        while chunk := await loop.sock_recv(podium_end, 65536):
            got += chunk
        assert relay.overflow == "output limit: one message of more than 4096 bytes"
        assert b"y" not in got  # the cut came before the offending frame
        await relay.aclose()
        podium_end.close()
        kernel_end.close()

    asyncio.run(go())
