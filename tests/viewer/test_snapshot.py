"""The viewer's JSON (``podium.viewer.snapshot``) for the recorded run: what the page draws
(RunJSON), what a node's panel shows (NodeDetail), search, and the export's data."""

from __future__ import annotations

import itertools
import json
import random
import re
from pathlib import Path
from typing import Any

import pytest

from podium.errors import UserError
from podium.formats import Journal, RunDir
from podium.records import ExecResult, ExecStatus, Metric, Node, NodeState
from podium.untrusted import strip_ansi
from podium.viewer import highlight, packing, snapshot
from podium.viewer.notebook import MAX_CELLS
from podium.viewer.run_data import RunView, open_run
from podium.viewer.schema import as_sent
from podium.viewer.snapshot import LAYOUT_FIELDS, export_data, search_ids
from tests.recorded_run import (
    ABLATION_TABLE,
    AGENTIC_PLAN,
    AGENTIC_TURNS,
    FINDINGS,
    FINDINGS_LINE,
    FIX_CODE,
    FIX_OUTPUT,
    XSS_CELL_CODE,
    XSS_CELL_ERROR,
    XSS_CELL_OUTPUT,
    XSS_CODE,
    XSS_OUTPUT,
    XSS_PLAN,
    XSS_REASON,
    XSS_WORDS,
    AgenticRun,
    RecordedRun,
    cite,
    write_recorded_run,
)

ANSI_OUTPUT = "\x1b[1;32mepoch 1\x1b[0m loss \x1b]8;;http://x\x07link\x1b]8;;\x07 done\x1b(B\n"


def add_node(root: Path, node_id: int, output: str = ANSI_OUTPUT) -> None:
    """A finished node written through the journal, as a live run would (improve of node 5)."""
    journal = Journal.open(RunDir(root).journal)
    rng = random.Random(0).getstate()
    node = Node(id=node_id, parent_ids=(5,), operator="improve")
    journal.begin(node, rng, rng, elapsed_s=50.0)
    result = ExecResult(status=ExecStatus.OK, output=output, traceback="\x1b[31mboom\x1b[0m")
    done = node.model_copy(
        update={"state": NodeState.DONE, "step": node_id, "code": "print(0.9)\n", "exec": result,
                "metric": Metric(value=0.9, lower_is_better=False)}
    )  # fmt: skip
    journal.update(done, 51.0)
    journal.close()


def run_json(view: RunView) -> dict[str, Any]:
    """RunJSON as the page gets it."""
    data: dict[str, Any] = as_sent(snapshot.run_json(view))
    return data


def node_detail(view: RunView, node_id: int) -> dict[str, Any]:
    """NodeDetail as the page gets it."""
    data: dict[str, Any] = as_sent(snapshot.node_detail(view, node_id))
    return data


def by_id(data: dict[str, Any]) -> dict[int, dict[str, Any]]:
    nodes = data["nodes"]
    assert isinstance(nodes, list)
    return {n["id"]: n for n in nodes}


def test_run_json_of_the_recorded_run(recorded_run: RecordedRun) -> None:
    data = run_json(open_run(recorded_run.root))
    assert data["format"] == "podium-view/2"
    assert re.fullmatch(r"[0-9a-f]{40}", data["version"])
    assert data["live"] is False
    nodes = by_id(data)
    assert list(nodes) == list(range(1, recorded_run.node_count + 1))
    assert nodes[recorded_run.crossover]["parents"] == [3, 4]
    assert nodes[recorded_run.crossover]["operator"] == "crossover"
    kinds = {i: n["kind"] for i, n in nodes.items()}
    assert kinds == {1: "good", 2: "buggy", 3: "good", 4: "good", 5: "good", 6: "buggy",
                     7: "interrupted", 8: "analysis", 9: "good"}  # fmt: skip
    assert nodes[7]["state"] == "executing"
    assert [i for i, n in nodes.items() if n["best"]] == [recorded_run.best]
    assert {i for i, n in nodes.items() if n["on_best_path"]} == recorded_run.best_path
    assert nodes[5]["metric"] == 0.82
    assert nodes[2]["metric"] is None
    assert {i: n["bug_reason"] for i, n in nodes.items() if n["bug_reason"]} == recorded_run.buggy
    assert nodes[1]["created_at"].startswith("2026-11-30T12:01:00")
    assert nodes[7]["finished_at"] is None and nodes[7]["step"] is None
    assert data["operators"] == ["ablate", "crossover", "debug", "draft", "improve", "refine"]
    assert {i: n["findings"] for i, n in nodes.items() if n["findings"]} == {8: FINDINGS_LINE}


