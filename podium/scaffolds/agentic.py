"""The agentic operator set: a node is a tool-calling conversation over the node's own kernel.

Where the ``llm`` operators ask once for a whole script, here the code model works in a live
kernel (``OperatorContext.open_kernel``: the node's workspace, input, limits and isolation),
calling ``run_cell`` with code and reading each cell's output and error before the next, until
it calls ``finish`` with its plan. The prompt starts as the ``llm`` operator's would (the task,
the data, the parent(s), the memory), so every strategy works with it unchanged.

The node's record is its notebook (:mod:`podium.formats.notebook`): the cells in order with
their outputs, the node's ``solution.py`` (its clean cells), and its result, whose submission
is what the kernel left in ``submission/`` when the node ended.

Budgets inside a node, each ending it with what it has (a valid submission and a metric line
make it good; else it is buggy with the reason):

* ``agentic.max_turns`` model calls;
* ``agentic.cell_timeout`` per cell, and ``exec.timeout`` for the node, all cells together
  (a cell may use only what is left of it); a cell that times out or kills the kernel ends
  the node there, as does a limit passed between cells (while the model thinks, the kernel
  is frozen, or watched where it cannot be: ``KernelSession``);
* the run's cost budget, checked before every call (by the model client).

Context growth is bounded by one rule, applied the same way at every call so that a replay
sends the same requests: a cell's result shows the model at most ``agentic.output_chars`` of
its output (head and tail), and the latest ``agentic.keep_outputs`` results (up to twice as
many: the cut moves in steps, :func:`cut_results`) stay whole; older ones keep their first
characters (:data:`OLD_RESULT_CHARS`) and say what was cut.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from podium.errors import CostLimitReached, ModelError, ModelFatalError
from podium.formats.notebook import Notebook, NotebookMeta
from podium.interfaces import KernelSession, OperatorContext, OperatorSet, Proposal
from podium.records import CODE, ExecResult, ExecStatus, Message, ModelRequest, ToolCall, ToolSpec
from podium.scaffolds.operators import LLMOperators, format_duration
from podium.scaffolds.prompts import Prompts

RUN_CELL = ToolSpec(
    name="run_cell",
    description="Run Python code as the next cell of your Jupyter kernel (state persists "
    "between cells); returns its output and any error.",
    parameters={
        "type": "object",
        "properties": {"code": {"type": "string", "description": "the cell's Python code"}},
        "required": ["code"],
    },
)
FINISH = ToolSpec(
    name="finish",
    description="End this node: the submission is written and the metric printed. Give the "
    "plan: what the solution does, in 3-5 sentences.",
    parameters={
        "type": "object",
        "properties": {"plan": {"type": "string", "description": "what the solution does"}},
        "required": ["plan"],
    },
)
TOOLS = [RUN_CELL, FINISH]
OLD_RESULT_CHARS = 300  # of a result older than the latest keep_outputs: its head
TRACEBACK_CHARS = 3000  # of a cell's traceback shown to the model: its tail
NUDGE = "Call run_cell to run code, or finish when the submission is written."


@dataclass(frozen=True)
class AgenticSettings:
    max_turns: int = 30
    cell_timeout_s: float = 600.0
    output_chars: int = 4000
    keep_outputs: int = 3

    @classmethod
    def from_config(cls, section: Mapping[str, Any]) -> AgenticSettings:
        return cls(
            max_turns=int(section.get("max_turns", 30)),
            cell_timeout_s=float(section.get("cell_timeout", 600.0)),
            output_chars=int(section.get("output_chars", 4000)),
            keep_outputs=int(section.get("keep_outputs", 3)),
        )


@dataclass
class _Conversation:
    """One node's conversation so far: the messages, which of them are cell results (for the
    context rule), the notebook, and how it ended."""

    messages: list[Message]
    notebook: Notebook
    results_at: list[int]  # indexes in messages of the run_cell results, oldest first
    plan: str = ""
    turns: int = 0  # model calls answered
    finished: bool = False
    ending: str | None = None  # why it ended before finish (a budget, a dead kernel)


class AgenticOperators(OperatorSet):
    name = "agentic"
    operators = ("draft", "improve", "debug", "crossover")

    def __init__(self, prompts: Prompts, memory_chars: int, settings: AgenticSettings) -> None:
        self.prompts = prompts
        self.settings = settings
        self.one_shot = LLMOperators(prompts, memory_chars)  # the same task context

    async def propose(self, ctx: OperatorContext) -> Proposal:
        if ctx.open_kernel is None:
            raise RuntimeError("agentic nodes need a kernel of their own; this caller gives none")
        node_s = ctx.budget.exec_timeout_s
        if ctx.budget.time_left_s is not None:
            node_s = max(min(node_s, ctx.budget.time_left_s), 1.0)
        deadline = time.monotonic() + node_s
        talk = _Conversation(self.first_messages(ctx), Notebook(), [])
        session = await ctx.open_kernel()
        try:
            await self._converse(ctx, session, talk, deadline)
        finally:
            refused = await session.close()
        result = _result(talk, session, refused)
        return Proposal(
            plan=talk.plan,
            code=talk.notebook.script(),
            executed=result,
            notebook=talk.notebook.ipynb(
                NotebookMeta(
                    operator=ctx.action.operator,
                    finished=talk.finished,
                    ending=talk.ending,
                    turns=talk.turns,
                )
            ),
        )

    def first_messages(self, ctx: OperatorContext) -> list[Message]:
        values = {
            **self.one_shot.values(ctx),
            "cell_timeout": format_duration(
                min(self.settings.cell_timeout_s, ctx.budget.exec_timeout_s)
            ),
            "max_turns": str(self.settings.max_turns),
        }
        job = self.prompts.render(ctx.action.operator, values)
        return [
            Message(role="system", content=self.prompts.render("agentic_system", values)),
            Message(role="user", content=job + self.prompts.render("agentic_job", values)),
        ]

    async def _converse(
        self, ctx: OperatorContext, session: KernelSession, talk: _Conversation, deadline: float
    ) -> None:
        for turn in range(self.settings.max_turns):
            if time.monotonic() >= deadline:
                talk.ending = "its time (exec.timeout) ran out"
                return
            try:
                response = await ctx.model.ask(self._request(talk), role=CODE)
            except ModelFatalError:
                raise
            except (CostLimitReached, ModelError) as exc:
                if not talk.notebook.cells:
                    raise  # nothing done yet: as for a one-shot node (unfinished, or failed)
                what = (
                    "the run's cost budget"
                    if isinstance(exc, CostLimitReached)
                    else "a model call failed"
                )
                talk.ending = f"{what}: {exc}"
                return
            talk.turns += 1
            talk.notebook.say(response.text, turn)
            call = response.tool_call
            if call is None:
                talk.messages += [
                    Message(role="assistant", content=response.text or "(no answer)"),
                    Message(role="user", content=NUDGE),
                ]
                continue
            call = call if call.id else call.model_copy(update={"id": f"call_{turn}"})
            talk.messages.append(
                Message(role="assistant", content=response.text, tool_calls=[call])
            )
            if await self._act(call, turn, session, talk, deadline):
                return
        talk.ending = (
            talk.ending or f"the turn limit (agentic.max_turns = {self.settings.max_turns})"
        )

    async def _act(
        self,
        call: ToolCall,
        turn: int,
        session: KernelSession,
        talk: _Conversation,
        deadline: float,
    ) -> bool:
        """Carry out one tool call and answer it; True when the node ends here."""
        if call.name == "finish":
            talk.plan = str(call.arguments.get("plan") or "").strip()
            talk.finished = True
            talk.notebook.say(talk.plan, turn)
            return True
        code = call.arguments.get("code") if call.name == "run_cell" else None
        if not isinstance(code, str):
            why = (
                "run_cell needs a string argument 'code'"
                if call.name == "run_cell"
                else f"there is no function {call.name!r}: use run_cell or finish"
            )
            talk.messages.append(_tool_result(call, f"error: {why}"))
            return False
        timeout = min(self.settings.cell_timeout_s, max(deadline - time.monotonic(), 1.0))
        result = await session.run_cell(code, timeout)  # masked by the session's opener
        cell = talk.notebook.add_cell(code, result, turn)
        talk.results_at.append(len(talk.messages))
        talk.messages.append(_tool_result(call, self._report(cell.number, result)))
        if not session.alive:
            talk.ending = f"cell {cell.number} stopped the kernel ({result.killed_reason})"
            return True
        return False

    def _request(self, talk: _Conversation) -> ModelRequest:
        """The conversation as the model is shown it: older cell results cut (the context
        rule in the module's docstring); the record keeps them whole."""
        cut = set(talk.results_at[: cut_results(len(talk.results_at), self.settings.keep_outputs)])
        messages = [_shortened(m) if i in cut else m for i, m in enumerate(talk.messages)]
        return ModelRequest(messages=messages, tools=TOOLS)

    def _report(self, number: int, result: ExecResult) -> str:
        """What the model reads of a cell: status, output (head and tail), error, traceback."""
        lines = [f"[cell {number}] {result.status.value}"]  # no duration: requests replay
        output = _head_and_tail(result.output, self.settings.output_chars)
        lines.append(output if output.strip() else "(no output)")
        if result.status is ExecStatus.ERROR and result.traceback:
            lines.append("traceback (end):\n" + result.traceback[-TRACEBACK_CHARS:])
        elif result.error_line:
            lines.append(f"error: {result.error_line}")
        return "\n".join(lines)


def _result(talk: _Conversation, session: KernelSession, refused: str | None) -> ExecResult:
    """The node's result: its notebook's, or, when its kernel was killed between cells for a
    limit and no cell came after to say so (it finished, or ran out of turns), that death."""
    cap = session.limits.max_output_bytes
    result = talk.notebook.result(talk.ending, refused, cap)
    stopped = session.stopped_between_cells
    if stopped is None or result.failed:
        return result
    why = f"the kernel was stopped between cells ({stopped.killed_reason})"
    talk.ending = f"{talk.ending}; {why}" if talk.ending else why
    died = ("status", "error_name", "error_value", "killed_reason")
    update = {name: getattr(stopped, name) for name in died}
    return talk.notebook.result(talk.ending, refused, cap).model_copy(update=update)


def cut_results(results: int, keep: int) -> int:
    """How many of the oldest cell results are shown cut: never one of the latest ``keep``,
    and a multiple of ``keep``, so the cut moves ``keep`` results at a time and what the model
    was sent stays the same for ``keep`` turns in a row (a provider's prompt cache reads it;
    moving the cut each turn would make every turn rewrite its whole tail)."""
    return max(0, (results - keep) // keep * keep)


def _tool_result(call: ToolCall, text: str) -> Message:
    return Message(role="tool", content=text, tool_call_id=call.id)


def _shortened(message: Message) -> Message:
    text = message.content
    if len(text) <= OLD_RESULT_CHARS:
        return message
    cut = len(text) - OLD_RESULT_CHARS
    note = f"\n[... {cut} more characters of this older cell's result not shown]"
    return message.model_copy(update={"content": text[:OLD_RESULT_CHARS] + note})


def _head_and_tail(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    head = limit // 4
    left_out = len(text) - limit
    return f"{text[:head]}\n[... {left_out} characters left out ...]\n{text[-(limit - head) :]}"


def create(options: Mapping[str, Any]) -> AgenticOperators:
    return AgenticOperators(
        Prompts(options.get("prompts") or {}),
        memory_chars=int(options.get("memory_chars", 4000)),
        settings=AgenticSettings.from_config(options.get("agentic") or {}),
    )
