"""Turning an execution into a verdict (``podium.scaffolds.review``)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, Literal

import pytest

from podium.errors import ModelAuthError, ModelError, ScriptExhaustedError
from podium.interfaces import Task
from podium.records import (
    ExecResult,
    ExecStatus,
    ModelRequest,
    ModelResponse,
    ToolCall,
)
from podium.scaffolds.prompts import Prompts
from podium.scaffolds.review import ModelReview, ask_model, judge, metric_from_output


class FakeTask(Task):
    """The smallest Task the review needs."""

    def __init__(self, lower_is_better: bool = False, description: str = "Predict y.") -> None:
        self.id = "test/fake"
        self.name = "Fake"
        self.description = description
        self.public_dir = Path("/nonexistent/public")
        self.lower_is_better = lower_is_better
        self.metric_name = "rmse" if lower_is_better else "accuracy"

    def check_submission(self, path: Path) -> str | None:
        return None


class FakeModel:
    """A ModelClient that records requests and answers with a fixed response or error."""

    def __init__(self, answer: ModelResponse | Exception) -> None:
        self.answer = answer
        self.calls: list[tuple[ModelRequest, str]] = []

    async def ask(self, request: ModelRequest, role: Literal["code", "review"]) -> ModelResponse:
        self.calls.append((request, role))
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer


def ok(output: str = "VALIDATION_METRIC: 0.8\n") -> ExecResult:
    return ExecResult(status=ExecStatus.OK, output=output, duration_s=1.0)


def review(
    is_bug: bool = False, metric: float | None = None, summary: str = "Fine."
) -> ModelReview:
    return ModelReview(is_bug=is_bug, summary=summary, metric=metric)


def review_call(**arguments: Any) -> ModelResponse:
    return ModelResponse(tool_call=ToolCall(name="submit_review", arguments=arguments))


# --- metric_from_output ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("output", "expected"),
    [
        ("VALIDATION_METRIC: 0.5", 0.5),
        ("VALIDATION_METRIC: 0.5\n", 0.5),
        ("VALIDATION_METRIC:0.25\n", 0.25),
        ("  VALIDATION_METRIC: 0.5  \n", 0.5),
        ("VALIDATION_METRIC = 0.5\n", 0.5),
        ("VALIDATION_METRIC: -1.5\n", -1.5),
        ("VALIDATION_METRIC: 1e-3\n", 0.001),
        ("VALIDATION_METRIC: 3\n", 3.0),
    ],
)
def test_metric_line_formats(output: str, expected: float) -> None:
    assert metric_from_output(output) == pytest.approx(expected)


def test_metric_line_among_other_output() -> None:
    output = "loading data\nepoch 1 loss 0.7\nVALIDATION_METRIC: 0.83\nwrote submission.csv\n"
    assert metric_from_output(output) == pytest.approx(0.83)


def test_last_metric_line_wins() -> None:
    output = "VALIDATION_METRIC: 0.1\nfold 2\nVALIDATION_METRIC: 0.7\ndone\n"
    assert metric_from_output(output) == pytest.approx(0.7)


def test_missing_metric_line_gives_none() -> None:
    assert metric_from_output("") is None
    assert metric_from_output("accuracy: 0.9\nvalidation metric 0.9\n") is None


@pytest.mark.parametrize("raw", ["nan", "NaN", "inf", "-inf", "abc", "0.5%"])
def test_unusable_metric_value_gives_an_explanation(raw: str) -> None:
    result = metric_from_output(f"VALIDATION_METRIC: {raw}\n")
    assert isinstance(result, str)
    assert raw in result


def test_unusable_last_line_is_not_replaced_by_an_earlier_number() -> None:
    result = metric_from_output("VALIDATION_METRIC: 0.9\nVALIDATION_METRIC: nan\n")
    assert isinstance(result, str)


@pytest.mark.parametrize(
    "line",
    [
        "VALIDATION_METRIC: 0.5 (accuracy)",
        "VALIDATION_METRIC: 0.5 on fold 1",
        "Best VALIDATION_METRIC: 0.5",
    ],
)
def test_line_with_other_text_is_not_a_metric_line(line: str) -> None:
    assert metric_from_output(f"{line}\n") is None
    # so an earlier clean line is the last metric line
    assert metric_from_output(f"VALIDATION_METRIC: 0.4\n{line}\n") == pytest.approx(0.4)


# --- judge -------------------------------------------------------------------------------


def test_metric_line_beats_the_review_metric() -> None:
    verdict = judge(FakeTask(), ok("VALIDATION_METRIC: 0.8\n"), review(metric=0.3), None)
    assert verdict.metric is not None
    assert verdict.metric.value == pytest.approx(0.8)
    assert not verdict.is_buggy
    assert verdict.bug_reason is None
    assert verdict.summary == "Fine."


def test_review_metric_is_used_when_the_line_is_missing() -> None:
    verdict = judge(FakeTask(), ok("accuracy 0.3\n"), review(metric=0.3), None)
    assert verdict.metric is not None
    assert verdict.metric.value == pytest.approx(0.3)
    assert not verdict.is_buggy


@pytest.mark.parametrize("lower_is_better", [True, False])
@pytest.mark.parametrize("output", ["VALIDATION_METRIC: 0.8\n", "no line\n"])
def test_direction_always_comes_from_the_task(lower_is_better: bool, output: str) -> None:
    verdict = judge(FakeTask(lower_is_better), ok(output), review(metric=0.8), None)
    assert verdict.metric is not None
    assert verdict.metric.lower_is_better is lower_is_better


@pytest.mark.parametrize(
    ("result", "reason_part"),
    [
        (
            ExecResult(
                status=ExecStatus.ERROR,
                output="VALIDATION_METRIC: 0.8\n",
                error_name="KeyError",
                error_value="'label'",
            ),
            "KeyError",
        ),
        (
            ExecResult(
                status=ExecStatus.TIMEOUT,
                output="VALIDATION_METRIC: 0.8\n",
                timed_out=True,
                killed_reason="deadline of 60 s",
            ),
            "timed out",
        ),
        (
            ExecResult(
                status=ExecStatus.DIED,
                output="VALIDATION_METRIC: 0.8\n",
                killed_reason="out of memory",
            ),
            "died",
        ),
    ],
    ids=["exception", "timeout", "kernel-died"],
)
def test_failed_execution_is_buggy_whatever_the_review_says(
    result: ExecResult, reason_part: str
) -> None:
    verdict = judge(FakeTask(), result, review(is_bug=False, metric=0.8), None)
    assert verdict.is_buggy
    assert verdict.bug_reason is not None
    assert reason_part in verdict.bug_reason


def test_review_saying_bug_makes_the_node_buggy() -> None:
    verdict = judge(FakeTask(), ok(), review(is_bug=True, summary="Target leaks in."), None)
    assert verdict.is_buggy
    assert verdict.bug_reason is not None
    assert "Target leaks in." in verdict.bug_reason


@pytest.mark.parametrize(
    "the_review", [review(metric=None), "review call failed: boom"], ids=["review", "no-review"]
)
def test_no_metric_is_buggy(the_review: ModelReview | str) -> None:
    verdict = judge(FakeTask(), ok("trained\n"), the_review, None)
    assert verdict.metric is None
    assert verdict.is_buggy
    assert verdict.bug_reason


def test_unusable_metric_line_without_review_metric_is_buggy_and_says_why() -> None:
    verdict = judge(FakeTask(), ok("VALIDATION_METRIC: nan\n"), review(metric=None), None)
    assert verdict.metric is None
    assert verdict.is_buggy
    assert verdict.bug_reason is not None
    assert "nan" in verdict.bug_reason


def test_submission_problem_makes_the_node_buggy() -> None:
    problem = "submission.csv has 99 rows, expected 100"
    verdict = judge(FakeTask(), ok(), review(), problem)
    assert verdict.is_buggy
    assert verdict.bug_reason == problem
    assert verdict.metric is not None  # the metric is still recorded


def test_failed_review_still_lets_a_clean_run_be_good() -> None:
    verdict = judge(
        FakeTask(True), ok("VALIDATION_METRIC: 0.12\n"), "review call failed: 500", None
    )
    assert not verdict.is_buggy
    assert verdict.bug_reason is None
    assert verdict.metric is not None
    assert verdict.metric.value == pytest.approx(0.12)
    assert verdict.metric.lower_is_better is True
    assert "review call failed: 500" in verdict.summary


# --- ask_model ---------------------------------------------------------------------------


def ask(model: FakeModel, task: Task | None = None, output: str = "trained\n") -> Any:
    return asyncio.run(ask_model(task or FakeTask(), "print('hi')\n", ok(output), model, Prompts()))


def test_ask_model_sends_the_review_tool_and_forces_it() -> None:
    model = FakeModel(review_call(is_bug=False, summary="ok", metric=0.5))
    ask(model, FakeTask(lower_is_better=True, description="Predict house prices."), "SCORE 42\n")
    assert len(model.calls) == 1
    request, role = model.calls[0]
    assert role == "review"
    assert [t.name for t in request.tools] == ["submit_review"]
    assert request.tool_choice == "submit_review"
    assert set(request.tools[0].parameters["required"]) == {"is_bug", "summary", "metric"}
    prompt = "\n".join(m.content for m in request.messages)
    assert "Predict house prices." in prompt
    assert "print('hi')" in prompt
    assert "SCORE 42" in prompt


def test_ask_model_returns_the_tool_call_as_a_review() -> None:
    model = FakeModel(review_call(is_bug=True, summary="  Leaks the target.  ", metric=0.75))
    result = ask(model)
    assert result == ModelReview(is_bug=True, summary="Leaks the target.", metric=0.75)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [(1, 1.0), (0.5, 0.5), (None, None), ("0.5", None), (True, None), (float("nan"), None)],
)
def test_ask_model_keeps_only_finite_numbers_as_metric(raw: Any, expected: float | None) -> None:
    result = ask(FakeModel(review_call(is_bug=False, summary="s", metric=raw)))
    assert isinstance(result, ModelReview)
    assert result.metric == expected


@pytest.mark.parametrize(
    "response",
    [
        ModelResponse(text="The run looks fine, metric 0.9."),
        ModelResponse(tool_call=ToolCall(name="other_tool", arguments={"is_bug": False})),
    ],
    ids=["text-only", "other-tool"],
)
def test_ask_model_without_the_tool_call_gives_a_string(response: ModelResponse) -> None:
    result = ask(FakeModel(response))
    assert isinstance(result, str)
    assert result


@pytest.mark.parametrize(
    "error", [ModelError("rate limited"), ScriptExhaustedError("no answer left")]
)
def test_ask_model_failure_gives_a_string(error: ModelError) -> None:
    result = ask(FakeModel(error))
    assert isinstance(result, str)
    assert str(error) in result


def test_ask_model_reraises_auth_errors() -> None:
    with pytest.raises(ModelAuthError):
        ask(FakeModel(ModelAuthError("invalid api key")))