def test_an_analysis_has_findings_not_a_metric(recorded_run: RecordedRun) -> None:
    """The ablation (node 8, of 4): its own kind, no metric, never good nor on the best path,
    its findings in a line and in full, its ABLATION lines as a table against the baseline;
    the run's header counts it apart from the good and the buggy."""
    view = open_run(recorded_run.root)
    data = run_json(view)
    light = by_id(data)[recorded_run.analysis]
    assert (light["kind"], light["metric"], light["on_best_path"], light["best"]) == (
        "analysis", None, False, False
    )  # fmt: skip
    assert light["findings"] == FINDINGS_LINE and light["summary"] == FINDINGS
    assert by_id(data)[recorded_run.refine]["refs"] == [recorded_run.analysis]
    assert (data["run"]["good_nodes"], data["run"]["analysis_nodes"]) == (5, 1)
    detail = node_detail(view, recorded_run.analysis)
    table = [(r["part"], r["score"], r["change"]) for r in detail["ablation"]]
    assert [(p, s) for p, s, _ in table] == [(p, s) for p, s, _ in ABLATION_TABLE]
    assert [c for _, _, c in table] == [
        None if c is None else pytest.approx(c) for _, _, c in ABLATION_TABLE
    ]
    assert detail["has_submission"] is False and detail["cited_by"] == [recorded_run.refine]
    assert all(node_detail(view, i)["ablation"] == [] for i in (4, recorded_run.refine))


def test_a_failed_analysis_is_buggy_like_any_node(recorded_run: RecordedRun) -> None:
    """An analysis that did not run through is drawn buggy, with no findings and no table."""
    journal = Journal.open(RunDir(recorded_run.root).journal)
    try:
        (node,) = journal.nodes_by_id([recorded_run.analysis]).values()
        failed = {"is_buggy": True, "bug_reason": "ZeroDivisionError: division by zero"}
        journal.update(node.model_copy(update=failed), 8.0)
    finally:
        journal.close()
    view = open_run(recorded_run.root)
    light = by_id(run_json(view))[recorded_run.analysis]
    assert (light["kind"], light["findings"]) == ("buggy", None)
    assert node_detail(view, recorded_run.analysis)["ablation"] == []
    assert run_json(view)["run"]["analysis_nodes"] == 0


def test_every_node_is_placed_below_its_parents(recorded_run: RecordedRun) -> None:
    data = run_json(open_run(recorded_run.root))
    nodes = by_id(data)
    for node in nodes.values():
        assert isinstance(node["x"], float) and isinstance(node["y"], int)
        assert all(node["y"] > nodes[p]["y"] for p in node["parents"]), node
    assert {i for i, n in nodes.items() if n["y"] == 0} == {1, 2}  # the drafts
    # A crossover hangs under its deepest parent (3 and 4 are both at depth 1: the first).
    assert nodes[recorded_run.crossover]["tree_parent"] == 3
    assert nodes[1]["tree_parent"] is None
    same_layer = sorted((n["y"], n["x"]) for n in nodes.values())
    for (y1, x1), (y2, x2) in itertools.pairwise(same_layer):
        assert y1 != y2 or x2 - x1 >= 1 - 2e-3, "two nodes of a layer overlap"
    assert data["layout"] == {"width": max(n["x"] for n in nodes.values()), "depth": 3}


def placed(data: dict[str, Any]) -> dict[int, tuple[Any, ...]]:
    """Where each node of a RunJSON sits, and under which parents."""
    return {i: (n["x"], n["y"], n["tree_parent"], n["parents"]) for i, n in by_id(data).items()}


