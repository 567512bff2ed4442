"""Turns an execution into a verdict: metric, bug or not, and a summary.

The metric comes from the solution's own ``VALIDATION_METRIC: <number>`` line first; the model's
structured review (``submit_review``) gives the bug verdict and summary, and the metric only when
the line is missing. Hard checks (exception, timeout, no metric, missing or malformed
submission) make a node buggy whatever the review says. The direction comes from the task.
"""

from __future__ import annotations

import bisect
import json
import math
import re
from dataclasses import dataclass
from typing import Any

from podium.errors import ModelContextLengthError, ModelError, ModelFatalError
from podium.interfaces import ModelClient, Task
from podium.records import (
    REVIEW,
    ExecResult,
    ExecStatus,
    Message,
    Metric,
    ModelRequest,
    ModelResponse,
    ToolSpec,
)
from podium.scaffolds.prompts import Prompts

METRIC_LINE = re.compile(
    r"^[ \t]*VALIDATION_METRIC[ \t]*[:=][ \t]*(?P<value>\S+)[ \t]*$", re.MULTILINE
)
REVIEW_TOOL = ToolSpec(
    name="submit_review",
    description="Submit the review of one execution of a solution.",
    parameters={
        "type": "object",
        "properties": {
            "is_bug": {
                "type": "boolean",
                "description": "true if the run failed or its results cannot be trusted",
            },
            "summary": {
                "type": "string",
                "description": "2-3 sentences: what was tried and what came out",
            },
            "metric": {
                "type": ["number", "null"],
                "description": "the validation score the output reports, or null",
            },
        },
        "required": ["is_bug", "summary", "metric"],
    },
)
FINDINGS_CHARS = 1500  # an analysis's findings without a review model: its output's end
_OBJECT_START = re.compile(r'\{\s*"')  # where a JSON object with a key may begin
JSON_WINDOW = 256 * 1024  # characters: a review object is far shorter
JSON_READ_BUDGET = 16_000_000  # characters: well under a second of the C decoder
OUTPUT_CHARS_FOR_REVIEW = 8000
DESCRIPTION_CHARS_FOR_REVIEW = 4000
SHORT_OUTPUT_CHARS = 2000  # after a context-length error
SHORT_DESCRIPTION_CHARS = 1000


def metric_from_output(output: str) -> float | str | None:
    """The last ``VALIDATION_METRIC`` line's value; a string explains an unusable value."""
    matches = METRIC_LINE.findall(output)
    if not matches:
        return None
    raw = matches[-1]
    try:
        value = float(raw)
    except ValueError:
        return f"VALIDATION_METRIC line holds {raw!r}, not a number"
    if not math.isfinite(value):
        return f"VALIDATION_METRIC is {raw}"
    return value


@dataclass(frozen=True)
class ModelReview:
    is_bug: bool
    summary: str
    metric: float | None


@dataclass(frozen=True)
class Verdict:
    metric: Metric | None
    is_buggy: bool
    bug_reason: str | None
    summary: str


def tail(text: str, limit: int) -> str:
    return text if len(text) <= limit else "[...]\n" + text[-limit:]


async def ask_model(
    task: Task,
    code: str,
    result: ExecResult,
    model: ModelClient,
    prompts: Prompts,
    template: str = "review",
) -> ModelReview | str:
    """The model's structured review (under ``template``: ``review`` for a solution,
    ``analysis_review`` for an analysis), or a string saying why there is none."""
    values = {
        "task_description": tail(task.description, DESCRIPTION_CHARS_FOR_REVIEW),
        "code": code,
        "output": tail(result.output, OUTPUT_CHARS_FOR_REVIEW),
        "metric_name": task.metric_name,
        "direction": direction(task),
    }
    try:
        response = await _ask(model, prompts, values, task, result, template)
    except ModelFatalError:
        raise
    except ModelError as exc:
        return f"review call failed: {exc}"
    call = response.tool_call
    if call is not None and call.name == REVIEW_TOOL.name:
        args = call.arguments
    elif (found := review_from_text(response.text)) is not None:
        args = found  # a model (or server) without tool calls answered in JSON text
    else:
        return "the review model did not call submit_review"
    raw = args.get("metric")
    is_number = isinstance(raw, int | float) and not isinstance(raw, bool)
    metric = float(raw) if is_number and raw is not None else None
    return ModelReview(
        is_bug=bool(args.get("is_bug", False)),
        summary=str(args.get("summary", "")).strip(),
        metric=metric if metric is not None and math.isfinite(metric) else None,
    )


