"""What ``podium show`` prints: a run's header and tree, its buggy nodes, one node in full
(an agentic node's notebook, a running node's output and ``--follow``), and ``--diff``.

The command itself (:mod:`podium.cli.show`) imports this module when it runs, so ``podium
--help`` does not pay for the run's records, the viewer's readers or rich's syntax colouring.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

from rich.cells import cell_len, set_cell_size
from rich.console import Console
from rich.markup import escape
from rich.syntax import Syntax
from rich.text import Text
from rich.tree import Tree

from podium.cli.console import (
    STOP_REASONS,
    duration,
    medal_text,
    print_columns,
    terminal_text,
    visible,
)
from podium.code_diff import CodeDiff, code_diff, counts, side_by_side
from podium.errors import UserError
from podium.exec_output import OMITTED
from podium.formats import RunDir, SummaryGrade, UsageTotals, run_files
from podium.records import ModelCall, Node, NodeState, Usage
from podium.redact import redact
from podium.tracebacks import output_without_traceback, parse_traceback, render_text
from podium.viewer.findings import ablation_table, findings_line
from podium.viewer.notebook import (
    CellError,
    NodeNotebook,
    NotebookCell,
    calls_by_turn,
    cell_traceback,
    read_notebook,
)
from podium.viewer.run_data import RunView, open_run, run_is_live

REASON_CHARS = 80  # a bug reason in the tree, shortened to one line
STYLES = {
    "good": "green", "buggy": "red", "running": "yellow", "interrupted": "magenta",
    "analysis": "cyan",
}  # fmt: skip
TRACEBACK_STYLES = {"error": "red", "frame": "", "library": "dim", "link": "bold", "note": "dim"}
FOLLOW_POLL_S = 0.25  # --follow: how often the files are looked at (a stat each)
FOLLOW_RUN_EVERY_S = 1.0  # --follow: how often at most the run is read back (its journal)
FOLLOW_ANCHOR_CHARS = 1024  # --follow: the end of what was printed, looked for in a new tail


def show_header(view: RunView) -> None:
    s, cfg = view.run_summary, view.config
    kinds = [view.kind(n) for n in view.nodes]
    status = view.status
    reason = STOP_REASONS.get(s.stop_reason, s.stop_reason) if s.stop_reason else None
    if status != "running" and reason and reason != status:  # never "interrupted (interrupted)"
        status += f" ({reason})"
    steps = f"{sum(1 for n in view.nodes if n.step is not None)} finished: "
    steps += f"{kinds.count('good')} good, {kinds.count('buggy')} buggy"
    if "analysis" in kinds:
        analyses = kinds.count("analysis")
        steps += f", {analyses} {'analysis' if analyses == 1 else 'analyses'}"
    for kind in ("running", "interrupted"):
        steps += f", {kinds.count(kind)} {kind}" if kind in kinds else ""
    rows = [
        ("run", str(view.root)),
        ("task", str(s.task or view.meta.get("task_id") or "?")),
        ("strategy", str(s.strategy or cfg.get("search", {}).get("strategy") or "?")),
        ("model", _model(view)),
        ("status", status),
        ("steps", steps),
        ("best", _best(view)),
        ("spent", _spent(view)),
    ]
    if s.grade is not None:
        rows.append(("grade", _grade(s.grade)))
    print_columns(rows)


def _model(view: RunView) -> str:
    model = view.run_summary.model or str(view.config.get("model", {}).get("name") or "?")
    roles = {"plan": view.run_summary.plan_model, "review": view.run_summary.review_model}
    others = [f"{role}: {name}" for role, name in roles.items() if name and name != model]
    return f"{model} ({', '.join(others)})" if others else model


def _best(view: RunView) -> str:
    if view.best_id is None:
        return "no good node yet"
    metric = next((n.metric for n in view.nodes if n.id == view.best_id), None)
    direction = {True: " (lower is better)", False: " (higher is better)", None: ""}
    value = f", metric {metric.value:.6g}" if metric else ""
    return f"node {view.best_id}{value}{direction[view.lower_is_better]}"


def _spent(view: RunView) -> str:
    usage: Usage | UsageTotals | None = view.run_summary.usage
    if usage is None:  # no summary yet: add up the finished nodes
        usage = sum((n.usage for n in view.nodes), start=Usage())
    tokens = usage.input_tokens + usage.output_tokens
    return f"${usage.cost_usd:.4f}, {tokens:,} tokens, {usage.calls} model calls"


def _grade(grade: SummaryGrade) -> str:
    if grade.score is None or grade.valid_submission is False:
        return "invalid submission"
    text = f"score {grade.score:.6g}, {medal_text(grade.medal)}"
    if grade.leaderboard_percentile is not None:
        text += f", beats {grade.leaderboard_percentile:.1f}% of the leaderboard"
    return text


def tree(view: RunView) -> Tree:
    """Each node under its first parent (a crossover notes its others, a node citing others
    its references: ``RunView.refs``), in id order."""
    tree = Tree(Text(f"search tree ({len(view.nodes)} nodes)", style="bold"))
    ids = {n.id for n in view.nodes}
    branches: dict[int, Tree] = {}
    for node in view.nodes:  # id order: a parent always comes before its children
        parent = next((p for p in node.parent_ids if p in ids), None)
        holder = tree if parent is None else branches[parent]
        branches[node.id] = holder.add(_tree_label(view, node))
    return tree


def _tree_label(view: RunView, node: Node) -> Text:
    kind = view.kind(node)
    on_path = node.id in view.best_path
    label = Text()
    if node.id == view.best_id:
        label.append("★ ", style="bold yellow")
    label.append(f"{node.id} ", style="bold" if on_path else "")
    label.append(node.operator)
    others = node.parent_ids[1:]
    if others:
        label.append(" + " + ", ".join(map(str, others)), style="dim")
    refs = view.refs(node)
    if refs:
        label.append("  cites " + ", ".join(map(str, refs)), style="dim")
    label.append("  ")
    label.append(_result(view, node), style=STYLES[kind] + (" bold" if on_path else ""))
    if kind == "analysis":  # what it found, in a sentence
        label.append(f"  {visible(findings_line(node.summary) or '(no findings)')}", style="dim")
    if node.timings.total_s:
        label.append(f"  {duration(node.timings.total_s)}", style="dim")
    return label


def _result(view: RunView, node: Node) -> str:
    """The metric, or why the node is buggy (one line, shortened), or where it stands (an
    analysis has no metric: "analysis")."""
    kind = view.kind(node)
    if kind == "analysis":
        return kind
    if kind == "running":
        return f"running ({node.state})"
    if kind == "interrupted":  # said once when the journal marked it so itself
        interrupted = node.state is NodeState.INTERRUPTED
        return "interrupted" if interrupted else f"interrupted ({node.state})"
    if kind == "buggy":
        reason = " ".join(visible(node.bug_reason or "no reason recorded").split())
        if len(reason) > REASON_CHARS:
            reason = reason[: REASON_CHARS - 1] + "…"
        return f"buggy: {reason}"
    return f"{node.metric.value:.6g}" if node.metric else "?"


def show_buggy(console: Console, view: RunView) -> None:
    """Why each buggy node failed, in full: the newcomer's first question."""
    failed = [n for n in view.nodes if view.kind(n) == "buggy"]
    for node in failed:
        parents = ", ".join(map(str, node.parent_ids)) or "-"
        head = Text(f"node {node.id}", style="bold red")
        head.append(f"  {node.operator}  parents {parents}  step {node.step}")
        console.print(head)
        console.print(_indented(visible(node.bug_reason or "no reason recorded")))
        error = node.exec.error_line if node.exec else None
        if error and error not in (node.bug_reason or ""):
            console.print(_indented(f"error: {visible(error)}"))
    console.print(
        f"{len(failed)} buggy of {len(view.nodes)} nodes"
        + (f"; one in full: podium show {escape(str(view.root))} NODE" if failed else "")
    )


