"""Node details packed for an export: text repeated across nodes stored once.

A long run's export is mostly prompts, and a prompt is mostly text other nodes also hold: the
task description and data preview (in every prompt), the parent's code and output (the
parent's own fields), the memory of earlier nodes. So the long text fields are cut into chunks
at *content-defined* boundaries — after a line whose CRC is a multiple of ``EVERY`` (or when a
chunk grows too long) — and each distinct chunk is stored once. Boundaries that depend only on
the lines themselves make the same stretch of text cut the same way wherever it appears, at
any offset, as in rsync or restic.

The packed form (the page unpacks it, ``static/js/unpack.js``)::

    {"format": "podium-packed/1", "chunks": ["text", ...],
     "details": {"<id>": NodeDetail with each packed field as {"$c": [chunk index, ...]}}}

Only the fields ``_map_fields`` names are packed, by path, never by looking at values: a field
a model wrote (a tool call's arguments) could hold a ``{"$c": ...}`` of its own, and stays as
is.
"""

from __future__ import annotations

import zlib
from typing import Any

FORMAT = "podium-packed/1"
EVERY = 8  # a boundary after 1 line in 8 on average
MAX_LINES, MAX_CHARS = 64, 8192
MIN_PACKED = 256  # shorter text is stored as it is
DETAIL_FIELDS = ("plan", "code", "code_html", "output")


def pack(details: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """``details`` (NodeDetails by id) with their long text fields as chunk lists."""
    table = _Chunks()
    packed = {key: _pack_detail(detail, table) for key, detail in details.items()}
    return {"format": FORMAT, "chunks": table.texts, "details": packed}


def unpack(data: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The inverse of :func:`pack` (the page's ``unpack``, for tests and tools)."""
    chunks: list[str] = data["chunks"]

    def text(value: Any) -> Any:
        if isinstance(value, dict) and set(value) == {"$c"}:
            return "".join(chunks[i] for i in value["$c"])
        return value

    return {key: _map_fields(detail, text) for key, detail in data["details"].items()}


def chunks(text: str) -> list[str]:
    """``text`` cut at content-defined line boundaries; ``"".join(chunks(t)) == t``."""
    out: list[str] = []
    start = lines = size = 0
    for line in text.splitlines(keepends=True):
        lines, size = lines + 1, size + len(line)
        if zlib.crc32(line.encode("utf-8", "surrogatepass")) % EVERY == 0 or (
            lines >= MAX_LINES or size >= MAX_CHARS
        ):
            out.append(text[start : start + size])
            start, lines, size = start + size, 0, 0
    if start < len(text):
        out.append(text[start:])
    return out


class _Chunks:
    def __init__(self) -> None:
        self.texts: list[str] = []
        self._index: dict[str, int] = {}

    def ref(self, text: Any) -> Any:
        if not isinstance(text, str) or len(text) < MIN_PACKED:
            return text
        refs = []
        for chunk in chunks(text):
            if (i := self._index.get(chunk)) is None:
                i = self._index[chunk] = len(self.texts)
                self.texts.append(chunk)
            refs.append(i)
        return {"$c": refs}


def _pack_detail(detail: dict[str, Any], table: _Chunks) -> dict[str, Any]:
    return _map_fields(detail, table.ref)


def _map_fields(detail: dict[str, Any], fn: Any) -> dict[str, Any]:
    """``detail`` with ``fn`` applied to each field of ``DETAIL_FIELDS``, the traceback, every
    message's content and every answer's text, and an agentic node's notebook cells' source,
    output and traceback (a cell's output is also in the node's output, its code in the
    node's code, so these cost little once packed)."""
    out = {k: fn(v) if k in DETAIL_FIELDS else v for k, v in detail.items()}
    if isinstance(out.get("exec"), dict):
        out["exec"] = {**out["exec"], "traceback": fn(out["exec"].get("traceback"))}
    out["calls"] = [_map_call(call, fn) for call in detail.get("calls", [])]
    if isinstance(out.get("notebook"), dict):
        cells = [_map_cell(cell, fn) for cell in out["notebook"].get("cells", [])]
        out["notebook"] = {**out["notebook"], "cells": cells}
    return out


def _map_cell(cell: dict[str, Any], fn: Any) -> dict[str, Any]:
    out = {**cell, "source": fn(cell.get("source")), "output": fn(cell.get("output"))}
    if isinstance(cell.get("error"), dict):
        out["error"] = {**cell["error"], "traceback": fn(cell["error"].get("traceback"))}
    return out


def _map_call(call: dict[str, Any], fn: Any) -> dict[str, Any]:
    messages = [{**m, "content": fn(m.get("content"))} for m in call.get("messages", [])]
    response = call.get("response")
    if isinstance(response, dict):
        response = {**response, "text": fn(response.get("text"))}
    return {**call, "messages": messages, "response": response}
