"""Relay throughput: how fast the relay passes a kernel's bytes to Podium, and at what cost to
the event loop, for three kinds of traffic.

```
.venv/bin/python perf/relay_throughput.py [--relay FILE] [--seconds 3] [--cases large ...]
    [--json F]
```

A real ``Relay`` on this process's event loop, between two unix sockets: a thread writes as the
kernel would (greeting, READY, then one kind of message, as fast as the relay takes it), another
reads as Podium would, and nothing but the relay runs on the loop. Cases:

* ``large``: messages of a 100-byte frame and a 1 MiB one (a dataframe, an image);
* ``jupyter``: messages of seven frames of 20-200 bytes (a Jupyter message's ids, delimiter,
  signature, header, parent, metadata, content);
* ``tiny``: one-byte messages, a flood (the relay's budget of frames is what bounds it).

``--unbudgeted`` lifts the budget of frames, to measure the parsing itself.

Figures: MB/s and frames/s that reached Podium; ``loop``, the share of the event loop's thread
the relay took (its CPU time over the wall time), and ``loop s/GB``, that CPU time per GB passed
(the figure least moved by other load on the machine). ``--relay`` measures another version of
``podium/sandbox/relay.py`` (e.g. the one before a change: ``git show HEAD~1:podium/sandbox/
relay.py > /tmp/relay_before.py``), on the same machine, in the same way.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import json
import socket
import sys
import tempfile
import threading
import time
from pathlib import Path
from types import ModuleType
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

GREETING = b"\xff" + b"\0" * 8 + b"\x7f" + b"\x03\x01" + b"NULL".ljust(20, b"\0") + b"\0" * 32
READY_BODY = b"\x05READY\x0bSocket-Type\x00\x00\x00\x06ROUTER"
READY = bytes([0x04, len(READY_BODY)]) + READY_BODY
CAP = 64 * 1024**2  # the message cap the relay runs with (sandbox.max_message_size)
BATCH = 4 * 1024**2  # bytes the kernel's thread writes at once


def frame(body: bytes, more: bool = False) -> bytes:
    if len(body) > 255:
        return bytes([0x02 | more]) + len(body).to_bytes(8, "big") + body
    return bytes([more, len(body)]) + body


def _message(case: str) -> tuple[bytes, int]:
    """One message of ``case``: its bytes and its frames."""
    if case == "large":
        return frame(b"h" * 100, more=True) + frame(b"x" * 1024**2), 2
    if case == "jupyter":
        sizes = [20, 9, 64, 180, 180, 2, 120]
        parts = [frame(b"j" * n, more=i < len(sizes) - 1) for i, n in enumerate(sizes)]
        return b"".join(parts), len(sizes)
    return frame(b"t"), 1


def load_relay(path: Path | None) -> ModuleType:
    """``podium.sandbox.relay``, or the version of it in ``path``."""
    if path is None:
        from podium.sandbox import relay

        return relay
    spec = importlib.util.spec_from_file_location("relay_measured", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _write(sock: socket.socket, message: bytes, stop: threading.Event) -> None:
    batch = message * max(1, BATCH // len(message))
    try:
        sock.sendall(GREETING + READY)
        while not stop.is_set():
            sock.sendall(batch)
    except OSError:
        pass


def _read(sock: socket.socket, seconds: float, got: list[float]) -> None:
    """Podium's end: past the greeting and READY, count bytes for ``seconds``: got = [bytes,
    seconds]."""
    buf = bytearray(1024**2)
    skip = len(GREETING + READY)
    while skip > 0:
        n = sock.recv_into(buf, skip)
        if not n:
            return
        skip -= n
    start = time.perf_counter()
    while (elapsed := time.perf_counter() - start) < seconds:
        n = sock.recv_into(buf)
        if not n:
            break
        got[0] += n
    got[1] = elapsed


async def measure(
    relay_module: ModuleType, case: str, seconds: float, unbudgeted: bool = False
) -> dict[str, Any]:
    loop = asyncio.get_running_loop()
    with tempfile.TemporaryDirectory(prefix="relay-perf-") as tmp:
        host, kernel = Path(tmp, "host"), Path(tmp, "kernel")
        host.mkdir()
        kernel.mkdir()
        budget = [relay_module.FrameBudget(rate=1e12, burst=10**9)] if unbudgeted else []
        relay = relay_module.Relay(host, kernel, ["k-1"], CAP, *budget)
        await relay.start()
        listener = socket.socket(socket.AF_UNIX)
        listener.bind(str(kernel / "k-1"))
        listener.listen()
        listener.setblocking(False)
        relay.kernel_bound()
        podium_end = socket.socket(socket.AF_UNIX)
        podium_end.setblocking(False)
        await loop.sock_connect(podium_end, str(host / "k-1"))
        kernel_end, _ = await loop.sock_accept(listener)
        listener.close()
        podium_end.setblocking(True)
        kernel_end.setblocking(True)
        message, frames = _message(case)
        stop, got = threading.Event(), [0.0, 0.0]
        writer = threading.Thread(target=_write, args=(kernel_end, message, stop))
        reader = threading.Thread(target=_read, args=(podium_end, seconds, got))
        cpu, wall = time.thread_time(), time.perf_counter()
        writer.start()
        reader.start()
        await asyncio.to_thread(reader.join)
        cpu, wall = time.thread_time() - cpu, time.perf_counter() - wall
        stop.set()
        await relay.aclose()
        podium_end.close()
        kernel_end.close()
        await asyncio.to_thread(writer.join)
        assert relay.overflow is None, relay.overflow
    measured_s = got[1]
    return {
        "case": case,
        "MB/s": got[0] / measured_s / 1e6,
        "frames/s": got[0] / len(message) * frames / measured_s,
        "loop": cpu / wall,
        "loop s/GB": cpu / (got[0] * wall / measured_s / 1e9),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--relay", type=Path, help="another version of relay.py to measure")
    parser.add_argument("--seconds", type=float, default=3.0, help="per case")
    parser.add_argument("--cases", nargs="+", default=["large", "jupyter", "tiny"])
    parser.add_argument(
        "--unbudgeted",
        action="store_true",
        help="lift the budget of frames (a relay that has one): the parsing's own speed",
    )
    parser.add_argument("--json", type=Path, help="write the figures here too")
    args = parser.parse_args()
    module = load_relay(args.relay)
    rows = [
        asyncio.run(measure(module, case, args.seconds, args.unbudgeted)) for case in args.cases
    ]
    print(f"{'case':8} {'MB/s':>9} {'frames/s':>11} {'loop':>6} {'loop s/GB':>10}")
    for row in rows:
        print(
            f"{row['case']:8} {row['MB/s']:9.1f} {row['frames/s']:11.0f} {row['loop']:6.0%}"
            f" {row['loop s/GB']:10.2f}"
        )
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2) + "\n")


if __name__ == "__main__":
    main()