def test_references_are_drawn_and_place_no_node(recorded_run: RecordedRun, tmp_path: Path) -> None:
    """Node 6 cites 1 and 3, node 7 its sibling 6: their light fields list them and the cited
    nodes' details list who cites them, yet nothing moves (the layout is that of the same run
    without references, though 6 is deeper than 7's parent) and no cited node has a child
    more."""
    view = open_run(recorded_run.root)
    data = run_json(view)
    assert {i: n["refs"] for i, n in by_id(data).items() if n["refs"]} == {
        6: [1, 3], 7: [6], 9: [8]
    }  # fmt: skip
    assert recorded_run.refs == {6: (1, 3), 7: (6,), 9: (8,)}
    plain = run_json(open_run(write_recorded_run(tmp_path / "plain", refs=False).root))
    assert not any(n["refs"] for n in plain["nodes"])
    assert placed(data) == placed(plain) and data["layout"] == plain["layout"]
    for cited, by in ((1, 6), (3, 6), (6, 7), (8, 9)):
        detail = node_detail(view, cited)
        assert detail["cited_by"] == [by] and by not in detail["children"]
    citing = node_detail(open_run(recorded_run.root, light=True), 6)
    assert (citing["refs"], citing["cited_by"], citing["parents"]) == ([1, 3], [7], [5])


def test_a_damaged_journals_references_are_left_out(recorded_run: RecordedRun) -> None:
    """Ids a reference cannot have (unknown, the node's own, a later node's, a parent's, one
    twice) are not drawn, and the rest still are."""
    cite(recorded_run.root, 6, (99, 3, 6, 7, 5, 3, -1))
    view = open_run(recorded_run.root)
    assert by_id(run_json(view))[6]["refs"] == [3]
    assert [node_detail(view, i)["cited_by"] for i in (3, 5, 7)] == [[6], [], []]
    run, _ = export_data(view)
    assert by_id(run)[6]["refs"] == [3]


def test_run_header(recorded_run: RecordedRun) -> None:
    run = run_json(open_run(recorded_run.root))["run"]
    assert run["dir"] == str(recorded_run.root)
    assert (run["task"], run["strategy"], run["model"], run["sandbox"]) == (
        "toy", "evolutionary", "openai/gpt-test", "bwrap"
    )  # fmt: skip
    assert (run["status"], run["stop_reason"], run["lower_is_better"]) == (
        "finished",
        "steps",
        False,
    )
    assert (run["best_node"], run["best_metric"]) == (5, 0.82)
    assert (run["steps"], run["good_nodes"], run["buggy_nodes"]) == (8, 5, 2)
    assert run["analysis_nodes"] == 1
    assert (run["calls"], run["input_tokens"], run["cost_usd"]) == (12, 9000, 0.072)
    assert run["grade"]["medal"] == "bronze" and run["grade"]["leaderboard_percentile"] == 61.0
    assert "sandboxed" not in run["grade"]


def test_a_run_without_summary_still_has_a_header(recorded_run: RecordedRun) -> None:
    """A run killed before its first summary.json: fields come from its config and journal."""
    (recorded_run.root / "summary.json").unlink()
    run = run_json(open_run(recorded_run.root))["run"]
    assert (run["task"], run["strategy"], run["model"]) == (
        "toy",
        "evolutionary",
        "openai/gpt-test",
    )
    assert run["status"] == "stopped"
    assert (run["steps"], run["buggy_nodes"], run["grade"]) == (8, 2, None)
    assert run["calls"] == 16  # the nodes' own usage, summed
    assert run["lower_is_better"] is False


def test_a_running_node_while_the_run_holds_its_lock(recorded_run: RecordedRun) -> None:
    rd = RunDir(recorded_run.root)
    rd.lock()
    try:
        live = run_json(open_run(recorded_run.root))
    finally:
        rd.unlock()
    assert live["live"] is True
    assert by_id(live)[recorded_run.running]["kind"] == "running"
    after = run_json(open_run(recorded_run.root))
    assert after["live"] is False and after["version"] != live["version"]


