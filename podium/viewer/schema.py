"""The viewer's JSON, typed: every document the server answers under ``/api`` (and the export
embeds) as a pydantic model, and its JSON Schema (:func:`schemas`, served at ``/api/schema``).

This module is the one place a field of the page's contract is spelled: the builders
(:mod:`podium.viewer.snapshot`, :mod:`podium.viewer.sweep_data`) fill these models, the server
sends ``model_dump_json()``, and docs/viewer.md ("The page's contract") describes them, which
``tests/viewer/test_schema.py`` checks field by field. Field order is the order the JSON has.

The conventions the page relies on: every field is always present (a missing value is
``null``, never an absent key), and every number is finite: a float that is NaN or infinite
(summary.json is written by Python's json, which allows them; a browser's ``JSON.parse`` does
not) becomes ``null`` when the model is built (:data:`Finite`).

Documents (docs/viewer.md): ``GET /api/run`` → :class:`RunJSON`, ``/api/node/<id>`` →
:class:`NodeDetail`, ``/api/node/<id>/output`` → :class:`NodeOutput`, ``/api/search`` →
:class:`SearchResult`, ``/api/sweep`` → :class:`SweepJSON`, any error → :class:`ErrorReply`.
An export embeds a RunJSON and, packed (:mod:`podium.viewer.packing`), a NodeDetail per node.
"""

from __future__ import annotations

import hashlib
import math
from typing import Annotated, Any, Literal, Self

from pydantic import AfterValidator, BaseModel, ConfigDict

from podium.formats import RunState
from podium.records import ExecStatus, Finish, Message, NodeState, Role, ToolCall, Usage
from podium.viewer.notebook import CellKind
from podium.viewer.run_data import NodeKind


def _finite(value: float | None) -> float | None:
    return value if value is None or math.isfinite(value) else None


Finite = Annotated[float | None, AfterValidator(_finite)]
"""A number, or null: NaN and infinities are read as null (JSON has no such numbers)."""


class Document(BaseModel):
    """A JSON object of the contract: no field beyond those declared, each one always sent
    (the JSON Schema lists every field as required, defaults included)."""

    model_config = ConfigDict(extra="forbid", json_schema_serialization_defaults_required=True)


class Versioned(Document):
    """A document the page polls: ``version`` changes whenever anything else in it does (the
    server's ETag; the page's "anything new?")."""

    format: str
    version: str

    def stamped(self) -> Self:
        """This document with its ``version``: the sha1 of everything else, as sent."""
        text = self.model_dump_json(exclude={"version"})
        return self.model_copy(update={"version": hashlib.sha1(text.encode()).hexdigest()})


# --- /api/run -------------------------------------------------------------------------------


class Grade(Document):
    """The run's grade (summary.json's ``grade``)."""

    score: Finite
    medal: str | None
    any_medal: bool
    valid_submission: bool
    above_median: bool
    leaderboard_percentile: Finite


class RunHeader(Document):
    """The run's header: from summary.json once the run has written one, else from its config
    and journal."""

    dir: str
    task: str
    strategy: str
    model: str
    review_model: str
    plan_model: str  # the planning model (search.planning = separate); = model by default
    sandbox: str
    status: str  # running | finished | interrupted | failed | stopped (killed: resumable)
    stop_reason: str | None
    lower_is_better: bool | None
    best_node: int | None
    best_metric: Finite
    steps: int
    good_nodes: int
    buggy_nodes: int
    analysis_nodes: int  # finished analyses that ran through (kind "analysis"): no metric
    discarded_nodes: int
    elapsed_s: Finite
    cost_usd: Finite
    input_tokens: int
    output_tokens: int
    calls: int
    grade: Grade | None
    updated_at: str | None


class GraphSize(Document):
    """The largest ``x`` (node slots) and ``y`` (layers) of the run's nodes."""

    width: float
    depth: int


