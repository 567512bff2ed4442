"""The numbers of a report: per (strategy, model), overall and per complexity split.

For the cells of one group and split (the grid's, so missing, unfinished and failed runs count
as no medal and percentile 0):

* per seed s, pct(outcome) = 100 × #tasks whose seed-s run has the outcome / #tasks of seed s
  (MLE-bench's method), for each of :data:`~podium.experiments.reports.record.OUTCOMES`; across
  seeds mean ± SEM (ddof=1; None with one seed), per-seed values kept;
* pass@k for k = 1..n (n = the fewest seeds a task has): per task 1 − C(n−c, k)/C(n, k) with c
  its medals over its n seeds, averaged over tasks, as a percentage;
* leaderboard percentile: per seed the mean over tasks, then mean ± SEM;
* cost and effort over the runs that exist (a failed run spent money too): means and totals of
  tokens, USD, wall seconds and nodes, and the buggy rate Σbuggy / Σnodes;
* run counts: expected (grid cells), finished, failed, missing (everything else: no run dir,
  interrupted, still running), and ``incomplete``: the cells without a complete run (finished
  and graded, ``reports.validity``), which paired statistics leave out;
* MLE-bench's aggregate counts under its names (``total_runs``, ``total_medals``, ...; the
  same numbers ``podium.benchmarks.aggregate_reports`` gives), so its readers find them. The
  per-run ``competition_reports`` are left out: each run's full report is its ``grade.json``,
  and the report's ``runs`` list already names every run with its outcome.

Every value is JSON-ready (str keys, floats, None).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from typing import Any, TypeVar

from podium.experiments.reports.record import OUTCOMES, Cell
from podium.experiments.reports.runs import RunSet
from podium.experiments.reports.stats import mean_sem, pass_at_k
from podium.experiments.reports.validity import complete

K = TypeVar("K")

ALL = "all"
SPLIT_ORDER = ("low", "medium", "high")  # MLE-bench's complexities, in this order

# MLE-bench's summary counts: field name → the outcome counted (None: every expected run).
MLEBENCH_TOTALS = {
    "total_runs": None,
    "total_runs_with_submissions": "submission_exists",
    "total_valid_submissions": "valid_submission",
    "total_medals": "any_medal",
    "total_gold_medals": "gold_medal",
    "total_silver_medals": "silver_medal",
    "total_bronze_medals": "bronze_medal",
    "total_above_median": "above_median",
}


def aggregate(runs: RunSet) -> list[dict[str, Any]]:
    """One entry per (strategy, model): ``{"strategy", "model", "splits": {"all": {...},
    "low": {...}, ...}}``, splits in MLE-bench's order, then any other names sorted."""
    return [
        {"strategy": strategy, "model": model, "splits": _splits(runs, runs.cells(strategy, model))}
        for strategy, model in runs.groups()
    ]


def _splits(runs: RunSet, cells: list[Cell]) -> dict[str, dict[str, Any]]:
    by_split: dict[str, list[Cell]] = defaultdict(list)
    for cell in cells:
        complexity = runs.complexity(cell.task)
        if complexity is not None:
            by_split[complexity].append(cell)
    order = sorted(by_split, key=_split_key)
    return {ALL: split_stats(runs, cells), **{s: split_stats(runs, by_split[s]) for s in order}}


def _split_key(name: str) -> tuple[int, str]:
    return (SPLIT_ORDER.index(name), "") if name in SPLIT_ORDER else (len(SPLIT_ORDER), name)


def split_stats(runs: RunSet, cells: list[Cell]) -> dict[str, Any]:
    """Every number of one group and split (see the module doc); ``cells`` must not be empty."""
    by_seed = _by(cells, lambda c: c.seed)
    by_task = _by(cells, lambda c: c.task)
    stats: dict[str, Any] = {
        "tasks": sorted(by_task),
        "seeds": sorted(by_seed),
        "n_tasks": len(by_task),
        "n_seeds": len(by_seed),
    }
    for name in OUTCOMES:
        stats[name] = _over_seeds(
            {s: 100 * sum(runs.outcome(c, name) for c in cs) / len(cs) for s, cs in by_seed.items()}
        )
    stats["pass_at_k"] = _pass_at_k(runs, by_task)
    stats["leaderboard_percentile"] = _over_seeds(
        {s: sum(runs.percentile(c) for c in cs) / len(cs) for s, cs in by_seed.items()}
    )
    stats["cost"] = _cost(runs, cells)
    stats["runs"] = _counts(runs, cells)
    stats.update(_mlebench_totals(runs, cells))
    return stats


