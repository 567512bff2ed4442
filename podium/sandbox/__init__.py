"""Sandboxes: run a solution in a fresh Jupyter kernel inside its node workspace."""

from podium.sandbox.kernel import FreshKernels, KernelCommand, ipykernel_argv
from podium.sandbox.local import LocalSandbox
from podium.sandbox.output import CappedOutput

__all__ = [
    "CappedOutput",
    "FreshKernels",
    "KernelCommand",
    "LocalSandbox",
    "ipykernel_argv",
]
