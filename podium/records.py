"""The typed records every room shares: nodes, execution results, model calls, usage.

These sit at the bottom of the dependency graph (they import nothing from Podium's rooms), so
sandboxes, plugins, scaffolds and benchmarks can all speak them. They are pydantic models
because they are persisted as JSON in the journal and must round-trip exactly.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from enum import StrEnum
from typing import Annotated, Any, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from podium.untrusted import Inert, InertOrNone


def utcnow() -> datetime:
    return datetime.now(UTC)


class Record(BaseModel):
    model_config = ConfigDict(extra="forbid")

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Self:
        """A copy with ``update`` applied, and validated like any new record.

        Pydantic's own ``model_copy`` skips validation, which would let an update bypass a
        field's rules (the inert text of sandbox output, say).
        """
        if not update:
            return super().model_copy(deep=deep)
        return self.model_validate({**self.__dict__, **update})


# --- model calls -------------------------------------------------------------------------


class Usage(Record):
    """Tokens and money spent on model calls. Adds up with ``+``.

    ``input_tokens`` counts every prompt token, cached or not. ``cache_read_tokens`` and
    ``cache_write_tokens`` are *parts* of it: the prompt tokens the provider read from its
    prompt cache, and those it wrote there (each priced at its own rate, which ``cost_usd``
    already reflects); the uncached part is ``input_tokens - cache_read_tokens -
    cache_write_tokens``. Both are 0 where the provider reports no caching, and in records
    written before they existed.
    """

    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    calls: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cost_usd=self.cost_usd + other.cost_usd,
            calls=self.calls + other.calls,
            cache_read_tokens=self.cache_read_tokens + other.cache_read_tokens,
            cache_write_tokens=self.cache_write_tokens + other.cache_write_tokens,
        )


class ToolCall(Record):
    """A function call made by the model; ``arguments`` is always a decoded JSON object.

    ``id`` is the provider's id for the call (a tool result names it); empty where none was
    given (a hand-written script), and then whoever sends the call back gives it one."""

    name: str
    arguments: dict[str, Any]
    id: str = ""


class Message(Record):
    """One turn of a conversation, in Podium's provider-neutral form.

    An ``assistant`` turn may carry the model's ``tool_calls`` (its ``content`` is then the
    text it said beside them, often empty); a ``tool`` turn is the result of the call whose id
    is ``tool_call_id``. Backends translate both into their provider's wire format."""

    role: Literal["system", "user", "assistant", "tool"]
    content: str
    tool_calls: list[ToolCall] = Field(default_factory=list)
    tool_call_id: str | None = None


class ToolSpec(Record):
    """A function the model may call; ``parameters`` is a JSON schema object."""

    name: str
    description: str
    parameters: dict[str, Any]


Role = Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9_]{0,31}$")]
"""Whom a model call is for, which picks the model that answers it and the line its calls and
cost are counted on: ``code`` writes solutions (``model.name``), ``plan`` plans them where an
operator plans apart from coding (``model.plan``), ``review`` judges an execution
(``model.review``). A plugin's operator may ask under a role of its own (a lower-case word); the
code model answers it, and its calls are still counted apart."""

CODE, PLAN, REVIEW = "code", "plan", "review"
ROLES: tuple[str, ...] = (CODE, PLAN, REVIEW)  # the roles a run's config names a model for


class RequestMeta(Record):
    """Where a request comes from. Not part of the prompt: backends must not send it.

    ``seq`` numbers the run's calls per role (0, 1, ...) in the order the search makes them (a
    node re-run on resume asks under the numbers it had); ``turn`` numbers one node's calls per
    role. A scripted backend answers by them, so a resumed run gets the answers an uninterrupted
    one would.
    """

    node_id: int = 0
    role: Role = CODE
    seq: int = 0
    turn: int = 0


class ModelRequest(Record):
    messages: list[Message]
    tools: list[ToolSpec] = Field(default_factory=list)
    tool_choice: str | None = None
    max_tokens: int | None = None
    temperature: float | None = None
    meta: RequestMeta = Field(default_factory=RequestMeta)


Finish = Literal["stop", "length", "tool_call", "other"]


