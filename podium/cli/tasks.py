"""``podium tasks`` and ``podium plugins``: what there is to run, and where it comes from."""

from __future__ import annotations

from typing import Annotated

import typer

from podium.cli import checks
from podium.cli.console import print_columns
from podium.cli.options import DATA_DIR_HINT, DataDir, Plugins


def tasks(
    benchmark: Annotated[str, typer.Argument(help="A benchmark, or benchmark:split.")] = "mini",
    split: Annotated[
        str | None, typer.Option(help="Only this split (MLE-bench: low (= lite), medium, high...).")
    ] = None,
    data_dir: DataDir = None,
    plugins: Plugins = None,
) -> None:
    """List a benchmark's tasks: id, split, type, metric, direction, rows, teams, status."""
    from podium.api.runs import load_registry

    checks.optional_directory(data_dir, "--data-dir", DATA_DIR_HINT)
    name, _, inline_split = benchmark.partition(":")
    bench = load_registry(plugins or []).benchmark(name)
    rows = [("id", "split", "type", "metric", "direction", "rows", "teams", "status")]
    for task_id in bench.task_ids(split or inline_split or None):
        t = bench.summary(task_id, data_dir)
        direction = {True: "lower is better", False: "higher is better", None: "?"}
        rows.append((t.id, t.complexity or "-", t.task_type, t.metric,
                     direction[t.lower_is_better], str(t.rows or "?"), str(t.teams or "?"),
                     t.status))  # fmt: skip
    print_columns(rows)


def plugins(plugins: Plugins = None) -> None:
    """List every backend, strategy, sandbox, benchmark and operator set, and its origin."""
    from podium.api.runs import load_registry

    print_columns(
        [("kind", "name", "origin", "description"), *load_registry(plugins or []).listing()]
    )
