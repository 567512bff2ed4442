"""``podium show RUN NODE --diff`` (what a node changed from its parents) and a failing node's
traceback in ``podium show RUN NODE``: the error once, the solution's frames first, the library's
folded. On the shared recorded run, plus nodes added through the journal the way it is written,
their tracebacks the real ones recorded from kernels (tests/fixtures/tracebacks/)."""

from __future__ import annotations

import json
import random
import re
from typing import Any

import pytest
from rich.console import Console
from typer.testing import CliRunner, Result

from podium.cli import show as show_module
from podium.cli.app import app
from podium.errors import UserError
from podium.formats import Journal, RunDir
from podium.records import ExecResult, ExecStatus, Node, NodeState
from tests.recorded_run import XSS_CODE, RecordedRun
from tests.support import REPO

TRACEBACKS = REPO / "tests" / "fixtures" / "tracebacks"
HOSTILE_CODE = "print('\x1b]0;pwned\x07[bold red]not bold[/]\u202egnp.exe')\n"


def show(*args: str) -> Result:
    return CliRunner().invoke(app, ["show", *args])


def add_node(
    run: RecordedRun,
    parents: tuple[int, ...],
    code: str,
    *,
    operator: str = "improve",
    result: ExecResult | None = None,
    state: NodeState = NodeState.DONE,
) -> int:
    """A node appended to the run as the loop writes one: begun, then updated."""
    rd = RunDir(run.root)
    journal = Journal.open(rd.journal)
    try:
        node_id = max(n.id for n in journal.nodes()) + 1
        node = Node(id=node_id, parent_ids=parents, operator=operator)
        rng = random.Random(0).getstate()
        journal.begin(node, rng, rng, elapsed_s=float(node_id))
        rd.reset_node(node_id)
        rd.write_text(node_id, "solution.py", code)
        buggy = result is not None and result.failed
        done = node.model_copy(
            update={"code": code, "state": state, "exec": result, "is_buggy": buggy,
                    "bug_reason": result.error_line if buggy and result else None,
                    "step": node_id if state is NodeState.DONE else None}
        )  # fmt: skip
        journal.update(done, float(node_id))
    finally:
        journal.close()
    return node_id


def recorded(name: str) -> tuple[str, ExecResult]:
    """The code and what the kernel reported for a solution recorded from a real kernel."""
    data: dict[str, Any] = json.loads((TRACEBACKS / f"{name}.json").read_text(encoding="utf-8"))
    result = ExecResult(
        status=ExecStatus(data["status"]),
        output=data["output"],
        error_name=data["error_name"],
        error_value=data["error_value"],
        traceback=data["traceback"],
        duration_s=1.0,
    )
    return data["code"], result


def section(output: str, title: str) -> str:
    """One ``── title`` section of ``podium show``'s output, up to the next."""
    found = re.search(rf"^── {re.escape(title)}.*?\n(.*?)(?=^── |\Z)", output, re.M | re.S)
    assert found, output
    return found.group(1)


# --- --diff ----------------------------------------------------------------------------------


def test_a_crossover_is_diffed_against_each_parent(recorded_run: RecordedRun) -> None:
    done = show(str(recorded_run.root), str(recorded_run.crossover), "--diff")
    assert done.exit_code == 0, done.output
    out = done.output
    assert out.startswith("node 5  crossover  parents 3, 4\n")
    assert section(out, "diff against #3 (parent 1 of 2): +1 -1 lines") == (
        "--- #3\n+++ #5\n@@ -1 +1 @@\n-print(0.75)\n+print(0.82)\n"
    )
    assert section(out, "diff against #4 (parent 2 of 2): +1 -1 lines") == (
        "--- #4\n+++ #5\n@@ -1 +1 @@\n-print(0.78)\n+print(0.82)\n"
    )
    assert "\x1b" not in out  # plain in a pipe
    assert "── code" not in out and "── model calls" not in out  # only the diff


