"""A benchmark's rules for agents (``Task.rules``) at the end of the code model's system prompt,
and a prompt exactly as before for a task without rules (so recorded runs still replay)."""

from __future__ import annotations

from pathlib import Path

from podium.benchmarks.data_folder import MLEBENCH_RULES, DataFolderTask
from podium.benchmarks.folder import FolderTask
from podium.scaffolds.prompts import PLACEHOLDERS, SYSTEM, Prompts, rules_section

VALUES = {"metric_name": "accuracy", "direction": "higher is better", "exec_timeout": "1 hour",
          "packages": "numpy 2.0"}  # fmt: skip


def task_with(rules: str | None) -> DataFolderTask:
    return DataFolderTask(id="t", name="t", description="# T", public_dir=Path("/nonexistent"),
                          lower_is_better=False, metric_name="accuracy", rules=rules)  # fmt: skip


def test_without_rules_the_system_prompt_is_unchanged(titanic: FolderTask) -> None:
    assert titanic.rules is None and rules_section(titanic) == ""
    assert rules_section(task_with("  \n")) == ""
    text = Prompts().render("system", {**VALUES, "rules": rules_section(titanic)})
    assert text == Prompts().render("system", VALUES)  # the value left out renders the same
    assert text.endswith("in one ```python code block.\n")
    assert SYSTEM.endswith("code block.\n$rules")


def test_the_rules_end_the_system_prompt() -> None:
    assert "rules" in PLACEHOLDERS["system"]
    text = Prompts().render("system", {**VALUES, "rules": rules_section(task_with(MLEBENCH_RULES))})
    head, _, tail = text.partition("in one ```python code block.\n")
    assert "Rules for every solution:" in head
    assert tail == (
        "\nThe benchmark's rules (they take priority over the task description):\n"
        f"{MLEBENCH_RULES}\n"
    )


def test_an_override_of_the_system_prompt_may_place_the_rules() -> None:
    prompts = Prompts({"system": "Rules first:\n$rules\nThen: $metric_name"})
    text = prompts.render("system", {**VALUES, "rules": rules_section(task_with("- be good"))})
    assert text.startswith("Rules first:\n\nThe benchmark's rules") and "- be good" in text
