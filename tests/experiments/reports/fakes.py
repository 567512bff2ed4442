"""Fake run dirs and sweep dirs for report tests: every file a report reads, written in one
place with the layout ``podium run`` and ``podium bench`` use (summary.json, grade.json,
config.toml, host.json, curve.json, journal.sqlite; sweep.json). The journal is written by the
real :class:`~podium.scaffolds.Journal`, as a run writes it."""

from __future__ import annotations

import itertools
import json
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import tomli_w

from podium.formats import Journal, RunDir
from podium.records import Metric, Node, NodeState

HOST = {
    "cpu": "Fake CPU 3000",
    "cpus": 2,
    "memory_gb": 8.0,
    "gpus": [],
    "os": "Linux 6.1",
    "python": "3.11.7",
}
MEDALS = ("gold", "silver", "bronze")
EXECUTOR = {"name": "local", "parallel": 2, "cpus_per_run": 1, "gpus_per_run": 0}


@dataclass(frozen=True)
class TreeNode:
    """One journal node: its operator, parents (node ids, 1-based), code and validation metric
    (None: buggy)."""

    operator: str = "draft"
    parents: tuple[int, ...] = ()
    code: str = "print(1)\n"
    metric: float | None = 0.5


def tree(*codes: str) -> list[TreeNode]:
    """A small tree: a draft per code after the first, which each later node improves."""
    first, *rest = codes
    return [TreeNode(code=first), *(TreeNode("improve", (1,), code) for code in rest)]


@dataclass
class Spec:
    """One fake run. ``medal`` None means no medal; ``curve`` is (step, elapsed_s, percentile)
    points; ``grade_json`` False leaves only summary.json's short grade section."""

    task: str = "mini/a"
    strategy: str = "greedy"
    model: str = "baseline"
    seed: int = 0
    status: str = "finished"
    medal: str | None = None
    valid: bool = True
    above_median: bool = False
    percentile: float | None = 50.0
    graded: bool = True
    grade_json: bool = True
    complexity: str | None = None
    sandbox: str = "bwrap"
    sandboxed: bool = True
    input_tokens: int = 100
    output_tokens: int = 50
    usd: float = 0.01
    elapsed_s: float = 10.0
    nodes: int = 4
    buggy: int = 1
    search: dict[str, Any] = field(default_factory=lambda: {"num_drafts": 2})
    host: dict[str, Any] | None = field(default_factory=lambda: dict(HOST))
    curve: list[tuple[int, float, float]] | None = None
    journal: Sequence[TreeNode] | None = None  # None: the run dir has no journal.sqlite
    budget: dict[str, Any] = field(default_factory=lambda: {"steps": 4})  # config's [budget]
    plugins: dict[str, Any] | None = None  # summary.json's versions.plugins (None: left out)

    @property
    def dirname(self) -> str:
        return f"{self.task.rsplit('/', 1)[-1]}.{self.strategy}.{self.model}.s{self.seed}"


def write_run(path: Path, spec: Spec) -> Path:
    """Write the run dir of ``spec`` at ``path``."""
    path.mkdir(parents=True, exist_ok=True)
    _json(path / "summary.json", _summary(spec))
    (path / "config.toml").write_text(tomli_w.dumps(_config(spec)), encoding="utf-8")
    if spec.graded and spec.grade_json:
        _json(path / "grade.json", _grade(spec))
    if spec.host is not None:
        _json(path / "host.json", spec.host)
    if spec.curve is not None:
        points = [
            {
                "step": s,
                "node_id": s,
                "elapsed_s": t,
                "best_node_id": s,
                "score": None,
                "percentile": p,
                "medal": None,
            }
            for s, t, p in spec.curve
        ]
        _json(
            path / "curve.json",
            {"lower_is_better": False, "leaderboard_entries": 100, "points": points},
        )
    if spec.journal is not None:
        write_journal(path, spec.journal)
    return path


def write_journal(path: Path, nodes: Sequence[TreeNode]) -> None:
    """The run dir's journal holding ``nodes`` (ids 1.., all finished), written through the
    journal's own API as the search loop writes it (begin, then update when done)."""
    journal = Journal.create(RunDir(path).journal, {"podium_version": "test", "task_id": "fake"})
    rng = random.Random(0).getstate()
    try:
        for node_id, spec in enumerate(nodes, start=1):
            node = Node(id=node_id, parent_ids=spec.parents, operator=spec.operator)
            journal.begin(node, rng, rng, elapsed_s=float(node_id))
            metric = (
                None if spec.metric is None else Metric(value=spec.metric, lower_is_better=False)
            )
            done = node.model_copy(
                update={
                    "state": NodeState.DONE,
                    "step": node_id,
                    "code": spec.code,
                    "metric": metric,
                    "is_buggy": metric is None,
                }
            )
            journal.update(done, elapsed_s=float(node_id))
    finally:
        journal.close()


