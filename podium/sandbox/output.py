"""Keeps the head and tail of a solution's output under a byte cap.

A solution may print gigabytes; the agent and the journal need the start (what ran) and the end
(where it failed), not the middle. Memory stays bounded by the cap whatever arrives.
"""

from __future__ import annotations

from collections import deque

from podium.untrusted import ESCAPE_SEQUENCE, SGR, strip_ansi

__all__ = ["ESCAPE_SEQUENCE", "SGR", "CappedOutput", "strip_ansi"]


class CappedOutput:
    """Accumulates text; keeps the first ``cap // 4`` and the last ``cap - cap // 4`` bytes."""

    def __init__(self, cap_bytes: int) -> None:
        self.head_cap = max(cap_bytes // 4, 1)
        self.tail_cap = max(cap_bytes - self.head_cap, 1)
        self._head = bytearray()
        self._tail: deque[bytes] = deque()
        self._tail_len = 0
        self.total_bytes = 0

    def write(self, text: str) -> None:
        data = text.encode("utf-8", errors="replace")
        self.total_bytes += len(data)
        room = self.head_cap - len(self._head)
        if room > 0:
            self._head += data[:room]
            data = data[room:]
        if not data:
            return
        if len(data) >= self.tail_cap:
            self._tail.clear()
            data = data[-self.tail_cap :]
            self._tail_len = 0
        self._tail.append(data)
        self._tail_len += len(data)
        while self._tail_len - len(self._tail[0]) >= self.tail_cap:
            self._tail_len -= len(self._tail.popleft())

    @property
    def truncated(self) -> bool:
        return self.total_bytes > self.head_cap + self.tail_cap

    def text(self) -> str:
        tail = b"".join(self._tail)
        if len(self._head) + len(tail) > self.head_cap + self.tail_cap:
            tail = tail[len(self._head) + len(tail) - self.head_cap - self.tail_cap :]
        omitted = self.total_bytes - len(self._head) - len(tail)
        head_text = self._head.decode("utf-8", errors="replace")
        tail_text = tail.decode("utf-8", errors="replace")
        if omitted <= 0:
            return head_text + tail_text
        return f"{head_text}\n[... {omitted} bytes of output omitted ...]\n{tail_text}"
