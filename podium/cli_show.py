"""``podium show`` (a run's search tree, or one node in full) and ``podium rerun``.

Registered in ``podium.cli`` with ``app.command()(show)`` and ``app.command()(rerun)``. Both read
a run through :func:`podium.viewer.run_data.open_run`, so they work on a live run too.

Everything a run holds (plans, code, outputs, tracebacks, prompts, answers) was written by a
model or by the code it wrote: it is printed as text, never as rich markup, and terminal
control sequences in it are shown (``\\x1b``) or dropped, never sent to the terminal; only a
traceback's colours (SGR) are kept. In a pipe the output is plain, wide text.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.syntax import Syntax
from rich.text import Text
from rich.tree import Tree

from podium import cli_checks
from podium.errors import UserError
from podium.records import ModelCall, Node, Usage
from podium.redact import redact
from podium.sandbox import ESCAPE_SEQUENCE, SGR, strip_ansi
from podium.viewer.run_data import RunView, open_run

if TYPE_CHECKING:
    from podium.rerun import RerunReport

PIPE_WIDTH = 250  # in a pipe: wide enough that tree lines stay whole
REASON_CHARS = 80  # a bug reason in the tree, shortened to one line
DEFAULT_OUTPUT_LINES = 200
DEFAULT_DIFF_LINES = 60
STYLES = {"good": "green", "buggy": "red", "running": "yellow", "interrupted": "magenta"}

# Any control character left after escape sequences are removed, and the bidi overrides that
# make code read differently than it runs.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


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
    view = open_run(cli_checks.run_dir(run_dir, need=cli_checks.JOURNAL_ONLY))
    console = _console()
    if node is not None:
        _show_node(console, view, view.node(node), messages, output_lines)
    elif buggy:
        _show_buggy(console, view)
    else:
        _show_header(view)
        console.print(_tree(view))
        if view.status in ("stopped", "interrupted"):
            console.print(f"continue with: podium resume {escape(str(view.root))}")


def _console() -> Console:
    """The terminal's own width; in a pipe, wide plain text (no colours, no cut lines)."""
    width = None if sys.stdout.isatty() else PIPE_WIDTH
    return Console(highlight=False, soft_wrap=True, width=width)


def _show_header(view: RunView) -> None:
    from podium.cli import STOP_REASONS, print_columns

    s, cfg = view.summary, view.config
    kinds = [view.kind(n) for n in view.nodes]
    status = view.status
    if status != "running" and s.get("stop_reason"):
        status += f" ({STOP_REASONS.get(s['stop_reason'], s['stop_reason'])})"
    steps = f"{sum(1 for n in view.nodes if n.step is not None)} finished: "
    steps += f"{kinds.count('good')} good, {kinds.count('buggy')} buggy"
    for kind in ("running", "interrupted"):
        steps += f", {kinds.count(kind)} {kind}" if kind in kinds else ""
    rows = [
        ("run", str(view.root)),
        ("task", str(s.get("task") or view.meta.get("task_id") or "?")),
        ("strategy", str(s.get("strategy") or cfg.get("search", {}).get("strategy") or "?")),
        ("model", _model(view)),
        ("status", status),
        ("steps", steps),
        ("best", _best(view)),
        ("spent", _spent(view)),
    ]
    if isinstance(s.get("grade"), dict):
        rows.append(("grade", _grade(s["grade"])))
    print_columns(rows)


def _model(view: RunView) -> str:
    model = str(view.summary.get("model") or view.config.get("model", {}).get("name") or "?")
    review = view.summary.get("review_model")
    return f"{model} (review: {review})" if review and review != model else model


def _best(view: RunView) -> str:
    if view.best_id is None:
        return "no good node yet"
    metric = next((n.metric for n in view.nodes if n.id == view.best_id), None)
    direction = {True: " (lower is better)", False: " (higher is better)", None: ""}
    value = f", metric {metric.value:.6g}" if metric else ""
    return f"node {view.best_id}{value}{direction[view.lower_is_better]}"


