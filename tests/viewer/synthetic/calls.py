"""A node's two model calls: the code model's prompt, rendered from the real templates
(``podium.scaffolds.prompts``) with the real memory of earlier nodes (``memory.good_nodes`` on
the tree's best good nodes, more than its 4,000 characters hold), so that every prompt repeats
the task description and data preview and carries the parent's code and output; the review
model's prompt, as ``review.ask_model`` renders it; and answers with the tokens, cost and
latency such prompts and answers would have.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

from podium.records import (
    Action,
    Message,
    ModelRequest,
    ModelResponse,
    Node,
    RequestMeta,
    ToolCall,
    Usage,
)
from podium.scaffolds import memory
from podium.scaffolds.operators import PARENT_OUTPUT_CHARS, format_duration, metric_text
from podium.scaffolds.prompts import Prompts
from podium.scaffolds.review import (
    DESCRIPTION_CHARS_FOR_REVIEW,
    OUTPUT_CHARS_FOR_REVIEW,
    REVIEW_TOOL,
    tail,
)
from podium.tree import SearchTree
from tests.viewer.synthetic.programs import FAMILIES, FEATURES, Program
from tests.viewer.synthetic.task import DATA_PREVIEW, EXEC_TIMEOUT_S, PACKAGES, TaskText

MODEL = "openai/gpt-4.1"
REVIEW_MODEL = "openai/gpt-4.1-mini"
PRICES = {MODEL: (2.0, 8.0), REVIEW_MODEL: (0.4, 1.6)}  # USD per million tokens, in and out
PROMPTS = Prompts()
MEMORY_CHARS = 4000  # search.memory_chars' default
MEMORY_NODES = 40  # more good nodes than the memory can hold (its lines are 200+ characters)
BUG_PLANS: dict[str, Callable[[Program], str]] = {
    "key_error": lambda p: f" Also add {p.extras[-1]} ({_formula(p.extras[-1])}).",
    "memory": lambda p: (
        " Also add a nearest-neighbour feature: the mean L1 distance to the 10 closest passengers."
    ),
    "timeout": lambda p: (
        " Train much longer, with "
        + ", ".join(f"{k}={v}" for k, v in FAMILIES[p.family].slow)
        + "."
    ),
}


def _formula(feature: str) -> str:
    return FEATURES[feature].lines[-1].split("=", 1)[1].strip()


@dataclass(frozen=True)
class Seen:
    """What the operators of a node see: the tree its decision was made on, and the same
    tree's best good nodes only (all its memory can hold; a tree of thousands costs a sort of
    thousands per prompt)."""

    tree: SearchTree
    best: SearchTree


def code_request(
    action: Action,
    parents: list[Node],
    seen: Seen,
    task: TaskText,
    steps_left: int,
    meta: RequestMeta,
) -> ModelRequest:
    """The code model's prompt for ``action``, rendered from the real templates with the values
    ``LLMOperators.values`` gives them."""
    values = {
        "task_description": task.description,
        "data_preview": DATA_PREVIEW,
        "metric_name": task.metric_name,
        "direction": task.direction,
        "exec_timeout": format_duration(EXEC_TIMEOUT_S),
        "packages": PACKAGES,
        "budget": f"Steps left in this search, including this one: {steps_left}.",
        "memory": memory.good_nodes(seen.best, MEMORY_CHARS, action.parent_ids),
        "rules": "",
    }
    if parents:
        parent = parents[0]
        output = parent.exec.output if parent.exec else ""
        values |= {
            "parent_plan": parent.plan or "(none)",
            "parent_code": parent.code.rstrip(),
            "parent_output": tail(output, PARENT_OUTPUT_CHARS),
            "parent_metric": metric_text(parent),
            "bug_reason": parent.bug_reason or "",
            "debug_history": memory.debug_history(seen.tree, parent, MEMORY_CHARS),
        }
    if len(parents) > 1:
        other = parents[1]
        values |= {
            "other_plan": other.plan or "(none)",
            "other_code": other.code.rstrip(),
            "other_metric": metric_text(other),
        }
    return ModelRequest(
        messages=[
            Message(role="system", content=PROMPTS.render("system", values)),
            Message(role="user", content=PROMPTS.render(action.operator, values)),
        ],
        meta=meta,
    )


def review_request(code: str, output: str, task: TaskText) -> ModelRequest:
    """The review model's prompt, as ``review.ask_model`` renders it (its ``meta`` is set once
    its number is known)."""
    values = {
        "task_description": tail(task.description, DESCRIPTION_CHARS_FOR_REVIEW),
        "code": code,
        "output": tail(output, OUTPUT_CHARS_FOR_REVIEW),
        "metric_name": task.metric_name,
        "direction": task.direction,
    }
    return ModelRequest(
        messages=[
            Message(role="system", content=PROMPTS.render("review_system", values)),
            Message(role="user", content=PROMPTS.render("review", values)),
        ],
        tools=[REVIEW_TOOL],
        tool_choice=REVIEW_TOOL.name,
    )


def answered(
    request: ModelRequest,
    model: str,
    rng: random.Random,
    text: str = "",
    tool_call: ToolCall | None = None,
) -> tuple[ModelResponse, int]:
    """An answer with the tokens, cost and latency such a prompt and answer would have, and
    the attempts it took (one call in 30 was retried once, 4 s later)."""
    chars = sum(len(m.content) for m in request.messages)
    tokens_in = chars // 4 + (60 if request.tools else 0)
    tokens_out = len(text) // 4 or 40 + len(str(tool_call.arguments if tool_call else "")) // 4
    price_in, price_out = PRICES[model]
    usage = Usage(
        input_tokens=tokens_in,
        output_tokens=tokens_out,
        calls=1,
        cost_usd=round((tokens_in * price_in + tokens_out * price_out) / 1e6, 6),
    )
    latency = 0.6 + tokens_in / 40_000 + tokens_out / rng.uniform(45.0, 90.0)
    attempts = 2 if rng.random() < 1 / 30 else 1
    latency += 4.0 * (attempts - 1)
    response = ModelResponse(
        text=text,
        tool_call=tool_call,
        usage=usage,
        latency_s=round(latency, 3),
        model=model,
        finish="tool_call" if tool_call else "stop",
    )
    return response, attempts
