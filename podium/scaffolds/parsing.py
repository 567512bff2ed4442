"""Pulls a plan and a Python program out of a model's free-form answer.

Models wrap code in fences (or forget to), add several blocks (a snippet, then the full
program; a shell command), leave a fence unclosed when they run out of tokens, or think aloud in
``<think>`` tags first. The rule: take the longest block tagged Python (or untagged) that
compiles, else the longest such block, else the answer itself if it is a program; the plan is
the prose around it.

Every step is linear in the answer, or bounded: an answer is text a model (or a replayed
record) wrote, and thousands of unclosed ``<think>`` tags, fences or paragraphs must cost
milliseconds, not minutes.
"""

from __future__ import annotations

import ast
import itertools
import re
from dataclasses import dataclass

_THINK_TAG = re.compile(r"<(/?)think(?:ing)?>", re.IGNORECASE)
MAX_DROPPED_PARAGRAPHS = 12  # prose after unfenced code: a few paragraphs, each a compile
_FENCE_OPEN = re.compile(r"^[ ]{0,3}(?P<fence>`{3,}|~{3,})[ \t]*(?P<lang>[\w+.-]*)[^\n]*$", re.M)
_PY_LANGS = {"", "python", "py", "python3", "ipython", "ipython3", "py3"}
_CODE_START = re.compile(r"^(import |from \S+ import |def |class |# ?%%|[A-Za-z_]\w* = )", re.M)


@dataclass(frozen=True)
class Block:
    lang: str
    code: str
    start: int  # offsets of the whole fenced block in the text
    end: int


@dataclass(frozen=True)
class Parsed:
    plan: str
    code: str
    problem: str | None = None  # set when no usable code was found


def fenced_blocks(text: str) -> list[Block]:
    """Every fenced block in order; an unclosed last fence runs to the end of the text."""
    blocks: list[Block] = []
    pos = 0
    while (m := _FENCE_OPEN.search(text, pos)) is not None:
        fence = m.group("fence")
        close = re.compile(rf"^[ ]{{0,3}}{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$", re.M)
        body_start = m.end() + 1
        c = close.search(text, body_start)
        body_end, end = (c.start(), c.end()) if c else (len(text), len(text))
        code = text[body_start:body_end] if body_start <= body_end else ""
        blocks.append(Block(m.group("lang").lower(), code.rstrip() + "\n", m.start(), end))
        pos = end
    return blocks


def compiles(code: str) -> bool:
    try:
        ast.parse(code)
    except (SyntaxError, ValueError):
        return False
    return True


def drop_thinking(text: str) -> str:
    """``text`` without its ``<think>...</think>`` sections (or ``<thinking>``, any case), each
    from an opening tag to the next closing one; an opening tag never closed stays. One pass."""
    kept: list[str] = []
    start = 0  # where the text not yet kept begins
    opened: int | None = None  # where the section being skipped began
    for tag in _THINK_TAG.finditer(text):
        closing = tag.group(1) == "/"
        if opened is None and not closing:
            opened = tag.start()
        elif opened is not None and closing:
            kept.append(text[start:opened])
            start, opened = tag.end(), None
    kept.append(text[start:])
    return "".join(kept)


def extract(answer: str) -> Parsed:
    text = drop_thinking(answer).strip()
    candidates = [b for b in fenced_blocks(text) if b.lang in _PY_LANGS and b.code.strip()]
    if candidates:
        good = [b for b in candidates if compiles(b.code)] or candidates
        best = max(good, key=lambda b: len(b.code))
        before = _strip_blocks(text[: best.start]).strip()
        after = _strip_blocks(text[best.end :]).strip()
        return Parsed(plan=before or after, code=best.code)
    return _unfenced(text)


def _unfenced(text: str) -> Parsed:
    if text and compiles(text) and _CODE_START.search(text):
        return Parsed(plan="", code=text.rstrip() + "\n")
    for m in itertools.islice(_CODE_START.finditer(text), 5):  # bounded: compiling is costly
        code = _longest_compiling_prefix(text[m.start() :])
        if code:
            return Parsed(plan=text[: m.start()].strip(), code=code.rstrip() + "\n")
    return Parsed(plan=text, code="", problem="the model's answer contains no Python code")


def _longest_compiling_prefix(code: str) -> str | None:
    """The code minus as few trailing paragraphs as make it compile (prose after the code)."""
    paragraphs = re.split(r"\n[ \t]*\n", code)
    for end in range(len(paragraphs), max(len(paragraphs) - MAX_DROPPED_PARAGRAPHS, 0), -1):
        candidate = "\n\n".join(paragraphs[:end])
        if compiles(candidate):
            return candidate
    return None


def _strip_blocks(text: str) -> str:
    """``text`` without its fenced blocks (the gaps between them joined once)."""
    kept, start = [], 0
    for block in fenced_blocks(text):
        kept.append(text[start : block.start])
        start = block.end
    kept.append(text[start:])
    return "".join(kept)
