"""The leak check: is a solution's validation score honest, or did its training see the rows
it is validated on (or the test set's labels)? A leaked score ranks a broken solution first and
submits it, the costliest failure a search can make, so a flagged node is made buggy (and a
debug step may fix it: the check, its question and answer are recorded like any call).

``search.leak_check`` says when it runs, after a solution's review found it good:

* ``off`` (the default, as in MLE-STAR's sample): never;
* ``suspicious``: when the validation score is perfect (1 where higher is better, 0 where
  lower is), MLEvolve's trigger. With a review model, the model is asked; without one (the
  ``baseline`` model) the perfect score is itself the flag, since no honest validation of a
  real task scores perfectly;
* ``always``: every good solution is put to the review model (MLE-STAR's checker; it needs a
  review model).

The review model answers through the function ``report_leakage``; an answer without it leaves
the node as it was (a check that cannot be read never fails a node).
"""

from __future__ import annotations

from typing import Literal

from podium.errors import ModelError, ModelFatalError
from podium.interfaces import ModelClient, Task
from podium.records import REVIEW, Message, Metric, ModelRequest, ToolSpec
from podium.scaffolds.prompts import Prompts
from podium.scaffolds.review import DESCRIPTION_CHARS_FOR_REVIEW, OUTPUT_CHARS_FOR_REVIEW, tail

LeakCheck = Literal["off", "suspicious", "always"]
PERFECT_TOLERANCE = 1e-9
EVIDENCE_CHARS = 500

LEAK_TOOL = ToolSpec(
    name="report_leakage",
    description="Report whether the solution's validation score is leaked.",
    parameters={
        "type": "object",
        "properties": {
            "leakage": {
                "type": "boolean",
                "description": "true if training saw validation rows, test labels or the target",
            },
            "evidence": {
                "type": "string",
                "description": "the lines of code that leak, and how; empty when none",
            },
        },
        "required": ["leakage", "evidence"],
    },
)


def perfect(metric: Metric) -> bool:
    """A validation score no honest solution of a real task reaches: 1 (or more) where
    higher is better (accuracy, AUC, R², F1, MAP@k...), 0 (or less) where lower is (errors,
    losses)."""
    if metric.lower_is_better:
        return metric.value <= PERFECT_TOLERANCE
    return metric.value >= 1 - PERFECT_TOLERANCE


def due(mode: LeakCheck, metric: Metric) -> bool:
    """Whether a good solution with ``metric`` is checked under ``mode``."""
    return mode == "always" or (mode == "suspicious" and perfect(metric))


async def check(
    task: Task, code: str, output: str, metric: Metric, model: ModelClient | None, prompts: Prompts
) -> str | None:
    """Why the solution's score is leaked (its ``bug_reason``), or None. ``model`` None: no
    review model, and a perfect score is the flag."""
    if model is None:
        if not perfect(metric):
            return None
        return (
            f"leak suspected: a perfect validation score ({metric.value:.6g}) usually means "
            "training saw the validation rows (search.leak_check)"
        )
    values = {
        "task_description": tail(task.description, DESCRIPTION_CHARS_FOR_REVIEW),
        "code": code,
        "output": tail(output, OUTPUT_CHARS_FOR_REVIEW),
        "metric": f"{metric.value:.6g}",
    }
    request = ModelRequest(
        messages=[
            Message(role="system", content=prompts.render("review_system", values)),
            Message(role="user", content=prompts.render("leak_check", values)),
        ],
        tools=[LEAK_TOOL],
        tool_choice=LEAK_TOOL.name,
    )
    try:
        response = await model.ask(request, role=REVIEW)
    except ModelFatalError:
        raise
    except ModelError:
        return None
    call = response.tool_call
    if call is None or call.name != LEAK_TOOL.name or call.arguments.get("leakage") is not True:
        return None
    evidence = " ".join(str(call.arguments.get("evidence", "")).split())[:EVIDENCE_CHARS]
    return f"leak: {evidence or 'the review model found the validation score leaked'}"