class ModelResponse(Record):
    """A model's answer. ``finish`` is ``length`` when the token limit cut it off.

    ``replayed`` marks an answer taken from a recorded run (``--replay``), not bought now.
    """

    text: str = ""
    tool_call: ToolCall | None = None
    usage: Usage = Field(default_factory=Usage)
    latency_s: float = 0.0
    model: str = ""
    finish: Finish = "stop"
    replayed: bool = False

    @property
    def truncated(self) -> bool:
        return self.finish == "length"


class ModelCall(Record):
    """One recorded model call, kept in the journal for replay and for the viewer.

    ``attempts`` counts tries under the retry policy; ``error`` is the final failure, if any
    (``fatal``: one that stopped the run, such as a rejected key).
    """

    node_id: int
    role: Role
    seq: int
    request: ModelRequest
    response: ModelResponse | None = None
    error: str | None = None
    fatal: bool = False
    model: str = ""
    attempts: int = 1
    started_at: datetime = Field(default_factory=utcnow)


# --- memory ------------------------------------------------------------------------------


Outcome = Literal["draft", "better", "worse", "same", "failed", "analysis"]


class MemoryRecord(Record):
    """What one finished node taught, kept for later prompts (``podium.scaffolds.experience``)
    in this run and, under ``memory.dir``, in later runs.

    Only what the agent itself saw: the node's plan, its review's summary, its code (capped),
    its *validation* metric and its error. A record is built from a :class:`Node` alone, which
    holds no grade, no held-out score and no test label, so none can reach a memory.
    ``outcome``: against its first parent's metric (``better``/``worse``/``same``), or
    ``draft``, ``failed``, ``analysis``.
    """

    task: str
    task_type: str | None = None
    run: str
    node_id: int
    operator: str
    outcome: Outcome
    plan: str = ""
    summary: Inert = ""  # from the review, which quotes the output: inert, as on the node
    code: str = ""
    metric: float | None = None
    lower_is_better: bool = False
    error: InertOrNone = None  # the node's bug reason, which quotes sandbox output
    created_at: datetime = Field(default_factory=utcnow)


# --- execution ---------------------------------------------------------------------------


class ExecStatus(StrEnum):
    OK = "ok"
    ERROR = "error"  # the code raised
    TIMEOUT = "timeout"  # deadline passed; the kernel was interrupted/killed
    DIED = "died"  # the kernel process died (OOM kill, os._exit, segfault...)


class ExecResult(Record):
    """What happened when a solution ran. ``output`` is head + tail of stdout/stderr.

    Every text field came from the sandbox and is made inert (``podium.untrusted``).
    ``submission_refused`` says why what the solution left at ``submission/submission.csv``
    was not handed over (a symlink, a FIFO, too large); None when there was nothing there or
    it was handed over.
    """

    status: ExecStatus
    output: Inert = ""
    output_bytes: int = 0
    output_truncated: bool = False
    error_name: InertOrNone = None
    error_value: InertOrNone = None
    traceback: InertOrNone = None
    duration_s: float = 0.0
    kernel_start_s: float = 0.0
    timed_out: bool = False
    killed_reason: InertOrNone = None
    peak_memory_bytes: int | None = None
    submission_refused: InertOrNone = None

    @property
    def failed(self) -> bool:
        return self.status is not ExecStatus.OK

    @property
    def error_line(self) -> str | None:
        """What went wrong, in one line: ``ValueError: boom``, or why the kernel was stopped."""
        if self.error_name:
            return f"{self.error_name}: {self.error_value or ''}".rstrip(": ")
        return self.killed_reason


class GradeReport(Record):
    """A submission graded on the private answers, with MLE-bench's field names.

    ``score`` is ``round(grade, 5)``, None when the submission is missing or invalid (``error``
    says why). ``sandboxed`` is False when the code that wrote it ran without isolation (not
    clean-track), None when unknown (a file graded by hand); ``isolation_gaps`` names what the
    sandbox could not give on that machine (empty: nothing was missing). ``leaderboard_percentile``
    (0–100) is the share of leaderboard entries the score strictly beats; 0 without a score.
    """

    model_config = ConfigDict(extra="forbid")

    competition_id: str
    score: float | None
    gold_threshold: float
    silver_threshold: float
    bronze_threshold: float
    median_threshold: float
    any_medal: bool
    gold_medal: bool
    silver_medal: bool
    bronze_medal: bool
    above_median: bool
    submission_exists: bool
    valid_submission: bool
    is_lower_better: bool
    created_at: datetime
    submission_path: str
    sandboxed: bool | None = None
    isolation_gaps: list[str] | None = None  # protections the sandbox lacked (None: unknown)
    error: InertOrNone = None  # may quote the submission (a column name): made inert
    leaderboard_percentile: float | None = None  # share of entries beaten (ours, not MLE-bench's)

    @property
    def medal(self) -> str | None:
        for name in ("gold", "silver", "bronze"):
            if getattr(self, f"{name}_medal"):
                return name
        return None


