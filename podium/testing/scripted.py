"""Writing files for the ``scripted:`` model: a whole model session as a list of answers.

The format is that of ``podium calls export`` (see docs/backends.md); these helpers build the
common lines. The n-th code call of a run gets the n-th ``code`` line, likewise for the other
roles (``plan``, ``review``, an operator's own).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any


def code_answer(code: str, plan: str = "A plan.", **extra: Any) -> dict[str, Any]:
    """A code model's answer: the plan, then the code in a fenced block."""
    return {"role": "code", "text": f"{plan}\n\n```python\n{code}```\n", **extra}


def plan_answer(plan: str, **extra: Any) -> dict[str, Any]:
    """A planner's answer (``search.planning = "separate"``): the plan alone, in prose."""
    return {"role": "plan", "text": plan, **extra}


def review_answer(
    is_bug: bool = False, summary: str = "Looks fine.", metric: float | None = None, **extra: Any
) -> dict[str, Any]:
    """A review model's ``submit_review`` call."""
    args = {"is_bug": is_bug, "summary": summary, "metric": metric}
    return {"role": "review", "tool_call": {"name": "submit_review", "arguments": args}, **extra}


def node_answers(code: str, plan: str = "A plan.", **review: Any) -> list[dict[str, Any]]:
    """The code answer and the review answer of one node that gets executed."""
    return [code_answer(code, plan), review_answer(**review)]


def cell_call(code: str, text: str = "", **extra: Any) -> dict[str, Any]:
    """An agentic node's turn: the model runs ``code`` as its kernel's next cell."""
    call = {"name": "run_cell", "arguments": {"code": code}}
    return {"role": "code", "text": text, "tool_call": call, **extra}


def finish_call(plan: str = "A plan.", **extra: Any) -> dict[str, Any]:
    """An agentic node's last turn: the model ends the node with its plan."""
    return {"role": "code", "tool_call": {"name": "finish", "arguments": {"plan": plan}}, **extra}


def write_script(path: Path, answers: Iterable[Mapping[str, Any] | list[dict[str, Any]]]) -> Path:
    """Write answers (or lists of them, e.g. from :func:`node_answers`) as a JSONL script."""
    flat: list[Mapping[str, Any]] = []
    for item in answers:
        flat.extend(item if isinstance(item, list) else [item])
    path.write_text("".join(json.dumps(a) + "\n" for a in flat), encoding="utf-8")
    return path
