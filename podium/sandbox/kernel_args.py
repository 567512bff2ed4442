"""How every kernel starts, cold or forked, in any sandbox: its arguments after the
connection file, and the start-up script each kernel's ipc directory holds.

A kernel's stdout and stderr are two ipykernel streams, each sent on its own timer and
stdout first when a cell ends, so ``print("error", file=sys.stderr); print("metric")`` came
out as ``metric`` then ``error`` on a quiet machine, and either way on a loaded one: the
output a node records (and the model reads, and a resume must reproduce) depended on timing.
:data:`ORDERED_STREAMS` makes each stream send what the other holds before it takes a write
of its own, so the output is in the order the solution wrote it, whatever the timing. It
costs one flush each time the solution switches streams.

The script is :data:`STARTUP_FILE` beside the kernel's connection file, run as the kernel
starts (``--IPKernelApp.exec_files``: executed as a file, not as a cell, so IPython's per-cell
wrapping of the streams' ``write`` does not undo it), by the solutions' interpreter (which
need not have Podium). It patches the streams' class and leaves no name in the namespace.
"""

from __future__ import annotations

from pathlib import Path

STARTUP_FILE = "start.py"
# The kernel's arguments after ``-f CONNECTION_FILE``: {dir} is the connection file's folder.
# The kernel factory (standalone, stdlib only) is handed the same templates.
ARG_TEMPLATES = ("--IPKernelApp.exec_files={dir}/" + STARTUP_FILE,)

ORDERED_STREAMS = """\
def _podium_ordered_streams(sys):
    streams = (sys.stdout, sys.stderr)
    stream_class = type(sys.stdout)
    write = stream_class.write
    last = [None]

    def ordered_write(self, *args, **kwargs):
        if last[0] is not self and self in streams:
            streams[self is streams[0]].flush()
            last[0] = self
        return write(self, *args, **kwargs)

    stream_class.write = ordered_write


_podium_ordered_streams(__import__("sys"))
del _podium_ordered_streams
"""


def kernel_args(connection_file: str) -> list[str]:
    """The arguments after ``-f connection_file`` (a path as the kernel sees it)."""
    folder = Path(connection_file).parent
    return [template.format(dir=folder) for template in ARG_TEMPLATES]
