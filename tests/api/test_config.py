"""Run configuration (``podium.api.config``) and strategy parameters
(``podium.api.runs.build_strategy``)."""

from __future__ import annotations

import random
import tomllib
from pathlib import Path
from typing import Any

import pytest

from podium.api.config import (
    PRESETS,
    RunConfig,
    load_config,
    parse_value,
    validate_config,
)
from podium.api.runs import build_strategy, load_registry
from podium.errors import ConfigError
from podium.records import Action, Metric, Node, NodeState
from podium.scaffolds.strategies.greedy import Greedy
from podium.tree import SearchTree


def load(
    *overrides: str,
    file: Path | None = None,
    cli: dict[str, Any] | None = None,
    environ: dict[str, str] | None = None,
) -> RunConfig:
    """``load_config`` that never reads the real environment."""
    return load_config(file, overrides, cli, environ={} if environ is None else environ)


def one_line_error(excinfo: pytest.ExceptionInfo[ConfigError]) -> str:
    message = str(excinfo.value)
    assert "\n" not in message
    return message


# --- precedence --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("layers", "steps"),
    [
        ((), 500),
        (("file",), 400),
        (("file", "env"), 300),
        (("env",), 300),
        (("file", "env", "cli"), 200),
        (("file", "cli"), 200),
        (("file", "env", "cli", "o"), 100),
        (("env", "o"), 100),
    ],
)
def test_precedence_preset_file_env_cli_overrides(
    tmp_path: Path, layers: tuple[str, ...], steps: int
) -> None:
    file = tmp_path / "podium.toml"
    file.write_text("[budget]\nsteps = 400\n", encoding="utf-8")
    cfg = load(
        *(["budget.steps=100"] if "o" in layers else []),
        file=file if "file" in layers else None,
        cli={"preset": "aide-mlebench", **({"budget.steps": 200} if "cli" in layers else {})},
        environ={"PODIUM_BUDGET__STEPS": "300"} if "env" in layers else {},
    )
    assert cfg.budget.steps == steps
    assert cfg.budget.time == 24 * 3600  # the rest of the preset still applies


def test_layers_merge_per_key_not_per_section(tmp_path: Path) -> None:
    file = tmp_path / "podium.toml"
    file.write_text("[budget]\nsteps = 40\ncost = 2.5\n", encoding="utf-8")
    cfg = load("budget.time=1h", file=file, environ={"PODIUM_BUDGET__STEPS": "30"})
    assert (cfg.budget.steps, cfg.budget.cost, cfg.budget.time) == (30, 2.5, 3600)


def test_preset_named_in_a_later_layer_wins(tmp_path: Path) -> None:
    file = tmp_path / "podium.toml"
    file.write_text('preset = "aide"\n', encoding="utf-8")
    assert load(file=file).search.model_extra == {
        "num_drafts": 5,
        "debug_prob": 0.5,
        "max_debug_depth": 3,
    }
    cfg = load(file=file, cli={"preset": "aide-mlebench"})
    assert cfg.preset == "aide-mlebench"
    assert cfg.budget.steps == 500


# --- environment -------------------------------------------------------------------------


def test_env_variables() -> None:
    cfg = load(
        environ={
            "PODIUM_BUDGET__STEPS": "10",
            "PODIUM_SEED": "3",
            "PODIUM_MODEL__NAME": "openai/gpt-4.1",
            "PODIUM_EXEC__TIMEOUT": "30m",
            "PODIUM_EXEC__KEEP_WORKING": "true",
            "PODIUM_DATA_DIR": "/data/podium",  # one underscore stays inside the key
            "PODIUM_DEBUG": "1",  # a switch of its own, not a config key
            "PODIUM_FAILPOINTS": "x",
            "HOME": "/home/someone",  # not ours
        }
    )
    assert cfg.budget.steps == 10
    assert cfg.seed == 3
    assert cfg.model.name == "openai/gpt-4.1"
    assert cfg.exec.timeout == 1800
    assert cfg.exec.keep_working is True
    assert cfg.data_dir == Path("/data/podium")


def test_unknown_env_key_is_a_config_error() -> None:
    with pytest.raises(ConfigError) as excinfo:
        load(environ={"PODIUM_BUDGET__STEPZ": "10"})
    assert one_line_error(excinfo).startswith("budget.stepz")
    assert excinfo.value.hint == "did you mean steps?"


