"""A run as the viewer's JSON: what ``/api/…`` answers and what an export embeds.

The documents are :mod:`podium.viewer.schema`'s models (RunJSON, RunNode, NodeDetail:
docs/viewer.md, "The page's contract"); this module fills them from a :class:`RunView`. Node
content (code, output, prompts) is untrusted text and stays text, except ``code_html``, which
``highlight`` has escaped. Terminal colour codes are stripped from output and tracebacks (a
browser would show them as garbage); the models make non-finite floats null.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from typing import Any, TypeVar

from podium import code_diff, tracebacks
from podium.formats.run_files import SummaryGrade
from podium.records import ExecResult, Message, ModelCall, Node, NodeState, Usage
from podium.untrusted import strip_ansi
from podium.viewer import highlight, packing
from podium.viewer.findings import ablation_table, findings_line
from podium.viewer.layout import layout
from podium.viewer.notebook import (
    NodeNotebook,
    NotebookCell,
    calls_by_turn,
    cell_traceback,
    read_notebook,
)
from podium.viewer.run_data import RunView, clip
from podium.viewer.schema import (
    AblationRow,
    Answer,
    Call,
    Cell,
    CellError,
    Diff,
    Execution,
    Grade,
    GraphSize,
    LightNode,
    NodeDetail,
    NodeTimings,
    Notebook,
    RunHeader,
    RunJSON,
    RunNode,
    Traceback,
    TurnCall,
    as_sent,
)

# What one field of a node may weigh in the page: a journal is the run's, but a run dir may
# come from anyone, and one 14 MB error message (a solution can raise one) would be sent on
# every poll and laid out by the browser for seconds. The light data's texts are one line.
MAX_LIGHT_TEXT = 1_000
MAX_DETAIL_TEXT = 1_000_000
LAYOUT_FIELDS = tuple(f for f in RunNode.model_fields if f not in LightNode.model_fields)
Light = TypeVar("Light", bound=LightNode)

# --- the run ------------------------------------------------------------------------------


def run_json(view: RunView) -> RunJSON:
    """RunJSON: the run's header and every node (light) with its place in the graph
    (``layout``: x in slots, y in layers), and a ``version`` that changes whenever anything
    else in it changes (the server's ETag; the page's "anything new?"). A node's references
    (``refs``) are drawn but never placed by: a node hangs under its parents only."""
    places = layout((n.id, n.parent_ids) for n in view.nodes)
    nodes = [
        _node(
            RunNode,
            view,
            n,
            MAX_LIGHT_TEXT,
            x=places.x[n.id],
            y=places.y[n.id],
            tree_parent=places.tree_parent.get(n.id),
        )
        for n in view.nodes
    ]
    return RunJSON(
        version="",
        live=view.live is True,
        run=_run_header(view),
        operators=sorted({n.operator for n in view.nodes}),
        layout=GraphSize(width=places.width, depth=places.depth),
        nodes=nodes,
    ).stamped()


def _run_header(view: RunView) -> RunHeader:
    """The run's fields, from summary.json when the run has written one, else from its config
    and journal (a run that has only just started, or one killed before its first summary)."""
    s, cfg = view.run_summary, view.config
    done = [n for n in view.nodes if n.step is not None]
    usage = _usage(view)
    return RunHeader(
        dir=str(view.root),
        task=str(s.task or view.meta.get("task_id") or cfg.get("task") or ""),
        strategy=str(s.strategy or _section(cfg, "search").get("strategy") or ""),
        model=str(s.model or _section(cfg, "model").get("name") or ""),
        review_model=str(s.review_model or _section(cfg, "model").get("review") or ""),
        plan_model=str(s.plan_model or _section(cfg, "model").get("plan") or ""),
        sandbox=str(s.sandbox or _section(cfg, "sandbox").get("name") or ""),
        status=view.status,
        stop_reason=s.stop_reason,
        lower_is_better=_lower_is_better(view),
        best_node=view.best_id,
        best_metric=_best_metric(view),
        steps=len(done),
        good_nodes=sum(n.is_good for n in done),
        buggy_nodes=sum(n.is_buggy for n in done),
        analysis_nodes=sum(view.kind(n) == "analysis" for n in done),
        discarded_nodes=view.discarded,
        elapsed_s=s.elapsed_s,
        cost_usd=usage.cost_usd,
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        calls=usage.calls,
        grade=_grade(s.grade),
        updated_at=s.updated_at,
    )


def _best_metric(view: RunView) -> float | None:
    best = next((n for n in view.nodes if n.id == view.best_id), None)
    if best is not None and best.metric is not None:
        return best.metric.value
    return view.run_summary.best_metric


def _section(config: dict[str, Any], name: str) -> dict[str, Any]:
    section = config.get(name)
    return section if isinstance(section, dict) else {}


def _lower_is_better(view: RunView) -> bool | None:
    if view.lower_is_better is not None:
        return view.lower_is_better
    metrics = [n.metric for n in view.nodes if n.metric is not None]
    return metrics[0].lower_is_better if metrics else None


def _usage(view: RunView) -> Usage:
    """The run's spending: summary.json's (it counts calls of discarded nodes too), else the
    sum over the nodes."""
    usage = view.run_summary.usage
    if usage is not None:
        return Usage(
            input_tokens=usage.input_tokens,
            output_tokens=usage.output_tokens,
            cost_usd=usage.cost_usd,
            calls=usage.calls,
        )
    return sum((node.usage for node in view.nodes), Usage())


def _grade(grade: SummaryGrade | None) -> Grade | None:
    if grade is None:
        return None
    return Grade(
        score=grade.score,
        medal=grade.medal,
        any_medal=bool(grade.any_medal),
        valid_submission=bool(grade.valid_submission),
        above_median=bool(grade.above_median),
        leaderboard_percentile=grade.leaderboard_percentile,
    )


# --- one node -----------------------------------------------------------------------------


def _node(model: type[Light], view: RunView, node: Node, limit: int, **more: Any) -> Light:
    """A node as ``model``: the LightNode fields (what the graph, the chart and the node list
    draw), its texts clipped at ``limit`` characters, and the ``more`` fields the model adds
    (RunNode its place in the graph, ``LAYOUT_FIELDS``; NodeDetail the rest of the node), all
    validated in one go (a RunJSON builds thousands of them on every change)."""
    kind = view.kind(node)
    return model(
        id=node.id,
        parents=list(node.parent_ids),
        refs=view.refs(node),
        operator=node.operator,
        state=node.state,
        kind=kind,
        best=node.id == view.best_id,
        on_best_path=node.id in view.best_path,
        step=node.step,
        metric=node.metric.value if node.metric else None,
        bug_reason=clip(node.bug_reason, limit),
        summary=clip(node.summary, limit),  # the review's verdict: the "why" column
        findings=findings_line(node.summary) if kind == "analysis" else None,
        worker=node.worker,
        total_s=node.timings.total_s,
        cost_usd=node.usage.cost_usd,
        created_at=node.created_at.isoformat(),
        finished_at=node.finished_at.isoformat() if node.finished_at else None,
        **more,
    )


def node_detail(view: RunView, node_id: int) -> NodeDetail:
    """NodeDetail: a LightNode plus its plan, code, diffs, output, review and model calls in
    full.

    A node the run does not have is a one-line ``UserError`` (from ``RunView.node``). The view
    may be light (``open_run(light=True)``): the node and its parents are read in full.
    """
    node = view.node(node_id)
    full = view.full([node_id, *node.parent_ids])
    return _detail(view, full.get(node_id, node), view.calls(node_id), full)


def _detail(
    view: RunView, node: Node, calls: list[ModelCall], parents: dict[int, Node]
) -> NodeDetail:
    output, cut, live = _output(view, node)
    code = clip(node.code, MAX_DETAIL_TEXT)
    timings = node.timings
    return _node(
        NodeDetail,
        view,
        node,
        MAX_DETAIL_TEXT,
        plan=clip(node.plan, MAX_DETAIL_TEXT),
        code=code,
        code_html=highlight.code_html(code),
        diffs=_diffs(node, parents),
        output=output,
        output_traceback_cut=cut,
        output_live=live,
        exec=_exec(node.exec) if node.exec else None,
        has_submission=node.has_submission,
        fresh=node.fresh.verdict() if node.fresh else None,  # an agentic node's fresh run
        ablation=_ablation(view, node),
        children=view.children(node.id),
        cited_by=view.cited_by(node.id),
        usage=node.usage,
        timings=NodeTimings(**timings.model_dump(), overhead_s=timings.overhead_s),
        calls=[_call(c) for c in calls],
        notebook=_notebook(read_notebook(view.root, node.id), calls),
    )


def _ablation(view: RunView, node: Node) -> list[AblationRow]:
    """An analysis's ablation table (``findings.ablation_table``); [] for any other node."""
    if view.kind(node) != "analysis" or node.exec is None:
        return []
    rows = ablation_table(strip_ansi(node.exec.output))
    return [AblationRow(part=r.part, score=r.score, change=r.change) for r in rows]