def test_one_parent_is_named_without_a_count(recorded_run: RecordedRun) -> None:
    out = show(str(recorded_run.root), "4", "--diff").output
    diff = section(out, "diff against #1: +1 -1 lines")
    assert f"-{XSS_CODE}" in diff and "+print(0.78)\n" in diff  # the markup-laden code, literally
    assert "(parent" not in out


def test_a_draft_says_in_one_line_that_it_has_no_parent(recorded_run: RecordedRun) -> None:
    done = show(str(recorded_run.root), "1", "--diff")
    assert done.exit_code == 0
    assert done.output == "node 1 is a draft (no parent): nothing to diff against\n"


def test_the_same_code_and_a_longer_edit(recorded_run: RecordedRun) -> None:
    same = add_node(recorded_run, (3,), "print(0.75)\n")
    assert "[the same code]" in show(str(recorded_run.root), str(same), "--diff").output
    parent = "".join(f"x{i} = {i}\n" for i in range(30))
    base = add_node(recorded_run, (), parent, operator="draft")
    child = add_node(recorded_run, (base,), parent.replace("x3 = 3", "x3 = 33") + "print(x3)\n")
    out = show(str(recorded_run.root), str(child), "--diff").output
    hunks = re.findall(r"^@@ .* @@$", out, re.MULTILINE)
    assert hunks == ["@@ -1,7 +1,7 @@", "@@ -28,3 +28,4 @@"]
    assert "-x3 = 3\n+x3 = 33\n" in out and " x29 = 29\n+print(x3)\n" in out


def test_side_by_side_fits_the_terminal(
    recorded_run: RecordedRun, monkeypatch: pytest.MonkeyPatch
) -> None:
    parent = "import pandas as pd\nx = load()\n" + "y = " + "1 + " * 60 + "1\nprint(y)\n"
    base = add_node(recorded_run, (), parent, operator="draft")
    child = add_node(recorded_run, (base,), parent.replace("load()", "load(fast=True)") + "z\n")
    monkeypatch.setattr(show_module, "wide_console", lambda: Console(width=80, soft_wrap=True))
    done = show(str(recorded_run.root), str(child), "--side-by-side")
    assert done.exit_code == 0, done.output
    rows = section(done.output, f"diff against #{base}: +2 -1 lines").splitlines()
    assert rows[0] == "@@ -1,4 +1,5 @@"
    assert all(len(row) <= 80 for row in rows), rows
    left, right = zip(*(row.split(" │ ") for row in rows[1:]), strict=True)
    assert len({len(side) for side in left}) == 1  # the old side is one width
    assert left[0].startswith("1   import pandas as pd") and right[0] == "1   import pandas as pd"
    assert left[1].startswith("2 - x = load()") and right[1] == "2 + x = load(fast=True)"
    assert left[2].endswith("…") and right[2].endswith("…")  # too long for its half: cut
    assert left[4].strip() == "" and right[4] == "5 + z"


def test_a_diff_in_a_terminal_is_coloured_and_the_code_stays_inert(
    recorded_run: RecordedRun, monkeypatch: pytest.MonkeyPatch
) -> None:
    child = add_node(recorded_run, (1,), HOSTILE_CODE)
    terminal = Console(width=100, force_terminal=True, color_system="standard", soft_wrap=True)
    monkeypatch.setattr(show_module, "wide_console", lambda: terminal)
    out = show(str(recorded_run.root), str(child), "--diff").output
    assert "\x1b[31m-" in out and "\x1b[32m+" in out  # removed red, added green
    assert "\x07" not in out and "\x1b]" not in out and "\u202e" not in out
    assert r"+print('\x1b]0;pwned\x07[bold red]not bold[/]\u202egnp.exe')" in out
    monkeypatch.undo()  # in a pipe again
    plain = show(str(recorded_run.root), str(child), "--side-by-side").output
    assert "\x1b" not in plain and r"[bold red]not bold[/]\u202egnp.exe" in plain