# --- -o overrides ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "value"),
    [
        ("3", 3),
        ("0.5", 0.5),
        ("true", True),
        ("false", False),
        ('"3"', "3"),
        ("[1, 2]", [1, 2]),
        ("openai/gpt-4.1", "openai/gpt-4.1"),
        ("1h30m", "1h30m"),
        ("hello world", "hello world"),
    ],
)
def test_values_are_parsed_as_toml_literals(raw: str, value: Any) -> None:
    parsed = parse_value(raw)
    assert parsed == value
    assert type(parsed) is type(value)


def test_overrides_reach_the_config_with_their_types() -> None:
    cfg = load(
        "seed=3",
        "search.debug_prob=0.5",
        "exec.keep_working=true",
        "model.name=anthropic/claude-sonnet-4",
        "search.num_drafts = 2",
    )
    assert cfg.seed == 3
    assert cfg.exec.keep_working is True
    assert cfg.model.name == "anthropic/claude-sonnet-4"
    assert cfg.search.model_extra == {"debug_prob": 0.5, "num_drafts": 2}


@pytest.mark.parametrize("item", ["budget.steps", "=3", ""])
def test_override_without_key_and_value_raises(item: str) -> None:
    with pytest.raises(ConfigError) as excinfo:
        load(item)
    assert "KEY=VALUE" in one_line_error(excinfo)


def test_later_override_of_the_same_key_wins() -> None:
    assert load("budget.steps=5", "budget.steps=7").budget.steps == 7


# --- durations ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("90", 90),
        ("90s", 90),
        ("30m", 1800),
        ("1h30m", 5400),
        ("2.5h", 9000),
        ("1h 30m", 5400),
        ("1d", 86400),
        ("45", 45),
    ],
)
def test_durations(text: str, seconds: float) -> None:
    cfg = load(cli={"budget.time": text, "exec.timeout": text})
    assert cfg.budget.time == seconds
    assert cfg.exec.timeout == seconds


def test_durations_from_overrides_as_numbers_or_text() -> None:
    assert load("exec.timeout=90").exec.timeout == 90
    assert load("exec.timeout=2.5h").exec.timeout == 9000


@pytest.mark.parametrize("text", ["soon", "90x", "h", "1h30", "-5m", "0"])
def test_invalid_duration_names_the_key(text: str) -> None:
    with pytest.raises(ConfigError) as excinfo:
        load(cli={"exec.timeout": text})
    assert one_line_error(excinfo).startswith("exec.timeout:")


# --- invalid values and keys -------------------------------------------------------------


@pytest.mark.parametrize(
    ("override", "key"),
    [
        ("budget.steps=0", "budget.steps"),
        ("budget.steps=many", "budget.steps"),
        ("workers=0", "workers"),
        ("seed=1.5", "seed"),
        ("budget.cost=-1", "budget.cost"),
        ("exec.max_output_bytes=10", "exec.max_output_bytes"),
        ("model.max_tokens=0", "model.max_tokens"),
        ("search.memory_chars=-1", "search.memory_chars"),
    ],
)
def test_invalid_value_is_one_line_naming_the_dotted_key(override: str, key: str) -> None:
    with pytest.raises(ConfigError) as excinfo:
        load(override)
    assert one_line_error(excinfo).startswith(f"{key}:")


@pytest.mark.parametrize(
    ("override", "key", "hint"),
    [
        ("budget.step=3", "budget.step", "did you mean steps?"),
        ("sead=3", "sead", "did you mean seed?"),
        ("exec.timout=60", "exec.timout", "did you mean timeout?"),
        ("modle.name=x", "modle", "did you mean model?"),
    ],
)
def test_unknown_key_has_a_did_you_mean_hint(override: str, key: str, hint: str) -> None:
    with pytest.raises(ConfigError) as excinfo:
        load(override)
    message = one_line_error(excinfo)
    assert message.startswith(f"{key}:")
    assert "unknown key" in message
    assert excinfo.value.hint == hint


