"""Sandboxes: run a solution in a fresh Jupyter kernel, isolated and limited where possible.

``bwrap`` (bubblewrap + cgroups + seccomp, as an unprivileged uid) is the real one; ``local``
isolates nothing; ``container`` is for inside MLE-bench's container, which is then the isolation
boundary (limits, no namespaces); ``auto`` picks bwrap when it works here. ``KernelSandbox`` is
the base for a sandbox of one's own: say how to launch a kernel for a slot and its ipc
directory, and get the warm pool, the relay capping every message, limits on output and time,
and the race-free hand-over of outputs for free.
"""

from podium.sandbox.base import Guard, KernelSandbox
from podium.sandbox.bwrap import BwrapSandbox, Protection, bwrap_problem
from podium.sandbox.check import CheckLine, create_auto, run_checks
from podium.sandbox.container import ContainerSandbox, container_evidence
from podium.sandbox.ipc import IpcDir
from podium.sandbox.kernel import KernelCommand, ipykernel_argv
from podium.sandbox.limits import ResourceLimits, format_bytes, parse_bytes
from podium.sandbox.local import LocalSandbox
from podium.sandbox.options import DEFAULT_PREIMPORTS, SandboxOptions
from podium.sandbox.output import ESCAPE_SEQUENCE, SGR, CappedOutput, strip_ansi
from podium.sandbox.workspace import Slot

__all__ = [
    "DEFAULT_PREIMPORTS",
    "ESCAPE_SEQUENCE",
    "SGR",
    "BwrapSandbox",
    "CappedOutput",
    "CheckLine",
    "ContainerSandbox",
    "Guard",
    "IpcDir",
    "KernelCommand",
    "KernelSandbox",
    "LocalSandbox",
    "Protection",
    "ResourceLimits",
    "SandboxOptions",
    "Slot",
    "bwrap_problem",
    "container_evidence",
    "create_auto",
    "format_bytes",
    "ipykernel_argv",
    "parse_bytes",
    "run_checks",
    "strip_ansi",
]