async def _ask(
    model: ModelClient,
    prompts: Prompts,
    values: dict[str, str],
    task: Task,
    result: ExecResult,
    template: str,
) -> ModelResponse:
    try:
        return await model.ask(_request(prompts, values, template), role=REVIEW)
    except ModelContextLengthError:  # once more, with the long parts cut
        short = values | {
            "task_description": tail(task.description, SHORT_DESCRIPTION_CHARS),
            "output": tail(result.output, SHORT_OUTPUT_CHARS),
        }
        return await model.ask(_request(prompts, short, template), role=REVIEW)


def _request(prompts: Prompts, values: dict[str, str], template: str) -> ModelRequest:
    return ModelRequest(
        messages=[
            Message(role="system", content=prompts.render("review_system", values)),
            Message(role="user", content=prompts.render(template, values)),
        ],
        tools=[REVIEW_TOOL],
        tool_choice=REVIEW_TOOL.name,
    )


def review_from_text(text: str) -> dict[str, Any] | None:
    """The review's arguments written as a JSON object in the text (the last one that parses
    and has ``is_bug``), for models that answer in prose instead of calling the function.

    Bounded: only an object with an ``"is_bug"`` within ``JSON_WINDOW`` characters of its
    start is tried, from the end of the text, each on at most that window (a failed decode
    also counts the lines before its error: on the whole text, every try was linear and the
    search quadratic), and the tries stop once they have read ``JSON_READ_BUDGET`` characters
    in all; nesting too deep to decode is no review, never a crash."""
    keys = [m.start() for m in re.finditer('"is_bug"', text)]
    decoder = json.JSONDecoder()
    budget = JSON_READ_BUDGET
    for start in reversed([m.start() for m in _OBJECT_START.finditer(text)]):
        nearest = bisect.bisect_left(keys, start)
        if nearest == len(keys) or keys[nearest] - start > JSON_WINDOW:
            continue
        window = text[start : start + JSON_WINDOW]
        budget -= 2 * len(window)
        try:
            value, _ = decoder.raw_decode(window)
        except (json.JSONDecodeError, RecursionError):
            value = None
        if isinstance(value, dict) and "is_bug" in value:
            return value
        if budget <= 0:
            break
    return None


def direction(task: Task) -> str:
    return "lower is better" if task.lower_is_better else "higher is better"


def judge(
    task: Task,
    result: ExecResult,
    review: ModelReview | str | None,
    submission_problem: str | None,
) -> Verdict:
    """Combine the metric line, the model's review and the hard checks into one verdict."""
    line = metric_from_output(result.output)
    model_review = review if isinstance(review, ModelReview) else None
    # The review's metric stands in only for a *missing* line: a line printing nan is a bug.
    value = line if isinstance(line, float) else None
    if line is None and model_review is not None:
        value = model_review.metric
    metric = (
        Metric(value=value, lower_is_better=task.lower_is_better) if value is not None else None
    )
    reasons = [
        _exec_problem(result),
        f"review: {model_review.summary}" if model_review and model_review.is_bug else None,
        _metric_problem(line, metric),
        submission_problem,
    ]
    bug = next((r for r in reasons if r), None)
    summary = model_review.summary if model_review else f"({review})" if review else ""
    return Verdict(metric=metric, is_buggy=bug is not None, bug_reason=bug, summary=summary)


def judge_analysis(result: ExecResult, review: ModelReview | str | None) -> Verdict:
    """An analysis's verdict: buggy when it did not run through (or the review says its
    results cannot be trusted); never a metric; its findings are the review's summary, or,
    without a review model, the end of its output."""
    model_review = review if isinstance(review, ModelReview) else None
    reasons = [
        _exec_problem(result),
        f"review: {model_review.summary}" if model_review and model_review.is_bug else None,
    ]
    bug = next((r for r in reasons if r), None)
    if model_review is not None and model_review.summary:
        findings = model_review.summary
    else:
        findings = tail(result.output.strip(), FINDINGS_CHARS)
    return Verdict(metric=None, is_buggy=bug is not None, bug_reason=bug, summary=findings)


def _exec_problem(result: ExecResult) -> str | None:
    if result.status is ExecStatus.TIMEOUT:
        return f"timed out ({result.killed_reason})"
    if result.status is ExecStatus.DIED:
        return f"the kernel died ({result.killed_reason})"
    if result.status is ExecStatus.ERROR:
        return f"{result.error_name}: {result.error_value}"
    return None


def _metric_problem(line: float | str | None, metric: Metric | None) -> str | None:
    if isinstance(line, str):
        return line
    if metric is None:
        return "no VALIDATION_METRIC line in the output and no metric from the review"
    return None
