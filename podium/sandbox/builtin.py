"""The sandbox room's builtin plugin: four sandboxes that take the same keys (SandboxParams)."""

from __future__ import annotations

from podium.plugins import SandboxSpec, hookimpl
from podium.sandbox import bwrap, check, container, local
from podium.sandbox.options import SandboxParams


@hookimpl
def podium_sandboxes() -> list[SandboxSpec]:
    return [
        SandboxSpec(
            name="auto",
            create=check.create_auto,
            isolated=True,
            description="bwrap when it works on this machine, else local with a warning",
            params=SandboxParams,
        ),
        SandboxSpec(
            name="bwrap",
            create=bwrap.create,
            isolated=True,
            description="bubblewrap: no network, read-only system, cgroup/rlimit limits",
            params=SandboxParams,
        ),
        SandboxSpec(
            name="local",
            create=local.create,
            isolated=False,
            description="fresh Jupyter kernel per node, NO isolation (runs are not clean-track)",
            params=SandboxParams,
        ),
        SandboxSpec(
            name="container",
            create=container.create,
            isolated=False,
            description="inside MLE-bench's container, where bwrap cannot run: the container is "
            "the isolation boundary; limits without namespaces (runs are not clean-track)",
            params=SandboxParams,
        ),
    ]
