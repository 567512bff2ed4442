"""Sandboxes: run a solution in a fresh Jupyter kernel inside its node workspace."""

from podium.sandbox.kernel import KernelCommand, ipykernel_argv, run_in_fresh_kernel
from podium.sandbox.local import LocalSandbox
from podium.sandbox.output import CappedOutput

__all__ = [
    "CappedOutput",
    "KernelCommand",
    "LocalSandbox",
    "ipykernel_argv",
    "run_in_fresh_kernel",
]
