"""Reading a kernel's messages on the host at a cost bounded by their bytes.

The relay caps a message's *bytes*; what those bytes become once jupyter_client reads them is
another matter. JSON's ``[[],[],...]`` makes a 56-byte list of every three bytes, and
``{}`` a 64-byte dict: a 30 MiB message under the 32 MiB cap grew Podium by 600 MiB, and
eight queued per channel by gigabytes. And the session runs ``extract_dates`` over the whole
header and parent header, a dateutil parse of every string that looks like a date (about
12 µs each): a 30 MiB parent header of dates held the event loop, and with it the watchdogs
and the node's deadline, for 10-17 s per message.

So the host's session (:class:`BoundedSession`) refuses, before anything is parsed:

* a header, parent header or metadata frame of more than ``MAX_HEADER_BYTES`` (a kernel's are
  a few hundred bytes: the parent header is a copy of Podium's own request's header), which
  bounds ``extract_dates`` to milliseconds;
* a JSON frame of more than ``MAX_JSON_VALUES`` values (strings, numbers, literals, arrays and
  objects: bounded first by counting four bytes at memory speed, then, where that bound is
  too high, counted by one C-speed scan that stops at the limit), which bounds what a frame
  can become to a few times its bytes. A kernel's own messages hold a few dozen: a stream's text
  is one string however long, a picture one base64 string.

A refusal raises ``ValueError``, which the execution reads as a protocol violation: the kernel
is killed and the node says why.
"""

from __future__ import annotations

import itertools
import json
import re
from typing import Any

import zmq
from jupyter_client.session import Session

MAX_HEADER_BYTES = 16 * 1024
MAX_JSON_VALUES = 200_000
_FRAMES_WITH_DATES = slice(1, 4)  # header, parent header, metadata (after the signature)
# One JSON value per match (``NaN`` and ``Infinity`` too: Python's json reads them), strings
# whole (a bracket or digit inside one is not a value), in a text whose escapes are gone (so a
# string is quotes around anything but a quote): a single repeat of one character class, which
# the regex engine runs without memory per character.
_VALUE = re.compile(rb'"[^"]*"|[\[{]|-?[0-9][0-9.eE+-]*|true|false|null|NaN|-?Infinity')
# A frame this short cannot hold more values: each takes a byte and a separator at least.
_SHORT_BYTES = 2 * MAX_JSON_VALUES


def bounded_loads(data: bytes | memoryview) -> Any:
    """``json.loads`` of a frame of at most ``MAX_JSON_VALUES`` values; ``ValueError`` past."""
    raw = bytes(data)
    if len(raw) <= _SHORT_BYTES or _at_most_values(raw) <= MAX_JSON_VALUES:
        return json.loads(raw)  # a kernel's messages: no scan needed
    plain = raw.replace(b"\\\\", b"").replace(b'\\"', b"")  # escaped backslashes, then quotes
    found = sum(1 for _ in itertools.islice(_VALUE.finditer(plain), MAX_JSON_VALUES + 1))
    if found > MAX_JSON_VALUES:
        raise ValueError(f"a frame of more than {MAX_JSON_VALUES:,} JSON values")
    return json.loads(raw)


def _at_most_values(raw: bytes) -> int:
    """More values than a JSON text can hold, counted at memory speed: each but the first
    follows an array's ``[`` or an object's ``{`` (its first element or key), a ``,`` (the
    next) or a ``:`` (a key's value). Those bytes inside strings count too: a bound, not a
    count (a text that passes it needs no scan)."""
    return 1 + sum(raw.count(byte) for byte in (b"[", b"{", b",", b":"))


class BoundedSession(Session):
    """A session whose reading of a message costs the host a bounded multiple of its bytes."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.unpack = bounded_loads

    def deserialize(
        self, msg_list: list[bytes] | list[zmq.Frame], content: bool = True, copy: bool = True
    ) -> Any:
        for frame in msg_list[_FRAMES_WITH_DATES]:
            size = len(frame)  # bytes, or a zmq.Frame's length
            if size > MAX_HEADER_BYTES:
                raise ValueError(f"a header frame of {size:,} bytes (at most {MAX_HEADER_BYTES:,})")
        return super().deserialize(msg_list, content=content, copy=copy)
