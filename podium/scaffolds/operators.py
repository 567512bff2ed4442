"""The LLM operator set: draft, improve, debug, crossover, ablate and refine as prompts to the
code model.

Each operator renders its template from the task, a data preview, the solutions' packages,
what is left of the budget, its parent(s), the nodes it cites and a bounded memory, asks the
model, and parses a plan and code out of the answer. A crossover has two parents: the first
fills the ``parent_*`` values, the second the ``other_*`` ones. ``ablate`` (after MLE-STAR)
makes an analysis node: a script that scores its parent with each main part removed and prints
``ABLATION <part>: <score>`` lines; ``refine`` changes the one part of its parent that the
findings of its analyses (the cited analyses, else the parent's latest) show matters most, as
an edit of the parent's code.

``edit_format`` says how code comes back from an operator that changes one parent (``improve``,
``debug``): ``whole``, the complete program (AIDE's way), or ``edit``, SEARCH/REPLACE blocks of
the parent's code (``edit_job``; :mod:`podium.code_edit`) that the loop applies (MLEvolve's
edits of the parent), which costs fewer output tokens and cannot silently drop a part of the
program. An answer with no block at all is read as a whole program. Drafts and crossovers
always write the whole program.

``planning`` says who plans. ``joint`` (AIDE's way): one code call writes the plan and the
code. ``separate`` (MLEvolve's planner and coder): the same prompt goes first to the ``plan``
role, which answers with a plan only (``plan_job``), then to the ``code`` role with that plan
to implement (``code_job``); the node's plan is the planner's.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from podium import code_edit
from podium.errors import ModelContextLengthError
from podium.interfaces import OperatorContext, OperatorSet, Proposal
from podium.records import CODE, PLAN, Message, ModelRequest, ModelResponse, Node
from podium.scaffolds import data_preview, experience, memory
from podium.scaffolds.parsing import compiles, drop_thinking, extract
from podium.scaffolds.prompts import Prompts, rules_section
from podium.scaffolds.review import direction, tail

Planning = Literal["joint", "separate"]
EditFormat = Literal["whole", "edit"]
EDITING = frozenset({"improve", "debug"})  # operators that change one parent's code

PARENT_OUTPUT_CHARS = 4000
SHORT_PREVIEW_CHARS = 1500  # after a context-length error
SHORT_OUTPUT_CHARS = 1000


def format_duration(seconds: float) -> str:
    """Coarse on purpose (whole hours, or 10-minute steps) so prompts rarely differ by timing."""
    if seconds >= 7200:
        return f"{int(seconds // 3600)} hours"
    if seconds >= 600:
        return f"{int(seconds // 600) * 10} minutes"
    if seconds >= 60:
        return f"{int(seconds // 60)} minutes"
    return f"{max(int(seconds), 1)} seconds"


@lru_cache(maxsize=8)
def _preview(public_dir: Path) -> str:
    return data_preview.preview(public_dir)


def budget_line(ctx: OperatorContext) -> str:
    parts = [f"Steps left in this search, including this one: {ctx.budget.steps_left}."]
    if ctx.budget.time_left_s is not None:
        parts.append(f"Time left: about {format_duration(ctx.budget.time_left_s)}.")
    return " ".join(parts)


def metric_text(node: Node) -> str:
    return f"{node.metric.value:.6g}" if node.metric else "none"


class LLMOperators(OperatorSet):
    name = "llm"
    operators = ("draft", "improve", "debug", "crossover", "ensemble", "ablate", "refine")
    analyses = ("ablate",)

    def __init__(
        self,
        prompts: Prompts,
        memory_chars: int = 4000,
        planning: Planning = "joint",
        edit_format: EditFormat = "whole",
    ) -> None:
        self.prompts = prompts
        self.memory_chars = memory_chars
        self.planning = planning
        self.edit_format = edit_format

    def values(self, ctx: OperatorContext) -> dict[str, str]:
        task = ctx.task
        values = {
            "task_description": task.description,
            "data_preview": _preview(task.public_dir),
            "metric_name": task.metric_name,
            "direction": direction(task),
            "exec_timeout": format_duration(ctx.budget.exec_timeout_s),
            "packages": ", ".join(f"{k} {v}" for k, v in ctx.environment.packages.items())
            or "the Python standard library only",
            "budget": budget_line(ctx),
            "memory": memory.good_nodes(
                ctx.tree, self.memory_chars, ctx.action.parent_ids + ctx.action.ref_ids
            ),
            "references": memory.references(
                [r for r in ctx.refs if r.kind == "solution"], self.memory_chars
            ),
            "experience": recalled(ctx),
            "rules": rules_section(task),
        }
        if ctx.parents:
            parent = ctx.parents[0]
            values |= {
                "parent_plan": parent.plan or "(none)",
                "parent_code": parent.code.rstrip(),
                "parent_output": tail(
                    parent.exec.output if parent.exec else "", PARENT_OUTPUT_CHARS
                ),
                "parent_metric": metric_text(parent),
                "bug_reason": parent.bug_reason or "",
                "debug_history": memory.debug_history(ctx.tree, parent, self.memory_chars),
                "findings": memory.findings(ctx.analyses(), self.memory_chars),
            }
        if len(ctx.parents) > 1:  # a crossover's second parent; an ensemble's members
            other = ctx.parents[1]
            values |= {
                "other_plan": other.plan or "(none)",
                "other_code": other.code.rstrip(),
                "other_metric": metric_text(other),
                "solutions": "\n".join(_member(i, n) for i, n in enumerate(ctx.parents, 1)),
            }
        return values

    def request(
        self,
        ctx: OperatorContext,
        values: Mapping[str, str],
        system: str = "system",
        jobs: tuple[str, ...] = (),
    ) -> ModelRequest:
        """The operator's prompt under the ``system`` template, with the ``jobs`` templates (a
        separate planner's or coder's instructions, the edit format) after it."""
        user = self.prompts.render(ctx.action.operator, values)
        for job in jobs:
            user += self.prompts.render(job, values)
        return ModelRequest(
            messages=[
                Message(role="system", content=self.prompts.render(system, values)),
                Message(role="user", content=user),
            ]
        )

    async def ask(
        self, ctx: OperatorContext, values: Mapping[str, str], role: str, **template: Any
    ) -> ModelResponse:
        """One call under ``role``; after a context-length error, once more with the parts
        that can go shortened."""
        try:
            return await ctx.model.ask(self.request(ctx, values, **template), role=role)
        except ModelContextLengthError:
            return await ctx.model.ask(self.request(ctx, shortened(values), **template), role=role)

    async def propose(self, ctx: OperatorContext) -> Proposal:
        if ctx.action.operator == "ensemble" and len(ctx.parents) < 2:
            return Proposal("", "", problem="an ensemble needs at least two parents")
        values = self.values(ctx)
        plan = ""
        op = ctx.action.operator
        edit = bool(ctx.parents) and (
            op == "refine" or (self.edit_format == "edit" and op in EDITING)
        )
        jobs = ("edit_job",) if edit else ()
        if self.planning == "separate":
            planned = await self.ask(ctx, values, PLAN, system="plan_system", jobs=("plan_job",))
            plan = planned.text.strip()
            if not plan:
                return Proposal("", "", problem="the planner gave no plan")
            values = {**values, "plan": plan}
            jobs = ("code_job", *jobs)
        response = await self.ask(ctx, values, CODE, jobs=jobs)
        if edit and code_edit.has_edits(answer := drop_thinking(response.text)):
            return Proposal(plan=plan or code_edit.prose_before(answer), code="", edit=answer)
        parsed = extract(response.text)
        problem = parsed.problem
        if response.truncated and not problem and not compiles(parsed.code):
            problem = (
                "the answer was cut off at the model's token limit: the code is incomplete "
                "(raise model.max_tokens, or ask for shorter code)"
            )
        return Proposal(plan=plan or parsed.plan, code=parsed.code, problem=problem)


def recalled(ctx: OperatorContext) -> str:
    """What the memory recalls for this node, as a prompt section ("" with the memory off).
    The query is what the node works from: the failing parent's error for a debug, the
    parent's plan and summary for a change of one parent, the task for anything else."""
    if ctx.memory is None:
        return ""
    parent = ctx.parents[0] if len(ctx.parents) == 1 else None
    if parent is not None and ctx.action.operator == "debug":
        query = parent.bug_reason or parent.plan
    elif parent is not None:
        query = f"{parent.plan}\n{parent.summary}"
    else:
        query = ctx.task.description[:2000]
    shown = ctx.action.parent_ids + ctx.action.ref_ids
    return experience.section(ctx.memory.recall(query, exclude=shown), ctx.task.id)