def _by(cells: list[Cell], key: Callable[[Cell], K]) -> dict[K, list[Cell]]:
    groups: dict[K, list[Cell]] = defaultdict(list)
    for cell in cells:
        groups[key(cell)].append(cell)
    return dict(groups)


def _over_seeds(per_seed: dict[int, float]) -> dict[str, Any]:
    mean, sem = mean_sem(list(per_seed.values()))
    return {"mean": mean, "sem": sem, "per_seed": {str(s): v for s, v in sorted(per_seed.items())}}


def _pass_at_k(runs: RunSet, by_task: dict[str, list[Cell]]) -> dict[str, float]:
    """pass@k (%) for k = 1..the fewest seeds any task has (larger k is undefined for it)."""
    medals = {
        t: (len(cs), sum(runs.outcome(c, "any_medal") for c in cs)) for t, cs in by_task.items()
    }
    n_max = min(n for n, _ in medals.values())
    return {
        str(k): 100 * sum(pass_at_k(n, c, k) for n, c in medals.values()) / len(medals)
        for k in range(1, n_max + 1)
    }


def _cost(runs: RunSet, cells: list[Cell]) -> dict[str, Any]:
    existing = [r for c in cells if (r := runs.run(c)) is not None]
    totals = {
        "tokens": sum(r.tokens for r in existing),
        "usd": sum(r.usd for r in existing),
        "elapsed_s": sum(r.elapsed_s for r in existing),
        "nodes": sum(r.nodes for r in existing),
        "buggy": sum(r.buggy for r in existing),
    }
    n = len(existing)
    cost: dict[str, Any] = {"runs": n}
    for name in ("tokens", "usd", "elapsed_s", "nodes"):
        cost[f"mean_{name}"] = totals[name] / n if n else None
    cost["buggy_rate"] = totals["buggy"] / totals["nodes"] if totals["nodes"] else None
    cost.update({f"total_{name}": value for name, value in totals.items()})
    return cost


def _counts(runs: RunSet, cells: list[Cell]) -> dict[str, int]:
    statuses = [runs.status(c) for c in cells]
    finished, failed = statuses.count("finished"), statuses.count("failed")
    return {
        "expected": len(cells),
        "finished": finished,
        "failed": failed,
        "missing": len(cells) - finished - failed,
        "incomplete": sum(not complete(runs.run(c)) for c in cells),
    }


def _mlebench_totals(runs: RunSet, cells: list[Cell]) -> dict[str, int]:
    totals = {}
    for name, outcome in MLEBENCH_TOTALS.items():
        if outcome is None:
            totals[name] = len(cells)
        elif outcome == "submission_exists":
            totals[name] = sum(_has_submission(runs, c) for c in cells)
        else:
            totals[name] = sum(runs.outcome(c, outcome) for c in cells)
    return totals


def _has_submission(runs: RunSet, cell: Cell) -> bool:
    run = runs.run(cell)
    return run is not None and run.finished and run.submission_exists


def task_table(runs: RunSet) -> list[dict[str, Any]]:
    """Per task × (strategy, model): the mean test score and leaderboard percentile over its
    complete runs (None without one: a missing run has no score, not a score of 0), and how many
    of its cells have a complete run. Scores are in the task's own metric, so they are compared
    within a task only, never averaged across tasks."""
    rows = []
    for task in sorted({c.task for c in runs.grid}):
        for strategy, model in runs.groups():
            cells = [c for c in runs.cells(strategy, model) if c.task == task]
            if not cells:
                continue
            done = [r for c in cells if complete(r := runs.run(c)) and r is not None]
            scores = [r.score for r in done if r.score is not None]
            rows.append(
                {
                    "task": task,
                    "strategy": strategy,
                    "model": model,
                    "complete": len(done),
                    "expected": len(cells),
                    "score": sum(scores) / len(scores) if scores else None,
                    "percentile": sum(r.percentile() for r in done) / len(done) if done else None,
                    "medals": sum(r.any_medal for r in done),
                }
            )
    return rows