def write_sweep(
    root: Path,
    tasks: Sequence[str],
    strategies: Sequence[str],
    seeds: Sequence[int],
    runs: Mapping[tuple[str, str, int], Spec | str],
    models: Sequence[str] = ("baseline",),
    executor: Mapping[str, Any] | None = EXECUTOR,
) -> Path:
    """A sweep dir with the full grid in sweep.json. ``runs`` maps (task, strategy, seed) to the
    run to write, or to a manifest state (a cell without a run dir); unlisted cells are
    ``pending`` without a run dir. ``executor``: the manifest's (None: left out)."""
    entries = []
    for task, strategy, model, seed in itertools.product(tasks, strategies, models, seeds):
        spec_or_state = runs.get((task, strategy, seed), "pending")
        spec = Spec(task=task, strategy=strategy, model=model, seed=seed)
        state = spec_or_state if isinstance(spec_or_state, str) else spec_or_state.status
        if isinstance(spec_or_state, Spec):
            spec = spec_or_state
            write_run(root / "runs" / spec.dirname, spec)
        entries.append(
            {
                "id": spec.dirname,
                "task": task,
                "strategy": strategy,
                "model": model,
                "seed": seed,
                "path": f"runs/{spec.dirname}",
                "state": state,
                "attempts": 1,
                "exit_code": None,
                "medal": spec.medal,
                "error": None,
            }
        )
    manifest = {
        "format": "podium-sweep/1",
        "podium_version": "0.1.0",
        "tasks_spec": ",".join(tasks),
        "grid": {
            "tasks": list(tasks),
            "strategies": list(strategies),
            "models": list(models),
            "seeds": list(seeds),
        },
        "executor": dict(executor) if executor is not None else None,
        "hardware": {**HOST, "cpu": "Driver CPU"},
        "runs": entries,
    }
    root.mkdir(parents=True, exist_ok=True)
    _json(root / "sweep.json", manifest)
    return root


def _json(path: Path, data: Any) -> None:
    path.write_text(json.dumps(data, indent=1), encoding="utf-8")


def _summary(spec: Spec) -> dict[str, Any]:
    summary: dict[str, Any] = {
        "task": spec.task,
        "competition_id": spec.task.rsplit("/", 1)[-1],
        "task_type": "tabular",
        "complexity": spec.complexity,
        "obfuscated_description": False,
        "model": spec.model,
        "review_model": spec.model,
        "strategy": spec.strategy,
        "sandbox": spec.sandbox,
        "sandboxed": spec.sandboxed,
        "seed": spec.seed,
        "workers": 1,
        "budget": {"time": None, "cost": None, **spec.budget},
        "status": spec.status,
        "steps": spec.nodes,
        "good_nodes": spec.nodes - spec.buggy,
        "buggy_nodes": spec.buggy,
        "elapsed_s": spec.elapsed_s,
        "usage": {
            "input_tokens": spec.input_tokens,
            "output_tokens": spec.output_tokens,
            "cost_usd": spec.usd,
            "calls": 3,
        },
        "versions": {"podium": "0.1.0", "python": "3.11.7", "journal_schema": 1},
    }
    if spec.plugins is not None:
        summary["versions"]["plugins"] = spec.plugins
    if spec.graded:
        grade = {
            k: v
            for k, v in _grade(spec).items()
            if k
            in (
                "score",
                "valid_submission",
                "any_medal",
                "above_median",
                "sandboxed",
                "leaderboard_percentile",
            )
        }
        summary["grade"] = {**grade, "medal": spec.medal}
    return summary


def _grade(spec: Spec) -> dict[str, Any]:
    grade: dict[str, Any] = {
        "competition_id": spec.task.rsplit("/", 1)[-1],
        "score": 0.8 if spec.valid else None,
        "gold_threshold": 0.9,
        "silver_threshold": 0.85,
        "bronze_threshold": 0.8,
        "median_threshold": 0.7,
        "any_medal": spec.medal is not None,
        "above_median": spec.above_median,
        "submission_exists": spec.valid,
        "valid_submission": spec.valid,
        "is_lower_better": False,
        "created_at": "2026-11-30T09:00:00+00:00",
        "submission_path": "best/submission.csv",
        "sandboxed": spec.sandboxed,
        "error": None,
    }
    grade.update({f"{m}_medal": spec.medal == m for m in MEDALS})
    if spec.percentile is not None:
        grade["leaderboard_percentile"] = spec.percentile if spec.valid else 0.0
    return grade


def _config(spec: Spec) -> dict[str, Any]:
    return {
        "task": spec.task,
        "seed": spec.seed,
        "workers": 1,
        "model": {"name": spec.model},
        "search": {"strategy": spec.strategy, **spec.search},
        "budget": dict(spec.budget),
        "exec": {"timeout": 60.0},
        "sandbox": {"name": spec.sandbox},
    }
