"""``podium rerun``: run one recorded node's code again on a fresh kernel, and compare.

A debugging tool: did that score come from the code, or from luck, a warm cache or a file left
by an earlier node? The node's code runs in a fresh sandbox (the run's own by default) on the
run's task data, exactly as the loop ran it: through the loop's own
:func:`podium.scaffolds.execute_solution` (same timeout and output cap, same masking of secrets,
same failed result when the sandbox fails), with the same ``input/``, in
``nodes/<id>/reruns/<n>/`` (n = 1, 2, … never overwritten). The journal is only read, so a rerun
works on a finished run and on one still going.

Contract: :func:`rerun_node` returns a :class:`RerunReport` (also written as ``rerun.json`` in the
rerun's directory). ``reproduced`` is true when the execution status and the metric (within a
relative ``tolerance``) are those recorded; outputs and submissions are compared and reported but
do not decide it (an output that prints a time always differs).
"""

from __future__ import annotations

import asyncio
import difflib
import logging
import math
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from podium.api.config import RunConfig, read_config_file, validate_config
from podium.api.runs import load_registry
from podium.benchmarks import make_holdout, resolve_task
from podium.errors import RunDirError, TaskError, UserError
from podium.formats import RunDir, run_files
from podium.interfaces import SUBMISSION, Holdout, Task, Workspace
from podium.plugins import Registry
from podium.records import ExecResult, Node, NodeState
from podium.scaffolds import execute_solution, metric_from_output, submission_problem
from podium.untrusted import Inert, InertOrNone, open_untrusted
from podium.viewer.run_data import RunView, open_run

log = logging.getLogger("podium")

DEFAULT_TOLERANCE = 1e-9


class RerunReport(BaseModel):
    """What a rerun found, then (recorded) against now. Paths are absolute."""

    model_config = ConfigDict(extra="forbid")

    run_dir: str
    node_id: int
    rerun: int  # n in nodes/<id>/reruns/<n>
    rerun_dir: str
    sandbox: str
    sandbox_detail: str
    sandboxed: bool
    timeout_s: float
    tolerance: float
    status_then: str
    status_now: str
    error_then: InertOrNone = None  # "ValueError: boom", or why the kernel was killed
    error_now: InertOrNone = None
    metric_then: float | None
    metric_now: float | None
    metric_problem_now: InertOrNone = None  # an unusable VALIDATION_METRIC line
    metric_difference: float | None = None  # now - then
    submission_then: bool
    submission_now: bool
    submission_identical: bool | None = None  # None unless both exist
    submission_problem_now: InertOrNone = None  # the format check on the new file, or why
    # the sandbox refused what the solution left
    duration_then_s: float
    duration_now_s: float
    output_identical: bool
    output_diff: list[Inert]  # unified diff, recorded output.txt -> the new one
    reproduced: bool

    @property
    def why_not(self) -> list[str]:
        """What did not reproduce, one phrase each (empty when reproduced)."""
        reasons = []
        if self.status_then != self.status_now:
            reasons.append(f"status {self.status_then} → {self.status_now}")
        if not metrics_match(self.metric_then, self.metric_now, self.tolerance):
            reasons.append(f"metric {_number(self.metric_then)} → {_number(self.metric_now)}")
        return reasons