def _output(view: RunView, node: Node) -> tuple[str, bool, bool]:
    """The output as the page shows it, whether a traceback was cut from its end, and whether
    it is a running node's output so far: a finished node's without the copy of its traceback
    at the end (the error section shows it once), a node still executing its output so far
    (the file the loop rewrites while it runs), capped like any output."""
    if node.exec is None:
        if node.state is NodeState.EXECUTING:
            return view.live_output(node.id), False, True
        return "", False, False
    full = strip_ansi(node.exec.output)
    shown = tracebacks.output_without_traceback(full, _traceback_text(node.exec))
    return clip(shown, MAX_DETAIL_TEXT), shown != full, False


def _traceback_text(result: ExecResult) -> str | None:
    return strip_ansi(result.traceback) if result.traceback is not None else None


def _exec(result: ExecResult) -> Execution:
    """The execution's fields, the traceback as text and parsed (``tracebacks.as_json``: the
    solution's frames first on the page, library frames folded)."""
    data = result.model_dump(exclude={"output"})
    for key in ("error_name", "error_value", "killed_reason", "submission_refused"):
        data[key] = clip(data[key], MAX_DETAIL_TEXT)
    text = _traceback_text(result)
    data["traceback"] = clip(text, MAX_DETAIL_TEXT)
    data["traceback_parsed"] = _parsed(tracebacks.parse_traceback(text)) if text else None
    return Execution.model_validate(data)


