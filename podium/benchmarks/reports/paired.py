"""Paired comparison of each strategy with a baseline strategy run with the same model.

A pair is a (task, seed) whose cell is in the grid for both strategies; a missing or unfinished
run counts as no medal and percentile 0, as in the aggregates. Per pair, the difference
(strategy − baseline) of any-medal (0/1, reported in percentage points) and of leaderboard
percentile. Reported: the mean difference, its 95% cluster-bootstrap CI (tasks resampled with
their seeds kept together, 10 000 resamples, fixed RNG seed: the same runs give the same
interval), wins / ties / losses by percentile per pair (a tie is an exactly equal percentile),
and the per-task mean differences.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from podium.benchmarks.reports.record import Cell
from podium.benchmarks.reports.runs import RunSet
from podium.benchmarks.reports.stats import bootstrap_ci
from podium.errors import UserError


@dataclass(frozen=True)
class Pair:
    """One (task, seed): each side's any-medal (0/1) and leaderboard percentile."""

    task: str
    seed: int
    medal: int
    baseline_medal: int
    percentile: float
    baseline_percentile: float

    @property
    def medal_diff(self) -> float:
        return float(self.medal - self.baseline_medal)

    @property
    def percentile_diff(self) -> float:
        return self.percentile - self.baseline_percentile


def paired(runs: RunSet, baseline: str) -> dict[str, Any]:
    """``{"baseline", "comparisons": [...]}``, one comparison per (strategy, model) that has a
    baseline group with the same model. Raises UserError when ``baseline`` is not a strategy of
    these runs, or when no other strategy ran with a model the baseline ran with."""
    groups = runs.groups()
    if baseline not in {s for s, _ in groups}:
        raise UserError(
            f"baseline strategy {baseline!r} is not in these runs",
            hint=f"strategies present: {', '.join(runs.strategies())}",
        )
    models = {m for s, m in groups if s == baseline}
    comparisons = [
        compare(runs, baseline, s, m) for s, m in groups if s != baseline and m in models
    ]
    if not comparisons:
        raise UserError(
            f"nothing to compare with {baseline!r}: no other strategy ran with its model "
            f"({', '.join(sorted(models))})",
            hint="--baseline compares strategies run with the same model on the same tasks",
        )
    return {"baseline": baseline, "comparisons": comparisons}


def compare(runs: RunSet, baseline: str, strategy: str, model: str) -> dict[str, Any]:
    """``strategy`` against ``baseline`` with ``model`` over their common (task, seed) pairs."""
    pairs = _pairs(runs, baseline, strategy, model)
    result: dict[str, Any] = {
        "strategy": strategy,
        "baseline": baseline,
        "model": model,
        "n_pairs": len(pairs),
        "n_tasks": len({p.task for p in pairs}),
    }
    if not pairs:
        return {
            **result,
            "any_medal_pp": None,
            "percentile": None,
            "wins": 0,
            "ties": 0,
            "losses": 0,
            "per_task": [],
        }
    by_task = _by_task(pairs)
    result["any_medal_pp"] = _difference(by_task, lambda p: 100 * p.medal_diff)
    result["percentile"] = _difference(by_task, lambda p: p.percentile_diff)
    result["wins"] = sum(p.percentile_diff > 0 for p in pairs)
    result["ties"] = sum(p.percentile_diff == 0 for p in pairs)
    result["losses"] = sum(p.percentile_diff < 0 for p in pairs)
    result["per_task"] = [_task_row(task, ps) for task, ps in sorted(by_task.items())]
    return result


def _pairs(runs: RunSet, baseline: str, strategy: str, model: str) -> list[Pair]:
    base = {(c.task, c.seed): c for c in runs.cells(baseline, model)}
    pairs = []
    for cell in runs.cells(strategy, model):
        other = base.get((cell.task, cell.seed))
        if other is not None:
            pairs.append(_pair(runs, cell, other))
    return sorted(pairs, key=lambda p: (p.task, p.seed))


def _pair(runs: RunSet, cell: Cell, base: Cell) -> Pair:
    return Pair(
        task=cell.task,
        seed=cell.seed,
        medal=int(runs.outcome(cell, "any_medal")),
        baseline_medal=int(runs.outcome(base, "any_medal")),
        percentile=runs.percentile(cell),
        baseline_percentile=runs.percentile(base),
    )


def _by_task(pairs: list[Pair]) -> dict[str, list[Pair]]:
    grouped: dict[str, list[Pair]] = defaultdict(list)
    for pair in pairs:
        grouped[pair.task].append(pair)
    return dict(grouped)


def _difference(by_task: dict[str, list[Pair]], value: Callable[[Pair], float]) -> dict[str, Any]:
    clusters = [[value(p) for p in ps] for _, ps in sorted(by_task.items())]
    values = [v for cluster in clusters for v in cluster]
    low, high = bootstrap_ci(clusters)
    return {"mean_diff": sum(values) / len(values), "ci95": [low, high]}


def _task_row(task: str, pairs: list[Pair]) -> dict[str, Any]:
    n = len(pairs)
    return {
        "task": task,
        "pairs": n,
        "any_medal_pp": 100 * sum(p.medal_diff for p in pairs) / n,
        "percentile_diff": sum(p.percentile_diff for p in pairs) / n,
        "baseline_percentile": sum(p.baseline_percentile for p in pairs) / n,
        "percentile": sum(p.percentile for p in pairs) / n,
    }
