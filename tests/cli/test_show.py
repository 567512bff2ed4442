"""``podium show``: a run's tree, its buggy nodes, one node in full — on the shared recorded run.

Everything in a run is untrusted: rich markup, HTML and terminal escapes in it must come out as
the literal text (or, for escapes, shown or dropped), never interpreted.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from podium.cli.app import app
from podium.cli.console import terminal_text, visible
from podium.errors import UserError
from podium.formats import Journal, RunDir
from podium.records import ExecResult, ExecStatus
from tests.recorded_run import (
    AGENTIC_PLAN,
    FINDINGS,
    FINDINGS_LINE,
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
    write_agentic_run,
)
from tests.support import podium_cli

MARKUP = "[bold red]not bold[/] [link=https://evil.example]x[/link]"
LONG_REASON = "KeyError: 'target' " + "column missing; " * 12 + "the end"
TERMINAL_ATTACK = "\x1b]0;pwned title\x07\x1b[2Jcleared?\u202egnp.exe"


def show(*args: str) -> Result:
    return CliRunner().invoke(app, ["show", *args])


def line_of(output: str, node_id: int) -> str:
    """The tree line of one node (its id follows the guides, or ★)."""
    pattern = re.compile(rf"^[│├└─ ]+(★ )?{node_id} ")
    found = [line for line in output.splitlines() if pattern.match(line)]
    assert len(found) == 1, output
    return found[0]


def indent(line: str) -> int:
    return len(line) - len(line.lstrip("│├└─ ★"))


def make_hostile(run: RecordedRun) -> None:
    """Node 4: rich markup and terminal escapes everywhere; node 6: a long bug reason."""
    journal = Journal.open(RunDir(run.root).journal)
    try:
        nodes = {n.id: n for n in journal.nodes()}
        result = ExecResult(
            status=ExecStatus.OK, output=f"{MARKUP}\n{TERMINAL_ATTACK}\nVALIDATION_METRIC: 0.78\n"
        )
        four = nodes[4].model_copy(
            update={"plan": MARKUP, "code": f"# {MARKUP}\nprint('{TERMINAL_ATTACK}')\n",
                    "summary": MARKUP, "exec": result}
        )  # fmt: skip
        journal.update(four, 4.0)
        journal.update(nodes[6].model_copy(update={"bug_reason": LONG_REASON}), 6.0)
    finally:
        journal.close()


# --- the tree ------------------------------------------------------------------------------


def test_the_tree_shows_every_node_under_its_first_parent(recorded_run: RecordedRun) -> None:
    done = show(str(recorded_run.root))
    assert done.exit_code == 0, done.output
    out = done.output
    for node_id in range(1, recorded_run.node_count + 1):
        line_of(out, node_id)
    crossover = line_of(out, recorded_run.crossover)
    assert crossover.lstrip("│├└─ ").startswith("★ 5 crossover + 4  0.82")
    assert sum("★" in line for line in out.splitlines()) == 1
    assert indent(crossover) > indent(line_of(out, 3))  # under 3, its first parent
    assert indent(line_of(out, 4)) > indent(line_of(out, 1))
    assert indent(line_of(out, 6)) == indent(line_of(out, 7)) > indent(crossover)
    assert f"buggy: {XSS_REASON}" in line_of(out, 2)  # the reason, literally
    assert "buggy: execution timed out after 60s" in line_of(out, 6)
    assert "interrupted (executing)" in line_of(out, 7)  # no process holds the run's lock
    assert "0.71  4.50s" in line_of(out, 1)


def test_the_tree_and_a_node_note_its_references(recorded_run: RecordedRun) -> None:
    """Node 6 cites 1 and 3, node 7 cites 6: the tree notes them beside the operator (7 still
    hangs under its parent, not under 6), a node in full lists what it cites and who cites it;
    a node with neither has no such rows."""
    out = show(str(recorded_run.root)).output
    assert "6 improve  cites 1, 3  buggy: execution timed out" in line_of(out, 6)
    assert "7 improve  cites 6  interrupted" in line_of(out, 7)
    assert indent(line_of(out, 7)) == indent(line_of(out, 6))
    assert sum("cites" in line for line in out.splitlines()) == 3  # and 9 cites 8
    six = show(str(recorded_run.root), "6").output
    assert re.search(r"^references +1, 3$", six, re.M) and re.search(r"^cited by +7$", six, re.M)
    assert re.search(r"^cited by +6$", show(str(recorded_run.root), "3").output, re.M)
    assert "references" not in (two := show(str(recorded_run.root), "2").output), two
    assert "cited by" not in two


def test_a_damaged_journals_references_are_left_out(recorded_run: RecordedRun) -> None:
    """Unknown, own, later and parent ids in a node's references: only the real one is shown."""
    cite(recorded_run.root, 6, (99, 3, 6, 7, 5))
    tree = show(str(recorded_run.root))
    assert tree.exit_code == 0, tree.output
    assert "6 improve  cites 3  buggy" in line_of(tree.output, 6)
    node = show(str(recorded_run.root), "6")
    assert node.exit_code == 0 and re.search(r"^references +3$", node.output, re.M), node.output