def _indented(text: str) -> Text:
    return Text("\n".join("    " + line for line in text.splitlines() or [""]))


# --- one node in full -----------------------------------------------------------------------


def show_node(
    console: Console, view: RunView, node: Node, messages: bool, output_lines: int, cell_lines: int
) -> str | None:
    """Print the node; returns the output it showed of a node still running (where
    ``--follow`` goes on from), None for a node that has ended."""
    _node_meta(console, view, node)
    if view.kind(node) == "analysis":
        _findings(console, node)
    else:
        _section(console, "summary", node.summary)
    _section(console, "plan", node.plan)
    calls = view.calls(node.id)
    _node_notebook(console, view, node, calls, output_lines, cell_lines)
    if node.code:
        lines = len(node.code.splitlines())
        _heading(console, f"code ({lines} line{'s' if lines != 1 else ''})")
        console.print(_code(node.code))
    live = _node_output(console, view, node, output_lines)
    _node_error(console, node)
    _node_calls(console, calls, messages)
    return live


def _node_meta(console: Console, view: RunView, node: Node) -> None:
    kind = view.kind(node)
    head = Text(f"node {node.id}", style="bold")
    head.append(f"  {node.operator}  ")
    head.append(kind, style=STYLES[kind])
    if node.id == view.best_id:
        head.append("  ★ final node", style="bold yellow")
    elif node.id in view.best_path:
        head.append("  on the best path", style="bold")
    console.print(head)
    t, u = node.timings, node.usage
    rows = [
        ("parents", ", ".join(map(str, node.parent_ids)) or "- (a draft)"),
        ("children", ", ".join(map(str, view.children(node.id))) or "-"),
        *_references(view, node),
        ("step", str(node.step) if node.step is not None else "- (not finished)"),
        ("state", f"{node.state} (worker {node.worker})"),
        *_kind(node),
        ("metric", f"{node.metric.value:.6g}" if node.metric else "-"),
    ]
    if node.fresh is not None:
        rows.append(("fresh", visible(node.fresh.verdict())))
    if node.is_buggy:
        rows.append(("bug", " ".join(visible(node.bug_reason or "no reason recorded").split())))
    rows += [
        ("usage", f"{u.input_tokens:,} in / {u.output_tokens:,} out tokens, "
                  f"${u.cost_usd:.4f}, {u.calls} calls"),
        ("time", f"total {duration(t.total_s)} = model {duration(t.model_s)} + kernel start "
                 f"{duration(t.kernel_start_s)} + exec {duration(t.exec_s)} + review "
                 f"{duration(t.review_model_s)} + overhead {duration(t.overhead_s)}"),
        ("created", node.created_at.isoformat(timespec="seconds")),
        ("finished", node.finished_at.isoformat(timespec="seconds") if node.finished_at else "-"),
        ("files", str(RunDir(view.root).node_dir(node.id))),
    ]  # fmt: skip
    print_columns(rows)


