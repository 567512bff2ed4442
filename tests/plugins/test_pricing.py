"""Prices and limits: litellm's bundled price map (read as a file), config overrides, and the
prompt-size bound that ``--cost`` checks before each call."""

from __future__ import annotations

import subprocess
import sys

import pytest
from pydantic import ValidationError

from podium.api.config import ModelSection
from podium.plugins.backends.common import ANTHROPIC_CACHE_RULE
from podium.plugins.pricing import ModelInfo, input_tokens_bound, litellm_price_map, model_info
from podium.records import (
    Message,
    ModelCall,
    ModelRequest,
    ModelResponse,
    ToolSpec,
    Usage,
)
from podium.scaffolds.review import REVIEW_TOOL

MAP, MAP_SOURCE = litellm_price_map()


@pytest.mark.parametrize(
    ("name", "model_id", "entry"),
    [
        ("openai/gpt-4.1", "gpt-4.1", "gpt-4.1"),
        ("anthropic/claude-sonnet-4-5", "claude-sonnet-4-5", "claude-sonnet-4-5"),
        ("litellm/gemini/gemini-2.5-pro", "gemini/gemini-2.5-pro", "gemini/gemini-2.5-pro"),
        ("litellm/openai/gpt-4.1", "openai/gpt-4.1", "gpt-4.1"),  # found without the prefix
    ],
)
def test_price_map_lookup(name: str, model_id: str, entry: str) -> None:
    info = model_info(name, model_id)
    expected = MAP[entry]

    assert info.priced
    assert info.input_price == expected["input_cost_per_token"]
    assert info.output_price == expected["output_cost_per_token"]
    assert info.max_output_tokens == expected["max_output_tokens"]
    assert info.max_input_tokens == expected["max_input_tokens"]
    assert info.source == MAP_SOURCE and MAP_SOURCE.startswith("litellm ")
    assert info.cost(1_000_000, 0) == pytest.approx(expected["input_cost_per_token"] * 1e6)


def test_reasoning_models_are_marked() -> None:
    assert model_info("openai/o3-mini", "o3-mini").reasoning
    assert not model_info("openai/gpt-4.1", "gpt-4.1").reasoning


def test_config_prices_override_the_map() -> None:
    prices = {"openai/gpt-4.1": {"input": 1.0, "output": 2.0}}
    info = model_info("openai/gpt-4.1", "gpt-4.1", prices)

    assert (info.input_price, info.output_price) == (1e-6, 2e-6)
    assert info.cost(1000, 500) == pytest.approx(0.002)
    assert info.source == "config model.prices"
    assert info.max_output_tokens == MAP["gpt-4.1"]["max_output_tokens"]  # limits still known
    assert info.describe() == "$1 in / $2 out per million tokens (config model.prices)"


def test_config_prices_a_model_the_map_does_not_know() -> None:
    prices = {"openai/my-local-model": {"input": 0.0, "output": 0.0}}
    info = model_info("openai/my-local-model", "my-local-model", prices)

    assert info.priced  # free is a price: --cost may run it
    assert info.cost(10**6, 10**6) == 0.0


def test_config_prices_are_keyed_by_the_full_model_name() -> None:
    info = model_info("openai/gpt-4.1", "gpt-4.1", {"gpt-4.1": {"input": 1.0, "output": 2.0}})
    assert info.source != "config model.prices"


def test_unknown_model_is_unpriced() -> None:
    info = model_info("openai/my-local-model", "my-local-model")

    assert info == ModelInfo()
    assert not info.priced
    assert info.cost(1000, 1000) == 0.0
    assert info.describe() == "no price known"


def test_the_map_is_read_without_importing_litellm() -> None:
    code = (
        "import sys; from podium.plugins.pricing import model_info; "
        "assert model_info('openai/gpt-4.1', 'gpt-4.1').priced; "
        "assert 'litellm' not in sys.modules, 'litellm imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


@pytest.mark.parametrize(
    "text",
    [
        "hello",
        "Plain English prose about training a gradient boosting model. " * 40,
        "import pandas as pd\ndf = pd.read_csv('input/train.csv')\nprint(df.shape)\n" * 30,
        "1234567890" * 100,
        "",
    ],
    ids=["word", "prose", "code", "digits", "empty"],
)
def test_input_tokens_bound_over_estimates(text: str) -> None:
    request = ModelRequest(messages=[Message(role="user", content=text)])
    bound = input_tokens_bound(request)

    assert bound >= len(text) / 4
    assert bound > 0


def test_input_tokens_bound_counts_every_message_and_tool() -> None:
    one = ModelRequest(messages=[Message(role="user", content="x" * 400)])
    two = ModelRequest(messages=[*one.messages, Message(role="assistant", content="y" * 400)])
    tool: ToolSpec = REVIEW_TOOL
    with_tool = two.model_copy(update={"tools": [tool]})

    assert input_tokens_bound(two) >= input_tokens_bound(one) + 100
    assert input_tokens_bound(with_tool) >= input_tokens_bound(two) + len(tool.description) / 4


# --- prompt caching -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "model_id", "entry", "writes"),
    [
        ("openai/gpt-4.1", "gpt-4.1", "gpt-4.1", False),  # OpenAI: reads only, no write fee
        ("anthropic/claude-sonnet-4-6", "claude-sonnet-4-6", "claude-sonnet-4-6", True),
    ],
)
def test_cache_prices_come_from_the_map(name: str, model_id: str, entry: str, writes: bool) -> None:
    info = model_info(name, model_id)
    expected = MAP[entry]

    assert info.cache_read_price == expected["cache_read_input_token_cost"]
    assert info.cache_read_price < (info.input_price or 0)
    if writes:  # the 5-minute write, the only TTL Podium asks for
        assert info.cache_write_price == expected["cache_creation_input_token_cost"]
        assert info.cache_write_price > (info.input_price or 0)
    else:
        assert info.cache_write_price is None
        assert info.write_rate == info.input_price


