"""The text conventions of a solution's recorded output (``ExecResult.output``), in one place.

The sandbox writes them (:class:`CappedOutput` cuts a long output, ``sandbox/kernel.py`` notes
why it stopped a kernel) and readers find them again (``podium.tracebacks`` drops a traceback's
copy before them, ``podium show --follow`` finds where a cut output's tail begins), so the
spelling lives here, below both.
"""

from __future__ import annotations

import re
from collections import deque

# Between the head and the tail kept of a longer output.
OMITTED = re.compile(r"\n\[\.\.\. (\d{1,18}) bytes of output omitted \.\.\.\]\n")
# What the kernel writes at the end of the output when it stopped the execution.
KERNEL_NOTE = re.compile(
    r"\n(?:TimeoutError: execution exceeded [^\n]* and was stopped"
    r"|ResourceLimitExceeded: [^\n]*; the kernel was killed|KernelDied: [^\n]* during execution)"
    r"\n\Z"
)


def omitted_line(omitted: int) -> str:
    """What stands for the ``omitted`` bytes between the head and the tail (``OMITTED``)."""
    return f"\n[... {omitted} bytes of output omitted ...]\n"


def timeout_note(timeout_s: float) -> str:
    return f"\nTimeoutError: execution exceeded {timeout_s:g} s and was stopped\n"


def limit_note(reason: str) -> str:
    return f"\nResourceLimitExceeded: {reason}; the kernel was killed\n"


def died_note(why: str) -> str:
    return f"\nKernelDied: {why} during execution\n"


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
        return f"{head_text}{omitted_line(omitted)}{tail_text}"


def capped(text: str, cap_bytes: int) -> tuple[str, bool]:
    """``text`` cut as :class:`CappedOutput` cuts an output, and whether it was."""
    out = CappedOutput(cap_bytes)
    out.write(text)
    return out.text(), out.truncated