def _kind(node: Node) -> list[tuple[str, str]]:
    """An analysis says what it is (a solution, the usual, says nothing)."""
    if node.kind != "analysis":
        return []
    return [("kind", "analysis (no metric, no submission: its output is findings)")]


def _findings(console: Console, node: Node) -> None:
    """An analysis's findings (its summary), and its ablation table when its output has
    ``ABLATION <part>: <score>`` lines: each part's score and its change against the
    baseline."""
    _heading(console, "findings")
    console.print(Text(visible(node.summary.rstrip("\n") or "(no findings recorded)")))
    rows = ablation_table(node.exec.output) if node.exec else []
    if rows:
        _heading(console, f"ablation ({len(rows)} variant{'s' if len(rows) != 1 else ''})")
        print_columns([("part", "score", "change vs baseline")] + [
            (visible(r.part), f"{r.score:.6g}",
             "baseline" if r.change is None else f"{r.change:+.4g}")
            for r in rows
        ])  # fmt: skip


def _references(view: RunView, node: Node) -> list[tuple[str, str]]:
    """The nodes it cites and those citing it (reference edges), each row only where any."""
    rows = [("references", view.refs(node)), ("cited by", view.cited_by(node.id))]
    return [(name, ", ".join(map(str, ids))) for name, ids in rows if ids]


def _heading(console: Console, title: str) -> None:
    """A section's title line; as wide in a pipe as in a terminal."""
    console.print(Text(f"── {title} " + "─" * max(3, 72 - len(title)), style="bold"))


def _section(console: Console, title: str, text: str) -> None:
    if text.strip():
        _heading(console, title)
        console.print(Text(visible(text.rstrip("\n"))))


def _code(code: str) -> Text:
    """Python, highlighted, with line numbers; no line is ever cut or wrapped into the next."""
    syntax = Syntax("", "python", theme="ansi_dark", background_color="default")
    lines = syntax.highlight(visible(code)).split("\n")
    if lines and not lines[-1].plain:
        lines.pop()
    width = len(str(len(lines)))
    numbered = Text()
    for number, line in enumerate(lines, start=1):
        numbered.append(f"{number:>{width}} │ ", style="dim")
        numbered.append_text(line)
        numbered.append("\n")
    numbered.rstrip()
    return numbered


