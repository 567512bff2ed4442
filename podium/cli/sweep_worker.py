"""One run of a sweep: ``python -m podium.cli.sweep_worker RUN_DIR``.

Reads ``RUN_DIR/plan.json`` (written by :func:`podium.api.sweep.plan`), starts the run — or resumes
it when an earlier attempt left a journal — then, on the host and after the run, writes
``curve.json`` (the best-so-far submission graded after each step) and ``host.json``. Progress
goes to stdout like ``podium run``'s; an executor appends it to ``RUN_DIR/run.log``. The exit
status says how it ended (:mod:`podium.experiments.sweeps.executor`).
"""

from __future__ import annotations

import json
import logging
import os
import sys
from pathlib import Path
from typing import Any

from podium.api import runs as api
from podium.api.config import RunConfig, validate_config
from podium.api.sweep import PLAN, refuse_unsandboxed
from podium.benchmarks import resolve_task
from podium.cli.console import print_error, print_node, print_start
from podium.errors import UserError
from podium.experiments.sweeps import (
    EXIT_FAILED,
    EXIT_FINISHED,
    EXIT_INTERRUPTED,
    EXIT_REFUSED,
    best_so_far_curve,
    describe_host,
)
from podium.formats import Journal, RunDir, RunSummary, run_files
from podium.interfaces import SUBMISSION
from podium.plugins import Registry
from podium.records import NodeState
from podium.redact import redact

log = logging.getLogger("podium")
EXIT_BY_STATUS = {"finished": EXIT_FINISHED, "interrupted": EXIT_INTERRUPTED}


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m podium.cli.sweep_worker RUN_DIR", file=sys.stderr)
        return EXIT_REFUSED
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s: %(message)s", force=True)
    run_dir = Path(args[0]).resolve()
    started = RunDir(run_dir).journal.exists()
    try:
        return work(run_dir)
    except UserError as exc:
        print_error(exc.message, exc.hint)
        started = started or RunDir(run_dir).journal.exists()
        return EXIT_FAILED if started else EXIT_REFUSED
    except Exception as exc:  # the summary says "failed"; the reason goes to the log
        print_error(f"{type(exc).__name__}: {exc}")
        return EXIT_FAILED


def work(run_dir: Path) -> int:
    cfg, plan = read_plan(run_dir)
    registry = api.load_registry(cfg.plugins)
    if not plan.get("allow_unsandboxed"):
        refuse_unsandboxed(cfg, registry)
    rd = RunDir(run_dir)
    rd.write_json(rd.root / run_files.HOST, describe_host())
    gpus = getattr(cfg.sandbox, "gpus", None)  # a plugin sandbox's own options may have none
    changes = {"sandbox.gpus": gpus} if gpus else {}
    if rd.journal.exists():
        result = api.resume(run_dir, changes, on_node=print_node, on_start=print_start)
    else:
        result = api.run(cfg, on_node=print_node, on_start=print_start)
    write_curve(run_dir, cfg, registry, result.record)
    status = str(result.record.status)
    print(f"status: {status}", flush=True)
    return EXIT_BY_STATUS.get(status, EXIT_FAILED)


def read_plan(run_dir: Path) -> tuple[RunConfig, dict[str, Any]]:
    try:
        plan = json.loads((run_dir / PLAN).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise UserError(f"{run_dir / PLAN}: cannot read the run's plan: {exc}") from None
    data = {**plan["config"], "out": str(run_dir)}
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if plan.get("gpus_per_run") and visible:  # the executor pinned this run to these GPUs
        data["sandbox"] = {**data.get("sandbox", {}), "gpus": visible}
    return validate_config(data), plan


def write_curve(run_dir: Path, cfg: RunConfig, registry: Registry, summary: RunSummary) -> None:
    """``curve.json``: grading each best-so-far node on the host, after the run. A task that
    cannot be graded, or a grader that fails, leaves no curve (a warning), never a lost run."""
    rd = RunDir(run_dir)
    try:
        task = resolve_task(cfg.task, registry, cfg.data_dir, cfg.obfuscated_description)
        journal = Journal.open(rd.journal)
        try:
            nodes = journal.nodes(NodeState.DONE)
        finally:
            journal.close()
        sandboxed = summary.sandboxed
        curve = best_so_far_curve(
            nodes,
            task.lower_is_better,
            lambda node: task.grade(rd.node_dir(node.id) / SUBMISSION, sandboxed=sandboxed),
            len(getattr(task, "leaderboard", ())) or None,  # folder tasks know their board
        )
    except Exception as exc:  # the run is done and kept; only its curve is missing
        reason = exc.message if isinstance(exc, UserError) else f"{type(exc).__name__}: {exc}"
        log.warning("no curve.json: %s", redact(reason))
        return
    rd.write_json(rd.root / run_files.CURVE, curve)


if __name__ == "__main__":
    sys.exit(main())