class LightNode(Document):
    """A node's light fields: what the graph, the chart and the node list draw. Texts are one
    line's worth here (a node's panel has them in full)."""

    id: int
    parents: list[int]
    refs: list[int]  # the nodes it cites beyond its parents (``RunView.refs``); not parents
    operator: str
    state: NodeState
    kind: NodeKind
    best: bool
    on_best_path: bool
    step: int | None
    metric: Finite
    bug_reason: str | None
    summary: str  # the review's verdict (an analysis: its findings): the list's "why" column
    findings: str | None  # an analysis's findings in one line (``viewer.findings``); else null
    worker: int
    total_s: Finite
    cost_usd: Finite
    created_at: str
    finished_at: str | None


class RunNode(LightNode):
    """A node of RunJSON: its light fields and its place in the graph (``x`` in node slots,
    ``y`` in layers, 0: drafts; ``tree_parent`` the parent it hangs under, null: a root)."""

    x: float
    y: int
    tree_parent: int | None


class RunJSON(Versioned):
    """``GET /api/run``: the run's header and every node, light."""

    format: Literal["podium-view/2"] = "podium-view/2"
    live: bool
    run: RunHeader
    operators: list[str]
    layout: GraphSize
    nodes: list[RunNode]


# --- /api/node/<id> -------------------------------------------------------------------------


class AblationRow(Document):
    """One variant of an analysis's ablation (its output's ``ABLATION <part>: <score>``
    lines, ``podium.viewer.findings``): ``change`` is its score minus the baseline's (null:
    the baseline)."""

    part: str
    score: float
    change: Finite


class DiffLine(Document):
    tag: Literal[" ", "-", "+"]  # kept, removed, added
    text: str
    old: int | None  # its 1-based number in the old code (null: not there)
    new: int | None


class DiffHunk(Document):
    old_start: int
    old_len: int
    new_start: int
    new_len: int
    header: str
    lines: list[DiffLine]


class Diff(Document):
    """The node's code against one parent's (``podium/code_diff.py``, ``as_json``)."""

    parent: int
    hunks: list[DiffHunk]
    added: int
    removed: int
    cut: str | None  # why the diff is incomplete


class Frame(Document):
    file: str
    line: int | None
    function: str | None
    code_line: str | None
    context: list[str]
    in_solution: bool


class Traceback(Document):
    """A traceback parsed (``podium/tracebacks.py``, ``as_json``): the solution's frames first
    on the page, library frames folded."""

    error: str
    frames: list[Frame]
    causes: list[Traceback]  # the chained exceptions before it, oldest first
    dropped: int
    dropped_causes: int
    link: Literal["cause", "context"] | None


class Execution(Document):
    """The node's execution (``records.ExecResult`` without its output, which NodeDetail has
    apart), its traceback as text and parsed."""

    status: ExecStatus
    output_bytes: int
    output_truncated: bool
    error_name: str | None
    error_value: str | None
    traceback: str | None
    duration_s: Finite
    kernel_start_s: Finite
    timed_out: bool
    killed_reason: str | None
    peak_memory_bytes: int | None
    submission_refused: str | None
    traceback_parsed: Traceback | None


class NodeTimings(Document):
    """Seconds per phase (``records.Timings``) and Podium's own share of them."""

    model_s: Finite
    kernel_start_s: Finite
    exec_s: Finite
    review_model_s: Finite
    total_s: Finite
    overhead_s: Finite


class Answer(Document):
    """A model call's answer: its text or function call, and what it cost."""

    text: str
    tool_call: ToolCall | None
    input_tokens: int
    output_tokens: int
    cost_usd: Finite
    latency_s: Finite
    finish: Finish
    replayed: bool


class Call(Document):
    """One model call of the node: every message sent and the answer received."""

    role: Role
    seq: int
    model: str
    attempts: int
    error: str | None
    fatal: bool
    started_at: str
    messages: list[Message]
    tools: list[str]
    response: Answer | None


class TurnCall(Document):
    """The model call of a notebook's turn, in short (the call in full is in ``calls``)."""

    seq: int
    input_tokens: int
    output_tokens: int
    cost_usd: Finite
    latency_s: Finite


