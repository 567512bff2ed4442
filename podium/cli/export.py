"""``podium export``: runs in other tools' formats."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from podium.errors import UserError

export_app = typer.Typer(
    help="Export runs for other tools (mlebench-jsonl: for `mlebench grade`).",
    no_args_is_help=True,
    rich_markup_mode=None,
)


@export_app.command(
    "mlebench-jsonl", short_help="One JSON line per MLE-bench run, for `mlebench grade`."
)
def mlebench_jsonl(
    paths: Annotated[
        list[Path], typer.Argument(help="Run directories, or sweep dirs holding them.")
    ],
) -> None:
    """One JSON line per MLE-bench run (competition_id, submission_path, logs_path, code_path)
    on stdout: regrade with `mlebench grade --submission FILE --output-dir DIR`."""
    from podium.benchmarks import find_run_dirs, mlebench_jsonl

    export = mlebench_jsonl(find_run_dirs(paths))
    if export.skipped:
        print(f"note: skipped {len(export.skipped)} runs of non-MLE-bench tasks: "
              f"{', '.join(export.skipped[:3])}{' ...' if len(export.skipped) > 3 else ''}",
              file=sys.stderr)  # fmt: skip
    if not export.lines:
        raise UserError(
            "none of these runs is of an MLE-bench task", hint="podium run mlebench/<id>"
        )
    if export.without_submission:
        print(f"note: {export.without_submission} runs have no submission; MLE-bench grades them "
              "as missing (no medal)", file=sys.stderr)  # fmt: skip
    for line in export.lines:
        sys.stdout.write(json.dumps(line) + "\n")