def _spent(view: RunView) -> str:
    usage = view.summary.get("usage")
    if not isinstance(usage, dict):  # no summary yet: add up the finished nodes
        total = sum((n.usage for n in view.nodes), start=Usage())
        usage = total.model_dump()
    tokens = int(usage.get("input_tokens", 0)) + int(usage.get("output_tokens", 0))
    cost = float(usage.get("cost_usd", 0.0))
    return f"${cost:.4f}, {tokens:,} tokens, {usage.get('calls', 0)} model calls"


def _grade(grade: dict[str, Any]) -> str:
    if grade.get("score") is None or not grade.get("valid_submission", True):
        return "invalid submission"
    medal = f"{grade['medal']} medal" if grade.get("medal") else "no medal"
    text = f"score {grade['score']:.6g}, {medal}"
    if grade.get("leaderboard_percentile") is not None:
        text += f", beats {grade['leaderboard_percentile']:.1f}% of the leaderboard"
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
        label.append(f"  {_seconds(node.timings.total_s)}", style="dim")
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
    from podium.cli import print_columns

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
        ("time", f"total {_seconds(t.total_s)} = model {_seconds(t.model_s)} + kernel start "
                 f"{_seconds(t.kernel_start_s)} + exec {_seconds(t.exec_s)} + review "
                 f"{_seconds(t.review_model_s)} + overhead {_seconds(t.overhead_s)}"),
        ("created", node.created_at.isoformat(timespec="seconds")),
        ("finished", node.finished_at.isoformat(timespec="seconds") if node.finished_at else "-"),
        ("files", str(view.root / "nodes" / str(node.id))),
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
    title = f"output ({result.status}, {_seconds(result.duration_s)}"
    title += f", {result.output_bytes:,} bytes" if result.output_bytes else ""
    _heading(console, title + ")")
    if result.output_truncated:
        console.print(Text("[the kernel kept the head and tail of a longer output]", style="dim"))
    cut = len(lines) - output_lines if output_lines and len(lines) > output_lines else 0
    if cut:
        where = view.root / "nodes" / str(node.id) / "output.txt"
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
    from podium.cli import print_columns

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


# --- podium rerun --------------------------------------------------------------------------


def rerun(
    run_dir: Annotated[Path, typer.Argument(help="A run directory (finished or still running).")],
    node: Annotated[int, typer.Argument(help="The node whose code runs again.")],
    sandbox: Annotated[
        str | None, typer.Option(help="Sandbox plugin (default: the run's own).")
    ] = None,
    timeout: Annotated[
        str | None, typer.Option(help="Execution limit: 90s, 10m... (default: the run's).")
    ] = None,
    tolerance: Annotated[
        float, typer.Option(help="Relative difference under which metrics are equal.", min=0)
    ] = 1e-9,
    diff_lines: Annotated[
        int, typer.Option(help="Show at most this many lines of the output diff (0: all).", min=0)
    ] = DEFAULT_DIFF_LINES,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
) -> None:
    """Re-run a node's code in a fresh sandbox and compare with the record.

    Exit 0 when the status and metric reproduce, 1 when they differ. The rerun goes in
    RUN_DIR/nodes/NODE/reruns/N/ (with rerun.json); the journal is untouched.
    """
    from podium.cli import out
    from podium.rerun import rerun_node

    limit = _timeout(timeout)
    cli_checks.run_dir(run_dir)
    if sandbox is not None:
        _check_sandbox(run_dir, sandbox)
    report = rerun_node(run_dir, node, sandbox, limit, tolerance)
    if as_json:
        out.print_json(report.model_dump_json())
    else:
        _print_report(_console(), report, diff_lines)
    if not report.reproduced:
        raise typer.Exit(1)


def _check_sandbox(run_dir: Path, name: str) -> None:
    """An unknown ``--sandbox`` is reported before the task's data is looked for."""
    from podium.api import load_registry
    from podium.config import read_toml

    plugins = read_toml(run_dir / "config.toml").get("plugins", [])
    load_registry(plugins if isinstance(plugins, list) else []).sandbox(name)