def _node_output(console: Console, view: RunView, node: Node, output_lines: int) -> str | None:
    """The recorded output; for a node still running, its output so far (returned)."""
    result = node.exec
    if result is None:
        return _live_output(console, view, node, output_lines) if _running(view, node) else None
    lines = output_without_traceback(result.output, result.traceback).splitlines()  # it's below
    title = f"output ({result.status}, {duration(result.duration_s)}"
    title += f", {result.output_bytes:,} bytes" if result.output_bytes else ""
    _heading(console, title + ")")
    if result.output_truncated:
        console.print(Text("[the kernel kept the head and tail of a longer output]", style="dim"))
    cut = len(lines) - output_lines if output_lines and len(lines) > output_lines else 0
    if cut:
        where = RunDir(view.root).node_file(node.id, run_files.OUTPUT)
        console.print(Text(f"[{cut} earlier lines cut; all of it: {where}]", style="dim"))
    console.print(terminal_text("\n".join(lines[cut:])))
    return result.output if _running(view, node) else None  # reviewing: --follow waits on


def _node_error(console: Console, node: Node) -> None:
    result = node.exec
    if result is None or not (result.error_name or result.killed_reason or result.traceback):
        return
    _heading(console, "error")
    if result.killed_reason:
        console.print(Text(f"killed: {visible(result.killed_reason)}", style="red"))
    traceback = result.traceback or ""  # inert: no escape sequence left in it
    if traceback.strip():  # the error, the solution's frames, the library's folded
        for line in render_text(parse_traceback(traceback), solution_code=node.code):
            console.print(Text(visible(line.text), style=TRACEBACK_STYLES[line.kind]))
    elif result.error_name:
        console.print(Text(visible(f"{result.error_name}: {result.error_value or ''}"), "red"))


def _node_calls(console: Console, calls: list[ModelCall], messages: bool) -> None:
    if not calls:
        return
    _heading(console, f"model calls ({len(calls)})")
    rows: list[tuple[str, ...]] = [
        ("role", "model", "tokens in", "out", "cost", "latency", "finish")
    ]
    rows += [_call_row(call) for call in calls]
    print_columns(rows)
    if not messages:
        console.print(Text("(--messages prints every prompt and answer in full)", style="dim"))
        return
    for number, call in enumerate(calls, start=1):
        _call_messages(console, number, call)


def _call_row(call: ModelCall) -> tuple[str, ...]:
    role = f"{call.role} #{call.seq}"
    r = call.response
    if r is None:
        error = " ".join(redact(call.error or "no answer").split())
        return (role, call.model, "-", "-", "-", "-", f"error: {visible(error)}")
    finish = r.finish + (" (replayed)" if r.replayed else "")
    if call.attempts > 1:
        finish += f" after {call.attempts} attempts"
    return (role, call.model or r.model, f"{r.usage.input_tokens:,}", f"{r.usage.output_tokens:,}",
            f"${r.usage.cost_usd:.4f}", f"{r.latency_s:.2f}s", finish)  # fmt: skip


def _call_messages(console: Console, number: int, call: ModelCall) -> None:
    _heading(console, f"call {number}: {call.role} #{call.seq}, {call.model}")
    tools = ", ".join(t.name for t in call.request.tools)
    if tools:
        console.print(Text(f"tools: {tools}", style="dim"))
    for message in call.request.messages:
        console.print(Text(f"[{message.role}]", style="bold cyan"))
        console.print(Text(visible(message.content)))
    r = call.response
    console.print(Text("[answer]", style="bold green"))
    if r is None:
        console.print(Text(f"error: {visible(redact(call.error or 'no answer'))}", style="red"))
        return
    if r.text:
        console.print(Text(visible(r.text)))
    if r.tool_call is not None:
        arguments = json.dumps(r.tool_call.arguments, indent=2, ensure_ascii=False)
        console.print(Text(visible(f"tool call {r.tool_call.name}: {arguments}")))


# --- an agentic node's notebook ---------------------------------------------------------------