def test_unknown_key_in_a_config_file(tmp_path: Path) -> None:
    file = tmp_path / "podium.toml"
    file.write_text("[budget]\nstesp = 3\n", encoding="utf-8")
    with pytest.raises(ConfigError) as excinfo:
        load(file=file)
    assert one_line_error(excinfo).startswith("budget.stesp:")
    assert excinfo.value.hint == "did you mean steps?"


def test_unknown_preset_raises() -> None:
    with pytest.raises(ConfigError) as excinfo:
        load("preset=aide-mlebenhc")
    assert "aide-mlebenhc" in one_line_error(excinfo)
    assert excinfo.value.hint is not None
    assert "aide-mlebench" in excinfo.value.hint


# --- presets -----------------------------------------------------------------------------


def test_aide_mlebench_preset_has_mlebench_aide_values() -> None:
    cfg = load("preset=aide-mlebench")
    assert cfg.budget.steps == 500
    assert cfg.budget.time == 24 * 3600
    assert cfg.exec.timeout == 9 * 3600
    assert cfg.search.strategy == "greedy"
    assert cfg.search.model_extra == {"num_drafts": 5, "debug_prob": 1.0, "max_debug_depth": 20}
    strategy = build_strategy(cfg, load_registry())
    assert isinstance(strategy, Greedy)
    assert (strategy.params.debug_prob, strategy.params.max_debug_depth) == (1.0, 20)


def test_the_reference_machine_preset_is_aide_mlebench_on_mlebench_hardware() -> None:
    cfg = load("preset=aide-mlebench-reference")
    aide = load("preset=aide-mlebench")
    for section in ("search", "budget", "exec"):
        assert getattr(cfg, section) == getattr(aide, section)
    box = cfg.sandbox
    assert (box.memory, box.workspace_size, box.tmp_size, box.shm_size, box.gpus) == (
        "400G",
        "500G",
        "64G",
        "4G",
        "all",
    )
    assert (box.processes, box.max_files) == (4096, 5_000_000)
    assert aide.sandbox == load().sandbox  # aide-mlebench alone keeps this machine's limits


def test_the_strategy_neutral_reference_preset_suits_any_strategy() -> None:
    cfg = load("search.strategy=mcts", cli={"preset": "mlebench-reference"})
    assert cfg.sandbox == load("preset=aide-mlebench-reference").sandbox
    assert (cfg.budget.steps, cfg.budget.time, cfg.exec.timeout) == (500, 24 * 3600, 9 * 3600)
    assert cfg.search.model_extra == {}
    assert build_strategy(cfg, load_registry()).name == "mcts"


def test_a_machine_setting_over_the_reference_preset() -> None:
    cfg = load("sandbox.memory=32G", cli={"preset": "aide-mlebench-reference"})
    assert (cfg.sandbox.memory, cfg.sandbox.gpus, cfg.budget.steps) == ("32G", "all", 500)
    assert PRESETS["aide-mlebench-reference"]["sandbox"]["memory"] == "400G"


def test_start_sh_and_data_folder_variables_are_not_config_keys() -> None:
    cfg = load(environ={"PODIUM_HOME": "/home", "PODIUM_METRIC_DIRECTION": "lower"})
    assert cfg == load()


def test_a_later_layer_overrides_one_preset_value() -> None:
    cfg = load(
        "search.max_debug_depth=5",
        cli={"preset": "aide-mlebench"},
        environ={"PODIUM_EXEC__TIMEOUT": "1h"},
    )
    assert cfg.search.model_extra == {"num_drafts": 5, "debug_prob": 1.0, "max_debug_depth": 5}
    assert cfg.exec.timeout == 3600
    assert cfg.budget.steps == 500


def test_overriding_a_preset_does_not_change_it_for_later_loads() -> None:
    load("search.debug_prob=0.1", "budget.steps=3", cli={"preset": "aide-mlebench"})
    cfg = load(cli={"preset": "aide-mlebench"})
    assert cfg.search.model_extra is not None and cfg.search.model_extra["debug_prob"] == 1.0
    assert cfg.budget.steps == 500
    assert PRESETS["aide-mlebench"]["search"]["debug_prob"] == 1.0


# --- to_toml and prompt files ------------------------------------------------------------


