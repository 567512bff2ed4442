"""What a model costs and how much it may write, for usage accounting and ``--cost``.

Prices come from the config (``model.prices``, USD per million tokens) or from the price map
litellm ships inside its package. The map is read as a file, without importing litellm: the
import takes seconds, and litellm fetches a fresh map from the network at import unless told
not to (docs/architecture.md, "Domain facts"). No price known means cost is counted as zero,
which ``--cost`` refuses.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from podium.records import ModelRequest

PRICE_MAP_FILE = "model_prices_and_context_window_backup.json"
CHARS_PER_TOKEN_BOUND = 3  # English and code run ~3.5-4 chars a token: this over-estimates


@dataclass(frozen=True)
class ModelInfo:
    """Prices in USD per token (None: unknown) and the model's limits, with where they came from."""

    input_price: float | None = None
    output_price: float | None = None
    max_output_tokens: int | None = None
    max_input_tokens: int | None = None
    reasoning: bool = False
    source: str = "unknown"

    @property
    def priced(self) -> bool:
        return self.input_price is not None and self.output_price is not None

    def cost(self, input_tokens: int, output_tokens: int) -> float:
        return input_tokens * (self.input_price or 0.0) + output_tokens * (self.output_price or 0.0)

    def describe(self) -> str:
        if not self.priced:
            return "no price known"
        per_m = f"${(self.input_price or 0) * 1e6:.4g} in / ${(self.output_price or 0) * 1e6:.4g}"
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
    )
    configured = (prices or {}).get(name)
    if configured:
        info = ModelInfo(
            input_price=float(configured["input"]) / 1e6,
            output_price=float(configured["output"]) / 1e6,
            max_output_tokens=info.max_output_tokens,
            max_input_tokens=info.max_input_tokens,
            reasoning=info.reasoning,
            source="config model.prices",
        )
    return info


def input_tokens_bound(request: ModelRequest) -> int:
    """An upper estimate of the request's prompt tokens (no tokenizer: that would download)."""
    chars = sum(len(m.content) + 8 for m in request.messages)
    chars += sum(len(json.dumps(t.parameters)) + len(t.description) for t in request.tools)
    return math.ceil(chars / CHARS_PER_TOKEN_BOUND)


def _float(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) else None


def _int(value: Any) -> int | None:
    return int(value) if isinstance(value, int | float) and value > 0 else None
