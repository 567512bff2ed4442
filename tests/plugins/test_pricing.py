"""Prices and limits: litellm's bundled price map (read as a file), config overrides, and the
prompt-size bound that ``--cost`` checks before each call."""

from __future__ import annotations

import subprocess
import sys

import pytest

from podium.plugins.pricing import ModelInfo, input_tokens_bound, litellm_price_map, model_info
from podium.records import Message, ModelRequest, ToolSpec
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