def rerun_node(
    run_dir: Path,
    node_id: int,
    sandbox: str | None = None,
    timeout_s: float | None = None,
    tolerance: float = DEFAULT_TOLERANCE,
) -> RerunReport:
    """Execute node ``node_id``'s code again and compare with the record (see the module doc).

    ``sandbox`` names another sandbox than the run's; ``timeout_s`` replaces the run's
    ``exec.timeout``. Bad input (no such run or node, a node with no code or never executed,
    task data that cannot be found) is a one-line :class:`UserError`.
    """
    view = open_run(run_dir)
    node = runnable_node(view, node_id)
    cfg = _run_config(view)
    registry = load_registry(cfg.plugins)
    task = _load_task(view, cfg, registry)
    box = registry.sandbox(sandbox or cfg.sandbox.name).create(cfg.sandbox.model_dump())
    box.hide(task.secret_paths())
    if box.notice:
        log.warning("%s", box.notice)
    if not box.isolated:
        log.warning(
            "sandbox %r isolates nothing: node %d's code runs unconfined on this machine",
            box.name,
            node_id,
        )
    timeout = timeout_s if timeout_s is not None else cfg.exec.timeout
    rd = RunDir(view.root)
    number, root = _new_rerun_dir(rd.reruns_dir(node_id))
    rd.write_file(root / run_files.SOLUTION, node.code)
    workspace = Workspace(root, task.public_dir, cfg.exec.keep_working)
    result = asyncio.run(
        execute_solution(
            box,
            node.code,
            workspace,
            timeout_s=timeout,
            max_output_bytes=cfg.exec.max_output_bytes,
            close_sandbox=True,
        )
    )
    rd.write_file(root / run_files.OUTPUT, result.output)
    report = RerunReport(
        run_dir=str(view.root.resolve()), node_id=node_id, rerun=number,
        rerun_dir=str(root.resolve()),
        sandbox=box.name, sandbox_detail=box.describe(), sandboxed=box.isolated,
        timeout_s=timeout, tolerance=tolerance,
        **_compare(view, node, result, root, task, tolerance),
    )  # fmt: skip
    rd.write_file(root / run_files.RERUN_REPORT, report.model_dump_json(indent=2) + "\n")
    return report


def runnable_node(view: RunView, node_id: int) -> Node:
    """The node, if it has code and a recorded execution to compare with; else a one-line error."""
    node = view.node(node_id)
    if not node.code.strip():
        why = f" ({node.bug_reason})" if node.bug_reason else ""
        raise UserError(
            f"node {node_id} has no code to run{why}",
            hint=f"`podium show {view.root} {node_id}` shows what happened",
        )
    if node.exec is None:
        done = node.state is NodeState.DONE
        state = "it was never executed" if done else f"it has not finished ({node.state})"
        raise UserError(
            f"node {node_id} has no recorded execution to compare with: {state}",
            hint=f"its code is in {RunDir(view.root).node_file(node_id, run_files.SOLUTION)}",
        )
    return node


def metrics_match(then: float | None, now: float | None, tolerance: float) -> bool:
    """Both missing, or both numbers within ``tolerance`` relative to the larger."""
    if then is None or now is None:
        return then is None and now is None
    return math.isclose(then, now, rel_tol=tolerance, abs_tol=0.0)


def _run_config(view: RunView) -> RunConfig:
    rd = RunDir(view.root)
    if not rd.config.is_file():
        raise RunDirError(
            f"{view.root} has no {run_files.CONFIG}: its task and sandbox are unknown"
        )
    return validate_config(read_config_file(rd.config))


def _load_task(view: RunView, cfg: RunConfig, registry: Registry) -> Task:
    """The run's task with its public data, as config.toml names them."""
    where = f"task {cfg.task}" + (f", data_dir {cfg.data_dir}" if cfg.data_dir else "")
    hint = (
        f"the rerun needs the run's task data ({where}, from {RunDir(view.root).config}); "
        "run it from the directory the run was started in, or fix data_dir there"
    )
    try:
        task = resolve_task(cfg.task, registry, cfg.data_dir, cfg.obfuscated_description)
    except TaskError as exc:
        raise TaskError(f"cannot load the run's task: {exc.message}", hint=hint) from None
    if not task.public_dir.is_dir():
        raise TaskError(f"the task's public data is missing: {task.public_dir}", hint=hint)
    recorded = view.meta.get("task_id")
    if recorded and recorded != task.id:
        raise RunDirError(f"{view.root} is a run of {recorded}, but its config names {task.id}")
    if cfg.search.holdout:  # the data the node ran on: the run's own split, never a new one
        split = RunDir(view.root).holdout
        if not split.is_dir():
            raise RunDirError(f"{view.root} ran with search.holdout, but its {split.name}/ is gone")
        return make_holdout(task, split, cfg.search.holdout, cfg.seed).task
    return task


