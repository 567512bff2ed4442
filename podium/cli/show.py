"""``podium show``: a run's search tree, or one node in full.

It reads a run through :func:`podium.viewer.run_data.open_run`, so it works on a live run too.

Everything a run holds (plans, code, outputs, tracebacks, prompts, answers) was written by a
model or by the code it wrote: it is printed as text, never as rich markup, and terminal
control sequences in it are shown (``\\x1b``) or dropped, never sent to the terminal; only a
traceback's colours (SGR) are kept. In a pipe the output is plain, wide text.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.syntax import Syntax
from rich.text import Text
from rich.tree import Tree

from podium.cli import checks
from podium.cli.console import (
    STOP_REASONS,
    duration,
    medal_text,
    print_columns,
    terminal_text,
    visible,
    wide_console,
)
from podium.errors import UserError
from podium.records import ModelCall, Node, Usage
from podium.redact import redact
from podium.scaffolds import RunDir, SummaryGrade, UsageTotals, run_files
from podium.viewer.run_data import RunView, open_run

REASON_CHARS = 80  # a bug reason in the tree, shortened to one line
DEFAULT_OUTPUT_LINES = 200
STYLES = {"good": "green", "buggy": "red", "running": "yellow", "interrupted": "magenta"}


# --- podium show ---------------------------------------------------------------------------


def show(
    run_dir: Annotated[Path, typer.Argument(help="A run directory.")],
    node: Annotated[int | None, typer.Argument(help="A node id: show that node in full.")] = None,
    buggy: Annotated[
        bool, typer.Option("--buggy", help="List only the buggy nodes, each with its full reason.")
    ] = False,
    messages: Annotated[
        bool,
        typer.Option("--messages", help="With NODE: every message sent and answer received."),
    ] = False,
    output_lines: Annotated[
        int, typer.Option(help="With NODE: the output's last N lines (0: all).", min=0)
    ] = DEFAULT_OUTPUT_LINES,
) -> None:
    """Show a run's search tree, or one node in full.

    NODE in full: plan, code, output, error, usage, timings and model calls.
    """
    if node is not None and buggy:
        raise UserError(
            "--buggy lists a run's buggy nodes: give it without NODE",
            hint=f"podium show {run_dir} --buggy, or podium show {run_dir} {node}",
        )
    if node is None and messages:
        raise UserError("--messages shows one node's model calls", hint="give a NODE id with it")
    view = open_run(checks.run_dir(run_dir, need=checks.JOURNAL_ONLY))
    console = wide_console()
    if node is not None:
        _show_node(console, view, view.node(node), messages, output_lines)
    elif buggy:
        _show_buggy(console, view)
    else:
        _show_header(view)
        console.print(_tree(view))
        if view.status in ("stopped", "interrupted"):
            console.print(f"continue with: podium resume {escape(str(view.root))}")


def _show_header(view: RunView) -> None:
    s, cfg = view.run_summary, view.config
    kinds = [view.kind(n) for n in view.nodes]
    status = view.status
    if status != "running" and s.stop_reason:
        status += f" ({STOP_REASONS.get(s.stop_reason, s.stop_reason)})"
    steps = f"{sum(1 for n in view.nodes if n.step is not None)} finished: "
    steps += f"{kinds.count('good')} good, {kinds.count('buggy')} buggy"
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
    review = view.run_summary.review_model
    return f"{model} (review: {review})" if review and review != model else model


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


def _tree(view: RunView) -> Tree:
    """Each node under its first parent (a crossover notes its others), in id order."""
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
    label.append("  ")
    label.append(_result(view, node), style=STYLES[kind] + (" bold" if on_path else ""))
    if node.timings.total_s:
        label.append(f"  {duration(node.timings.total_s)}", style="dim")
    return label


def _result(view: RunView, node: Node) -> str:
    """The metric, or why the node is buggy (one line, shortened), or where it stands."""
    kind = view.kind(node)
    if kind == "running":
        return f"running ({node.state})"
    if kind == "interrupted":
        return f"interrupted ({node.state})"
    if kind == "buggy":
        reason = " ".join(visible(node.bug_reason or "no reason recorded").split())
        if len(reason) > REASON_CHARS:
            reason = reason[: REASON_CHARS - 1] + "…"
        return f"buggy: {reason}"
    return f"{node.metric.value:.6g}" if node.metric else "?"


def _show_buggy(console: Console, view: RunView) -> None:
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


def _show_node(
    console: Console, view: RunView, node: Node, messages: bool, output_lines: int
) -> None:
    _node_meta(console, view, node)
    _section(console, "summary", node.summary)
    _section(console, "plan", node.plan)
    if node.code:
        lines = len(node.code.splitlines())
        _heading(console, f"code ({lines} line{'s' if lines != 1 else ''})")
        console.print(_code(node.code))
    _node_output(console, view, node, output_lines)
    _node_error(console, node)
    _node_calls(console, view, node, messages)


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
        ("step", str(node.step) if node.step is not None else "- (not finished)"),
        ("state", f"{node.state} (worker {node.worker})"),
        ("metric", f"{node.metric.value:.6g}" if node.metric else "-"),
    ]
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


def _node_output(console: Console, view: RunView, node: Node, output_lines: int) -> None:
    result = node.exec
    if result is None:
        return
    lines = result.output.splitlines()
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


def _node_error(console: Console, node: Node) -> None:
    result = node.exec
    if result is None or not (result.error_name or result.killed_reason or result.traceback):
        return
    _heading(console, "error")
    if result.killed_reason:
        console.print(Text(f"killed: {visible(result.killed_reason)}", style="red"))
    traceback = (result.traceback or "").strip()
    if traceback and traceback not in result.output:  # a kernel's is in the output already
        console.print(terminal_text(traceback, colours=True))  # it ends with name and value
    elif result.error_name:
        console.print(Text(visible(f"{result.error_name}: {result.error_value or ''}"), "red"))


def _node_calls(console: Console, view: RunView, node: Node, messages: bool) -> None:
    calls = view.calls(node.id)
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
