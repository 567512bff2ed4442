"""The sandbox room's builtin plugin."""

from __future__ import annotations

from podium.plugins import SandboxSpec, hookimpl
from podium.sandbox import local


@hookimpl
def podium_sandboxes() -> list[SandboxSpec]:
    return [
        SandboxSpec(
            name="local",
            create=local.create,
            isolated=False,
            description="fresh Jupyter kernel per node, NO isolation (runs are not clean-track)",
        )
    ]