def test_to_toml_round_trips(tmp_path: Path) -> None:
    cfg = load(
        "budget.time=2h",
        "budget.cost=12.5",
        "search.num_drafts=3",
        'prompts.draft="Solve $task_description, costs $$5"',
        "plugins=['my_plugin']",
        cli={
            "task": "mini/toy",
            "out": str(tmp_path / "run"),
            "data_dir": str(tmp_path / "data"),
            "seed": 5,
            "model.name": "openai/gpt-4.1",
            "model.temperature": 0.2,
            "exec.keep_working": True,
        },
    )
    build_strategy(cfg, load_registry())  # adds the strategy's defaults to [search]
    text = cfg.to_toml()
    again = validate_config(tomllib.loads(text))
    assert again == cfg
    assert again.search.model_extra == cfg.search.model_extra
    assert again.to_toml() == text


def test_default_config_round_trips() -> None:
    cfg = load()
    assert validate_config(tomllib.loads(cfg.to_toml())) == cfg


def test_prompt_template_read_from_a_file(tmp_path: Path) -> None:
    template = tmp_path / "draft.md"
    template.write_text("# My draft prompt\n$task_description\n$budget\n", encoding="utf-8")
    cfg = load(f"prompts.draft=@{template}")
    assert cfg.prompts["draft"] == "# My draft prompt\n$task_description\n$budget\n"
    # recorded inline: the run's config.toml does not depend on the file any more
    template.unlink()
    assert validate_config(tomllib.loads(cfg.to_toml())).prompts == cfg.prompts


def test_missing_prompt_file_names_the_key(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as excinfo:
        load(f"prompts.draft=@{tmp_path / 'missing.md'}")
    assert one_line_error(excinfo).startswith("prompts.draft:")


@pytest.mark.parametrize("override", ["prompts=3", 'prompts="draft.md"'])
def test_prompts_must_be_a_table(override: str) -> None:
    with pytest.raises(ConfigError) as excinfo:
        load(override)
    assert one_line_error(excinfo).startswith("prompts")


def test_prompt_file_with_an_unknown_placeholder_is_rejected(tmp_path: Path) -> None:
    template = tmp_path / "draft.md"
    template.write_text("Solve $task with $model\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"prompts\.draft"):
        load(f"prompts.draft=@{template}")


# --- build_strategy ----------------------------------------------------------------------


def test_unknown_strategy_parameter_has_a_hint() -> None:
    cfg = load("search.num_draft=3")
    with pytest.raises(ConfigError) as excinfo:
        build_strategy(cfg, load_registry())
    assert one_line_error(excinfo).startswith("search.num_draft:")
    assert excinfo.value.hint == "did you mean num_drafts?"


@pytest.mark.parametrize(
    "override",
    ["search.debug_prob=2", "search.debug_prob=-0.1", "search.debug_prob=often"],
)
def test_bad_strategy_parameter_names_the_key(override: str) -> None:
    cfg = load(override)
    with pytest.raises(ConfigError) as excinfo:
        build_strategy(cfg, load_registry())
    assert one_line_error(excinfo).startswith("search.debug_prob:")


def test_bad_max_debug_depth_names_the_key() -> None:
    with pytest.raises(ConfigError) as excinfo:
        build_strategy(load("search.max_debug_depth=-1"), load_registry())
    assert one_line_error(excinfo).startswith("search.max_debug_depth:")


def test_strategy_defaults_are_written_back_into_the_config() -> None:
    cfg = load("search.num_drafts=2")
    strategy = build_strategy(cfg, load_registry())
    assert isinstance(strategy, Greedy)
    assert strategy.params.num_drafts == 2
    assert cfg.search.model_extra == {
        "num_drafts": 2,
        "debug_prob": 0.5,
        "max_debug_depth": 3,
        "parallel_improve": False,
    }
    recorded = tomllib.loads(cfg.to_toml())["search"]
    assert recorded["num_drafts"] == 2
    assert recorded["debug_prob"] == 0.5
    assert recorded["max_debug_depth"] == 3


def test_built_strategy_uses_the_configured_parameters() -> None:
    strategy = build_strategy(load("search.num_drafts=1", "search.debug_prob=0"), load_registry())
    tree = SearchTree(lower_is_better=False)
    good = Metric(value=0.7, lower_is_better=False)
    tree.add(Node(id=1, operator="draft", state=NodeState.DONE, code="x = 1\n", metric=good))
    tree.add(Node(id=2, operator="draft", state=NodeState.DONE, code="x = (\n", is_buggy=True))
    # the defaults (5 drafts, debug half the time) would draft; these improve the good node
    for seed in range(10):
        assert strategy.next_action(tree, random.Random(seed)) == Action(
            operator="improve", parent_ids=(1,)
        )


# --- model.base_url, unreadable files, hints ----------------------------------------------


@pytest.mark.parametrize(
    "url",
    ["http://localhost:8000/v1", "https://api.example.com/v1", "http://[::1]:8080",
     "http://10.0.0.2:1/v1", "HTTP://Example.com"],
)  # fmt: skip
def test_a_base_url_that_is_an_http_url_is_kept(url: str) -> None:
    assert load(cli={"model.base_url": url}).model.base_url == url


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("not a url", "not a URL (it is empty or holds spaces)"),
        ("", "not a URL (it is empty or holds spaces)"),
        ("localhost:8000/v1", "not an http(s) URL"),
        ("ftp://host/v1", "not an http(s) URL"),
        ("http://localhost:99999/v1", "the port is not a number in 1-65535"),
        ("http://localhost:0/v1", "the port is not a number in 1-65535"),
        ("http://localhost:80a", "the port is not a number in 1-65535"),
        ("http:///v1", "the URL names no host"),
    ],
)
def test_a_base_url_is_checked_wherever_it_comes_from(url: str, reason: str) -> None:
    """The flag, -o, a config file and the environment all meet the same check, so a resumed
    or swept run with a mistyped server stops before it starts, too."""
    sources: list[tuple[dict[str, Any], dict[str, str]]] = [
        ({"model.base_url": url}, {}),
        ({}, {"PODIUM_MODEL__BASE_URL": url}),
    ]
    for cli, environ in sources:
        with pytest.raises(ConfigError) as excinfo:
            load(cli=cli, environ=environ)
        assert one_line_error(excinfo).startswith(f"model.base_url: {reason}")
        assert excinfo.value.hint and "http://localhost:8000/v1" in excinfo.value.hint