def _new_rerun_dir(reruns: Path) -> tuple[int, Path]:
    """``reruns/<n>`` for the first free n, created atomically (two reruns never share one)."""
    reruns.mkdir(parents=True, exist_ok=True)
    taken = [int(p.name) for p in reruns.iterdir() if p.name.isdigit()]
    number = max(taken, default=0) + 1
    while True:
        try:
            (reruns / str(number)).mkdir()
        except FileExistsError:
            number += 1
            continue
        return number, reruns / str(number)


def _compare(
    view: RunView,
    node: Node,
    now: ExecResult,
    root: Path,
    task: Task,
    tolerance: float,
) -> dict[str, Any]:
    """The report's then/now fields: status, metric, submission, duration, output."""
    then = node.exec
    assert then is not None
    metric_then = _metric(then.output)
    if metric_then is None and node.metric is not None:
        metric_then = node.metric.value  # the review's metric, when the output had no line
    found = metric_from_output(now.output)
    metric_now = found if isinstance(found, float) else None
    difference = None
    if metric_then is not None and metric_now is not None:
        difference = metric_now - metric_then
    return {
        "status_then": str(then.status),
        "status_now": str(now.status),
        "error_then": then.error_line,
        "error_now": now.error_line,
        "metric_then": metric_then,
        "metric_now": metric_now,
        "metric_problem_now": found if isinstance(found, str) else None,
        "metric_difference": difference,
        **_submissions(RunDir(view.root).node_dir(node.id), node, root, now, task),
        "duration_then_s": then.duration_s,
        "duration_now_s": now.duration_s,
        "output_identical": then.output == now.output,
        "output_diff": _diff(then.output, now.output, node.id, root.name),
        "reproduced": then.status == now.status
        and metrics_match(metric_then, metric_now, tolerance),
    }


def _submissions(
    node_dir: Path, node: Node, root: Path, now: ExecResult, task: Task
) -> dict[str, Any]:
    old, new = node_dir / SUBMISSION, root / SUBMISSION
    had, submitted = node.has_submission and old.is_file(), new.is_file()
    problem = submission_problem(task, new) if submitted else now.submission_refused
    holdout = getattr(task, "holdout", None)
    if submitted and problem is None and isinstance(holdout, Holdout):
        # as the loop kept the node's: the task's own rows, the held-out ones beside them
        holdout.separate(new, root / run_files.HELD_OUT_PREDICTIONS)
    return {
        "submission_then": had,
        "submission_now": submitted,
        "submission_identical": _identical(old, new) if had and submitted else None,
        "submission_problem_now": problem,
    }


def _identical(a: Path, b: Path) -> bool:
    with open_untrusted(a) as fa, open_untrusted(b) as fb:
        while True:
            chunk = fa.read(1 << 20)
            if chunk != fb.read(1 << 20):
                return False
            if not chunk:
                return True


def _metric(output: str) -> float | None:
    found = metric_from_output(output)
    return found if isinstance(found, float) else None


def _diff(then: str, now: str, node_id: int, number: str) -> list[str]:
    node = f"{run_files.NODES}/{node_id}"
    return list(
        difflib.unified_diff(
            then.splitlines(),
            now.splitlines(),
            fromfile=f"{node}/{run_files.OUTPUT} (recorded)",
            tofile=f"{node}/{run_files.RERUNS}/{number}/{run_files.OUTPUT} (now)",
            lineterm="",
        )
    )


def _number(value: float | None) -> str:
    return "none" if value is None else f"{value:.6g}"