def test_version_is_stable_and_follows_the_journal(recorded_run: RecordedRun) -> None:
    first = run_json(open_run(recorded_run.root))
    assert run_json(open_run(recorded_run.root)) == first
    new = recorded_run.node_count + 1
    add_node(recorded_run.root, new)
    second = run_json(open_run(recorded_run.root))
    assert second["version"] != first["version"]
    assert by_id(second)[new]["parents"] == [5]


def test_nan_in_the_summary_is_null_json(recorded_run: RecordedRun) -> None:
    """summary.json is written by Python's json, which allows NaN; a browser's JSON.parse does
    not: non-finite numbers are sent as null."""
    path = recorded_run.root / "summary.json"
    summary = json.loads(path.read_text())
    summary["grade"]["score"] = float("nan")
    summary["elapsed_s"] = float("inf")
    path.write_text(json.dumps(summary))
    run = run_json(open_run(recorded_run.root))
    assert (run["run"]["grade"]["score"], run["run"]["elapsed_s"]) == (None, None)
    json.dumps(run, allow_nan=False)


def test_node_detail_keeps_hostile_content_as_text(recorded_run: RecordedRun) -> None:
    view = open_run(recorded_run.root)
    detail = node_detail(view, 1)
    assert (detail["code"], detail["plan"]) == (XSS_CODE, XSS_PLAN)
    assert detail["output"].startswith(XSS_OUTPUT)
    assert "&lt;/script&gt;" in detail["code_html"]
    assert "</script" not in detail["code_html"] and "<script" not in detail["code_html"]
    assert "style=" not in detail["code_html"]
    assert re.sub(r"<span class=\"[\w ]+\">|</span>", "", detail["code_html"]) == (
        XSS_CODE.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    )
    assert node_detail(view, 2)["bug_reason"] == XSS_REASON


def test_node_detail_fields(recorded_run: RecordedRun) -> None:
    view = open_run(recorded_run.root)
    detail = node_detail(view, recorded_run.crossover)
    assert detail["children"] == [6, 7]
    assert detail["summary"] == "Node 5 <em>looks</em> fine."
    assert detail["has_submission"] is True
    cached = {k: 0 for k in detail["usage"] if k.startswith("cache_")}  # none in this run
    assert detail["usage"] == {"input_tokens": 1505, "output_tokens": 250, "cost_usd": 0.012,
                               "calls": 2, **cached}  # fmt: skip
    assert detail["timings"]["total_s"] == 4.5
    assert detail["timings"]["overhead_s"] == pytest.approx(0.5)
    assert detail["exec"]["status"] == "ok" and "output" not in detail["exec"]
    timed_out = node_detail(view, 6)["exec"]
    assert timed_out["timed_out"] is True and timed_out["killed_reason"] == "timed out after 60s"
    assert node_detail(view, 7)["exec"] is None and node_detail(view, 7)["output"] == ""
    light = by_id(run_json(view))[recorded_run.crossover]
    assert {k: detail[k] for k in light if k not in LAYOUT_FIELDS} == {
        k: v for k, v in light.items() if k not in LAYOUT_FIELDS
    }


def test_node_detail_calls(recorded_run: RecordedRun) -> None:
    calls = node_detail(open_run(recorded_run.root), recorded_run.crossover)["calls"]
    assert [(c["role"], c["seq"]) for c in calls] == [("code", 4), ("review", 4)]
    code, review = calls
    assert [m["role"] for m in code["messages"]] == ["system", "user"]
    assert code["messages"][0]["content"] == "You are a Kaggle grandmaster. <b>Be brief.</b>"
    assert code["response"]["text"].startswith("A plan.")
    assert (code["response"]["input_tokens"], code["response"]["finish"]) == (1005, "stop")
    assert code["model"] == "openai/gpt-test" and code["attempts"] == 1 and code["error"] is None
    assert review["response"]["tool_call"] == {
        "name": "submit_review",
        "arguments": {"is_bug": False, "summary": "Node 5 <em>looks</em> fine."},
        "id": "",  # none was given: a scripted answer
    }
    assert review["response"]["replayed"] is False and review["tools"] == []


