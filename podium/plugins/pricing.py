"""What a model costs and how much it may write, for usage accounting and ``--cost``.

Prices come from the config (``model.prices``, USD per million tokens) or from the price map
litellm ships inside its package. The map is read as a file, without importing litellm: the
import takes seconds, and litellm fetches a fresh map from the network at import unless told
not to (docs/architecture.md, "Domain facts"). No price known means cost is counted as zero,
which ``--cost`` refuses.

Prompt caching has prices of its own: a prompt token read from the provider's cache (the map's
``cache_read_input_token_cost``, the config's ``cached_input``) and one written to it (the map's
``cache_creation_input_token_cost``, the 5-minute write; the config's ``cache_write``). Where
neither gives one, a backend may know its provider's rule (:meth:`ModelInfo.with_cache_rule`:
Anthropic's 0.1x and 1.25x of the input price); else a cached token costs the input price, which
is what it cost before the provider cached anything.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import Any

from podium.records import ModelRequest

PRICE_MAP_FILE = "model_prices_and_context_window_backup.json"
CHARS_PER_TOKEN_BOUND = 3  # English and code run ~3.5-4 chars a token: this over-estimates


@dataclass(frozen=True)
class ModelInfo:
    """Prices in USD per token (None: unknown) and the model's limits, with where they came from.

    ``cache_read_price`` / ``cache_write_price``: a prompt token read from / written to the
    provider's prompt cache; None means no price of its own, and then it costs the input price
    (:attr:`read_rate`, :attr:`write_rate`).
    """

    input_price: float | None = None
    output_price: float | None = None
    max_output_tokens: int | None = None
    max_input_tokens: int | None = None
    reasoning: bool = False
    source: str = "unknown"
    cache_read_price: float | None = None
    cache_write_price: float | None = None

    @property
    def priced(self) -> bool:
        return self.input_price is not None and self.output_price is not None

    @property
    def read_rate(self) -> float:
        """What a prompt token read from the cache costs: its own price, else the input price."""
        if self.cache_read_price is not None:
            return self.cache_read_price
        return self.input_price or 0.0

    @property
    def write_rate(self) -> float:
        """What a prompt token written to the cache costs: its own price, else the input price."""
        if self.cache_write_price is not None:
            return self.cache_write_price
        return self.input_price or 0.0

    def cost(
        self,
        input_tokens: int,
        output_tokens: int,
        cache_read_tokens: int = 0,
        cache_write_tokens: int = 0,
    ) -> float:
        """The price of a call. ``input_tokens`` counts every prompt token; the cached reads and
        writes are parts of it, priced at their own rates, the rest at the input price."""
        uncached = max(input_tokens - cache_read_tokens - cache_write_tokens, 0)
        return (
            uncached * (self.input_price or 0.0)
            + cache_read_tokens * self.read_rate
            + cache_write_tokens * self.write_rate
            + output_tokens * (self.output_price or 0.0)
        )

    def most_cost(self, input_tokens: int, output_tokens: int) -> float:
        """An upper bound of :meth:`cost` for at most this many tokens, however the provider
        splits the prompt between cache and no cache: each prompt token at the dearest of the
        input, cache-read and cache-write prices (a cache write costs more than plain input)."""
        dearest = max(self.input_price or 0.0, self.read_rate, self.write_rate)
        return input_tokens * dearest + output_tokens * (self.output_price or 0.0)

    def with_cache_rule(self, read: float, write: float) -> ModelInfo:
        """These prices, with a provider's cache rule (multiples of the input price) filling
        the cache prices that neither the config nor the map gave."""
        if self.input_price is None:
            return self
        read_price, write_price = self.cache_read_price, self.cache_write_price
        return replace(
            self,
            cache_read_price=self.input_price * read if read_price is None else read_price,
            cache_write_price=self.input_price * write if write_price is None else write_price,
        )

    def describe(self) -> str:
        """``$3 in ($0.3 cached, $3.75 cache write) / $15 out per million tokens (source)``;
        the cache prices only where known."""
        if not self.priced:
            return "no price known"
        cache = ((self.cache_read_price, "cached"), (self.cache_write_price, "cache write"))
        known = [f"${price * 1e6:.4g} {what}" for price, what in cache if price is not None]
        cached = f" ({', '.join(known)})" if known else ""
        per_m = f"${(self.input_price or 0) * 1e6:.4g} in{cached}"
        per_m += f" / ${(self.output_price or 0) * 1e6:.4g}"
        return f"{per_m} out per million tokens ({self.source})"


@lru_cache(maxsize=1)
def litellm_price_map() -> tuple[dict[str, Any], str]:
    """litellm's bundled map and its version; empty when litellm is not installed."""
    spec = importlib.util.find_spec("litellm")
    locations = list(spec.submodule_search_locations or []) if spec else []
    for location in locations:
        path = Path(location) / PRICE_MAP_FILE
        if path.is_file():
            data = json.loads(path.read_text(encoding="utf-8"))
            return data, f"litellm {importlib.metadata.version('litellm')} price map"
    return {}, "no price map"


def model_info(name: str, model_id: str, prices: Mapping[str, Any] | None = None) -> ModelInfo:
    """Look up ``name`` (``openai/gpt-4.1``) in the config's prices, then ``model_id``
    (``gpt-4.1``, or ``gemini/gemini-2.5-pro`` for litellm) in litellm's map."""
    table, source = litellm_price_map()
    entry: Mapping[str, Any] = {}
    for key in (model_id, name, model_id.split("/", 1)[-1]):
        if isinstance(table.get(key), Mapping):
            entry = table[key]
            break
    info = ModelInfo(
        input_price=_float(entry.get("input_cost_per_token")),
        output_price=_float(entry.get("output_cost_per_token")),
        max_output_tokens=_int(entry.get("max_output_tokens") or entry.get("max_tokens")),
        max_input_tokens=_int(entry.get("max_input_tokens")),
        reasoning=bool(entry.get("supports_reasoning")),
        source=source if entry else "unknown",
        cache_read_price=_float(entry.get("cache_read_input_token_cost")),
        cache_write_price=_float(entry.get("cache_creation_input_token_cost")),
    )
    configured = (prices or {}).get(name)
    if configured:  # replaces the map's prices whole: its cache prices belong to its sheet
        info = ModelInfo(
            input_price=float(configured["input"]) / 1e6,
            output_price=float(configured["output"]) / 1e6,
            max_output_tokens=info.max_output_tokens,
            max_input_tokens=info.max_input_tokens,
            reasoning=info.reasoning,
            source="config model.prices",
            cache_read_price=_per_token(configured.get("cached_input")),
            cache_write_price=_per_token(configured.get("cache_write")),
        )
    return info


def input_tokens_bound(request: ModelRequest) -> int:
    """An upper estimate of the request's prompt tokens (no tokenizer: that would download)."""
    chars = sum(len(m.content) + 8 for m in request.messages)
    chars += sum(len(json.dumps(t.parameters)) + len(t.description) for t in request.tools)
    return math.ceil(chars / CHARS_PER_TOKEN_BOUND)


def _per_token(per_million: Any) -> float | None:
    return float(per_million) / 1e6 if isinstance(per_million, int | float) else None


def _float(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) else None


def _int(value: Any) -> int | None:
    return int(value) if isinstance(value, int | float) and value > 0 else None
