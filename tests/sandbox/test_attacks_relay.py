"""Attacks on the relay with raw ZMTP: a kernel writes its own frames on its own connection.

A kernel's code can find the connection its libzmq accepted from the relay (here: the control
channel's, silent during an execution) and write any bytes on it. Two attacks got through:

* ZMTP commands flagged MORE: the host's libzmq queued SUBSCRIBE commands as one endless
  message (1 GiB sent grew the host by 1 GiB, whatever ``max_message_size``), and dropped other
  commands only after the relay had parsed them a byte at a time;
* a flood of tiny command frames: the relay parsed them on the host's event loop as fast as the
  kernel sent them (the host's libzmq drops them, so nothing pushed back), and a 10 ms ticker on
  that loop got 76 ticks in 10 s.

Now a command flagged MORE, or any command but a heartbeat after READY, ends the kernel as a
protocol violation before the host gets it, and the frames the relay parses for a kernel are
bounded by a budget a second (``relay.FrameBudget``). Everything is judged on the host: its
memory, its event loop, the kernel's end.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import resource
import time
from collections.abc import AsyncIterator

import pytest

from podium.interfaces import Limits, Workspace
from podium.records import ExecResult, ExecStatus
from podium.sandbox.relay import FRAMES_PER_S
from tests.sandbox.test_attacks import (  # the `isolated` and `host` fixtures
    BACKSTOP_S,
    Host,
    forked_pool,
    host,  # noqa: F401
    isolated,  # noqa: F401
    make_sandbox,
    reset_peak_rss,
    run_all,
    with_limits,
)
from tests.sandbox.test_attacks import pytestmark as attack_marks

pytestmark = attack_marks

# The kernel's own end of its control connection (libzmq's, non-blocking), and ``send``, which
# writes raw bytes on it as fast as the relay takes them.
_RAW_CONTROL = """
import os, select, socket, time, zmq
k = get_ipython().kernel
path = k.control_stream.socket.getsockopt(zmq.LAST_ENDPOINT).decode().removeprefix('ipc://')
def accepted(fd):
    try:
        s = socket.socket(fileno=os.dup(fd))
    except OSError:
        return False
    try:
        s.getpeername()  # a listening socket has no peer
        return s.family == socket.AF_UNIX and s.getsockname() == path
    except OSError:
        return False
    finally:
        s.close()
fd = next(int(n) for n in sorted(os.listdir('/proc/self/fd'), key=int) if accepted(int(n)))
def send(data):
    view = memoryview(data)
    while view:
        select.select([], [fd], [])
        try:
            view = view[os.write(fd, view):]
        except BlockingIOError:
            pass
def command(name, body=b'', flags=0x04):
    data = bytes([len(name)]) + name + body
    if len(data) > 255:
        return bytes([flags | 0x02]) + len(data).to_bytes(8, 'big') + data
    return bytes([flags, len(data)]) + data
"""
MESSAGE_CAP = 1024**2
# Commands flagged MORE (0x05), ``total`` bytes of them; then the kernel waits to be killed.
_FLAGGED_MORE = (
    _RAW_CONTROL
    + """
