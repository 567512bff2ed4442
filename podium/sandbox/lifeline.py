"""A kernel's lifeline: a pipe whose write end only Podium holds, watched by the kernel, so
that a kernel in bubblewrap cannot outlive the Podium that started it, whenever Podium dies.

Why the parent-death signal alone does not do it. A cold kernel's chain is Podium → bwrap →
the sandbox's init (bwrap's clone, pid 1 of the kernel's pid namespace) → the kernel. The
first link is Podium's pre-exec hook (``podium.processes.die_with_parent``, re-checked); the
second is bwrap's own ``--die-with-parent``, which the init arms only once the sandbox is laid
out (~0.1 s after the clone, longer on a busy machine) and never re-checks. A Podium killed in
that window takes the outer bwrap with it, and the init, orphaned before it armed the signal,
goes on with its kernel (1 of 49 kills in a kill campaign).

The init exits as soon as it has no child left, so the kernel watching its lifeline closes the
gap: a thread started before anything else in the kernel's interpreter blocks reading the
pipe, which Podium never writes; the read returns (end of file) once every copy of the write
end is closed, and the kernel then SIGKILLs itself. Only Podium holds the write end (it is
close-on-exec, and every process Podium starts closes what it does not pass), and a process's
files are closed when its last thread exits, so a dead Podium's kernels end within moments of
it. In that window no solution code can have run: Podium sends code only to a kernel that has
answered, which an init still laying out the sandbox has not even started. A kernel Podium
gives up on while it starts (a start timeout, a cancelled pool) goes the same way when its
guard releases the lifeline (``cut``).
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from podium.sandbox.kernel_args import kernel_args

# Run by the solutions' interpreter (which need not have Podium installed): argv is the
# lifeline's descriptor, the module to run as ``-m`` would, and that module's arguments.
# ``-c`` puts '' (the working directory, the slot) first on sys.path; it is dropped, as
# ``-m ipykernel_launcher`` drops it, and IPython adds it back for the solution's imports.
WATCH = (
    "import os, signal, sys, threading\n"
    "fd = int(sys.argv.pop(1))\n"
    "def watch():\n"
    "    try:\n"
    "        os.read(fd, 1)\n"
    "    finally:\n"
    "        os.kill(os.getpid(), signal.SIGKILL)\n"
    "threading.Thread(target=watch, name='podium-lifeline', daemon=True).start()\n"
    "if sys.path and sys.path[0] in ('', os.getcwd()):\n"
    "    del sys.path[0]\n"
    "import runpy\n"
    "runpy.run_module(sys.argv.pop(1), run_name='__main__', alter_sys=True)\n"
)


class Lifeline:
    """One kernel's pipe. ``kernel_fd`` is passed to the launched process (same number) and
    closed here once it has started (``launched``); ``cut`` ends the kernel's life."""

    def __init__(self) -> None:
        self.kernel_fd, self._podium_fd = os.pipe()  # both close-on-exec
        self._open = [self.kernel_fd, self._podium_fd]

    def argv(self, python: str, connection_file: Path) -> list[str]:
        """The kernel's command: the IPython kernel on ``connection_file``, watching the pipe."""
        fd = str(self.kernel_fd)
        connection = str(connection_file)
        kernel = ["ipykernel_launcher", "-f", connection, *kernel_args(connection)]
        return [python, "-c", WATCH, fd, *kernel]

    def launched(self) -> None:
        """The launched process holds its own copy of the read end: Podium's is closed."""
        self._close(self.kernel_fd)

    def cut(self) -> None:
        """Close Podium's write end: the kernel, if it still runs, kills itself."""
        self._close(self.kernel_fd)
        self._close(self._podium_fd)

    def _close(self, fd: int) -> None:
        if fd in self._open:
            self._open.remove(fd)
            with contextlib.suppress(OSError):
                os.close(fd)