def test_a_node_still_proposing_has_no_code_to_diff(recorded_run: RecordedRun) -> None:
    node = add_node(recorded_run, (5,), "", state=NodeState.PROPOSING)
    done = show(str(recorded_run.root), str(node), "--diff")
    assert done.exit_code == 0
    assert done.output == f"node {node} has no code yet (proposing): nothing to diff\n"


def test_diff_options_that_do_not_go_together(recorded_run: RecordedRun) -> None:
    done = show(str(recorded_run.root), "--diff")
    assert isinstance(done.exception, UserError) and done.exception.hint == "give a NODE id"
    done = show(str(recorded_run.root), "5", "--diff", "--messages")
    assert isinstance(done.exception, UserError)
    done = show(str(recorded_run.root), "99", "--diff")
    assert isinstance(done.exception, UserError)
    assert done.exception.message == f"{recorded_run.root} has no node 99"


# --- a failing node's traceback ---------------------------------------------------------------


def test_a_real_traceback_is_shown_once_solution_first(recorded_run: RecordedRun) -> None:
    code, result = recorded("pandas_keyerror")
    node = add_node(recorded_run, (), code, operator="draft", result=result)
    done = show(str(recorded_run.root), str(node))
    assert done.exit_code == 0, done.output
    out = done.output
    assert section(out, "output (error").strip() == "rows 1"  # the copy of the traceback: gone
    assert section(out, "error") == (
        "KeyError: 'target'\n"
        '  solution.py, line 5: y = df["target"]\n'
        "  … 2 library frames (pandas)\n"
        "caused by:\n"
        "  KeyError: 'target'\n"
        "    … 5 library frames (pandas)\n"
    )
    assert "Traceback (most recent call last)" not in out


def test_frames_of_the_solution_and_a_recursion_folded(recorded_run: RecordedRun) -> None:
    code, result = recorded("working_module_local")
    out = show(str(recorded_run.root), str(add_node(recorded_run, (), code, result=result))).output
    assert section(out, "error").splitlines() == [
        "ZeroDivisionError: division by zero",
        "  solution.py, line 13: print(helpers.scale([0, 0]))",
        "  working/helpers.py, line 3, in scale: return [x / m for x in xs]",
        "  working/helpers.py, line 3, in <listcomp>: return [x / m for x in xs]",
    ]
    code, result = recorded("recursion")
    out = show(str(recorded_run.root), str(add_node(recorded_run, (), code, result=result))).output
    assert "  solution.py, line 7, in walk: return walk(n + 1)  [× 49]\n" in out
    assert "  [… 72 more frames left out]\n" in out


def test_a_timed_out_node_shows_where_it_was_stopped(recorded_run: RecordedRun) -> None:
    code, result = recorded("timeout")
    timed_out = result.model_copy(update={"killed_reason": "timeout", "timed_out": True})
    out = show(str(recorded_run.root), str(add_node(recorded_run, (), code, result=timed_out)))
    output = out.output
    assert section(output, "output (timeout").strip() == (
        "sleeping\nTimeoutError: execution exceeded 3 s and was stopped"
    )
    assert section(output, "error").splitlines() == [
        "killed: timeout",
        "KeyboardInterrupt:",
        "  solution.py, line 3: time.sleep(30)",
    ]


# --- an interrupted node ---------------------------------------------------------------------


def test_an_interrupted_node_and_run_say_so_once(recorded_run: RecordedRun) -> None:
    node = add_node(recorded_run, (5,), "print(1)\n", state=NodeState.INTERRUPTED)
    summary_file = recorded_run.root / "summary.json"
    summary = json.loads(summary_file.read_text(encoding="utf-8"))
    summary.update(status="interrupted", stop_reason="interrupted")
    summary_file.write_text(json.dumps(summary), encoding="utf-8")
    out = show(str(recorded_run.root)).output
    assert "interrupted (interrupted)" not in out
    assert re.search(rf"^[│├└─ ]+{node} improve  interrupted$", out, re.MULTILINE), out
    assert re.search(r"^status +interrupted$", out, re.MULTILINE)
    assert "interrupted (executing)" in out  # node 7: left executing by a run that is gone