def _node_notebook(
    console: Console,
    view: RunView,
    node: Node,
    calls: list[ModelCall],
    output_lines: int,
    cell_lines: int,
) -> None:
    """An agentic node's notebook (``podium.viewer.notebook``; nothing for a one-shot node):
    each turn's model call (tokens, cost, time), the model's words, and each cell with its
    code, its output's last lines (``output_lines``, at most ``cell_lines``; 0: all)
    and its error. A file that cannot be read is one line saying why."""
    notebook = read_notebook(view.root, node.id)
    if notebook is None:
        return
    if notebook.problem is not None:
        _heading(console, "notebook")
        console.print(Text(f"[{notebook.problem}]", style="dim"))
        return
    _heading(console, f"notebook ({_notebook_summary(notebook)})")
    by_turn, turn = calls_by_turn(calls), None
    cap = min(output_lines, cell_lines) if output_lines else 0
    for cell in notebook.cells:
        if cell.turn is not None and cell.turn != turn:
            console.print(Text(_turn_line(cell.turn, by_turn.get(cell.turn)), style="bold cyan"))
        turn = cell.turn
        if cell.kind == "words":
            said = Text("model: ", style="bold")
            console.print(said.append(visible(cell.source), style="italic"))
        else:
            _notebook_cell(console, cell, cap)
    if notebook.cells_left_out:
        console.print(Text(f"[{notebook.cells_left_out:,} more cells not shown]", style="dim"))


def _notebook_summary(notebook: NodeNotebook) -> str:
    cells = notebook.code_cells
    parts = [f"{cells} cell{'s' if cells != 1 else ''}"]
    if notebook.turns is not None:
        parts.append(f"{notebook.turns} turn{'s' if notebook.turns != 1 else ''}")
    if notebook.finished:
        parts.append("finished")
    else:
        parts.append(f"ended: {notebook.ending}" if notebook.ending else "not finished")
    return ", ".join(parts)


def _turn_line(turn: int, call: ModelCall | None) -> str:
    r = call.response if call is not None else None
    if call is None or r is None:
        return f"turn {turn}: no model call recorded"
    tokens = f"{r.usage.input_tokens:,} in / {r.usage.output_tokens:,} out tokens"
    return f"turn {turn}: code #{call.seq}, {tokens}, ${r.usage.cost_usd:.4f}, {r.latency_s:.2f}s"


def _notebook_cell(console: Console, cell: NotebookCell, cap: int) -> None:
    """``[cell N] status duration``, the code, the output's last ``cap`` lines (0: all;
    without the copy of its traceback, shown below), the error."""
    number = cell.number if cell.number is not None else "?"
    head = f"[cell {number}] {cell.status or 'no status'}"
    head += f" {duration(cell.duration_s)}" if cell.duration_s is not None else ""
    failed = cell.status not in (None, "ok") or cell.error is not None
    console.print(Text(visible(head), style="bold red" if failed else "bold"))
    if cell.source.strip():
        console.print(_code(cell.source))
    error = cell.error
    output = output_without_traceback(cell.output, error.traceback if error else None)
    lines = output.splitlines()
    cut = len(lines) - cap if cap and len(lines) > cap else 0
    if cut:
        console.print(Text(f"[{cut} earlier lines of its output cut]", style="dim"))
    if lines:
        console.print(terminal_text("\n".join(lines[cut:])))
    if error is not None:
        _cell_error(console, error)


def _cell_error(console: Console, error: CellError) -> None:
    if error.traceback.strip():
        for line in render_text(cell_traceback(error.traceback)):
            console.print(Text(visible(line.text), style=TRACEBACK_STYLES[line.kind]))
    else:
        console.print(Text(visible(f"{error.name}: {error.value}".rstrip(": ")), style="red"))


# --- a node still running: its output so far, and --follow ---------------------------------


def _running(view: RunView, node: Node) -> bool:
    return view.kind(node) == "running"


def _live_output(console: Console, view: RunView, node: Node, output_lines: int) -> str:
    """A running node's output so far, as the loop keeps it in ``output.txt`` (rewritten about
    once a second while it executes); returns the text shown (all of it, cut lines included)."""
    rd = RunDir(view.root)
    text = _read_live(rd, node.id)
    _heading(console, f"output so far ({len(text.encode()):,} bytes)")
    where = rd.node_output(node.id)
    state = f"still running ({node.state})"
    if not text:
        console.print(Text(f"[{state}: no output yet]", style="dim"))
        return text
    lines = text.splitlines()
    cut = len(lines) - output_lines if output_lines and len(lines) > output_lines else 0
    if cut:
        console.print(Text(f"[{cut} earlier lines cut; all of it: {where}]", style="dim"))
    console.print(terminal_text("\n".join(lines[cut:])))
    console.print(Text(f"[{state}: the output so far, from {where}]", style="dim"))
    return text


