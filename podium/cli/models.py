"""``podium models check`` and ``podium calls export|list``: models and their record by hand."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape

from podium.cli import checks
from podium.cli.console import err, out, print_columns
from podium.redact import redact

models_app = typer.Typer(
    help="Check that a model answers (key, endpoint, function calls, price).",
    no_args_is_help=True,
    rich_markup_mode=None,
)
calls_app = typer.Typer(
    help="A run's recorded model calls: list them, or export them as a scripted-model file.",
    no_args_is_help=True,
    rich_markup_mode=None,
)
RunDirArg = Annotated[Path, typer.Argument(help="A run directory.")]


@models_app.command("check", short_help="Make one tiny call: endpoint, key, latency, tools, price.")
def check(
    model: Annotated[str, typer.Argument(help="provider/model, e.g. openai/gpt-4.1.")],
    base_url: Annotated[str | None, typer.Option(help="An OpenAI-compatible server.")] = None,
    timeout: Annotated[str | None, typer.Option(help="Per request: 30s, 2m...")] = None,
    overrides: Annotated[
        list[str] | None, typer.Option("--set", "-o", help="A model.* config key: -o model.x=y")
    ] = None,
    plugins: Annotated[list[str] | None, typer.Option("--plugin", "-p")] = None,
) -> None:
    """Make one tiny call; print the endpoint, key variable, latency, function-call support,
    tokens and price. Exits 1 when the call fails."""
    from podium.api.config import load_config
    from podium.api.model_check import check_model
    from podium.api.runs import load_registry

    flags = {"task": "-", "model.name": model, "model.base_url": base_url, "model.timeout": timeout}
    cfg = load_config(None, overrides or [], {k: v for k, v in flags.items() if v is not None})
    report = check_model(load_registry(plugins or []), model, cfg.model.model_dump())
    out.print(f"model     {escape(report.model)}")
    out.print(f"endpoint  {escape(redact(report.endpoint))}")
    out.print(f"key       {escape(report.key)}")
    out.print(f"price     {escape(report.price)}")
    if report.answer is not None:
        said = report.answer.tool_call.arguments if report.answer.tool_call else report.answer.text
        u = report.answer.usage
        out.print(
            f"answer    {escape(str(said))[:80]} in {report.latency_s:.2f}s "
            f"({report.attempts} attempt{'s' * (report.attempts > 1)})"
        )
        out.print(f"tools     {escape(report.tools)}")
        out.print(
            f"usage     {u.input_tokens} in + {u.output_tokens} out tokens, ${u.cost_usd:.6f}"
        )
    if report.error is not None:
        err.print(f"error: {escape(redact(str(report.error)))}")
        if report.error.hint:
            err.print(f"hint: {escape(redact(report.error.hint))}")
        raise typer.Exit(1)
    out.print("ok")


@calls_app.command("export", short_help="Print the calls as JSONL (for scripted: or --replay).")
def export(
    run_dir: RunDirArg,
    no_requests: Annotated[
        bool, typer.Option("--no-requests", help="Answers only: smaller, but not replayable.")
    ] = False,
) -> None:
    """Print the run's calls as JSONL: use it with --model scripted:FILE or --replay FILE."""
    import sys

    from podium.plugins.backends.answers import to_jsonl
    from podium.scaffolds import load_recorded

    sys.stdout.write(to_jsonl(load_recorded(_run_dir(run_dir), with_requests=not no_requests)))


@calls_app.command(
    "list", short_help="One line per call: node, role, model, tokens, cost, outcome."
)
def list_calls(run_dir: RunDirArg) -> None:
    """One line per call: node, role, model, attempts, tokens, cost, latency, outcome."""
    from podium.scaffolds import load_recorded

    rows: list[tuple[str, ...]] = [
        ("node", "role", "seq", "model", "tries", "in", "out", "usd", "secs", "outcome")
    ]
    for a in load_recorded(_run_dir(run_dir)):
        u = a.usage
        outcome = f"error: {a.error}" if a.error else _outcome(a)
        rows.append(
            (str(a.node_id), a.role, str(a.seq), a.model or "?", str(a.attempts or 1),
             str(u.input_tokens if u else 0), str(u.output_tokens if u else 0),
             f"{u.cost_usd:.4f}" if u else "0", f"{a.latency_s or 0:.2f}",
             " ".join(outcome.split())[:70])
        )  # fmt: skip
    print_columns(rows)


def _outcome(answer: Any) -> str:
    if answer.tool_call is not None:
        return f"called {answer.tool_call.name}"
    return ("cut off: " if answer.finish == "length" else "") + f"{len(answer.text)} chars"


def _run_dir(path: Path) -> Path:
    return checks.run_dir(path, journal_only=True)
