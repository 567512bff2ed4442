"""The plugins room's builtin plugin: the model backends that ship with Podium.

Each factory imports its SDK only when called, so listing plugins or running the ``baseline``
model never pays for importing openai, anthropic or (seconds) litellm.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from podium.interfaces import Backend
from podium.plugins.backends import scripted
from podium.plugins.markers import hookimpl
from podium.plugins.specs import BackendSpec


def _openai(model_id: str, options: Mapping[str, Any]) -> Backend:
    from podium.plugins.backends import openai_chat

    return openai_chat.create(model_id, options)


def _anthropic(model_id: str, options: Mapping[str, Any]) -> Backend:
    from podium.plugins.backends import anthropic_messages

    return anthropic_messages.create(model_id, options)


def _litellm(model_id: str, options: Mapping[str, Any]) -> Backend:
    from podium.plugins.backends import litellm_chat

    return litellm_chat.create(model_id, options)


@hookimpl
def podium_backends() -> list[BackendSpec]:
    return [
        BackendSpec(
            name="openai",
            create=_openai,
            description="OpenAI Chat Completions, or any OpenAI-compatible server (--base-url)",
            usage="openai/<model>",
        ),
        BackendSpec(
            name="anthropic",
            create=_anthropic,
            description="Anthropic Messages API (tool use for reviews)",
            usage="anthropic/<model>",
        ),
        BackendSpec(
            name="litellm",
            create=_litellm,
            description="any model litellm supports (keys from the provider's usual variable)",
            usage="litellm/<provider>/<model>",
        ),
        BackendSpec(
            name="scripted",
            create=scripted.create,
            description="answers from a JSONL file (tests, demos, exported runs)",
            usage="scripted:<file.jsonl>",
        ),
    ]