class CellError(Document):
    name: str
    value: str
    traceback: str
    traceback_parsed: Traceback | None


class Cell(Document):
    """One entry of an agentic node's notebook: a code cell, or the model's words."""

    type: CellKind
    number: int | None
    turn: int | None
    status: str | None
    duration_s: Finite
    source: str
    output: str
    output_traceback_cut: bool
    error: CellError | None
    call: TurnCall | None


class Notebook(Document):
    """An agentic node's notebook (``podium/viewer/notebook.py``); ``problem``: why the file
    could not be read, in one line, with no cells."""

    problem: str | None
    finished: bool | None
    ending: str | None
    turns: int | None
    cells_left_out: int
    cells: list[Cell]


class NodeDetail(LightNode):
    """``GET /api/node/<id>``: a node in full, its light fields (texts in full) and the rest."""

    plan: str
    code: str
    code_html: str  # pygments' escaped spans: the only HTML the page inserts
    diffs: list[Diff]
    output: str
    output_traceback_cut: bool
    output_live: bool
    exec: Execution | None
    has_submission: bool
    fresh: str | None  # an agentic node's fresh-kernel run, in one line
    ablation: list[AblationRow]  # an analysis's ablation results ([]: none, or not one)
    children: list[int]
    cited_by: list[int]  # the nodes whose ``refs`` hold this one
    usage: Usage
    timings: NodeTimings
    calls: list[Call]
    notebook: Notebook | None


# --- the other routes -----------------------------------------------------------------------


class NodeOutput(Document):
    """``GET /api/node/<id>/output``: the node's output file as it is now; ``version``
    changes when the text does."""

    id: int
    output: str
    version: str


class SearchResult(Document):
    """``GET /api/search?q=``: the ids of the nodes whose text contains ``q``."""

    ids: list[int]


class ErrorReply(Document):
    """Any route's error (404, 500), in one line."""

    error: str


# --- /api/sweep -----------------------------------------------------------------------------


class SweepHeader(Document):
    name: str
    dir: str
    status: Literal["running", "finished", "stopped"]
    counts: dict[RunState, int]
    medals: int
    tasks_spec: str


class SweepAxes(Document):
    tasks: list[str]
    strategies: list[str]
    models: list[str]
    seeds: list[int]


class SweepRun(Document):
    """One run of the grid, as its run dir says (the manifest's entry if it has none)."""

    id: str
    task: str
    strategy: str
    model: str
    seed: int
    state: RunState
    live: bool
    medal: str | None
    graded: bool
    score: Finite
    best_metric: Finite
    steps: int | None
    elapsed_s: Finite
    attempts: int
    error: str | None
    href: str


class SweepJSON(Versioned):
    """``GET /api/sweep``: the sweep's header, its axes and one entry per run."""

    format: Literal["podium-sweep-view/1"] = "podium-sweep-view/1"
    sweep: SweepHeader
    axes: SweepAxes
    runs: list[SweepRun]


DOCUMENTS: dict[str, type[Document]] = {
    model.__name__: model
    for model in (RunJSON, NodeDetail, NodeOutput, SearchResult, SweepJSON, ErrorReply)
}
"""Every document the server answers with, by name."""


def schemas() -> dict[str, dict[str, Any]]:
    """The JSON Schema of each of :data:`DOCUMENTS`, by name: what the server sends."""
    return {
        name: model.model_json_schema(mode="serialization") for name, model in DOCUMENTS.items()
    }


def as_sent(document: BaseModel) -> Any:
    """``document`` as the page gets it: what ``json.loads`` makes of the server's
    ``model_dump_json()`` (a non-finite float, which only a record's field can hold, as None).
    An export embeds this, so that it holds exactly what the server would send; built
    without a JSON round trip, which costs twenty times more on a long run's details."""
    return _nulled(document.model_dump(mode="json"))


def _nulled(value: Any) -> Any:
    if isinstance(value, float):
        return _finite(value)
    if isinstance(value, dict):
        return {k: _nulled(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_nulled(v) for v in value]
    return value
