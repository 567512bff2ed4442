"""An export's node details packed (``podium.viewer.packing``): exact round trips, text shared
wherever it appears, and fields a model wrote left alone."""

from __future__ import annotations

import json
import random
from typing import Any

from podium.viewer import packing


def _detail(code: str, output: str, prompt: str, arguments: Any = None) -> dict[str, Any]:
    return {
        "id": 1, "plan": "short plan", "code": code, "code_html": code, "output": output,
        "exec": {"status": "error", "traceback": output[-300:]},
        "calls": [{
            "role": "code", "messages": [{"role": "user", "content": prompt}],
            "response": {"text": code, "tool_call": {"name": "f", "arguments": arguments}},
        }],
    }  # fmt: skip


def _text(rng: random.Random, lines: int) -> str:
    words = ["alpha", "beta", "gamma", "delta", "fit", "predict", "loss", "=", "(", ")", "0.5"]
    return "".join(" ".join(rng.choices(words, k=8)) + "\n" for _ in range(lines))


def test_chunks_join_back_to_the_text() -> None:
    rng = random.Random(0)
    odd = ["a\r\nb\rc\n", "\u2028odd\u2029separators\n", "\ud800 lone surrogate\n"]
    for text in ["", "one line, no newline", "\n\n\n", _text(rng, 500), "x" * 50_000, *odd]:
        assert "".join(packing.chunks(text)) == text


def test_the_same_text_is_cut_the_same_way_at_any_offset() -> None:
    """The task description inside two different prompts shares its chunks: boundaries come
    from the lines themselves, not from where the text starts."""
    rng = random.Random(1)
    description = _text(rng, 400)
    a = set(packing.chunks("intro A\n" + description + "end A\n"))
    b = set(packing.chunks("a longer, other intro\nwith two lines\n" + description + "B\n"))
    shared = sum(len(c) for c in a & b)
    assert shared > 0.9 * len(description)


def test_pack_then_unpack_is_exact_and_stores_repeats_once() -> None:
    rng = random.Random(2)
    description, parent_code, output = _text(rng, 300), _text(rng, 120), _text(rng, 400)
    child_code = parent_code.replace("alpha", "ALPHA", 1)
    details = {
        "1": _detail(parent_code, output, f"# Task\n{description}\n# Code\n{parent_code}"),
        "2": _detail(
            child_code,
            output + "more\n",
            f"# Task\n{description}\n# Parent\n{parent_code}\n{output}",
        ),
    }
    packed = packing.pack(details)
    assert packed["format"] == packing.FORMAT
    assert packing.unpack(packed) == details
    raw = len(json.dumps(details))
    assert len(json.dumps(packed)) < 0.45 * raw  # description, code and output stored once


def test_short_text_and_model_written_fields_stay_as_they_are() -> None:
    """A tool call's arguments are whatever the model sent, a look-alike of a packed field
    included: they are never packed or unpacked."""
    hostile = {"$c": [0, 1]}
    details = {"1": _detail("x = 1\n", "ok\n", "short", arguments=hostile)}
    packed = packing.pack(details)
    call = packed["details"]["1"]["calls"][0]
    assert call["messages"][0]["content"] == "short"
    assert call["response"]["tool_call"]["arguments"] == hostile
    assert packing.unpack(packed) == details