def test_the_header_sums_the_run_up(recorded_run: RecordedRun) -> None:
    out = show(str(recorded_run.root)).output
    rows = dict(line.split(None, 1) for line in out.splitlines()[:9])
    assert rows["task"] == "toy"
    assert rows["strategy"] == "evolutionary"
    assert rows["model"] == "openai/gpt-test"
    assert rows["status"] == "finished (step budget spent)"
    assert rows["steps"] == "8 finished: 5 good, 2 buggy, 1 analysis, 1 interrupted"
    assert rows["best"] == "node 5, metric 0.82 (higher is better)"
    assert rows["spent"] == "$0.0720, 10,500 tokens, 12 model calls"
    assert rows["grade"].startswith("score 0.8, bronze medal")


def test_a_live_run_shows_its_running_node(recorded_run: RecordedRun) -> None:
    rd = RunDir(recorded_run.root)
    rd.lock()  # as a run in progress holds it
    try:
        out = show(str(recorded_run.root)).output
    finally:
        rd.unlock()
    assert "running (executing)" in line_of(out, recorded_run.running)
    assert "continue with" not in out


def test_a_long_reason_is_one_shortened_line_in_the_tree_and_whole_with_buggy(
    recorded_run: RecordedRun,
) -> None:
    make_hostile(recorded_run)
    tree = show(str(recorded_run.root)).output
    line = line_of(tree, 6)
    assert "buggy: KeyError: 'target' column missing;" in line and line.endswith("…  1m02s")
    assert "the end" not in tree

    done = show(str(recorded_run.root), "--buggy")
    assert done.exit_code == 0, done.output
    listed = [int(m) for m in re.findall(r"^node (\d+)", done.output, re.MULTILINE)]
    assert listed == sorted(recorded_run.buggy) == [2, 6]
    assert f"    {XSS_REASON}\n" in done.output
    assert f"    {LONG_REASON}\n" in done.output
    assert "2 buggy of 9 nodes" in done.output


# --- one node ------------------------------------------------------------------------------


def test_a_node_in_full(recorded_run: RecordedRun) -> None:
    done = show(str(recorded_run.root), "2")
    assert done.exit_code == 0, done.output
    out = done.output
    assert out.startswith("node 2  draft  buggy  on the best path\n")
    assert re.search(r"^children +3$", out, re.MULTILINE)
    assert re.search(rf"^bug +{re.escape(XSS_REASON)}$", out, re.MULTILINE)
    assert "── code (1 line)" in out and "1 │ float('<svg>')" in out
    assert "── output (error, 0.30s)" in out and "Traceback..." in out
    assert "── error" in out and "ValueError: could not convert" in out
    assert "\x1b" not in out  # the traceback's colours are not sent to a pipe
    assert re.search(r"^code #1 +openai/gpt-test +1,002 +200 +\$0\.0100 +1\.50s +stop$", out, re.M)
    assert re.search(r"^review #1 .* tool_call$", out, re.MULTILINE)
    assert re.search(r"^usage +1,502 in / 250 out tokens, \$0\.0120, 2 calls$", out, re.M)
    assert "You are a Kaggle grandmaster" not in out  # prompts only with --messages


