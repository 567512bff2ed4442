"""The text conventions of a solution's recorded output (``ExecResult.output``), in one place.

The sandbox writes them (``sandbox/output.py`` cuts a long output, ``sandbox/kernel.py`` notes
why it stopped a kernel) and readers find them again (``podium.tracebacks`` drops a traceback's
copy before them, ``podium show --follow`` finds where a cut output's tail begins), so the
spelling lives here, below both.
"""

from __future__ import annotations

import re

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
