"""``podium grade``: a submission graded on the private answers, as MLE-bench grades it."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from podium.cli import checks
from podium.cli.console import out, print_grade
from podium.cli.options import DATA_DIR_HINT, DataDir, Plugins
from podium.errors import UserError


def grade(
    task: Annotated[str, typer.Argument(help="benchmark/id, or a task folder.")],
    submission: Annotated[Path, typer.Argument(help="The submission CSV to grade.")],
    data_dir: DataDir = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
    plugins: Plugins = None,
) -> None:
    """Grade a submission on the private answers, exactly as MLE-bench grades.

    Exit 0 for a valid submission (whatever its score), 1 for an invalid one (the report says
    why), 2 when it cannot be graded at all (an unknown task; no such file, except with --json,
    which reports it as MLE-bench does: submission_exists false).
    """
    from podium.api.runs import load_registry
    from podium.benchmarks import resolve_task

    if not as_json:  # --json: MLE-bench's report, a missing submission's too (exit 1)
        checks.submission_file(submission)
    checks.optional_directory(data_dir, "--data-dir", DATA_DIR_HINT)
    loaded = resolve_task(task, load_registry(plugins or []), data_dir)
    try:  # your own file: links in its path followed
        path = submission.resolve()
    except (OSError, RuntimeError) as exc:  # a loop of links, a name too long
        raise UserError(
            f"cannot follow the path {submission}: {exc}", hint="give the submission's real path"
        ) from None
    report = loaded.grade(path)
    if report is None:
        raise UserError(
            f"task {loaded.id} cannot be graded (no private answers or leaderboard)",
            hint="grading needs a task with private answers: a benchmark task, or a task "
            "folder with grade.py and leaderboard.csv",
        )
    if as_json:  # as grade.json holds it: a NaN score stays NaN (as in MLE-bench's reports)
        out.print_json(data=report.model_dump(mode="json"))
    else:
        print_grade(report)
    if not report.valid_submission:
        raise typer.Exit(1)
