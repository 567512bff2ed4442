"""The relay's ZMTP meter, on byte streams built by hand: what passes, and what ends a kernel.

That the relay caps real kernels on every channel is tested by attacking it
(``test_attacks.py``: floods on iopub, shell, stdin and control; ``test_attacks_relay.py``:
commands and floods of tiny frames); these tests pin the framing rules, including splits at
every byte, the commands a kernel may send, and the budget of frames.
"""

from __future__ import annotations

import asyncio
import random
import socket
import time
from pathlib import Path

import pytest

from podium.sandbox.relay import (
    FRAME_OVERHEAD,
    MAX_COMMAND_BYTES,
    MAX_FRAMES,
    FrameBudget,
    Overflow,
    ProtocolViolation,
    Relay,
    ZmtpMeter,
)

GREETING = b"\xff" + b"\0" * 8 + b"\x7f" + b"\x03\x01" + b"NULL".ljust(20, b"\0") + b"\0" * 32


def frame(body: bytes, more: bool = False, command: bool = False) -> bytes:
    flags = (0x01 if more else 0) | (0x04 if command else 0)
    if len(body) > 255:
        return bytes([flags | 0x02]) + len(body).to_bytes(8, "big") + body
    return bytes([flags, len(body)]) + body


def command(name: bytes, data: bytes = b"", more: bool = False) -> bytes:
    return frame(bytes([len(name)]) + name + data, more=more, command=True)


READY = command(b"READY", b"\x0bSocket-Type" + (6).to_bytes(4, "big") + b"DEALER")
HELLO = GREETING + READY  # what a kernel's libzmq sends first
PING = command(b"PING", b"\x00\x00")  # as libzmq sends it: a TTL, no context


def feed_bytewise(meter: ZmtpMeter, data: bytes) -> None:
    for i in range(len(data)):
        assert meter.feed(data[i : i + 1]) == 1


def hello(cap: int) -> ZmtpMeter:
    """A meter past the kernel's greeting and READY."""
    meter = ZmtpMeter(cap)
    meter.feed(HELLO)
    return meter


def test_a_conversation_within_the_cap_passes_whole_and_split_at_every_byte() -> None:
    stream = HELLO + frame(b"id", more=True) + PING + frame(b"<IDS|MSG>", more=True)
    stream += frame(b"x" * 300) + command(b"PONG", b"context") + frame(b"")
    ZmtpMeter(10_000).feed(stream)
    feed_bytewise(ZmtpMeter(10_000), stream)


def test_a_message_is_counted_over_all_its_frames() -> None:
    meter = ZmtpMeter(3 * (1000 + 9 + FRAME_OVERHEAD))
    meter.feed(HELLO)
    for _ in range(3):  # exactly at the cap: passes
        meter.feed(frame(b"x" * 1000, more=True))
    with pytest.raises(Overflow, match="one message of more than"):
        meter.feed(frame(b"x" * 1000))


def test_the_count_starts_again_with_each_message() -> None:
    meter = ZmtpMeter(2 * (1000 + 9 + FRAME_OVERHEAD))
    meter.feed(HELLO)
    for _ in range(10):
        meter.feed(frame(b"x" * 1000, more=True) + frame(b"x" * 1000))


def test_an_oversized_frame_is_refused_at_its_header_before_its_body() -> None:
    meter = ZmtpMeter(1024)
    meter.feed(HELLO)
    header = bytes([0x02]) + (200 * 1024**2).to_bytes(8, "big")
    with pytest.raises(Overflow):
        meter.feed(header)  # no body byte needed: the host never gets any of it


def test_many_empty_frames_are_refused_too() -> None:
    meter = ZmtpMeter(1024**3)
    meter.feed(HELLO)
    with pytest.raises(Overflow, match=f"more than {MAX_FRAMES} frames"):
        meter.feed(frame(b"", more=True) * (MAX_FRAMES + 1))


def test_an_oversized_command_is_refused_at_its_header() -> None:
    meter = ZmtpMeter(1024**3)
    meter.feed(GREETING)
    with pytest.raises(ProtocolViolation, match=f"command of {MAX_COMMAND_BYTES + 1} bytes"):
        meter.feed(frame(b"x" * (MAX_COMMAND_BYTES + 1), command=True)[:9])
    meter = hello(1024**3)  # after READY, a heartbeat's few bytes at most
    with pytest.raises(ProtocolViolation, match="command of 24 bytes after READY"):
        meter.feed(command(b"PING", b"\0\0" + b"c" * 17)[:2])