def _read_live(rd: RunDir, node_id: int) -> str:
    """``output.txt`` of the node, or "" while there is none (``RunView.read_output``: no link
    followed below the run dir, bounded; a file it refuses is one line saying why)."""
    return RunView.read_output(rd.root, node_id)


def follow(console: Console, root: Path, node_id: int, shown: str) -> None:
    """Print the node's output as it grows (``shown``: what was printed of it already) until
    the node is no longer running, then how it ended: ``tail -f`` that exits when done.

    Cheap to leave running for hours: every ``FOLLOW_POLL_S`` it compares the size, time and
    inode of ``output.txt`` and of the journal's files, reads the output only when its file
    changed, and reads the run back (at most every ``FOLLOW_RUN_EVERY_S``) only when the
    journal changed or the run stopped being live. Ctrl-C ends it (exit status 130, as for
    every command)."""
    rd = RunDir(root)
    files = (rd.node_output(node_id), rd.journal, root / run_files.JOURNAL_WAL)
    seen = [_signature(path) for path in files]
    changed, next_read = False, 0.0
    console.print(Text("[following its output until it finishes; Ctrl-C stops]", style="dim"))
    while True:
        time.sleep(FOLLOW_POLL_S)
        now = [_signature(path) for path in files]
        if now[0] != seen[0]:
            shown = _print_new(console, shown, _read_live(rd, node_id))
        changed = changed or now[1:] != seen[1:]
        seen = now
        if time.monotonic() < next_read or not (changed or run_is_live(root) is False):
            continue
        changed, next_read = False, time.monotonic() + FOLLOW_RUN_EVERY_S
        view = open_run(root)
        if not _running(view, node := view.node(node_id)):
            _print_new(console, shown, _read_live(rd, node_id))
            _node_end(console, view, node)
            return


def _signature(path: Path) -> tuple[int, int, int] | None:
    """What changes when the file is written or replaced (None: there is none)."""
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_ino, st.st_size, st.st_mtime_ns


def _print_new(console: Console, shown: str, now: str) -> str:
    """Print what ``now`` (the output so far) holds past ``shown``; returns ``now``."""
    new, tail = new_output(shown, now)
    if new:
        console.print(terminal_text(new), end="")
    if tail is not None:
        console.print(Text("\n[... output cut between two looks: its tail follows ...]", "dim"))
        console.print(terminal_text(tail), end="")
    return now


def new_output(shown: str, now: str) -> tuple[str, str | None]:
    """What ``now`` holds past ``shown`` (two versions of a node's output so far): the text
    that continues ``shown``, and the kept tail after a cut (None: nothing was missed).

    The output keeps its head and tail (``podium.sandbox.output``): once it is longer than the
    cap a new version is no longer ``shown`` and more. When all of ``shown`` is in the new
    head, the rest of the head and the tail are new; else ``shown``'s end (the last
    ``FOLLOW_ANCHOR_CHARS`` of its own tail) is looked for in the new tail, and when it is not
    there, what came after it left the kept tail between two looks: only the tail is left."""
    omitted = _last_omitted(now)
    if omitted is None:
        return (now[len(shown) :], None) if now.startswith(shown) else ("", now)
    head, tail = now[: omitted.start()], now[omitted.end() :]
    if len(shown) >= omitted.end() and now.startswith(shown):  # the same cut: it only grew
        return now[len(shown) :], None
    if head.startswith(shown):
        return head[len(shown) :], tail
    own = _last_omitted(shown)
    anchor = shown[own.end() if own else 0 :][-FOLLOW_ANCHOR_CHARS:]
    found = tail.rfind(anchor) if anchor else -1
    return (tail[found + len(anchor) :], None) if found >= 0 else ("", tail)


def _last_omitted(text: str) -> re.Match[str] | None:
    """The last mark of omitted bytes in an output: the kept tail follows it."""
    marks = list(OMITTED.finditer(text))
    return marks[-1] if marks else None


