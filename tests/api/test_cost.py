"""``--cost``: checked before each model call, so a run stops before the budget is crossed."""

from __future__ import annotations

from pathlib import Path

import pytest

from podium.api import runs as api
from podium.errors import ConfigError
from podium.testing import FakeOpenAI
from tests.support import cli_env, code_answer, podium_cli, review_answer, run_config, solution
from tests.support import write_script as write

pytestmark = pytest.mark.slow
PRICE = {"input_tokens": 10, "output_tokens": 10, "cost_usd": 0.3}


def test_the_call_that_could_cross_the_budget_is_not_made(tmp_path: Path, data_dir: Path) -> None:
    answers = [code_answer(solution(), usage=PRICE), review_answer(usage=PRICE)] * 3
    script = write(tmp_path / "s.jsonl", answers)
    config = run_config(script, tmp_path / "run", data_dir, steps=3, budget={"cost": 1.0})
    result = api.run(config)
    s = result.summary
    # code 0.3 + review 0.3 + code 0.3 = 0.9; the next review would make 1.2 > 1.0.
    assert (s["stop_reason"], s["steps"]) == ("cost", 1)
    assert s["usage"]["cost_usd"] == pytest.approx(0.9)
    assert "could cost up to $0.3000" in s["stop_detail"]
    assert "$0.9000 of the $1.00 budget is spent" in s["stop_detail"]

    resumed = api.resume(result.run_dir, {"budget.cost": 3.0})
    # The stopped node runs again; its first, unfinished code call was paid for and counts.
    assert (resumed.summary["stop_reason"], resumed.summary["steps"]) == ("steps", 3)
    assert resumed.summary["usage"]["cost_usd"] == pytest.approx(0.9 + 1.2)


def test_a_priced_model_is_stopped_before_its_first_call(
    fake_openai: FakeOpenAI, tmp_path: Path, data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", fake_openai.api_key)
    config = run_config(Path("-"), tmp_path / "run", data_dir, budget={"cost": 0.5})
    config["model"] = {
        "name": "openai/gpt-4.1", "base_url": fake_openai.url, "max_tokens": 100,
        "prices": {"openai/gpt-4.1": {"input": 1000.0, "output": 1000.0}},  # $0.001 a token
    }  # fmt: skip
    result = api.run(config)
    assert fake_openai.hits == 0
    assert (result.summary["stop_reason"], result.summary["steps"]) == ("cost", 0)


def test_cost_without_a_known_price_is_refused_up_front(tmp_path: Path, data_dir: Path) -> None:
    config = run_config(Path("-"), tmp_path / "run", data_dir, budget={"cost": 1.0})
    config["model"] = {"name": "openai/my-local-model", "base_url": "http://127.0.0.1:9/v1"}
    with pytest.raises(ConfigError, match="no price is known for openai/my-local-model"):
        api.run(config)
    assert not (tmp_path / "run").exists()
    done = podium_cli(
        "run", "tests/fixtures/tasks/toy", "--model", "openai/my-local-model", "--base-url",
        "http://127.0.0.1:9/v1", "--cost", "1", "--out", str(tmp_path / "cli"), env=cli_env(),
    )  # fmt: skip
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert lines[0].startswith("error: --cost cannot be enforced") and lines[1].startswith("hint:")
    assert "model.prices" in lines[1] and "Traceback" not in done.stderr