def _timeout(text: str | None) -> float | None:
    from podium.config import parse_duration

    if text is None:
        return None
    hint = "a duration: 90, 90s, 10m, 1h30m (leave it out for the run's own)"
    try:
        seconds = parse_duration(text)
    except ValueError as exc:
        raise UserError(f"--timeout: {exc}", hint=hint) from None
    if not isinstance(seconds, float | int) or seconds <= 0:
        raise UserError(f"--timeout: must be positive (got {text!r})", hint=hint)
    return float(seconds)


def _print_report(console: Console, r: RerunReport, diff_lines: int) -> None:
    from podium.cli import print_columns

    rows = [
        ("rerun", f"node {r.node_id} → {r.rerun_dir}"),
        ("sandbox", r.sandbox_detail + ("" if r.sandboxed else " (UNSANDBOXED)")),
        ("status", _then_now(r.status_then, r.status_now)),
    ]
    for when, error in (("then", r.error_then), ("now", r.error_now)):
        if error:
            rows.append((f"error {when}", " ".join(visible(error).split())))
    rows.append(("metric", _metric_change(r)))
    if r.metric_problem_now:
        rows.append(("", visible(r.metric_problem_now)))
    rows += [
        ("submission", _submission_change(r)),
        ("duration", _then_now(_seconds(r.duration_then_s), _seconds(r.duration_now_s))),
        ("output", "identical" if r.output_identical else "differs (diff below)"),
    ]
    print_columns(rows)
    if not r.output_identical:
        _print_diff(console, r.output_diff, diff_lines)
    if r.reproduced:
        console.print(Text("reproduced: status and metric as recorded", style="bold green"))
    else:
        console.print(Text(f"NOT reproduced: {'; '.join(r.why_not)}", style="bold red"))


def _then_now(then: str, now: str) -> str:
    return f"{then} → {now}" + ("  (same)" if then == now else "")


def _metric_change(r: RerunReport) -> str:
    then = "none" if r.metric_then is None else f"{r.metric_then:.10g}"
    now = "none" if r.metric_now is None else f"{r.metric_now:.10g}"
    if r.metric_difference is None or r.metric_difference == 0:
        return _then_now(then, now)
    text = f"{then} → {now}  (difference {r.metric_difference:+.6g}"
    if r.metric_then:
        text += f", {100 * r.metric_difference / abs(r.metric_then):+.3g}%"
    return text + ")"


def _submission_change(r: RerunReport) -> str:
    written = {True: "written", False: "none"}
    text = f"{written[r.submission_then]} → {written[r.submission_now]}"
    if r.submission_identical is not None:
        text += ", identical files" if r.submission_identical else ", the files differ"
    if r.submission_now:
        problem = r.submission_problem_now
        text += f"; format check: {visible(problem)}" if problem else "; format check passed"
    return text


def _print_diff(console: Console, diff: list[str], limit: int) -> None:
    shown = diff[:limit] if limit else diff
    for line in shown:
        style = "green" if line.startswith("+") else "red" if line.startswith("-") else ""
        style = "bold" if line.startswith(("+++", "---")) else style
        console.print(Text(visible(strip_ansi(line)), style=style))
    if len(diff) > len(shown):
        console.print(Text(f"[{len(diff) - len(shown)} more diff lines cut]", style="dim"))


def _seconds(seconds: float) -> str:
    if seconds < 10:
        return f"{seconds:.2f}s"
    if seconds < 60:
        return f"{seconds:.1f}s"
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes}m{rest:02d}s" if minutes < 60 else f"{minutes // 60}h{minutes % 60:02d}m"


# --- untrusted text --------------------------------------------------------------------------


def visible(text: str) -> str:
    """``text`` with every control character shown as an escape (``\\x1b``), none sent raw."""
    text = text.replace("\r\n", "\n")
    return _CONTROL.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), text)


def terminal_text(text: str, colours: bool = False) -> Text:
    """What a program printed: escape sequences dropped (``colours``: SGR ones rendered)."""
    if not colours:
        return Text(visible(strip_ansi(text)))
    kept = ESCAPE_SEQUENCE.sub(lambda m: m.group() if SGR.fullmatch(m.group()) else "", text)
    parts, codes = SGR.split(kept), [*SGR.findall(kept), ""]
    return Text.from_ansi(
        "".join(visible(part) + code for part, code in zip(parts, codes, strict=True))
    )
