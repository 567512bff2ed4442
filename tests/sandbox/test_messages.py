"""The host's reading of a kernel's messages (``podium.sandbox.messages``): what a frame may
become is bounded by its bytes, and a frame within the bounds reads exactly as jupyter_client
would read it."""

from __future__ import annotations

import json
import random

import pytest
from jupyter_client.session import Session

from podium.sandbox.messages import (
    MAX_HEADER_BYTES,
    MAX_JSON_VALUES,
    BoundedSession,
    bounded_loads,
)

PIECES = ['"', "\\", "\\\\", '\\"', ",", ":", "[", "{", "]", "}", "1", "-2.5e3", "true", "é", "\n"]


def test_any_text_within_the_bound_reads_as_json_loads_reads_it() -> None:
    """Strings made of what a scan could trip on (quotes, backslashes, separators, brackets,
    digits) in a frame long enough to be scanned, read back equal."""
    rng = random.Random(3)
    for _ in range(20):
        texts = ["".join(rng.choice(PIECES) for _ in range(rng.randint(0, 30))) for _ in range(30)]
        frame = json.dumps({"text": texts, "pad": "," * (2 * MAX_JSON_VALUES)}).encode()
        assert bounded_loads(frame) == json.loads(frame)


@pytest.mark.parametrize(
    "frame",
    [
        b"[" + b"[]," * MAX_JSON_VALUES + b"[]]",
        b"[" + b"{}," * MAX_JSON_VALUES + b"{}]",
        b"[" + b"0," * MAX_JSON_VALUES + b"0]",
        json.dumps(['a\\"b,c'] * (MAX_JSON_VALUES + 1)).encode(),
    ],
    ids=["lists", "objects", "numbers", "escaped strings"],
)
def test_a_frame_of_too_many_values_is_refused_before_it_is_parsed(frame: bytes) -> None:
    with pytest.raises(ValueError, match=f"more than {MAX_JSON_VALUES:,} JSON values"):
        bounded_loads(frame)


def test_a_frame_at_the_bound_is_read() -> None:
    frame = json.dumps(["x"] * (MAX_JSON_VALUES - 1)).encode()
    assert len(bounded_loads(frame)) == MAX_JSON_VALUES - 1


def test_a_header_frame_over_the_bound_is_refused_and_a_kernels_own_message_is_read() -> None:
    """A signed message as a kernel sends it reads as jupyter_client reads it; the same with a
    parent header of dates over ``MAX_HEADER_BYTES`` is refused before any date is parsed."""
    kernel, host = Session(key=b"k"), BoundedSession(key=b"k")
    message = kernel.msg("stream", {"name": "stdout", "text": "hello\n"})
    _, frames = host.feed_identities(kernel.serialize(message))
    read = host.deserialize(frames)
    assert read["content"] == {"name": "stdout", "text": "hello\n"}
    dates = {"d": ["2020-01-01T00:00:00"] * (MAX_HEADER_BYTES // 20)}
    bomb = kernel.msg("stream", {"name": "stdout", "text": "x"})
    bomb["parent_header"] = dates
    _, frames = host.feed_identities(kernel.serialize(bomb))
    with pytest.raises(ValueError, match="a header frame of"):
        host.deserialize(frames)