def test_ansi_escapes_are_stripped(recorded_run: RecordedRun) -> None:
    new = recorded_run.node_count + 1
    add_node(recorded_run.root, new)
    view = open_run(recorded_run.root)
    assert node_detail(view, new)["output"] == "epoch 1 loss link done\n"
    assert node_detail(view, new)["exec"]["traceback"] == "boom"
    assert "\x1b" not in node_detail(view, 2)["exec"]["traceback"]
    assert strip_ansi("a\x1b[38;5;208mb\x1b[Kc\x1b7d") == "abcd"


def test_a_missing_node_is_a_one_line_error(recorded_run: RecordedRun) -> None:
    with pytest.raises(UserError, match="no node 99"):
        node_detail(open_run(recorded_run.root), 99)


@pytest.mark.parametrize(
    ("q", "ids"),
    [
        ("", [1, 2, 3, 4, 5, 6, 7, 8, 9]),
        ("SCRIPT", [1]),  # code and plan, any case
        ("pwned = 3", [1]),  # the plan only
        ("onerror", [1, 2]),  # output; a frame of a traceback
        ("svg onload", [2]),  # bug reason
        ("could not CONVERT", [2]),  # error value, traceback, reason
        ("valueerror", [2]),  # error name
        ("looks", [1, 3, 4, 5, 9]),  # review summary
        ("hardly matters", [8]),  # an analysis's findings
        ("without scaling", [8]),  # its output
        ("timed out", [6]),
        ("wip", [7]),  # a running node's code
        ("[0;31m", []),  # colour codes are not text
        ("no such text", []),
    ],
)
def test_search(recorded_run: RecordedRun, q: str, ids: list[int]) -> None:
    assert search_ids(open_run(recorded_run.root), q) == ids


def test_export_data(recorded_run: RecordedRun) -> None:
    view = open_run(recorded_run.root)
    run, packed = export_data(view)
    assert run == run_json(view)
    details = packing.unpack(packed)
    ids = range(1, recorded_run.node_count + 1)
    assert sorted(details, key=int) == [str(i) for i in ids]
    for node_id in ids:
        assert details[str(node_id)] == node_detail(view, node_id)
    json.dumps(packed, allow_nan=False)


def test_highlight_uses_classes_scoped_to_hl() -> None:
    html = highlight.code_html("\n\nx = '<b>' & 1  # c\n")
    assert html.startswith("\n\n") and "&lt;b&gt;" in html and "&amp;" in html
    assert 'class="c1"' in html and "style=" not in html
    rules = [line for line in highlight.css().splitlines() if "{" in line]
    assert rules and all(line.startswith(".hl") for line in rules)


def test_one_enormous_node_cannot_weigh_down_the_page(recorded_run: RecordedRun) -> None:
    """A solution may raise an error whose message is megabytes long; the graph's data carries
    a line of it, the node's panel a bounded part, each saying how much was left out."""
    journal = Journal.open(RunDir(recorded_run.root).journal)
    rng = random.Random(0).getstate()
    new = recorded_run.node_count + 1
    node = Node(id=new, parent_ids=(5,), operator="improve")
    journal.begin(node, rng, rng, elapsed_s=60.0)
    reason = "ValueError: " + "x" * 3_000_000
    done = node.model_copy(
        update={"state": NodeState.DONE, "step": 9, "is_buggy": True, "bug_reason": reason,
                "code": "y = 1\n" * 300_000,
                "exec": ExecResult(status=ExecStatus.ERROR, error_value="x" * 3_000_000)}
    )  # fmt: skip
    journal.update(done, 61.0)
    journal.close()
    view = open_run(recorded_run.root)
    light = by_id(run_json(view))[new]
    assert len(light["bug_reason"]) < 1_100 and "more characters not shown" in light["bug_reason"]
    detail = node_detail(view, new)
    assert 1_000_000 <= len(detail["bug_reason"]) < 1_000_100
    assert len(detail["exec"]["error_value"]) < 1_000_100
    assert "<span" not in detail["code_html"]  # too long to colour: escaped, plain
    assert len(json.dumps(detail)) < 6_000_000


