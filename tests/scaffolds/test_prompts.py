"""Prompt templates, their overrides, and what the LLM operators put in them."""

from __future__ import annotations

import asyncio
import dataclasses
import random
import re
import shutil
from pathlib import Path
from string import Template
from typing import Literal

import pytest

from podium.benchmarks.folder import FolderTask
from podium.errors import ConfigError
from podium.interfaces import BudgetView, OperatorContext
from podium.records import (
    Action,
    EnvironmentInfo,
    ExecResult,
    ExecStatus,
    Metric,
    ModelRequest,
    ModelResponse,
    Node,
    NodeState,
)
from podium.scaffolds.operators import LLMOperators
from podium.scaffolds.prompts import DEFAULTS, PLACEHOLDERS, Prompts, validate_prompt_overrides
from podium.tree import SearchTree

# --- templates ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(DEFAULTS))
def test_defaults_render_with_every_placeholder_filled(name: str) -> None:
    used = Template(DEFAULTS[name]).get_identifiers()
    assert set(used) <= PLACEHOLDERS[name]
    values = {key: f"<<{key}>>" for key in PLACEHOLDERS[name]}
    text = Prompts().render(name, values)
    for key in used:
        assert f"<<{key}>>" in text
    assert not re.search(r"\$\{?[A-Za-z_]", text), "a placeholder was left unfilled"


def test_default_operator_templates_use_their_inputs() -> None:
    def used(name: str) -> set[str]:
        return set(Template(DEFAULTS[name]).get_identifiers())

    assert {"task_description", "data_preview", "memory", "budget"} <= used("draft")
    assert {"parent_code", "parent_output", "parent_metric"} <= used("improve")
    assert {"parent_code", "parent_output", "bug_reason", "debug_history"} <= used("debug")
    assert {"code", "output"} <= used("review")


def test_missing_values_render_empty() -> None:
    text = Prompts().render("draft", {})
    assert "$" not in text
    assert "# Task" in text


def test_override_replaces_a_template() -> None:
    prompts = Prompts({"draft": "Solve: $task_description ($$5 prize)"})
    assert (
        prompts.render("draft", {"task_description": "predict y"}) == "Solve: predict y ($5 prize)"
    )
    # the other templates keep their defaults
    values = {"metric_name": "auc", "direction": "higher is better"}
    assert prompts.render("system", values) == Prompts().render("system", values)


@pytest.mark.parametrize(
    ("overrides", "name"),
    [
        ({"drafts": "Solve $task_description"}, "drafts"),  # unknown template
        ({"draft": "Improve $parent_code"}, "draft"),  # placeholder of another template
        ({"system": "Hello $who"}, "system"),  # unknown placeholder
        ({"draft": "Costs $ 5"}, "draft"),  # a lone $
        ({"debug": "Fix ${bug_reason"}, "debug"),  # unclosed brace
    ],
)
def test_bad_overrides_raise_config_error_naming_the_template(
    overrides: dict[str, str], name: str
) -> None:
    with pytest.raises(ConfigError) as excinfo:
        validate_prompt_overrides(overrides)
    assert f"prompts.{name}" in str(excinfo.value)
    with pytest.raises(ConfigError, match=re.escape(f"prompts.{name}")):
        Prompts(overrides)


def test_unknown_placeholder_error_names_it_and_lists_the_available_ones() -> None:
    with pytest.raises(ConfigError) as excinfo:
        validate_prompt_overrides({"draft": "Solve $task_description with $model_name"})
    assert "model_name" in str(excinfo.value)
    assert excinfo.value.hint is not None
    assert "task_description" in excinfo.value.hint


def test_valid_overrides_pass() -> None:
    validate_prompt_overrides(
        {"draft": "$task_description\n$data_preview\n$budget", "review": "$code $$ $output"}
    )


# --- what the LLM operators send ---------------------------------------------------------


class RecordingModel:
    def __init__(self) -> None:
        self.requests: list[ModelRequest] = []

    async def ask(self, request: ModelRequest, role: Literal["code", "review"]) -> ModelResponse:
        self.requests.append(request)
        return ModelResponse(text="A plan.\n\n```python\nprint('VALIDATION_METRIC: 1')\n```\n")


ENVIRONMENT = EnvironmentInfo(
    python_version="3.11.7", packages={"numpy": "1.26.4", "scikit-learn": "1.5.1"}
)


def context(
    task: FolderTask,
    action: Action | None = None,
    parents: list[Node] | None = None,
    steps_left: int = 7,
    time_left_s: float | None = None,
) -> OperatorContext:
    tree = SearchTree(lower_is_better=task.lower_is_better)
    for parent in parents or []:
        tree.add(parent)
    return OperatorContext(
        task=task,
        action=action or Action(operator="draft"),
        parents=parents or [],
        tree=tree,
        environment=ENVIRONMENT,
        budget=BudgetView(steps_left=steps_left, time_left_s=time_left_s, exec_timeout_s=600),
        model=RecordingModel(),
        rng=random.Random(0),
    )