@pytest.mark.parametrize("name", [b"SUBSCRIBE", b"CANCEL", b"", b"PING"])
def test_a_command_flagged_more_is_refused_at_its_first_byte(name: bytes) -> None:
    # libzmq queued SUBSCRIBE commands flagged MORE as one endless message on the host.
    meter = hello(1024**3)
    with pytest.raises(ProtocolViolation) as refused:
        meter.feed(command(name, b"\0\0", more=True)[:1])
    assert refused.value.reason == "protocol violation: a ZMTP command flagged MORE"


@pytest.mark.parametrize(
    ("name", "shown"),
    [
        (b"SUBSCRIBE", "SUBSCRIBE"),
        (b"CANCEL", "CANCEL"),
        (b"READY", "READY"),
        (b"ERROR", "ERROR"),
        (b"JOIN", "JOIN"),
        (b"", "unnamed"),
        (b"\x1b]52;c;", "0x1b5d35323b633b"),  # never raw in a reason a terminal shows
    ],
)
@pytest.mark.parametrize("split", [False, True])
def test_after_ready_any_command_but_a_heartbeat_is_refused(
    name: bytes, shown: str, split: bool
) -> None:
    meter = hello(1024**3)
    feed_bytewise(meter, PING + command(b"PONG", b"c" * 16)) if split else meter.feed(PING)
    with pytest.raises(ProtocolViolation) as refused:
        stream = command(name, b"x")
        feed_bytewise(meter, stream) if split else meter.feed(stream)
    assert refused.value.reason == f"protocol violation: a ZMTP {shown} command after READY"


@pytest.mark.parametrize(
    ("heartbeat", "why"),
    [
        (command(b"PING", b"\0"), "6-byte PING"),  # no room for its TTL
        (command(b"PONG", b"c" * 17), "22-byte PONG"),  # a context of 16 bytes at most
        (frame(b"\x04PIN", command=True), "malformed ZMTP command"),  # shorter than its name
    ],
)
def test_a_heartbeat_of_the_wrong_size_is_refused(heartbeat: bytes, why: str) -> None:
    with pytest.raises(ProtocolViolation, match=why):
        hello(1024**3).feed(heartbeat)


@pytest.mark.parametrize(
    "first", [frame(b"hello"), PING, command(b"ERROR", b"\x03bye"), command(b"SUBSCRIBE")]
)
def test_the_handshake_is_ready_and_nothing_else(first: bytes) -> None:
    meter = ZmtpMeter(1024**3)
    meter.feed(GREETING)
    with pytest.raises(ProtocolViolation, match="READY"):
        meter.feed(first)


@pytest.mark.parametrize("split", [False, True])
def test_commands_count_toward_the_message_they_come_in(split: bool) -> None:
    message = frame(b"x" * 100, more=True) + PING + frame(b"x" * 100)
    cost = len(message) + 3 * FRAME_OVERHEAD  # every byte, headers and the PING included
    feed = feed_bytewise if split else ZmtpMeter.feed
    feed(hello(cost), message)  # exactly at the cap: passes
    with pytest.raises(Overflow, match="one message of more than"):
        feed(hello(cost - 1), message)


def _random_stream(rng: random.Random) -> bytes:
    """A kernel's stream of random frames (short and long headers, heartbeats, now and then a
    refused command): many cross the message cap, some break the rules."""
    stream = HELLO
    for _ in range(rng.randrange(1, 40)):
        size = rng.choice([0, 1, 7, rng.randrange(256), rng.randrange(256, 1200)])
        kind = rng.random()
        if kind < 0.15:
            stream += command(b"PING", b"\0\0" + b"c" * rng.randrange(17))
        elif kind < 0.17:
            stream += command(rng.choice([b"SUBSCRIBE", b"PONG", b""]), b"x" * rng.randrange(30))
        else:
            stream += frame(rng.randbytes(size), more=rng.random() < 0.6)
    return stream


def _outcome(stream: bytes, cap: int, cuts: list[int]) -> str:
    meter = ZmtpMeter(cap, FrameBudget(burst=10**9))  # a read a byte: more than the default
    try:
        for start, end in zip([0, *cuts], [*cuts, len(stream)], strict=True):
            assert meter.feed(stream[start:end]) == end - start
    except Overflow as exc:
        return exc.reason
    return "passed"