def test_an_analysis_shows_its_findings_not_a_metric(recorded_run: RecordedRun) -> None:
    """The ablation (node 8): in the tree "analysis" and its first finding, and the refine
    citing it; in full its kind, its findings and its ABLATION lines as a table against the
    baseline (the part's markup literal); failed, it is buggy like any node."""
    root, analysis = str(recorded_run.root), recorded_run.analysis
    tree = show(root).output
    assert line_of(tree, analysis).lstrip("│├└─ ") == f"8 ablate  analysis  {FINDINGS_LINE}  4.50s"
    assert "9 refine  cites 8  0.8" in line_of(tree, recorded_run.refine)
    done = show(root, str(analysis))
    assert done.exit_code == 0, done.output
    out = done.output
    assert out.startswith("node 8  ablate  analysis\n")
    assert re.search(r"^kind +analysis \(no metric, no submission", out, re.M)
    assert re.search(r"^metric +-$", out, re.M) and re.search(r"^cited by +9$", out, re.M)
    assert "── findings " in out and FINDINGS in out and "── summary" not in out
    table = out.split("── ablation (3 variants) ", 1)[1].splitlines()[1:5]
    assert [re.split(r" {2,}", line.strip()) for line in table] == [
        ["part", "score", "change vs baseline"],
        ["baseline", "0.78", "baseline"],
        ["without <i>markup</i> text features", "0.7", "-0.08"],
        ["without scaling", "0.775", "-0.005"],
    ]
    journal = Journal.open(RunDir(recorded_run.root).journal)
    try:
        (node,) = journal.nodes_by_id([analysis]).values()
        journal.update(node.model_copy(update={"is_buggy": True, "bug_reason": "boom"}), 8.0)
    finally:
        journal.close()
    assert "8 ablate  buggy: boom" in line_of(show(root).output, analysis)
    failed = show(root, str(analysis)).output
    assert failed.startswith("node 8  ablate  buggy\n") and "── ablation" not in failed


def test_content_is_printed_literally(recorded_run: RecordedRun) -> None:
    out = show(str(recorded_run.root), "1").output
    assert XSS_PLAN in out
    assert XSS_CODE.strip() in out
    assert XSS_OUTPUT.strip() in out
    assert "Node 1 <em>looks</em> fine." in out

    make_hostile(recorded_run)
    out = show(str(recorded_run.root), "4").output
    assert out.count(MARKUP) == 4  # summary, plan, code comment, output
    assert "\x1b" not in out and "\x07" not in out and "\u202e" not in out
    assert r"print('\x1b]0;pwned title\x07\x1b[2Jcleared?\u202egnp.exe')" in out  # code: shown
    assert "cleared?\\u202egnp.exe" in out  # output: escapes dropped, bidi shown


def test_messages_prints_every_prompt_and_answer(recorded_run: RecordedRun) -> None:
    done = show(str(recorded_run.root), "1", "--messages")
    assert done.exit_code == 0, done.output
    out = done.output
    assert "── call 1: code #0, openai/gpt-test" in out
    assert "[system]\nYou are a Kaggle grandmaster. <b>Be brief.</b>\n" in out
    assert "[user]\nWrite a solution for node 1.\n" in out
    assert f"[answer]\nA plan.\n\n```python\n{XSS_CODE}```" in out
    assert "── call 2: review #0" in out
    assert 'tool call submit_review: {\n  "is_bug": false,' in out


def test_a_long_output_shows_its_tail(recorded_run: RecordedRun) -> None:
    out = show(str(recorded_run.root), "1", "--output-lines", "1").output
    cut = f"[1 earlier lines cut; all of it: {recorded_run.root / 'nodes' / '1' / 'output.txt'}]"
    assert cut in out
    assert "VALIDATION_METRIC: 0.71" in out and "<img src=x" not in out


# --- an agentic node: its notebook -----------------------------------------------------------


@pytest.fixture
def agentic_run(tmp_path: Path) -> AgenticRun:
    return write_agentic_run(tmp_path / "agentic")


def notebook_section(out: str) -> str:
    """What ``show`` printed under the notebook's heading, up to the next section."""
    start = out.index("── notebook")
    return out[start : out.index("── code", start)]


def test_an_agentic_node_prints_its_notebook(agentic_run: AgenticRun) -> None:
    """Each turn's call, the model's words, each cell with its code, output and error, in the
    order they happened; agent text printed as written (no markup, no markdown)."""
    done = show(str(agentic_run.root), str(agentic_run.node))
    assert done.exit_code == 0, done.output
    notebook = notebook_section(done.output)
    expected = [
        "── notebook (2 cells, 3 turns, finished) ",
        "turn 0: code #0, 2,000 in / 100 out tokens, $0.0200, 3.25s\n",
        f"model: {XSS_WORDS}\n",
        "[cell 1] error 0.25s\n",
        "1 │ " + XSS_CELL_CODE.splitlines()[0],
        "3 │ float(html)\n" + XSS_CELL_OUTPUT,
        f"ValueError: {XSS_CELL_ERROR}\n  a cell, line 3: float(html)\n",
        "turn 1: code #1, 2,100 in / 50 out tokens, $0.0150, 1.75s\n",
        "[cell 2] ok 0.50s\n",
        "[21 earlier lines of its output cut]\nepoch 21 loss",  # 61 lines: the last 40
        "VALIDATION_METRIC: 0.9\n",
        "turn 2: code #2, 2,200 in / 20 out tokens, $0.0100, 0.50s\n",
        f"model: {AGENTIC_PLAN}\n",
    ]
    places = [notebook.find(part) for part in expected]
    assert all(p >= 0 for p in places) and places == sorted(places), (places, notebook)
    assert "epoch 20 loss" not in notebook
    assert "── output (ok" in done.output and "── model calls (4)" in done.output  # still there