def sent_prompt(ctx: OperatorContext) -> str:
    """What ``propose`` sends to the model: the system and operator messages together."""
    asyncio.run(LLMOperators(Prompts()).propose(ctx))
    model = ctx.model
    assert isinstance(model, RecordingModel)
    (request,) = model.requests
    assert [m.role for m in request.messages] == ["system", "user"]
    return "\n".join(m.content for m in request.messages)


def test_draft_prompt_has_what_the_solution_needs(toy_task: FolderTask) -> None:
    text = sent_prompt(context(toy_task, steps_left=7))
    assert "VALIDATION_METRIC" in text
    assert "./input/" in text
    assert "./submission/submission.csv" in text
    assert "numpy 1.26.4" in text
    assert "scikit-learn 1.5.1" in text
    assert re.search(r"[Ss]teps left[^\n]*\b7\b", text)
    assert "accuracy" in text  # the metric and its direction come from the task
    assert "higher is better" in text
    assert toy_task.description.strip() in text
    assert "train.csv" in text  # the data preview


def test_draft_prompt_has_no_absolute_path(toy_task: FolderTask, data_dir: Path) -> None:
    text = sent_prompt(context(toy_task))
    assert str(data_dir) not in text
    assert str(toy_task.public_dir) not in text
    assert not re.search(r"(?<![\w.])/(tmp|home|root|work|var|usr|Users)/", text)


def test_draft_prompt_does_not_depend_on_where_the_data_lives(
    toy_task: FolderTask, tmp_path: Path
) -> None:
    moved = tmp_path / "elsewhere" / "public"
    shutil.copytree(toy_task.public_dir, moved)
    elsewhere = dataclasses.replace(toy_task, public_dir=moved)
    assert sent_prompt(context(toy_task)) == sent_prompt(context(elsewhere))


def test_time_left_is_mentioned_coarsely(toy_task: FolderTask) -> None:
    assert "Time left" not in sent_prompt(context(toy_task, time_left_s=None))
    a = sent_prompt(context(toy_task, time_left_s=5 * 3600 + 11))
    b = sent_prompt(context(toy_task, time_left_s=5 * 3600 + 1234))
    assert "Time left: about 5 hours" in a
    assert a == b  # seconds of drift do not change the prompt


def test_improve_and_debug_prompts_show_the_parent(toy_task: FolderTask) -> None:
    good = Node(
        id=1,
        operator="draft",
        state=NodeState.DONE,
        plan="Logistic regression.",
        code="print('VALIDATION_METRIC: 0.85')\n",
        exec=ExecResult(status=ExecStatus.OK, output="fitting...\nVALIDATION_METRIC: 0.85\n"),
        metric=Metric(value=0.85, lower_is_better=False),
    )
    improve = sent_prompt(context(toy_task, Action(operator="improve", parent_ids=(1,)), [good]))
    assert "print('VALIDATION_METRIC: 0.85')" in improve
    assert "fitting..." in improve
    assert "Validation metric: 0.85" in improve

    buggy = good.model_copy(
        update={"id": 2, "is_buggy": True, "metric": None, "bug_reason": "KeyError: 'label'"}
    )
    debug = sent_prompt(context(toy_task, Action(operator="debug", parent_ids=(2,)), [buggy]))
    assert "KeyError: 'label'" in debug
    assert "print('VALIDATION_METRIC: 0.85')" in debug


def test_crossover_template_uses_both_parents() -> None:
    used = set(Template(DEFAULTS["crossover"]).get_identifiers())
    assert {"parent_plan", "parent_code", "parent_output", "parent_metric"} <= used
    assert {"other_plan", "other_code", "other_metric"} <= used
    assert {"task_description", "data_preview", "memory", "budget"} <= used
    assert "crossover" in LLMOperators.operators


def test_crossover_prompt_shows_both_parents(toy_task: FolderTask) -> None:
    first = Node(
        id=1,
        operator="draft",
        state=NodeState.DONE,
        plan="Gradient boosting on the raw columns.",
        code="print('VALIDATION_METRIC: 0.85')  # boosting\n",
        exec=ExecResult(status=ExecStatus.OK, output="boosting...\nVALIDATION_METRIC: 0.85\n"),
        metric=Metric(value=0.85, lower_is_better=False),
    )
    second = Node(
        id=2,
        operator="improve",
        parent_ids=(1,),
        state=NodeState.DONE,
        plan="Random forest with a family-size feature.",
        code="print('VALIDATION_METRIC: 0.8')  # forest\n",
        metric=Metric(value=0.8, lower_is_better=False),
    )
    action = Action(operator="crossover", parent_ids=(1, 2))
    text = sent_prompt(context(toy_task, action, [first, second]))
    assert "print('VALIDATION_METRIC: 0.85')  # boosting" in text
    assert "print('VALIDATION_METRIC: 0.8')  # forest" in text
    assert "Gradient boosting on the raw columns." in text
    assert "Random forest with a family-size feature." in text
    assert "boosting..." in text  # the first parent's output
    assert "Validation metric: 0.85 (higher is better)" in text
    assert "Validation metric: 0.8 (higher is better)" in text
    assert "(none)" not in text  # both plans filled
    assert not re.search(r"\$\{?[A-Za-z_]", text), "a placeholder was left unfilled"
