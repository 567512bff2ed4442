"""A recorded run written through the real journal API, for the viewer, ``show`` and ``rerun``
tests: every node kind, a crossover (two parents), nodes citing others (reference edges), an
analysis (an ablation study, cited by the refinement it led to), model calls with prompts and a
review, and hostile content (HTML and ``<script>`` in code, output, plans, reasons and an
ablation's part) that must stay text.
Beside it, :func:`write_agentic_run`: a run of one agentic node, whose record is a notebook (its
cells, outputs, errors and the model's words, hostile too) and whose model calls carry turns.

Built directly (no kernels, no model) so it is instant and exact; the live-run tests use a
real ``podium run`` instead.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from podium.formats import Journal, RunDir
from podium.formats.notebook import Notebook
from podium.records import (
    ExecResult,
    ExecStatus,
    Message,
    Metric,
    ModelCall,
    ModelRequest,
    ModelResponse,
    Node,
    NodeState,
    RequestMeta,
    Timings,
    ToolCall,
    Usage,
)
from tests.support import TOY_TASK

# Untrusted content: if any of it is ever parsed as HTML, the page changes or a script runs.
XSS_CODE = 'print("</script><script>window.__pwned = 1</script>")\n'
XSS_OUTPUT = "<img src=x onerror=\"window.__pwned=2\"><b id='injected'>bold?</b>\n"
XSS_PLAN = "Plan <script>window.__pwned = 3</script> with <i>markup</i>."
XSS_REASON = "ValueError: could not convert '<svg onload=window.__pwned=4>'"
XSS_FRAME_LINE = 'label = "<img src=x onerror=window.__pwned=6>"'  # a code line in a frame
# IPython's layout, colours included: the solution's cell frame, then a library's.
ANSI_TRACEBACK = (
    "\x1b[0;31m" + "-" * 75 + "\x1b[0m\n"
    "\x1b[0;31mValueError\x1b[0m                                Traceback (most recent call last)\n"
    "Cell In[1], line 2\n"
    f"\x1b[1;32m      1\x1b[0m {XSS_FRAME_LINE}\n"
    "\x1b[0;32m----> 2\x1b[0m \x1b[38;5;28mfloat\x1b[39m(parse(label))\n"
    "\n"
    "File /usr/lib/python3/dist-packages/pandas/core/tools/numeric.py:232, in to_numeric(arg)\n"
    "    230 values = arg\n"
    "\x1b[0;32m--> 232\x1b[0m values = lib.maybe_convert_numeric(values)\n"
    "\n"
    "\x1b[0;31mValueError\x1b[0m: could not convert\n"
)
# The analysis (node 8, an ablation of node 4): its output's ABLATION lines, as the table shows
# them (part, score, change against the baseline), and its findings (the review's summary).
ABLATION_OUTPUT = (
    "ablating 2 parts of node 4\n"
    "ABLATION baseline: 0.78\n"
    "ABLATION without <i>markup</i> text features: 0.7\n"
    "ABLATION without scaling: 0.775\n"
)
ABLATION_TABLE = (
    ("baseline", 0.78, None),
    ("without <i>markup</i> text features", 0.7, -0.08),
    ("without scaling", 0.775, -0.005),
)
FINDINGS = (
    "The text features matter most: without them the score falls from 0.78 to 0.7. "
    "Scaling hardly matters (0.775)."
)
FINDINGS_LINE = "The text features matter most: without them the score falls from 0.78 to 0.7."


@dataclass(frozen=True)
class RecordedRun:
    root: Path
    best: int  # the final node
    best_path: frozenset[int]
    crossover: int  # a node with two parents
    buggy: dict[int, str]  # buggy node id -> its bug reason
    running: int  # a node still executing (live only while the run's lock is held)
    node_count: int
    refs: dict[int, tuple[int, ...]]  # node id -> the nodes it cites beyond its parents
    analysis: int  # a finished analysis (ablate of a good node): no metric, never good
    refine: int  # the refinement that cites it


def _metric(value: float) -> Metric:
    return Metric(value=value, lower_is_better=False)


def _calls(node_id: int, seq: int, code: str, summary: str) -> list[ModelCall]:
    code_request = ModelRequest(
        messages=[
            Message(role="system", content="You are a Kaggle grandmaster. <b>Be brief.</b>"),
            Message(role="user", content=f"Write a solution for node {node_id}."),
        ],
        meta=RequestMeta(node_id=node_id, role="code", seq=seq),
    )
    code_response = ModelResponse(
        text=f"A plan.\n\n```python\n{code}```\n",
        usage=Usage(input_tokens=1000 + node_id, output_tokens=200, cost_usd=0.01, calls=1),
        latency_s=1.5,
        model="openai/gpt-test",
    )
    review_request = ModelRequest(
        messages=[Message(role="user", content=f"Review node {node_id}'s output.")],
        meta=RequestMeta(node_id=node_id, role="review", seq=seq),
    )
    review_response = ModelResponse(
        tool_call=ToolCall(name="submit_review", arguments={"is_bug": False, "summary": summary}),
        usage=Usage(input_tokens=500, output_tokens=50, cost_usd=0.002, calls=1),
        latency_s=0.5,
        model="openai/gpt-test",
        finish="tool_call",
    )
    return [
        ModelCall(node_id=node_id, role="code", seq=seq, request=code_request,
                  response=code_response, model="openai/gpt-test"),
        ModelCall(node_id=node_id, role="review", seq=seq, request=review_request,
                  response=review_response, model="openai/gpt-test"),
    ]  # fmt: skip


START = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


def _new_run(root: Path, search: str) -> tuple[RunDir, Journal]:
    """A run dir with its config (the toy task, a test model, ``search`` as the [search] body)
    and an empty journal."""
    rd = RunDir(root)
    root.mkdir(parents=True)
    rd.config.write_text(
        f'task = "{TOY_TASK}"\nseed = 0\n\n[model]\nname = "openai/gpt-test"\n\n'
        f"[search]\n{search}\n",
        encoding="utf-8",
    )
    return rd, Journal.create(rd.journal, {"podium_version": "test", "task_id": "toy"})


def write_recorded_run(root: Path, *, refs: bool = True) -> RecordedRun:
    """Nine nodes: drafts 1 (good) and 2 (buggy), debug 3 of 2, improve 4 of 1, crossover 5 of
    3 and 4 (the best), improve 6 of 5 citing 1 and 3 (timed out: buggy), improve 7 of 5 citing
    6 (still executing), ablate 8 of 4 (an analysis: ``ABLATION_OUTPUT``, ``FINDINGS``) and
    refine 9 of 4 citing 8 (good, not the best). ``refs=False``: the same run with no
    reference edge."""
    rd, journal = _new_run(root, 'strategy = "evolutionary"')
    rng = random.Random(0).getstate()
    cited: dict[int, tuple[int, ...]] = {6: (1, 3), 7: (6,), 9: (8,)} if refs else {}
    ok = ExecResult(status=ExecStatus.OK, output="VALIDATION_METRIC: 0.7\n", duration_s=2.0)
    specs: list[dict[str, object]] = [
        {"operator": "draft", "parents": (), "metric": 0.71, "code": XSS_CODE, "plan": XSS_PLAN,
         "exec": ok.model_copy(update={"output": XSS_OUTPUT + "VALIDATION_METRIC: 0.71\n"})},
        {"operator": "draft", "parents": (), "buggy": XSS_REASON, "code": "float('<svg>')\n",
         "exec": ExecResult(status=ExecStatus.ERROR,
                            output="Traceback...\n" + ANSI_TRACEBACK + "\n",
                            error_name="ValueError", error_value="could not convert",
                            traceback=ANSI_TRACEBACK, duration_s=0.3)},
        {"operator": "debug", "parents": (2,), "metric": 0.75, "code": "print(0.75)\n"},
        {"operator": "improve", "parents": (1,), "metric": 0.78, "code": "print(0.78)\n"},
        {"operator": "crossover", "parents": (3, 4), "metric": 0.82, "code": "print(0.82)\n"},
        {"operator": "improve", "parents": (5,), "buggy": "execution timed out after 60s",
         "code": "import time\ntime.sleep(999)\n",
         "exec": ExecResult(status=ExecStatus.TIMEOUT, output="", timed_out=True,
                            killed_reason="timed out after 60s", duration_s=60.0)},
        {"operator": "improve", "parents": (5,), "running": True, "code": "print('wip')\n"},
        {"operator": "ablate", "parents": (4,), "analysis": FINDINGS,
         "code": "for part in PARTS:\n    print(f'ABLATION {part}: {score(part)}')\n",
         "exec": ok.model_copy(update={"output": ABLATION_OUTPUT})},
        {"operator": "refine", "parents": (4,), "metric": 0.8, "code": "print(0.8)\n"},
    ]  # fmt: skip
    buggy: dict[int, str] = {}
    step = 0
    for node_id, spec in enumerate(specs, start=1):
        code = str(spec["code"])
        node = Node(id=node_id, parent_ids=spec["parents"], operator=str(spec["operator"]),  # type: ignore[arg-type]
                    ref_ids=cited.get(node_id, ()),
                    created_at=START + timedelta(minutes=node_id))  # fmt: skip
        journal.begin(node, rng, rng, elapsed_s=float(node_id))
        rd.reset_node(node_id)
        rd.write_text(node_id, "solution.py", code)
        if spec.get("running"):
            journal.update(
                node.model_copy(update={"code": code, "state": NodeState.EXECUTING}), node_id
            )
            continue
        step += 1
        result = spec.get("exec") or ok.model_copy(
            update={"output": f"VALIDATION_METRIC: {spec.get('metric')}\n"}
        )
        assert isinstance(result, ExecResult)
        rd.write_text(node_id, "output.txt", result.output)
        reason, findings = spec.get("buggy"), spec.get("analysis")
        summary = f"Node {node_id} <em>looks</em> fine." if reason is None else "It failed."
        summary = str(findings) if findings else summary
        for call in _calls(node_id, step - 1, code, summary):
            journal.record_call(call)
        scored = reason is None and not findings
        done = node.model_copy(update={
            "state": NodeState.DONE, "step": step, "code": code,
            "kind": "analysis" if findings else "solution",
            "plan": str(spec.get("plan", f"Plan of node {node_id}.")), "exec": result,
            "metric": _metric(float(spec["metric"])) if scored else None,  # type: ignore[arg-type]
            "is_buggy": reason is not None, "bug_reason": reason, "summary": summary,
            "has_submission": scored,
            "usage": Usage(input_tokens=1500 + node_id, output_tokens=250, cost_usd=0.012,
                           calls=2),
            "timings": Timings(model_s=1.5, exec_s=result.duration_s, review_model_s=0.5,
                               total_s=result.duration_s + 2.5),
            "finished_at": START + timedelta(minutes=node_id, seconds=30),
        })  # fmt: skip
        journal.update(done, float(node_id))
        if reason is not None:
            buggy[node_id] = str(reason)
    journal.close()
    best = 5
    rd.publish_best(Node(id=best, operator="crossover", metric=_metric(0.82)))
    summary = {
        "task": "toy", "status": "finished", "stop_reason": "steps", "strategy": "evolutionary",
        "model": "openai/gpt-test", "review_model": "openai/gpt-test", "sandbox": "bwrap",
        "steps": step, "good_nodes": step - len(buggy) - 1, "buggy_nodes": len(buggy),
        "best_node": best, "best_metric": 0.82, "lower_is_better": False, "elapsed_s": 400.0,
        "discarded_nodes": 0, "updated_at": (START + timedelta(minutes=8)).isoformat(),
        "usage": {"input_tokens": 9000, "output_tokens": 1500, "cost_usd": 0.072, "calls": 12},
        "grade": {"score": 0.8, "medal": "bronze", "any_medal": True, "valid_submission": True,
                  "above_median": True, "sandboxed": True, "leaderboard_percentile": 61.0},
    }  # fmt: skip
    (root / "summary.json").write_text(json.dumps(summary, indent=2), encoding="utf-8")
    return RecordedRun(
        root=root, best=best, best_path=frozenset({1, 2, 3, 4, 5}), crossover=5, buggy=buggy,
        running=7, node_count=len(specs),
        refs=cited, analysis=8, refine=9,
    )  # fmt: skip


def cite(root: Path, node_id: int, refs: tuple[int, ...]) -> None:
    """Rewrite node ``node_id``'s references in the run's journal, as a damaged or hand-made
    journal may hold them (any ids: unknown, later, its own, a parent's)."""
    journal = Journal.open(RunDir(root).journal)
    try:
        (node,) = journal.nodes_by_id([node_id]).values()
        journal.update(node.model_copy(update={"ref_ids": refs}), float(node_id))
    finally:
        journal.close()


# --- an agentic node: its notebook --------------------------------------------------------------

# Agent-written content of an agentic node's notebook: the model's words (markdown, which must
# never be rendered), a cell's code, its output and its traceback.
XSS_WORDS = (
    "Look at the **data** first [bold red]not bold[/]. "
    '<img src=x onerror="window.__pwned=8"> <em>looks</em>'
)
XSS_CELL_CODE = 'html = "<script>window.__pwned = 9</script>"\nprint(html)\nfloat(html)\n'
XSS_CELL_OUTPUT = "<script>window.__pwned = 9</script>\n<b id='injected'>bold?</b>\n"
XSS_CELL_ERROR = "could not convert string to float: '<script>window.__pwned = 9</script>'"
CELL_TRACEBACK = (
    "\x1b[0;31m" + "-" * 75 + "\x1b[0m\n"
    "\x1b[0;31mValueError\x1b[0m                                Traceback (most recent call last)\n"
    "Cell In[1], line 3\n"
    '\x1b[1;32m      1\x1b[0m html = "<script>window.__pwned = 9</script>"\n'
    "\x1b[1;32m      2\x1b[0m \x1b[38;5;28mprint\x1b[39m(html)\n"
    "\x1b[0;32m----> 3\x1b[0m \x1b[38;5;28mfloat\x1b[39m(html)\n"
    "\n"
    f"\x1b[0;31mValueError\x1b[0m: {XSS_CELL_ERROR}\n"
)
FIX_CODE = (
    "for epoch in range(60):\n"
    '    print(f"epoch {epoch} loss {1 / (epoch + 1):.4f}")\n'
    'print("VALIDATION_METRIC: 0.9")\n'
)
FIX_OUTPUT = "".join(f"epoch {e} loss {1 / (e + 1):.4f}\n" for e in range(60))
FIX_OUTPUT += "VALIDATION_METRIC: 0.9\n"
AGENTIC_PLAN = "Print the metric <i>markup</i>; the first cell failed on purpose."
# Each code call of the agentic node: (turn, input tokens, output tokens, cost, latency).
AGENTIC_TURNS = ((0, 2000, 100, 0.02, 3.25), (1, 2100, 50, 0.015, 1.75), (2, 2200, 20, 0.01, 0.5))


@dataclass(frozen=True)
class AgenticRun:
    root: Path
    node: int  # the agentic node: words, a failing cell, a good cell, its plan
    node_count: int


def _agentic_notebook() -> Notebook:
    """Turn 0: words and a cell that raises; turn 1: a cell that prints the metric; turn 2:
    ``finish`` with the plan (written as words, as the agentic operator does)."""
    notebook = Notebook()
    notebook.say(XSS_WORDS, 0)
    failed = ExecResult(
        status=ExecStatus.ERROR,
        output=XSS_CELL_OUTPUT,
        error_name="ValueError",
        error_value=XSS_CELL_ERROR,
        traceback=CELL_TRACEBACK,
        duration_s=0.25,
    )
    notebook.add_cell(XSS_CELL_CODE, failed, 0)
    ok = ExecResult(status=ExecStatus.OK, output=FIX_OUTPUT, duration_s=0.5)
    notebook.add_cell(FIX_CODE, ok, 1)
    notebook.say(AGENTIC_PLAN, 2)
    return notebook


def _agentic_calls(node_id: int) -> list[ModelCall]:
    """The node's code calls, one per turn, and a review call (its own turn 0: the join of
    cells to calls must not take it)."""
    calls = []
    for turn, tokens_in, tokens_out, cost, latency in AGENTIC_TURNS:
        request = ModelRequest(
            messages=[Message(role="user", content=f"Work on node {node_id}, turn {turn}.")],
            meta=RequestMeta(node_id=node_id, role="code", seq=turn, turn=turn),
        )
        response = ModelResponse(
            usage=Usage(input_tokens=tokens_in, output_tokens=tokens_out, cost_usd=cost, calls=1),
            latency_s=latency, model="openai/gpt-test", finish="tool_call",
        )  # fmt: skip
        calls.append(ModelCall(node_id=node_id, role="code", seq=turn, request=request,
                               response=response, model="openai/gpt-test"))  # fmt: skip
    return calls + _calls(node_id, 0, FIX_CODE, "Looks fine.")[1:]


def write_agentic_run(root: Path) -> AgenticRun:
    """One agentic draft (node 1), finished and good, with its notebook
    (``RunDir.node_notebook``) written by Podium's own writer and its model calls by turn."""
    rd, journal = _new_run(root, 'strategy = "greedy"\noperators = "agentic"')
    rng = random.Random(0).getstate()
    node = Node(id=1, operator="draft", created_at=START)
    journal.begin(node, rng, rng, elapsed_s=1.0)
    rd.reset_node(1)
    notebook = _agentic_notebook()
    meta: dict[str, object] = {"operator": "draft", "finished": True, "ending": None, "turns": 3}
    rd.node_notebook(1).write_text(notebook.ipynb(meta), encoding="utf-8")
    rd.write_text(1, "solution.py", notebook.script())
    result = notebook.result(None, None, 1_000_000)
    rd.write_text(1, "output.txt", result.output)
    for call in _agentic_calls(1):
        journal.record_call(call)
    done = node.model_copy(update={
        "state": NodeState.DONE, "step": 1, "code": notebook.script(), "plan": AGENTIC_PLAN,
        "exec": result, "metric": _metric(0.9), "summary": "Looks fine.", "has_submission": True,
        "usage": Usage(input_tokens=6800, output_tokens=220, cost_usd=0.047, calls=4),
        "timings": Timings(model_s=6.0, exec_s=0.75, review_model_s=0.5, total_s=7.5),
        "finished_at": START + timedelta(seconds=30),
    })  # fmt: skip
    journal.update(done, 2.0)
    journal.close()
    rd.publish_best(done)
    summary = {"task": "toy", "status": "finished", "stop_reason": "steps", "strategy": "greedy",
               "model": "openai/gpt-test", "steps": 1, "best_node": 1, "best_metric": 0.9,
               "lower_is_better": False}  # fmt: skip
    (root / "summary.json").write_text(json.dumps(summary, indent=2), encoding="utf-8")
    return AgenticRun(root=root, node=1, node_count=1)