def test_cached_tokens_are_priced_apart() -> None:
    """$2 in, $0.5 cached, $2.5 cache write, $8 out per million: 10,000 prompt tokens of which
    6,000 read from the cache and 2,000 written to it, and 1,000 out."""
    prices = {"a/m": {"input": 2.0, "output": 8.0, "cached_input": 0.5, "cache_write": 2.5}}
    info = model_info("a/m", "m", prices)

    cost = info.cost(10_000, 1_000, cache_read_tokens=6_000, cache_write_tokens=2_000)
    assert cost == pytest.approx((2_000 * 2.0 + 6_000 * 0.5 + 2_000 * 2.5 + 1_000 * 8.0) / 1e6)
    assert info.cost(10_000, 1_000) == pytest.approx((10_000 * 2.0 + 1_000 * 8.0) / 1e6)
    assert info.describe() == (
        "$2 in ($0.5 cached, $2.5 cache write) / $8 out per million tokens (config model.prices)"
    )


def test_without_cache_prices_cached_tokens_cost_the_input_price() -> None:
    """A price of one's own replaces the map's entry whole, cache prices included: what it
    leaves out costs the input price (what the tokens cost uncached)."""
    info = model_info("openai/gpt-4.1", "gpt-4.1", {"openai/gpt-4.1": {"input": 1, "output": 2}})

    assert (info.cache_read_price, info.cache_write_price) == (None, None)
    assert info.cost(1000, 0, cache_read_tokens=600, cache_write_tokens=400) == info.cost(1000, 0)


def test_the_anthropic_rule_fills_what_no_price_gives() -> None:
    """0.1x the input price for a read, 1.25x for a (5-minute) write, unless a price is given."""
    plain = model_info(
        "anthropic/my-model", "my-model", {"anthropic/my-model": {"input": 4, "output": 20}}
    )
    ruled = plain.with_cache_rule(*ANTHROPIC_CACHE_RULE)
    assert (ruled.cache_read_price, ruled.cache_write_price) == pytest.approx((0.4e-6, 5e-6))

    given = {"anthropic/my-model": {"input": 4, "output": 20, "cached_input": 1}}
    kept = model_info("anthropic/my-model", "my-model", given).with_cache_rule(
        *ANTHROPIC_CACHE_RULE
    )
    assert (kept.cache_read_price, kept.cache_write_price) == pytest.approx((1e-6, 5e-6))
    assert ModelInfo().with_cache_rule(0.1, 1.25) == ModelInfo()  # no price: nothing to scale


@pytest.mark.parametrize("split", [(0, 0), (900, 0), (0, 1000), (500, 500), (1000, 0)])
def test_the_worst_case_bounds_every_split_of_the_prompt(split: tuple[int, int]) -> None:
    """``--cost`` checks before a call, not knowing what the provider will cache: the bound
    holds for any split, a prompt written to the cache whole (dearer than plain input) too."""
    read, written = split
    for info in (
        model_info("anthropic/claude-sonnet-4-6", "claude-sonnet-4-6"),
        model_info("openai/gpt-4.1", "gpt-4.1"),
    ):
        assert info.most_cost(1000, 100) >= info.cost(1000, 100, read, written)
    sonnet = model_info("anthropic/claude-sonnet-4-6", "claude-sonnet-4-6")
    assert sonnet.most_cost(1000, 0) == pytest.approx(1000 * (sonnet.cache_write_price or 0))


def test_configured_cache_prices_reach_the_lookup() -> None:
    """``-o 'model.prices."a/m"'={input=.., output=.., cached_input=.., cache_write=..}``, as
    the config validates it and hands it to the backends."""
    section = ModelSection(prices={"a/m": {"input": 3, "output": 15, "cached_input": 0.3}})
    info = model_info("a/m", "m", section.model_dump()["prices"])

    assert info.cache_read_price == pytest.approx(0.3e-6)
    assert info.cache_write_price is None
    with pytest.raises(ValidationError):
        ModelSection(prices={"a/m": {"input": 3, "output": 15, "cache_write": -1}})


# --- usage records ------------------------------------------------------------------------


def test_usage_round_trips_with_its_cache_tokens() -> None:
    usage = Usage(
        input_tokens=5000, output_tokens=80, cost_usd=0.004, calls=1,
        cache_read_tokens=4096, cache_write_tokens=600,
    )  # fmt: skip
    call = ModelCall(
        node_id=3,
        role="code",
        seq=7,
        request=ModelRequest(messages=[Message(role="user", content="Go.")]),
        response=ModelResponse(text="ok", usage=usage),
    )
    assert ModelCall.model_validate_json(call.model_dump_json()) == call

    total = usage + usage
    assert (total.cache_read_tokens, total.cache_write_tokens) == (8192, 1200)
    assert (total.input_tokens, total.calls) == (10000, 2)


def test_usage_recorded_before_caching_still_loads() -> None:
    old = {"input_tokens": 1200, "output_tokens": 340, "cost_usd": 0.01, "calls": 1}
    usage = Usage.model_validate(old)
    assert (usage.cache_read_tokens, usage.cache_write_tokens) == (0, 0)
    assert usage.input_tokens == 1200