@pytest.mark.parametrize(("lines", "epochs"), [("0", 60), ("5", 4), ("500", 39)])
def test_a_cells_output_is_capped(agentic_run: AgenticRun, lines: str, epochs: int) -> None:
    """--output-lines N per cell, at most 40 each (0: all); the last line is the metric."""
    out = show(str(agentic_run.root), str(agentic_run.node), "--output-lines", lines).output
    assert len(re.findall(r"^epoch \d+ loss", notebook_section(out), re.MULTILINE)) == epochs


def test_a_damaged_notebook_is_one_line(agentic_run: AgenticRun) -> None:
    path = RunDir(agentic_run.root).node_notebook(agentic_run.node)
    path.write_text('{"cells": [{"cell_type": "code", "source": 5}]}')
    done = show(str(agentic_run.root), str(agentic_run.node))
    assert done.exit_code == 0, done.output
    notebook = notebook_section(done.output).splitlines()
    assert notebook[1:] == [f"[{path} is not a readable notebook: cell 1's source is not text]"]


def test_a_notebooks_text_is_printed_literally(agentic_run: AgenticRun) -> None:
    """Rich markup and terminal escapes in the words, code and output: shown or dropped,
    never interpreted or sent to the terminal."""
    cells = [
        {"cell_type": "markdown", "source": f"{MARKUP} {TERMINAL_ATTACK}"},
        {"cell_type": "code", "source": f"print('{TERMINAL_ATTACK}')  # {MARKUP}",
         "execution_count": 1, "outputs": [
             {"output_type": "stream", "name": "stdout", "text": f"{MARKUP}\n{TERMINAL_ATTACK}\n"},
         ]},
    ]  # fmt: skip
    path = RunDir(agentic_run.root).node_notebook(agentic_run.node)
    path.write_text(json.dumps({"cells": cells}))
    notebook = notebook_section(show(str(agentic_run.root), str(agentic_run.node)).output)
    assert notebook.count(MARKUP) == 3
    assert "\x1b" not in notebook and "\x07" not in notebook and "\u202e" not in notebook
    assert r"print('\x1b]0;pwned title\x07\x1b[2Jcleared?\u202egnp.exe')" in notebook
    assert "cleared?\\u202egnp.exe" in notebook


def test_a_one_shot_node_has_no_notebook(recorded_run: RecordedRun) -> None:
    assert "── notebook" not in show(str(recorded_run.root), str(recorded_run.best)).output


# --- errors ---------------------------------------------------------------------------------


def test_an_unknown_node_is_a_one_line_error(recorded_run: RecordedRun) -> None:
    done = show(str(recorded_run.root), "99")
    assert isinstance(done.exception, UserError)
    assert done.exception.message == f"{recorded_run.root} has no node 99"
    assert done.exception.hint == "this run has nodes 1–9"


def test_options_that_do_not_go_together(recorded_run: RecordedRun) -> None:
    done = show(str(recorded_run.root), "2", "--buggy")
    assert isinstance(done.exception, UserError)
    done = show(str(recorded_run.root), "--messages")
    assert isinstance(done.exception, UserError) and done.exception.hint == "give a NODE id with it"


@pytest.mark.slow
def test_not_a_run_dir_is_one_line_and_a_hint(tmp_path: Path) -> None:
    done = podium_cli("show", str(tmp_path))
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        f"error: {tmp_path} is not a Podium run directory (no journal)",
        "hint: a run directory holds journal.sqlite",
    ]
    assert done.stdout == ""


# --- untrusted text --------------------------------------------------------------------------


def test_visible_shows_every_control_character() -> None:
    assert visible("a\tb\r\nc\x1b[31md\x07\u202e") == "a\tb\nc\\x1b[31md\\x07\\u202e"


def test_terminal_text_keeps_only_colours() -> None:
    text = terminal_text(TERMINAL_ATTACK + "\x1b[0;31mred\x1b[0m", colours=True)
    assert text.plain == "cleared?\\u202egnp.exered"
    assert [str(span.style) for span in text.spans] == ["color(1)"]
    assert terminal_text("\x1b[31mred\x1b[0m").plain == "red"
    assert not terminal_text("\x1b[31mred\x1b[0m").spans