def _parsed(parsed: tracebacks.ParsedTraceback) -> Traceback:
    return Traceback.model_validate(tracebacks.as_json(parsed))


def _diffs(node: Node, parents: dict[int, Node]) -> list[Diff]:
    """The node's code against each parent's (a crossover has two): ``code_diff.as_json`` and
    the parent's id. ``parents``: nodes in full by id."""
    out = []
    for parent_id in dict.fromkeys(node.parent_ids):  # a damaged journal may repeat one
        parent = parents.get(parent_id)
        if parent is None:
            continue
        diff = code_diff.code_diff(parent.code, node.code)
        out.append(Diff.model_validate({"parent": parent_id, **code_diff.as_json(diff)}))
    return out


def _call(call: ModelCall) -> Call:
    response = call.response
    return Call(
        role=call.role,
        seq=call.seq,
        model=call.model,
        attempts=call.attempts,
        error=call.error,
        fatal=call.fatal,
        started_at=call.started_at.isoformat(),
        messages=[_message(m) for m in call.request.messages],
        tools=[t.name for t in call.request.tools],
        response=None
        if response is None
        else Answer(
            text=clip(response.text, MAX_DETAIL_TEXT),
            tool_call=response.tool_call,
            input_tokens=response.usage.input_tokens,
            output_tokens=response.usage.output_tokens,
            cost_usd=response.usage.cost_usd,
            latency_s=response.latency_s,
            finish=response.finish,
            replayed=response.replayed,
        ),
    )