# --- an agentic node's notebook -------------------------------------------------------------


def test_an_agentic_nodes_notebook(agentic_run: AgenticRun) -> None:
    """The cells in order with their outputs and errors, the model's words between them, and
    each entry with its turn's code call (never the review's, whose turn is 0 too)."""
    view = open_run(agentic_run.root)
    detail = node_detail(view, agentic_run.node)
    notebook = detail["notebook"]
    assert (notebook["problem"], notebook["finished"], notebook["turns"]) == (None, True, 3)
    cells = notebook["cells"]
    assert [(c["type"], c["number"], c["turn"], c["status"]) for c in cells] == [
        ("words", None, 0, None),
        ("code", 1, 0, "error"),
        ("code", 2, 1, "ok"),
        ("words", None, 2, None),
    ]
    words, failed, fixed, plan = cells
    assert (words["source"], plan["source"]) == (XSS_WORDS, AGENTIC_PLAN)
    assert (failed["source"], failed["output"]) == (XSS_CELL_CODE, XSS_CELL_OUTPUT)
    assert (failed["error"]["name"], failed["error"]["value"]) == ("ValueError", XSS_CELL_ERROR)
    assert "\x1b" not in failed["error"]["traceback"]
    parsed = failed["error"]["traceback_parsed"]
    assert parsed["error"] == f"ValueError: {XSS_CELL_ERROR}"
    frames = [(f["file"], f["line"], f["code_line"], f["in_solution"]) for f in parsed["frames"]]
    assert frames == [("a cell", 3, "float(html)", True)]  # not solution.py: its lines differ
    assert (fixed["source"], fixed["output"], fixed["error"]) == (FIX_CODE, FIX_OUTPUT, None)
    assert (failed["duration_s"], fixed["duration_s"]) == (0.25, 0.5)
    assert {c["turn"]: c["call"] for c in cells} == {
        turn: {"seq": turn, "input_tokens": tokens_in, "output_tokens": tokens_out,
               "cost_usd": cost, "latency_s": latency}
        for turn, tokens_in, tokens_out, cost, latency in AGENTIC_TURNS
    }  # fmt: skip
    assert detail["code"].count("# %%") == 1 and FIX_CODE in detail["code"]  # its clean cells
    assert FIX_OUTPUT in detail["output"]  # the existing sections stay
    json.dumps(detail, allow_nan=False)


def test_a_one_shot_node_has_no_notebook(recorded_run: RecordedRun) -> None:
    view = open_run(recorded_run.root)
    for node_id in range(1, recorded_run.node_count + 1):
        assert node_detail(view, node_id)["notebook"] is None


DAMAGED = {
    "not JSON": b'{"cells": [',
    "empty": b"",
    "not UTF-8": b"\xff\xfe{}",
    "no cells": b'{"nbformat": 4, "metadata": {}}',
    "a list": b"[1, 2]",
    "a source that is a number": b'{"cells": [{"cell_type": "code", "source": 5}]}',
    "outputs that are an object": b'{"cells": [{"cell_type": "code", "outputs": {"a": 1}}]}',
    "a turn that is text": b'{"cells": [{"cell_type": "markdown", "source": "hi", '
    b'"metadata": {"podium": {"turn": "0"}}}]}',
    "a traceback that is text": b'{"cells": [{"cell_type": "code", "source": "x", '
    b'"outputs": [{"output_type": "error", "traceback": "boom"}]}]}',
    "nested too deeply": b"[" * 200_000,
    "a number too long": b'{"cells": [], "metadata": {"podium": {"turns": 1' + b"0" * 5000 + b"}}}",
}