one = {one}
batch = one * (4 * 1024**2 // len(one))
try:
    for _ in range({total} // len(batch)):
        send(batch)
    print('sent', flush=True)
except OSError as exc:
    print('cut', exc, flush=True)
time.sleep(60)
"""
)
FLAGGED_MORE = {
    # 256 MiB of 60 KiB SUBSCRIBE commands: the host's libzmq queued every one (and each was
    # under the old cap of 64 KiB a command, and under the message cap of 1 MiB).
    "subscribe": _FLAGGED_MORE.format(
        one="command(b'SUBSCRIBE', b't' * 60 * 1024, flags=0x05)", total=256 * 1024**2
    ),
    # 3-byte commands with no name: dropped by the host's libzmq, parsed a byte at a time.
    "unnamed": _FLAGGED_MORE.format(one="command(b'', flags=0x05)", total=16 * 1024**2),
}


@pytest.mark.parametrize("attack", sorted(FLAGGED_MORE))
def test_commands_flagged_more_end_the_kernel_before_the_host_queues_them(
    isolated: str,  # noqa: F811
    host: Host,  # noqa: F811
    attack: str,
) -> None:
    options = with_limits(max_message_bytes=MESSAGE_CAP)
    reset_peak_rss()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    result = run_all(isolated, host.ws, FLAGGED_MORE[attack], options=options)[0]
    grown = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) * 1024
    assert grown < 64 * 1024**2, f"the host grew by {grown / 1024**2:.0f} MiB"
    # The reason proves the attack ran: the relay read a command flagged MORE from the kernel.
    assert result.killed_reason == "protocol violation: a ZMTP command flagged MORE", (
        result.killed_reason,
        result.output,
    )
    assert result.status is ExecStatus.DIED, result.output


FLOOD_S = 4.0
FLOODS_AT_LEAST = int(FRAMES_PER_S * FLOOD_S / 4)  # a fraction of what the budget lets through
TICK_S = 0.01
# PING commands as libzmq sends them (a TTL, no context): the one command a kernel may send
# again and again, which the host's libzmq answers and drops, so nothing pushes back.
# Both it and the quiet control say 'start' when their FLOOD_S begin (the host measures from then).
FLOOD = (
    _RAW_CONTROL
    + f"""
batch = command(b'PING', bytes(2)) * 30_000
print('start', flush=True)
sent, end = 0, time.monotonic() + {FLOOD_S}
while time.monotonic() < end:
    send(batch)
    sent += 30_000
print('sent', sent, flush=True)
"""
)
QUIET = _RAW_CONTROL + f"print('start', flush=True)\ntime.sleep({FLOOD_S})\nprint('quiet')\n"


class Ticker:
    """A task that wakes every ``TICK_S`` on the event loop and notes when it did."""

    def __init__(self) -> None:
        self.times: list[float] = []

    async def _tick(self) -> None:
        while True:
            await asyncio.sleep(TICK_S)
            self.times.append(time.perf_counter())

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[Ticker]:
        task = asyncio.create_task(self._tick())
        try:
            yield self
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    def rate(self, start: float, end: float) -> float:
        """Ticks a second between ``start`` and ``end``."""
        return sum(start <= t < end for t in self.times) / (end - start)


def _told_start(ws: Workspace) -> tuple[Workspace, list[float]]:
    """``ws``, its live output listened to: when the kernel's 'start' reached the host."""
    seen: list[float] = []

    def listen(text: str) -> None:
        if not seen and "start" in text:
            seen.append(time.perf_counter())

    return dataclasses.replace(ws, on_output=listen), seen


def test_a_flood_of_heartbeats_leaves_the_hosts_event_loop_free(
    isolated: str,  # noqa: F811
    host: Host,  # noqa: F811
) -> None:
    # The same ticker through a quiet execution and through the flood, each from its 'start' to
    # its end: what the flood costs the loop is the ticks it loses, in seconds of ticking (the
    # quiet rate is the loop's on this machine now, loaded or not). Before, the relay took the
    # loop for nearly the whole flood (for as long as the kernel liked).
    async def go() -> tuple[list[ExecResult], list[tuple[float, float]], Ticker]:
        sandbox = make_sandbox(isolated)
        windows: list[tuple[float, float]] = []
        results: list[ExecResult] = []
        try:
            await forked_pool(sandbox, host.ws)
            async with Ticker().running() as ticker:
                for code in (QUIET, FLOOD):
                    ws, started = _told_start(host.ws)
                    results.append(await sandbox.execute(code, ws, Limits(BACKSTOP_S)))
                    assert started, results[-1].output
                    windows.append((started[0], time.perf_counter()))
        finally:
            await sandbox.aclose()
        return results, windows, ticker

    (quiet, flood), (quiet_window, flood_window), ticker = asyncio.run(go())
    assert quiet.status is ExecStatus.OK and "quiet" in quiet.output, quiet.output
    # Heartbeats are allowed: the kernel is not killed, it is only read at the budget's pace.
    assert flood.status is ExecStatus.OK, (flood.killed_reason, flood.output)
    sent = int(flood.output.split("sent ", 1)[1].split()[0])
    assert sent >= FLOODS_AT_LEAST, flood.output  # the attack really ran
    quiet_rate, flood_rate = ticker.rate(*quiet_window), ticker.rate(*flood_window)
    lost_s = (flood_window[1] - flood_window[0]) * (1 - flood_rate / quiet_rate)
    assert lost_s < FLOOD_S / 2, (
        f"the flood cost the event loop {lost_s:.1f} s of ticking in {FLOOD_S:.0f} s "
        f"({flood_rate:.0f} ticks/s against {quiet_rate:.0f} when quiet)"
    )