def _node_end(console: Console, view: RunView, node: Node) -> None:
    """How a followed node ended: its result, and its error if it had one."""
    kind = view.kind(node)
    verdict = f"good, metric {_result(view, node)}" if kind == "good" else _result(view, node)
    if kind == "analysis" and node.summary.strip():
        verdict += f": {visible(findings_line(node.summary))}"
    line = Text(f"\nnode {node.id} {'finished' if node.state is NodeState.DONE else 'ended'}: ")
    line.append(verdict, style=STYLES[kind])
    result = node.exec
    if result is not None:
        line.append(f"  ({result.status}, {duration(result.duration_s)})", style="dim")
    console.print(line)
    _node_error(console, node)


# --- --diff: what a node changed --------------------------------------------------------------

DIFF_STYLES = {" ": "", "-": "red", "+": "green"}


def check_diff_options(run_dir: Path, node: int | None, diff: bool, other: bool) -> None:
    if diff and node is None:
        raise UserError("--diff shows one node's code against its parent's", hint="give a NODE id")
    if diff and other:
        raise UserError(
            "--diff prints only the node's diff: give --messages or --follow without it",
            hint=f"podium show {run_dir} {node} --diff",
        )


def show_diffs(console: Console, view: RunView, node: Node, side_by_side_view: bool) -> None:
    """The node's code against each parent's: unified, or side by side at the terminal's width.
    A crossover has two parents, each diffed in turn."""
    if not node.parent_ids:
        console.print(f"node {node.id} is a {node.operator} (no parent): nothing to diff against")
        return
    if not node.code:
        console.print(f"node {node.id} has no code yet ({node.state}): nothing to diff")
        return
    head = Text(f"node {node.id}", style="bold")
    head.append(f"  {node.operator}  parents {', '.join(map(str, node.parent_ids))}")
    console.print(head)
    for number, parent_id in enumerate(node.parent_ids, start=1):
        title = f"diff against #{parent_id}"
        if len(node.parent_ids) > 1:
            title += f" (parent {number} of {len(node.parent_ids)})"
        parent = view.find(parent_id)
        if parent is None:
            _heading(console, title)
            console.print(Text(f"[node {parent_id} is not in the journal]", style="dim"))
            continue
        diff = code_diff(parent.code, node.code)
        added, removed = counts(diff)
        _heading(console, f"{title}: +{added} -{removed} lines")
        if not diff.hunks and not diff.cut:
            console.print(Text("[the same code]", style="dim"))
        elif side_by_side_view:
            _print_side_by_side(console, diff)
        else:
            _print_unified(console, diff, f"#{parent_id}", f"#{node.id}")
        if diff.cut:
            console.print(Text(f"[diff cut: {diff.cut}]", style="dim"))


def _print_unified(console: Console, diff: CodeDiff, old_name: str, new_name: str) -> None:
    console.print(Text(f"--- {old_name}\n+++ {new_name}", style="bold"))
    for hunk in diff:
        console.print(Text(hunk.header, style="cyan"))
        for line in hunk.lines:
            console.print(Text(visible(line.tag + line.text), style=DIFF_STYLES[line.tag]))


def _print_side_by_side(console: Console, diff: CodeDiff) -> None:
    """Old | new, each side half the width; a line too long for its half is cut with "…"."""
    rows = side_by_side(diff)
    numbers = max((max(r.old or 0, r.new or 0) for r in rows), default=0)
    digits = len(str(numbers))
    half = max(10, (console.width - 3) // 2 - digits - 3)  # "NN - text" | "NN + text"
    for row in rows:
        if row.kind == "hunk":
            console.print(Text(row.old_text, style="cyan"))
            continue
        old_mark = "-" if row.kind in ("changed", "removed") else " "
        new_mark = "+" if row.kind in ("changed", "added") else " "
        line = _side(row.old, old_mark, row.old_text, digits, half, "red")
        line.append(" │ ", style="dim")
        line.append_text(_side(row.new, new_mark, row.new_text, digits, half, "green"))
        line.rstrip()  # the new side is not padded out
        console.print(line, crop=False, overflow="ignore")


def _side(number: int | None, mark: str, text: str, digits: int, width: int, style: str) -> Text:
    side = Text()
    side.append(f"{number if number is not None else '':>{digits}} {mark} ", style="dim")
    shown = visible(text.expandtabs(4))
    if cell_len(shown) > width:
        shown = set_cell_size(shown, width - 1) + "…"
    side.append(set_cell_size(shown, width), style=style if mark != " " else "")
    return side