def test_a_config_file_that_cannot_be_read_is_one_line_with_a_hint(tmp_path: Path) -> None:
    binary = tmp_path / "binary.toml"
    binary.write_bytes(b"\xff\xfe\x00\x01")
    cases = {
        tmp_path / "missing.toml": "config file not found",
        tmp_path: "is a directory, not a config file",
        binary: "is not a text file (not UTF-8)",
    }
    for path, message in cases.items():
        with pytest.raises(ConfigError) as excinfo:
            load(file=path)
        assert message in one_line_error(excinfo)
        assert excinfo.value.hint


@pytest.mark.parametrize(
    ("override", "hint"),
    [
        ("budget.steps=0", "budget.steps: finished nodes (buggy ones count); default 20"),
        ("workers=0", "workers: nodes expanded concurrently; default 1"),
        ("exec.timeout=soon", "exec.timeout: per node execution; default 3600"),
        ("budget=3", "budget is a section ([budget] in a file, -o budget.KEY=VALUE); its keys: "
                     "steps, time, cost"),
        ('model.prices."a/b"={input=-1, output=1}', "e.g. -o 'model.prices."),
    ],
)  # fmt: skip
def test_a_bad_value_says_what_the_key_is(override: str, hint: str) -> None:
    with pytest.raises(ConfigError) as excinfo:
        load(override)
    assert excinfo.value.hint is not None and excinfo.value.hint.startswith(hint)


def test_a_number_out_of_range_shows_what_was_given() -> None:
    with pytest.raises(ConfigError) as excinfo:
        load("model.max_tokens=0")
    assert one_line_error(excinfo) == "model.max_tokens: Input should be greater than 0 (got 0)"


def test_an_unknown_preset_names_the_closest() -> None:
    with pytest.raises(ConfigError) as excinfo:
        load(cli={"preset": "aide-mlebench-refrence"})
    assert excinfo.value.hint == (
        f"did you mean aide-mlebench-reference? presets: {', '.join(PRESETS)}"
    )