# The boolean outcomes of a GradeReport that are counted as rates: per seed (MLE-bench's
# seed_summary) and per group of runs (the reports).
GRADE_OUTCOMES = (
    "any_medal",
    "gold_medal",
    "silver_medal",
    "bronze_medal",
    "above_median",
    "valid_submission",
)


class EnvironmentInfo(Record):
    """The solutions' Python environment, as the prompts describe it."""

    python_version: str
    packages: dict[str, str] = Field(default_factory=dict)


# --- the search tree ---------------------------------------------------------------------


Operator = str  # "draft" | "improve" | "debug" | "crossover" | a plugin's own


class Action(Record):
    """What a strategy wants done next: run ``operator`` on ``parent_ids`` (empty for a draft).

    ``ref_ids`` are finished nodes the new node may draw on without descending from them (a
    reference edge: a technique from another branch, the best of each branch to aggregate). A
    reference is not a parent: the node is not its child (``SearchTree.children``), so visit
    counts, debug chains and lineages ignore it; the operator sees the nodes in
    ``OperatorContext.refs`` and the prompts show them. The strategy chooses them, so they are
    journaled with the action and a replay or resume cites the same nodes.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    operator: Operator
    parent_ids: tuple[int, ...] = ()
    ref_ids: tuple[int, ...] = ()


class Direction(StrEnum):
    """Which way a validation metric improves: the one place that knows "lower is better".

    Every comparison of metrics (the tree's best node, the strategies' rankings, the final
    choice, the memory, the baseline's crossover) goes through this, never through a sign
    written by hand, so a plugin strategy ranks nodes exactly as the builtin ones do. The
    direction always comes from the task (``Task.lower_is_better``); a :class:`Metric`
    carries it (``metric.direction``), and so does the tree (``SearchTree.direction``).

    * :meth:`score` turns a metric into a number where larger is better (negated when lower
      is better) — rank by it, min–max normalise it, add it up;
    * :meth:`better` is the strict comparison of two metrics;
    * :meth:`best_first` sorts nodes by metric, best first, the lowest id first on a tie.

    NaN and None: nothing here filters. ``score(nan)`` is NaN and ``better`` is False when
    either side is NaN (plain float comparison), so a NaN never beats a number nor is beaten
    by one. ``best_first`` skips nodes without a metric and sorts a NaN wherever Python's
    sort puts it. A caller that must exclude non-finite metrics filters them first
    (:meth:`Metric.usable`).

    The value is the phrase the prompts use: ``str(Direction.LOWER) == "lower is better"``.
    """

    LOWER = "lower is better"  # a loss, an error
    HIGHER = "higher is better"  # an accuracy, an AUC

    @classmethod
    def of(cls, lower_is_better: bool) -> Direction:
        """The direction of a task's ``lower_is_better`` flag."""
        return cls.LOWER if lower_is_better else cls.HIGHER

    @property
    def lower_is_better(self) -> bool:
        return self is Direction.LOWER

    def score(self, value: float) -> float:
        """``value`` with larger meaning better: negated when lower is better.

        Only the sign changes, so the score is exact and linear (the score of a sum of
        metrics is the sum of their scores), and ``max`` by score picks the best metric.
        """
        return -value if self is Direction.LOWER else value

    def better(self, a: float, b: float) -> bool:
        """Whether metric ``a`` is strictly better than metric ``b`` (False on a tie and
        whenever either is NaN)."""
        return a < b if self is Direction.LOWER else a > b

    def best_first(self, nodes: Iterable[Node]) -> list[Node]:
        """``nodes`` that have a metric, best metric first, the lowest node id first on a tie."""

        def rank(node: Node) -> tuple[float, int]:
            assert node.metric is not None
            return -self.score(node.metric.value), node.id

        return sorted((n for n in nodes if n.metric is not None), key=rank)


class Metric(Record):
    """A validation metric with its direction. The direction always comes from the task.

    Compare metrics through :attr:`direction` (or :meth:`better_than` and :attr:`score`),
    never with a sign of your own: see :class:`Direction`.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    value: float
    lower_is_better: bool

    @property
    def direction(self) -> Direction:
        return Direction.of(self.lower_is_better)

    @property
    def score(self) -> float:
        """The value with larger meaning better (negated when lower is better)."""
        return self.direction.score(self.value)

    def better_than(self, other: Metric | None) -> bool:
        """Strictly better than ``other``; anything is better than no metric at all."""
        if other is None:
            return True
        return self.direction.better(self.value, other.value)

    @staticmethod
    def usable(value: float | None) -> bool:
        """A metric worth ranking: present and finite (not None, NaN or infinite)."""
        return value is not None and math.isfinite(value)


class NodeState(StrEnum):
    PROPOSING = "proposing"  # waiting for the model
    EXECUTING = "executing"
    REVIEWING = "reviewing"
    DONE = "done"
    INTERRUPTED = "interrupted"


class Timings(Record):
    """Seconds spent per phase; ``overhead`` is Podium's own cost (what perf/ measures)."""

    model_s: float = 0.0
    kernel_start_s: float = 0.0
    exec_s: float = 0.0
    review_model_s: float = 0.0
    total_s: float = 0.0

    @property
    def overhead_s(self) -> float:
        return self.total_s - self.model_s - self.kernel_start_s - self.exec_s - self.review_model_s


class FreshRun(Record):
    """A good agentic node's ``solution.py`` (its clean cells) run again on a fresh kernel
    after the node: does the score it reported come back without the session's state?
    ``reproduced``: it ran cleanly, wrote a submission, and printed the same metric (to a
    relative 1e-6). Reported only; the node's metric stays the session's."""

    status: ExecStatus
    metric: float | None = None
    has_submission: bool = False
    reproduced: bool = False
    error: InertOrNone = None

    def verdict(self) -> str:
        """One line, as ``podium show`` and the viewer print it."""
        metric = f"metric {self.metric:.6g}" if self.metric is not None else "no metric"
        if self.reproduced:
            return f"reproduced on a fresh kernel ({metric})"
        why = [metric]
        if self.error:
            why.insert(0, " ".join(self.error.split())[:200])
        if not self.has_submission:
            why.append("no submission")
        return f"not reproduced on a fresh kernel: {', '.join(why)}"


NodeKind = Literal["solution", "analysis"]
"""What a node's code is. A ``solution`` writes a submission and prints its validation metric.
An ``analysis`` (an ablation study of its parent, say) is run to learn something: its output
is summarised as findings (``Node.summary``) for the strategy and later prompts; it has no
metric and no submission, so it is never good, never the best node and never submitted. The
operator set says which of its operators make analyses (``OperatorSet.analyses``)."""


class Node(Record):
    """One attempt: a solution, or an analysis (``kind``). ``step`` is its position among
    finished nodes (1-based)."""

    id: int
    parent_ids: tuple[int, ...] = ()
    ref_ids: tuple[int, ...] = ()  # nodes it cites beyond its parents (``Action.ref_ids``)
    operator: Operator
    kind: NodeKind = "solution"
    state: NodeState = NodeState.PROPOSING
    step: int | None = None
    plan: str = ""
    code: str = ""
    exec: ExecResult | None = None
    metric: Metric | None = None
    is_buggy: bool = False
    bug_reason: InertOrNone = None  # quotes sandbox output and files: made inert
    summary: Inert = ""
    has_submission: bool = False
    usage: Usage = Field(default_factory=Usage)
    timings: Timings = Field(default_factory=Timings)
    worker: int = 0
    created_at: datetime = Field(default_factory=utcnow)
    finished_at: datetime | None = None
    fresh: FreshRun | None = None  # an agentic node's code run again on a fresh kernel

    @property
    def is_good(self) -> bool:
        """A finished solution that works: not buggy, with a metric (an analysis never is)."""
        return (
            self.state is NodeState.DONE
            and not self.is_buggy
            and self.metric is not None
            and self.kind == "solution"
        )