def _member(number: int, node: Node) -> str:
    """One solution of an ensemble's prompt: its plan, code and validation metric."""
    head = f"## Solution {number} (node {node.id}), validation metric {metric_text(node)}"
    return f"{head}\nPlan: {node.plan or '(none)'}\n\n```python\n{node.code.rstrip()}\n```\n"


def shortened(values: Mapping[str, str]) -> dict[str, str]:
    """The prompt values with memory left out and the long parts cut, for a context too small.

    The task description and the code being fixed stay whole: without them nothing sensible
    can come back.
    """
    short = dict(values)
    short["memory"] = "(left out: the prompt was too long for the model)"
    short["data_preview"] = _head(values.get("data_preview", ""), SHORT_PREVIEW_CHARS)
    if "parent_output" in values:
        short["parent_output"] = tail(values["parent_output"], SHORT_OUTPUT_CHARS)
    if "debug_history" in values:
        short["debug_history"] = "(left out: the prompt was too long for the model)"
    return short


def _head(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + "\n[... shortened]"


def create(search: Mapping[str, Any]) -> LLMOperators:
    return LLMOperators(
        Prompts(search.get("prompts") or {}),
        memory_chars=int(search.get("memory_chars", 4000)),
        planning=search.get("planning", "joint"),
        edit_format=search.get("edit_format", "whole"),
    )
