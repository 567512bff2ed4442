"""The plugins room's builtin plugin: the model backends that ship with Podium."""

from __future__ import annotations

from podium.plugins import scripted
from podium.plugins.markers import hookimpl
from podium.plugins.specs import BackendSpec


@hookimpl
def podium_backends() -> list[BackendSpec]:
    return [
        BackendSpec(
            name="scripted",
            create=scripted.create,
            description="answers from a JSONL file (tests, demos, offline replays)",
            usage="scripted:<file.jsonl>",
        )
    ]
