"""Paired comparison of each strategy with a baseline strategy run with the same model.

A pair is a (task, seed) whose cell is in the grid for both strategies and whose two runs are
both *complete* (finished and graded, ``reports.validity.complete``). A pair with a missing,
unfinished or ungraded run is never a paired outcome: counting it as "no medal, percentile 0"
(MLE-bench's rule for leaderboard rates) would turn a sweep stopped early into a significant
difference. Such pairs are counted (``incomplete``, by side) and the comparison carries an
"incomplete" caveat; the tests and intervals use the complete pairs only. Per pair, the difference
(strategy − baseline) of any-medal (0/1, reported in percentage points) and of leaderboard
percentile. Reported per comparison:

* the mean difference and its 95% cluster-bootstrap CI (tasks resampled with their seeds kept
  together, 10 000 resamples, fixed RNG seed: the same runs give the same interval);
* wins / ties / losses by percentile per pair (a tie is an exactly equal percentile) and the
  per-task mean differences;
* ``identical_trees``: the pairs whose two runs built the same search tree (same
  :func:`~podium.experiments.reports.record.tree_fingerprint`). Such a pair's difference is 0
  because the strategies made the same choices there, not because they are equally good; when
  every pair is identical the comparison says so instead of an interval of zeros;
* exact tests of the per-pair percentile differences (``sign_test_p``, ``permutation_p``) and a
  power estimate (``power``, see :func:`power_estimate`), because with few tasks or seeds the
  bootstrap interval is too narrow to read alone; such a comparison carries a caveat.

``caveats`` holds, in words, everything a reader must know before quoting the comparison.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from podium.errors import UserError
from podium.experiments.reports.record import Cell
from podium.experiments.reports.runs import RunSet
from podium.experiments.reports.stats import (
    ALPHA,
    POWER,
    achieved_power,
    bootstrap_ci,
    pairs_needed,
    permutation_test,
    sign_test,
)
from podium.experiments.reports.validity import complete

SMALL_N = 5  # fewer tasks, or fewer pairs (seeds) per task, than this: the CI is too narrow
FIXED_DELTA = 10.0  # percentile points: the power estimate's fixed effect size


@dataclass(frozen=True)
class Pair:
    """One (task, seed): each side's any-medal (0/1), leaderboard percentile and search-tree
    fingerprint (None: no run, or no readable journal); ``both_ran``: both runs exist."""

    task: str
    seed: int
    medal: int
    baseline_medal: int
    percentile: float
    baseline_percentile: float
    tree: str | None = None
    baseline_tree: str | None = None
    both_ran: bool = False

    @property
    def medal_diff(self) -> float:
        return float(self.medal - self.baseline_medal)

    @property
    def percentile_diff(self) -> float:
        return self.percentile - self.baseline_percentile

    @property
    def identical_tree(self) -> bool:
        """Both runs built the same search tree (both fingerprints known and equal)."""
        return self.tree is not None and self.tree == self.baseline_tree

    @property
    def tree_unchecked(self) -> bool:
        """Both runs exist but at least one has no fingerprint: identity could not be checked."""
        return self.both_ran and (self.tree is None or self.baseline_tree is None)


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
    """``strategy`` against ``baseline`` with ``model`` over their complete (task, seed) pairs."""
    pairs, incomplete = _pairs(runs, baseline, strategy, model)
    return comparison(pairs, strategy, baseline, model, incomplete)


def comparison(
    pairs: list[Pair],
    strategy: str,
    baseline: str,
    model: str,
    incomplete: dict[str, int] | None = None,
) -> dict[str, Any]:
    """Every number of one comparison (see the module doc) from its complete pairs;
    ``incomplete``: the pairs left out, ``{"pairs", "strategy_missing", "baseline_missing"}``."""
    by_task = _by_task(pairs)
    left_out = incomplete or {"pairs": 0, "strategy_missing": 0, "baseline_missing": 0}
    result: dict[str, Any] = {
        "strategy": strategy,
        "baseline": baseline,
        "model": model,
        "n_pairs": len(pairs),
        "incomplete": dict(left_out),
        "n_tasks": len(by_task),
        "min_pairs_per_task": min((len(ps) for ps in by_task.values()), default=0),
        "identical_trees": sum(p.identical_tree for p in pairs),
        "unchecked_trees": sum(p.tree_unchecked for p in pairs),
    }
    result["all_identical"] = bool(pairs) and result["identical_trees"] == len(pairs)
    diffs = [p.percentile_diff for p in pairs]
    permutation = permutation_test(diffs)
    result.update(
        any_medal_pp=_difference(by_task, lambda p: 100 * p.medal_diff) if pairs else None,
        percentile=_difference(by_task, lambda p: p.percentile_diff) if pairs else None,
        wins=sum(d > 0 for d in diffs),
        ties=sum(d == 0 for d in diffs),
        losses=sum(d < 0 for d in diffs),
        sign_test_p=sign_test(diffs) if pairs else None,
        permutation_p=permutation.p if pairs else None,
        permutation_method=permutation.method if pairs else None,
        power=power_estimate(diffs),
        per_task=[_task_row(task, ps) for task, ps in sorted(by_task.items())],
    )
    result["caveats"] = caveats(result)
    return result


def power_estimate(diffs: list[float]) -> dict[str, Any] | None:
    """How many pairs the comparison would need, at the observed per-pair SD of the percentile
    difference (sample SD, ddof=1), to detect a difference of its observed |mean| and of
    :data:`FIXED_DELTA` points at α = 0.05 (two-sided) with 80% power, and the power it has now
    (normal approximation: ``stats.pairs_needed``, ``stats.achieved_power``). None with fewer
    than 2 pairs (no SD)."""
    if len(diffs) < 2:
        return None
    sd = statistics.stdev(diffs)
    n = len(diffs)

    def at(delta: float) -> dict[str, Any]:
        return {
            "delta": delta,
            "pairs_needed": pairs_needed(sd, delta),
            "power_now": achieved_power(sd, delta, n),
        }

    return {
        "sd": sd,
        "n_pairs": n,
        "alpha": ALPHA,
        "target_power": POWER,
        "method": "normal approximation, two-sided z-test: n = ⌈((z₀.₉₇₅ + z₀.₈) σ / δ)²⌉",
        "observed": at(abs(statistics.fmean(diffs))),
        "fixed": at(FIXED_DELTA),
    }


def caveats(c: dict[str, Any]) -> list[str]:
    """What a reader must know before quoting comparison ``c`` (its dict so far), in words."""
    found = []
    n = c["n_pairs"]
    left_out = c.get("incomplete") or {}
    if left_out.get("pairs"):
        found.append(
            f"incomplete: {left_out['pairs']} of {left_out['pairs'] + n} pairs left out "
            f"({c['strategy']} missing {left_out['strategy_missing']}, {c['baseline']} missing "
            f"{left_out['baseline_missing']}: not finished or not graded); the tests use the "
            f"{n} complete pairs only"
        )
    if not n:
        found.append("no complete pair: nothing to test")
    if c["identical_trees"]:
        found.append(
            f"{c['identical_trees']} of {n} pairs have identical trees: these strategies made "
            "the same choices there; the difference is not evidence of equivalence"
        )
    if c["unchecked_trees"]:
        found.append(
            f"{c['unchecked_trees']} of {n} pairs not checked for identical trees "
            "(a run without a readable journal)"
        )
    small = []
    if 0 < c["n_tasks"] < SMALL_N:
        small.append(f"only {_count(c['n_tasks'], 'task')}")
    if 0 < c["min_pairs_per_task"] < SMALL_N:
        small.append(f"as few as {_count(c['min_pairs_per_task'], 'seed')} per task")
    if small:
        found.append(
            f"small n ({', '.join(small)}; fewer than {SMALL_N}): a bootstrap over so few "
            "clusters gives too narrow an interval; read the exact tests (sign test "
            f"p = {_p(c['sign_test_p'])}, sign-flip permutation p = {_p(c['permutation_p'])})"
        )
    return found


def _count(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _p(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _pairs(
    runs: RunSet, baseline: str, strategy: str, model: str
) -> tuple[list[Pair], dict[str, int]]:
    """The complete pairs, and the count of those left out (by the side that is missing)."""
    base = {(c.task, c.seed): c for c in runs.cells(baseline, model)}
    pairs = []
    left_out = {"pairs": 0, "strategy_missing": 0, "baseline_missing": 0}
    for cell in runs.cells(strategy, model):
        other = base.get((cell.task, cell.seed))
        if other is None:
            continue
        mine, theirs = complete(runs.run(cell)), complete(runs.run(other))
        if mine and theirs:
            pairs.append(_pair(runs, cell, other))
            continue
        left_out["pairs"] += 1
        left_out["strategy_missing"] += not mine
        left_out["baseline_missing"] += not theirs
    return sorted(pairs, key=lambda p: (p.task, p.seed)), left_out


def _pair(runs: RunSet, cell: Cell, base: Cell) -> Pair:
    run, base_run = runs.run(cell), runs.run(base)
    return Pair(
        task=cell.task,
        seed=cell.seed,
        medal=int(runs.outcome(cell, "any_medal")),
        baseline_medal=int(runs.outcome(base, "any_medal")),
        percentile=runs.percentile(cell),
        baseline_percentile=runs.percentile(base),
        tree=run.tree if run is not None else None,
        baseline_tree=base_run.tree if base_run is not None else None,
        both_ran=run is not None and base_run is not None,
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
        "identical_trees": sum(p.identical_tree for p in pairs),
    }
