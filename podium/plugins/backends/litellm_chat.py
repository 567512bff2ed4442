"""The ``litellm`` backend: ``litellm/<anything litellm accepts>`` (gemini/..., bedrock/...,
ollama/..., openai/...), keys read by litellm from each provider's usual variable.

litellm is imported here, when a user picks it: the import takes seconds, and without
``LITELLM_LOCAL_MODEL_COST_MAP`` set first it downloads a price map from the network. Its own
retries are off; its exceptions subclass openai's, so they are classified the same way.

Prompt caching: litellm reports every provider's cache in OpenAI's usage fields (read by
:func:`~podium.plugins.backends.openai_chat.cache_usage`). Where the route is Anthropic's
Messages API, whose caching is opt-in, a conversation asks litellm to place the same
breakpoints the ``anthropic`` backend sends (:meth:`LiteLLMBackend.cache_points`).
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Mapping
from typing import Any, cast

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # before the import, always

import litellm
import openai

from podium.errors import ModelContextLengthError, UserError
from podium.plugins.backends.common import ANTHROPIC_CACHE_RULE, ChatBackend, is_conversation
from podium.plugins.backends.openai_chat import (
    NO_KEY,
    chat_messages,
    chat_tools,
    describe_connection_error,
    from_chat_completion,
)
from podium.records import ModelRequest, ModelResponse

litellm.suppress_debug_info = True
litellm.telemetry = False
logging.getLogger("LiteLLM").setLevel(logging.ERROR)


class LiteLLMBackend(ChatBackend):
    provider_name = "litellm"
    key_env = None  # litellm knows each provider's variable
    example = "litellm/gemini/gemini-2.5-pro"

    def __init__(self, model_id: str, options: Mapping[str, Any]) -> None:
        super().__init__(model_id, options)
        self.key = self.api_key() if self.options.api_key_env else None
        if self.key is None:
            found = litellm.validate_environment(model=model_id)
            missing = found.get("missing_keys") or []
            if not found.get("keys_in_environment", True) and missing:
                if self.options.base_url is None:
                    raise UserError(
                        f"litellm: no API key for {model_id}: set {' or '.join(missing)}",
                        hint=f"export {missing[0]}=...; or name another variable with "
                        "-o model.api_key_env=NAME",
                    )
                self.key = NO_KEY  # a local server may need none, but the SDKs insist on one
        self.route = route_of(model_id)
        if self.route == "anthropic":
            self.info = self.info.with_cache_rule(*ANTHROPIC_CACHE_RULE)

    def body(self, request: ModelRequest) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.model_id,
            "messages": chat_messages(request),
            "timeout": self.options.timeout_s,
            "num_retries": 0,
            "max_retries": 0,
            "drop_params": True,  # e.g. temperature for reasoning models
        }
        body |= chat_tools(request)
        if (cap := self.output_cap(request)) is not None:
            body["max_tokens"] = cap
        temperature = self.temperature(request)
        if temperature is not None:
            body["temperature"] = temperature
        if self.options.base_url:
            body["api_base"] = self.options.base_url
        if self.key:
            body["api_key"] = self.key
        if points := self.cache_points(body["messages"], request):
            body["cache_control_injection_points"] = points
        return body

    def cache_points(
        self, messages: list[dict[str, Any]], request: ModelRequest
    ) -> list[dict[str, Any]]:
        """Where litellm should put ``cache_control`` breakpoints: for a conversation on the
        Anthropic route, the system prompt, the first user turn (when more follow) and the
        last message, as ``anthropic_messages.cache_breakpoints`` explains. None elsewhere:
        OpenAI-style providers cache by themselves, and would refuse the field."""
        if self.route != "anthropic" or not is_conversation(request) or not messages:
            return []
        points: list[dict[str, Any]] = []
        if any(m["role"] == "system" for m in messages):
            points.append({"location": "message", "role": "system"})
        first_user = next((i for i, m in enumerate(messages) if m["role"] == "user"), None)
        if first_user is not None and first_user < len(messages) - 1:
            points.append({"location": "message", "index": first_user})
        points.append({"location": "message", "index": -1})
        return points

    async def complete(self, request: ModelRequest) -> ModelResponse:
        started = time.perf_counter()
        try:
            answer = await litellm.acompletion(**self.body(request))
        except litellm.exceptions.ContextWindowExceededError as exc:
            raise ModelContextLengthError(
                f"litellm: prompt too long: {exc.message}", self.provider_name
            ) from None
        except openai.APIStatusError as exc:
            raise self.http_error(exc.status_code, exc.message, response_headers(exc)) from None
        except openai.APIConnectionError as exc:  # timeouts included
            raise self.http_error(None, describe_connection_error(exc)) from None
        except openai.APIError as exc:  # litellm's catch-all, with a status when it has one
            status = getattr(exc, "status_code", None) or 500
            raise self.http_error(status, exc.message, response_headers(exc)) from None
        except ValueError as exc:
            raise self.garbled(f"{type(exc).__name__}: {exc}") from None
        return from_chat_completion(self, request, answer, time.perf_counter() - started)


def route_of(model_id: str) -> str | None:
    """The provider litellm sends ``model_id`` to (``anthropic``, ``openai``...); None when it
    cannot tell (it will say so, better worded, when asked)."""
    try:
        return str(litellm.get_llm_provider(model=model_id)[1])
    except Exception:  # litellm raises its own errors, of several kinds, for an unknown route
        return None


def response_headers(exc: Exception) -> Mapping[str, str]:
    """The provider's response headers (``retry-after``...). litellm keeps them in
    ``litellm_response_headers``: for some providers (anthropic) ``exc.response`` is a stand-in
    without them."""
    response = getattr(exc, "response", None)
    for headers in (
        getattr(exc, "litellm_response_headers", None),
        getattr(response, "headers", None),
        getattr(exc, "headers", None),
    ):
        if headers:
            return cast(Mapping[str, str], headers)
    return {}


def create(model_id: str, options: Mapping[str, Any]) -> LiteLLMBackend:
    return LiteLLMBackend(model_id, options)