@pytest.mark.parametrize("what", list(DAMAGED))
def test_a_damaged_notebook_is_one_line(agentic_run: AgenticRun, what: str) -> None:
    """A run dir may come from anyone: a notebook that is not one is a line saying so, and the
    rest of the node's panel is there."""
    path = RunDir(agentic_run.root).node_notebook(agentic_run.node)
    path.write_bytes(DAMAGED[what])
    detail = node_detail(open_run(agentic_run.root), agentic_run.node)
    problem = detail["notebook"]["problem"]
    assert problem.startswith(f"{path} is not a readable notebook: "), problem
    assert "\n" not in problem and len(problem) < 500, problem
    assert detail["notebook"]["cells"] == []
    assert FIX_CODE in detail["code"] and FIX_OUTPUT in detail["output"]
    json.dumps(detail, allow_nan=False)


def test_a_notebook_from_elsewhere_is_read_leniently(agentic_run: AgenticRun) -> None:
    """A notebook Jupyter saved (no Podium metadata, results, a raw cell): its cells are
    shown, with no turn; terminal escapes and control characters in it are made inert, and a
    duration that is no number a reader can show is none."""
    notebook = {
        "nbformat": 4,
        "metadata": {},
        "cells": [
            {"cell_type": "raw", "source": "raw text", "metadata": {}},
            {"cell_type": "code", "execution_count": 7, "source": ["x = '\x1b[2J'\n", "x"],
             "metadata": {"podium": {"duration_s": float("nan")}}, "outputs": [
                 {"output_type": "stream", "name": "stderr",
                  "text": ["\x1b]0;pwned title\x07warn\ud800\n", "\x1b[31mred\x1b[0m\n"]},
                 {"output_type": "execute_result", "data": {"text/plain": ["1"]}},
             ]},
        ],
    }  # fmt: skip
    path = RunDir(agentic_run.root).node_notebook(agentic_run.node)
    path.write_text(json.dumps(notebook), encoding="utf-8")
    detail = node_detail(open_run(agentic_run.root), agentic_run.node)
    read = detail["notebook"]
    assert (read["problem"], read["finished"], read["turns"]) == (None, None, None)
    [cell] = read["cells"]
    assert (cell["number"], cell["turn"], cell["call"], cell["duration_s"]) == (7, None, None, None)
    assert cell["source"] == "x = '\\x1b[2J'\nx"  # code: the escape shown, not dropped
    assert cell["output"] == "warn\\ud800\nred\n1\n"  # output: escapes dropped
    json.dumps(detail, ensure_ascii=False).encode("utf-8")  # what the server sends


def test_an_enormous_notebook_is_bounded(agentic_run: AgenticRun) -> None:
    """Each text of a cell is clipped as a node's texts are, and past ``MAX_CELLS`` cells the
    rest are counted, not sent."""
    words = [{"cell_type": "markdown", "source": f"cell {i}"} for i in range(MAX_CELLS + 5)]
    words[0]["source"] = "x" * 3_000_000
    path = RunDir(agentic_run.root).node_notebook(agentic_run.node)
    path.write_text(json.dumps({"cells": words}), encoding="utf-8")
    read = node_detail(open_run(agentic_run.root), agentic_run.node)["notebook"]
    assert (len(read["cells"]), read["cells_left_out"]) == (MAX_CELLS, 5)
    first = read["cells"][0]["source"]
    assert 1_000_000 <= len(first) < 1_000_100 and "more characters not shown" in first


def test_the_export_holds_the_notebook_packed(agentic_run: AgenticRun) -> None:
    """The export's details are the API's, and a cell's output (also in the node's output) is
    stored once."""
    view = open_run(agentic_run.root)
    _, packed = export_data(view)
    assert packing.unpack(packed) == {"1": node_detail(view, 1)}
    cells = packed["details"]["1"]["notebook"]["cells"]
    output, node_output = cells[2]["output"], packed["details"]["1"]["output"]
    assert set(output) == {"$c"} and set(node_output) == {"$c"}
    shared = sum(len(packed["chunks"][i]) for i in set(output["$c"]) & set(node_output["$c"]))
    assert shared > 0.8 * len(FIX_OUTPUT)