def _message(message: Message) -> Message:
    """A message as sent, its content clipped (copied only when it is)."""
    content = clip(message.content, MAX_DETAIL_TEXT)
    if content is message.content:
        return message
    return message.model_copy(update={"content": content})


def _notebook(notebook: NodeNotebook | None, calls: list[ModelCall]) -> Notebook | None:
    """An agentic node's notebook (None: the node has none), each entry with the model call
    of its turn (``podium.viewer.notebook``: read bounded, its texts inert and clipped)."""
    if notebook is None:
        return None
    by_turn = calls_by_turn(calls)
    return Notebook(
        problem=notebook.problem,
        finished=notebook.finished,
        ending=notebook.ending,
        turns=notebook.turns,
        cells_left_out=notebook.cells_left_out,
        cells=[
            _cell(cell, None if cell.turn is None else by_turn.get(cell.turn))
            for cell in notebook.cells
        ],
    )


def _cell(cell: NotebookCell, call: ModelCall | None) -> Cell:
    """One entry of a notebook: a code cell (its output without the copy of its traceback at
    the end, as a node's output) or the model's words (``type`` "words"), and its turn's call
    (None: no answer)."""
    error = cell.error
    output = tracebacks.output_without_traceback(cell.output, error.traceback if error else None)
    return Cell(
        type=cell.kind,
        number=cell.number,
        turn=cell.turn,
        status=cell.status,
        duration_s=cell.duration_s,
        source=cell.source,
        output=output,
        output_traceback_cut=output != cell.output,
        error=None
        if error is None
        else CellError(
            name=error.name,
            value=error.value,
            traceback=error.traceback,
            traceback_parsed=_parsed(cell_traceback(error.traceback))
            if error.traceback.strip()
            else None,
        ),
        call=_turn_call(call),
    )


def _turn_call(call: ModelCall | None) -> TurnCall | None:
    if call is None or call.response is None:
        return None
    usage = call.response.usage
    return TurnCall(
        seq=call.seq,
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        cost_usd=usage.cost_usd,
        latency_s=call.response.latency_s,
    )


# --- search and export --------------------------------------------------------------------


def search_ids(view: RunView, q: str) -> list[int]:
    """Ids of the nodes whose text contains ``q``, case-insensitively (empty ``q``: every node).

    The fields are the ones the page's export mode searches locally, as displayed (colour codes
    stripped), so a live page and an export find the same nodes.
    """
    if not q:
        return [n.id for n in view.nodes]
    wanted = q.casefold()
    return [n.id for n in view.nodes if any(wanted in t.casefold() for t in _searched(n))]


def _searched(node: Node) -> Iterable[str]:
    yield from (node.plan, node.code, node.bug_reason or "", node.summary)
    if node.exec is not None:
        yield strip_ansi(node.exec.output)
        yield from (node.exec.error_name or "", node.exec.error_value or "")
        yield strip_ansi(node.exec.traceback or "")


def export_data(view: RunView) -> tuple[dict[str, Any], dict[str, Any]]:
    """What an export embeds: RunJSON, and every NodeDetail packed (``packing.pack``: the
    prompts, code and outputs repeated across nodes stored once), each as the server would
    send it (``schema.as_sent``), as the page's ``embed_json`` takes them.

    Two parts, so that the page draws the graph from the first without parsing the second,
    which it reads when a node is first opened. The model calls are read in one pass over the
    journal, not one query per node.
    """
    calls = _all_calls(view)
    full = view.full(n.id for n in view.nodes)
    details = {str(n.id): as_sent(_detail(view, n, calls.get(n.id, []), full)) for n in view.nodes}
    return as_sent(run_json(view)), packing.pack(details)


def _all_calls(view: RunView) -> dict[int, list[ModelCall]]:
    by_node: dict[int, list[ModelCall]] = defaultdict(list)
    for call in view.calls():
        by_node[call.node_id].append(call)
    return by_node
