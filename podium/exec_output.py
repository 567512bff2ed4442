"""The text conventions of a solution's recorded output (``ExecResult.output``), in one place.

An analysis's results are one too: ``ABLATION <part>: <score>`` lines, which ablation scripts
print (the LLM ``ablate`` prompt asks for them, the baseline's scripts write them) and
:func:`ablation_results` reads (the baseline's ``refine``, the viewer's findings table).

The sandbox writes them (:class:`CappedOutput` cuts a long output, ``sandbox/kernel.py`` notes
why it stopped a kernel) and readers find them again (``podium.tracebacks`` drops a traceback's
copy before them, ``podium show --follow`` finds where a cut output's tail begins), so the
spelling lives here, below both.
"""

from __future__ import annotations

import math
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


# An ablation's result, one line per variant: "ABLATION <part>: <score>" (the part in at most
# 80 characters without a colon; the first line is by convention the unchanged solution).
ABLATION_LINE = re.compile(
    r"^[ \t]*ABLATION[ \t]+(?P<part>[^:\n]{1,80}?)[ \t]*:[ \t]*(?P<value>\S+)[ \t]*$",
    re.MULTILINE,
)
MAX_ABLATIONS = 50  # lines read from one output


def ablation_results(output: str) -> list[tuple[str, float]]:
    """The ``ABLATION <part>: <score>`` lines of an analysis's output, in order (the first
    ``MAX_ABLATIONS``; a line whose score is not a finite number is skipped)."""
    found: list[tuple[str, float]] = []
    for match in ABLATION_LINE.finditer(output):
        try:
            value = float(match["value"])
        except ValueError:
            continue
        if math.isfinite(value):
            found.append((" ".join(match["part"].split()), value))
        if len(found) == MAX_ABLATIONS:
            break
    return found