def test_reading_in_bulk_and_byte_by_byte_agree() -> None:
    # The run of whole short frames is read in one loop, everything else frame by frame: the
    # two must keep the same rules and the same counts, wherever a read ends.
    rng = random.Random(20)
    outcomes = set()
    for _ in range(300):
        stream, cap = _random_stream(rng), rng.randrange(300, 4000)
        cuts = sorted(rng.sample(range(1, len(stream)), min(len(stream) - 1, 5)))
        whole = _outcome(stream, cap, [])
        assert _outcome(stream, cap, cuts) == whole
        assert _outcome(stream, cap, list(range(1, len(stream)))) == whole
        outcomes.add(whole.split(":")[0])
    assert outcomes == {"passed", "output limit", "protocol violation"}


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_a_flood_of_tiny_frames_is_read_only_as_fast_as_the_budget_allows() -> None:
    clock = FakeClock()
    budget = FrameBudget(rate=1000, burst=100, clock=clock)
    meter = ZmtpMeter(1024**2, budget)
    flood = HELLO + frame(b"x") * 1000  # a thousand one-byte messages
    # A read costs one token, each frame one: READY and 98 messages, at most, in one go.
    passed = meter.feed(flood)
    assert passed == len(HELLO) + 98 * 3
    assert meter.feed(flood[passed:]) == 0
    assert budget.resume_s() == pytest.approx(0.05)  # until half the burst is back
    while passed < len(flood):
        clock.now += budget.resume_s()
        taken = meter.feed(flood[passed:])
        assert 0 < taken <= 49 * 3
        passed += taken
    assert clock.now >= (1000 + 1 - 100) / 1000  # no faster than the rate, over all of it


def test_a_read_costs_a_token_however_few_its_bytes() -> None:
    clock = FakeClock()
    meter = ZmtpMeter(1024**2, FrameBudget(rate=1000, burst=10, clock=clock))
    assert sum(meter.feed(byte) for byte in [b"\xff"] * 12) == 10


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
    meter.feed(HELLO)
    with pytest.raises(Overflow, match="malformed"):
        meter.feed(b"\x80\x00")


async def _relay_pair(
    tmp_path: Path, cap: int, budget: FrameBudget | None = None
) -> tuple[Relay, socket.socket, socket.socket]:
    """A started relay, Podium's end connected and a first message sent *before* the kernel's
    socket exists, then the kernel's end accepted: (relay, Podium's socket, the kernel's)."""
    (tmp_path / "host").mkdir()
    (tmp_path / "kernel").mkdir()
    relay = Relay(tmp_path / "host", tmp_path / "kernel", ["k-1"], cap, budget)
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
        reply = HELLO + frame(b"hello")
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
        await loop.sock_sendall(kernel_end, HELLO + frame(b"x" * 3000, more=True))
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


def test_a_command_flagged_more_cuts_podiums_end_before_the_command(tmp_path: Path) -> None:
    async def go() -> None:
        relay, podium_end, kernel_end = await _relay_pair(tmp_path, 1024**2)
        kernel_end.setblocking(False)
        loop = asyncio.get_running_loop()
        clean = HELLO + frame(b"hello")
        await loop.sock_sendall(kernel_end, clean)
        await loop.sock_sendall(kernel_end, command(b"SUBSCRIBE", b"x" * 1000, more=True))
        got = b""
        while chunk := await loop.sock_recv(podium_end, 65536):
            got += chunk
        assert relay.overflow == "protocol violation: a ZMTP command flagged MORE"
        assert clean.startswith(got)  # nothing of the command reached Podium
        await relay.aclose()
        podium_end.close()
        kernel_end.close()

    asyncio.run(go())


def test_a_spent_budget_pauses_the_kernels_end_and_every_byte_arrives(tmp_path: Path) -> None:
    # 5000 one-byte messages at 20000 frames a second, 500 at once: at least 0.22 s, in order.
    async def go() -> float:
        budget = FrameBudget(rate=20_000, burst=500)
        relay, podium_end, kernel_end = await _relay_pair(tmp_path, 1024**2, budget)
        kernel_end.setblocking(False)
        loop = asyncio.get_running_loop()
        assert await _read_exactly(kernel_end, len(b"early bytes")) == b"early bytes"
        flood = HELLO + b"".join(frame(bytes([i % 256])) for i in range(5000))
        start = time.perf_counter()
        sending = loop.create_task(loop.sock_sendall(kernel_end, flood))
        assert await _read_exactly(podium_end, len(flood)) == flood
        elapsed = time.perf_counter() - start
        await sending
        assert relay.overflow is None
        await relay.aclose()
        podium_end.close()
        kernel_end.close()
        return elapsed

    assert asyncio.run(go()) >= (5000 - 500) / 20_000
