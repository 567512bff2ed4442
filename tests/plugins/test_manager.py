"""Plugin loading with -p (module or file), registry lookups, errors, and the hook docs."""

from __future__ import annotations

import inspect
import json
import re
from pathlib import Path

import pytest

import podium
from podium.api.runs import builtin_plugins, load_registry
from podium.errors import PluginError, UnknownNameError
from podium.plugins import Registry, create_plugin_manager, hookspecs, split_model_name
from tests.support import REPO, run_config, write_script

RECORDER = REPO / "tests" / "fixtures" / "plugins" / "recorder.py"


def test_builtins_register_through_the_hooks() -> None:
    registry = load_registry()
    rows = {(kind, name): origin for kind, name, origin, _ in registry.listing()}
    assert rows[("strategy", "greedy")] == "builtin"
    assert rows[("sandbox", "local")] == "builtin"
    assert rows[("operators", "llm")] == "builtin"
    assert rows[("backend", "scripted:<file.jsonl>")] == "builtin"


@pytest.mark.parametrize("spec", [str(RECORDER), "recorder"])
def test_p_loads_a_file_or_a_module(spec: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(RECORDER.parent))
    registry = load_registry([spec])
    assert registry.backends["fixed"].origin == f"-p {spec}"
    backend = registry.backend("fixed/0.7", {})
    assert backend.model == "fixed/0.7"


def test_a_p_plugin_backend_and_event_hooks_drive_a_run(tmp_path: Path, data_dir: Path) -> None:
    cfg = run_config(tmp_path / "unused", tmp_path / "run", data_dir, steps=2,
                     plugins=[str(RECORDER)], model={"name": "fixed/0.77"})  # fmt: skip
    result = podium.run(cfg)
    assert result.summary["best_metric"] == 0.77
    assert result.summary["usage"]["cost_usd"] == pytest.approx(0.004)
    events = [json.loads(line) for line in (tmp_path / "run/events.jsonl").read_text().splitlines()]
    assert [e["event"] for e in events] == [
        "run_started", "node_finished", "node_finished", "run_finished",
    ]  # fmt: skip
    assert events[-1] == {"event": "run_finished", "steps": 2, "stop_reason": "steps"}


def test_a_failing_event_hook_does_not_stop_the_run(tmp_path: Path, data_dir: Path) -> None:
    plugin = tmp_path / "faulty.py"
    plugin.write_text(
        "from podium.plugins import hookimpl\n\n"
        "@hookimpl\ndef podium_node_finished(run, node):\n    raise RuntimeError('oops')\n"
    )
    script = write_script(tmp_path / "s.jsonl", [])
    cfg = run_config(script, tmp_path / "run", data_dir, steps=2,
                     plugins=[str(RECORDER), str(plugin)], model={"name": "fixed/0.5"})  # fmt: skip
    assert podium.run(cfg).summary["steps"] == 2


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("from podium.plugins import hookimpl\n@hookimpl\ndef podium_backendz():\n    return []\n",
         "implements an unknown hook 'podium_backendz'"),
        ("raise ImportError('missing dependency foo')\n", "failed to import: ImportError"),
        ("from podium.plugins import hookimpl\n@hookimpl\ndef podium_strategies():\n"
         "    return ['not a spec']\n", "returned str, expected StrategySpec"),
        ("from podium.plugins import StrategySpec, hookimpl\n@hookimpl\ndef podium_strategies():\n"
         "    return [StrategySpec(name='greedy', create=object)]\n",
         "strategy 'greedy' is defined twice: by builtin and by -p"),
    ],
)  # fmt: skip
def test_broken_plugins_fail_with_one_line(tmp_path: Path, source: str, message: str) -> None:
    plugin = tmp_path / "broken.py"
    plugin.write_text(source)
    with pytest.raises(PluginError) as info:
        Registry(create_plugin_manager(builtin_plugins(), [str(plugin)]))
    assert message in info.value.message
    assert "\n" not in info.value.message


def test_missing_plugins_name_the_fix() -> None:
    with pytest.raises(PluginError, match="plugin file not found"):
        load_registry(["no/such/plugin.py"])
    with pytest.raises(PluginError, match="cannot import plugin module 'no_such_module'") as info:
        load_registry(["no_such_module"])
    assert info.value.hint and "PYTHONPATH" in info.value.hint


def test_unknown_names_list_the_choices() -> None:
    registry = load_registry()
    with pytest.raises(UnknownNameError) as info:
        registry.strategy("mtcs")
    choices = "evolutionary, greedy, mcgs, mcts, one-draft, random, refine"
    assert info.value.hint == f"did you mean mcts? available: {choices}"
    with pytest.raises(UnknownNameError) as info:
        registry.backend("opneai/gpt-4o", {})
    assert "unknown model provider 'opneai'" in info.value.message
    assert info.value.hint is not None and "scripted:<file.jsonl>" in info.value.hint


@pytest.mark.parametrize(
    ("model", "expected"),
    [("openai/gpt-4o", ("openai", "gpt-4o")),
     ("litellm/gemini/gemini-2.5-pro", ("litellm", "gemini/gemini-2.5-pro")),
     ("scripted:runs/a/b.jsonl", ("scripted", "runs/a/b.jsonl")),
     ("baseline", ("baseline", ""))],
)  # fmt: skip
def test_model_names_split_at_the_first_separator(model: str, expected: tuple[str, str]) -> None:
    assert split_model_name(model, {"baseline": None}) == expected


def test_every_hook_is_documented() -> None:
    hooks = {
        name for name, fn in inspect.getmembers(hookspecs, inspect.isfunction)
        if name.startswith("podium_")
    }  # fmt: skip
    documented = set(
        re.findall(r"^### (podium_\w+)$", (REPO / "docs/plugins.md").read_text(), re.M)
    )
    assert hooks, "no hook specs found"
    assert hooks - documented == set(), "hooks missing from docs/plugins.md"
    assert documented - hooks == set(), "docs/plugins.md documents hooks that do not exist"
