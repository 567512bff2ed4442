"""A suite's discriminative power: can it tell greedy search from one draft, and from random
search, with the baseline model and a few seeds?

Runs (or continues, or only reads) one sweep of ``--suite`` × greedy, random and one-draft ×
``--seeds`` with ``--steps`` nodes per run, then reports:

* per task, strategy and seed: the private score and its leaderboard percentile, as
  ``podium compare`` counts them (a failed, missing or invalid run is percentile 0, no medal);
* paired differences (same task and seed) greedy − one-draft and greedy − random, in percentile
  points: mean ± SEM, their SD, wins / ties / losses, an exact sign-flip permutation test of the
  mean (all 2ⁿ sign assignments of the n non-zero differences when n ≤ 20, else a seeded Monte
  Carlo of 100 000 assignments; two-sided; the method is printed) and, for reference, scipy's
  exact Wilcoxon signed-rank p;
* from the SD: the pairs, and the seeds (pairs ÷ tasks), needed to detect a mean difference of
  ``--delta`` points (5) at α = 0.05, two-sided, with 80 % power, by the normal approximation
  n = ⌈((z₀.₉₇₅ + z₀.₈) · SD / δ)²⌉ (a z-test with the SD taken as known: read it as an order of
  magnitude, a t-test needs a pair or two more);
* each strategy's medal rate, MLE-bench's way: per seed the share of tasks medalled, then the
  mean ± SEM over seeds (as ``podium compare``);
* per task, Spearman's rank correlation between validation metric and private score over every
  good node of the task's greedy runs, pooled over seeds, and the mean of the per-run ones. The
  nodes' private scores are each run's ``selection.json`` (every good node graded by the task's
  grader after the run); a run without one is graded here through the same public interface
  (``podium.benchmarks.selection_report``), as is every run with ``--regrade``;
* the targets a suite for comparing strategies must meet: greedy beats one-draft at p < 0.01
  (with 5 seeds), one-draft's medal rate ≤ 30 %, no strategy at 100 %;
* per task, the private score's sampling noise: the standard error of greedy's first finished
  run's final submission, by half-sampling (the score of 200 seeded random halves of the private
  rows; for a smooth metric the SD of half-sample scores estimates the full test's SE, as the
  delete-n/2 jackknife does), and the leaderboard's gold-silver and silver-bronze gaps in SEs;
* a projection of the sweep's time at ``--project-seeds`` × ``--project-steps`` from the
  measured seconds per node (per task and strategy) and per-run overhead.

Usage:
    .venv/bin/python perf/suite_power.py --sweep DIR --suite SUITE [--seeds 5] [--steps 20]
        [--parallel N] [--also DIR ...] [--data-dir D] [--read-only] [--regrade] [--delta 5]
        [--project-seeds 5] [--project-steps 20] [--json FILE]

``--also DIR`` (repeatable) adds another sweep's runs to the analysis (a suite swept in
parts, e.g. tasks whose leaderboards were rebuilt later); only ``--sweep`` is run.
``--sweep DIR`` that holds no sweep yet: ``podium bench`` makes it. One that does:
``podium bench --resume`` continues it (finished runs are kept; its own grid wins over the
flags), so the script can be stopped at any time and run again. ``--read-only``: no run at all,
only the analysis of what DIR holds (Ctrl-C during the sweep stops ``podium bench`` cleanly,
then the analysis reads what finished). Every figure printed, and more, goes to ``--json``
(default ``/tmp/suite_power.json``) with the machine (CPU model, cores) and the command.
"""

from __future__ import annotations

import argparse
import json
import math
import shlex
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from statistics import NormalDist
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tools/, the repository's
from machine import machine

from podium.api import load_registry
from podium.benchmarks import FolderTask, resolve_task, selection_report
from podium.benchmarks.grading import medal_thresholds, read_leaderboard
from podium.errors import UserError
from podium.experiments.reports import build_report, permutation_test
from podium.formats import MANIFEST, Journal, RunDir, load_manifest
from podium.interfaces import SUBMISSION, Task
from tools.leaderboards.builder import prepared_data

PODIUM = [sys.executable, "-m", "podium"]
STRATEGIES = ("greedy", "random", "one-draft")
SEARCH, CONTROLS = "greedy", ("one-draft", "random")
ALPHA, POWER = 0.05, 0.80
TARGET_P, TARGET_SEEDS, TARGET_ONE_DRAFT_MEDALS = 0.01, 5, 30.0
HALF_SAMPLES = 200


# --- statistics: small pure functions --------------------------------------------------------


def mean_sem(values: Sequence[float]) -> tuple[float | None, float | None]:
    """Mean and standard error (sample SD, ddof=1, over √n); the SEM is None below 2 values,
    both are None for none."""
    if not values:
        return None, None
    mean = statistics.fmean(values)
    if len(values) < 2:
        return mean, None
    return mean, statistics.stdev(values) / math.sqrt(len(values))


def wilcoxon_p(diffs: Sequence[float]) -> float | None:
    """scipy's exact two-sided Wilcoxon signed-rank p (zeros dropped, scipy's ``wilcox``);
    None when no difference is non-zero. For reference next to the sign-flip test: with
    tied |differences| (average ranks) scipy's exact null distribution assumes none."""
    if not any(d != 0 for d in diffs):
        return None
    from scipy.stats import wilcoxon  # type: ignore[import-untyped]

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ties: scipy warns of what the docstring says
        result = wilcoxon(list(diffs), zero_method="wilcox", method="exact")
    return float(result.pvalue)


def pairs_needed(sd: float, delta: float, alpha: float = ALPHA, power: float = POWER) -> int | None:
    """Pairs for a two-sided paired test at ``alpha`` to detect a mean difference ``delta`` with
    probability ``power`` when the differences have SD ``sd``: the normal approximation
    n = ⌈((z₁₋α/₂ + z_power) · sd / δ)²⌉, at least 2 (an SD needs two). None for δ = 0."""
    if delta == 0:
        return None
    z = NormalDist().inv_cdf
    n = ((z(1 - alpha / 2) + z(power)) * sd / abs(delta)) ** 2
    return max(2, math.ceil(n - 1e-9))  # 1e-9: an exact integer is not rounded up


def seeds_needed(pairs: int | None, tasks: int) -> int | None:
    """Seeds per task so that seeds × tasks ≥ ``pairs`` (each seed of each task is one pair)."""
    if pairs is None or tasks < 1:
        return None
    return max(1, math.ceil(pairs / tasks))


def spearman(pairs: Iterable[tuple[float, float]]) -> float | None:
    """Spearman's ρ of (validation metric, private score) over the finite pairs (average ranks
    for ties); None below 3 pairs or when either side is constant. Both sides are the task's
    metric, so ρ > 0 means validation ranks nodes as the private test does, whatever the
    metric's direction."""
    kept = [(x, y) for x, y in pairs if math.isfinite(x) and math.isfinite(y)]
    if len(kept) < 3 or len({x for x, _ in kept}) < 2 or len({y for _, y in kept}) < 2:
        return None
    from scipy.stats import spearmanr

    return float(spearmanr([x for x, _ in kept], [y for _, y in kept]).statistic)


@dataclass(frozen=True)
class RunRow:
    """One cell of the sweep's grid as ``podium compare`` counts it."""

    task: str
    strategy: str
    seed: int
    status: str
    percentile: float  # 0 for a missing, unfinished or invalid run
    score: float | None
    medal: str | None  # None: no medal (or not finished)
    elapsed_s: float | None
    nodes: int | None
    path: str | None


def paired_diffs(rows: Sequence[RunRow], strategy: str, control: str) -> list[dict[str, Any]]:
    """Per (task, seed) that both strategies have in the grid: ``strategy`` − ``control`` in
    percentile points, sorted by task and seed."""
    base = {(r.task, r.seed): r for r in rows if r.strategy == control}
    found = []
    for row in rows:
        other = base.get((row.task, row.seed))
        if row.strategy == strategy and other is not None:
            found.append(
                {
                    "task": row.task,
                    "seed": row.seed,
                    "percentile": row.percentile,
                    "control_percentile": other.percentile,
                    "diff": row.percentile - other.percentile,
                }
            )
    return sorted(found, key=lambda d: (d["task"], d["seed"]))


def comparison(pairs: Sequence[dict[str, Any]], delta: float) -> dict[str, Any]:
    """Every figure of one paired comparison (see the module doc) from its pairs."""
    diffs = [float(p["diff"]) for p in pairs]
    tasks = sorted({p["task"] for p in pairs})
    mean, sem = mean_sem(diffs)
    sd = statistics.stdev(diffs) if len(diffs) > 1 else None
    test = permutation_test(diffs)  # the reports' own test: one owner of the statistic
    needed = pairs_needed(sd, delta) if sd is not None else None
    per_task = {
        task: statistics.fmean(d["diff"] for d in pairs if d["task"] == task) for task in tasks
    }
    return {
        "n_pairs": len(diffs),
        "n_tasks": len(tasks),
        "mean_diff": mean,
        "sem": sem,
        "sd": sd,
        "wins": sum(d > 0 for d in diffs),
        "ties": sum(d == 0 for d in diffs),
        "losses": sum(d < 0 for d in diffs),
        "permutation_p": test.p,
        "permutation_method": test.method,
        "wilcoxon_exact_p": wilcoxon_p(diffs),
        "power": {
            "delta": delta,
            "alpha": ALPHA,
            "power": POWER,
            "method": "normal approximation, two-sided: "
            "n = ceil(((z_0.975 + z_0.8) * SD / delta)^2)",
            "pairs_needed": needed,
            "seeds_needed": seeds_needed(needed, len(tasks)),
        },
        "per_task_mean_diff": per_task,
        "pairs": list(pairs),
    }


def medal_rate(rows: Sequence[RunRow], strategy: str) -> dict[str, Any]:
    """MLE-bench's medal rate of ``strategy``: per seed 100 × tasks medalled / tasks, then the
    mean ± SEM over seeds; per task, the share of its seeds that medalled."""
    mine = [r for r in rows if r.strategy == strategy]
    per_seed: dict[int, list[bool]] = defaultdict(list)
    per_task: dict[str, list[bool]] = defaultdict(list)
    for row in mine:
        per_seed[row.seed].append(row.medal is not None)
        per_task[row.task].append(row.medal is not None)
    rates = {seed: 100 * sum(m) / len(m) for seed, m in sorted(per_seed.items())}
    mean, sem = mean_sem(list(rates.values()))
    return {
        "mean": mean,
        "sem": sem,
        "per_seed": rates,
        "per_task": {task: 100 * sum(m) / len(m) for task, m in sorted(per_task.items())},
    }


def targets(
    versus_one_draft: dict[str, Any], medals: dict[str, dict[str, Any]], seeds: int
) -> dict[str, Any]:
    """The issue's three targets, each with the figure it was judged on."""
    p, mean = versus_one_draft["permutation_p"], versus_one_draft["mean_diff"]
    one_draft = medals.get("one-draft", {}).get("mean")
    top = {s: m["mean"] for s, m in medals.items() if m["mean"] is not None and m["mean"] >= 100}
    return {
        "greedy_beats_one_draft_p_lt_0.01": {
            "met": bool(mean is not None and mean > 0 and p < TARGET_P),
            "p": p,
            "mean_diff": mean,
            "seeds": seeds,
            "note": None if seeds == TARGET_SEEDS else f"target is at {TARGET_SEEDS} seeds",
        },
        "one_draft_medal_rate_le_30": {
            "met": one_draft is not None and one_draft <= TARGET_ONE_DRAFT_MEDALS,
            "medal_rate": one_draft,
        },
        "no_strategy_at_100": {"met": not top, "at_100": sorted(top)},
    }


def projection(
    rows: Sequence[RunRow],
    overhead_s: float,
    seeds: int,
    steps: int,
    parallel: int,
    strategies: Sequence[str] = STRATEGIES,
) -> dict[str, Any]:
    """The time of a sweep of the same tasks × ``strategies`` × ``seeds`` at ``steps`` nodes per
    run (one-draft: 1 node), from the measured search seconds per node of each (task, strategy)
    (Σ elapsed / Σ nodes over its finished runs) plus ``overhead_s`` per run (worker start,
    grading, selection.json); wall = run-seconds / ``parallel``. None where a cell has no time."""
    per_node: dict[str, dict[str, float | None]] = {}
    total = 0.0
    complete = True
    for task in sorted({r.task for r in rows}):
        per_node[task] = {}
        for strategy in strategies:
            timed = [
                r
                for r in rows
                if r.task == task
                and r.strategy == strategy
                and r.status == "finished"
                and r.elapsed_s is not None
                and r.nodes
            ]
            if not timed:
                per_node[task][strategy] = None
                complete = False
                continue
            seconds = math.fsum(r.elapsed_s or 0.0 for r in timed) / sum(
                r.nodes or 0 for r in timed
            )
            per_node[task][strategy] = seconds
            nodes = 1 if strategy == "one-draft" else steps
            total += seeds * (overhead_s + nodes * seconds)
    return {
        "seeds": seeds,
        "steps": steps,
        "parallel": parallel,
        "overhead_per_run_s": overhead_s,
        "seconds_per_node": per_node,
        "run_seconds": total if complete else None,
        "wall_s": total / parallel if complete else None,
    }


# --- glue: the sweep, the report, the nodes ---------------------------------------------------


def bench_command(args: argparse.Namespace) -> list[str]:
    """``podium bench`` that makes the sweep, or continues it when DIR already holds one."""
    extra = ["--parallel", str(args.parallel)] if args.parallel else []
    extra += ["--data-dir", str(args.data_dir)] if args.data_dir else []
    if (args.sweep / MANIFEST).is_file():
        return [*PODIUM, "bench", "--resume", str(args.sweep), *extra]
    return [
        *PODIUM,
        "bench",
        "--tasks",
        args.suite,
        "--strategies",
        ",".join(STRATEGIES),
        "--seeds",
        str(args.seeds),
        "--steps",
        str(args.steps),
        "--out",
        str(args.sweep),
        *extra,
    ]


def run_bench(command: Sequence[str]) -> int:
    """Run ``podium bench`` to its end and return its exit code. Ctrl-C reaches it (same
    process group) and it stops its runs cleanly, resumable; this process only waits for it
    (``subprocess.run`` would SIGKILL it a quarter second after a Ctrl-C)."""
    previous = signal.signal(signal.SIGINT, lambda signum, frame: None)  # reset in the child
    try:
        with subprocess.Popen(list(command)) as process:
            return process.wait()
    finally:
        signal.signal(signal.SIGINT, previous)


def read_rows(report_runs: Sequence[dict[str, Any]]) -> list[RunRow]:
    """The report's per-run list (``build_report(...).data["runs"]``) as :class:`RunRow`s."""
    return [
        RunRow(
            task=r["task"],
            strategy=r["strategy"],
            seed=int(r["seed"]),
            status=r["status"],
            percentile=float(r["leaderboard_percentile"] or 0.0),
            score=r.get("score"),
            medal=r.get("medal"),
            elapsed_s=r.get("elapsed_s"),
            nodes=r.get("nodes"),
            path=r.get("path"),
        )
        for r in report_runs
    ]


def compare_report(sweeps: Sequence[Path]) -> dict[str, Any]:
    """``podium compare``'s data for the sweeps merged, written to a scratch dir (the sweeps
    are left as they are), with greedy as the paired baseline (a cross-check of the tests
    here). Merging refuses mixed budgets, as ``podium compare`` does."""
    with tempfile.TemporaryDirectory(prefix="suite-power-") as scratch:
        return build_report(list(sweeps), Path(scratch), baseline=SEARCH).data


class NodeGrades:
    """Every good node of a run graded on the private answers: its ``selection.json`` when it
    has one (and ``regrade`` is off), else graded here by the task's grader through
    ``podium.benchmarks.selection_report``, the function that writes selection.json."""

    def __init__(self, data_dir: Path | None, regrade: bool) -> None:
        self.data_dir, self.regrade = data_dir, regrade
        self.tasks: dict[str, Task] = {}
        self.graded_here = 0
        self.notes: list[str] = []

    def task(self, task_ref: str) -> Task:
        if task_ref not in self.tasks:
            self.tasks[task_ref] = resolve_task(task_ref, load_registry(), self.data_dir)
        return self.tasks[task_ref]

    def nodes(self, run_path: Path, task_ref: str) -> list[dict[str, Any]]:
        rd = RunDir(run_path)
        if rd.selection.is_file() and not self.regrade:
            data = json.loads(rd.selection.read_text(encoding="utf-8"))
        else:
            data = self._grade(rd, task_ref)
        return list((data or {}).get("nodes") or [])

    def _grade(self, rd: RunDir, task_ref: str) -> dict[str, Any] | None:
        """selection.json's content for the run, graded here; None (and a note) when the run
        has no journal or its task cannot be loaded or graded."""
        if not rd.journal.is_file():
            return None
        try:
            task = self.task(task_ref)
            journal = Journal.open(rd.journal)
            try:
                nodes = journal.nodes()
            finally:
                journal.close()
            report = selection_report(task, nodes, rd.node_dir, None)
        except UserError as exc:
            self.notes.append(f"{rd.root}: nodes not graded ({exc.message})")
            return None
        self.graded_here += 1
        return report


def validation_agreement(rows: Sequence[RunRow], grades: NodeGrades) -> dict[str, Any]:
    """Per task: Spearman ρ (validation metric vs private score) over every good node of its
    finished greedy runs pooled, the mean of the per-run ρ, and the node counts."""
    result: dict[str, Any] = {}
    for task in sorted({r.task for r in rows}):
        pooled: list[tuple[float, float]] = []
        per_run: list[float] = []
        for row in rows:
            if row.task != task or row.strategy != SEARCH or row.status != "finished":
                continue
            if row.path is None:
                continue
            pairs = [
                (float(n["metric"]), float(n["score"]))
                for n in grades.nodes(Path(row.path), task)
                if n.get("metric") is not None and n.get("score") is not None
            ]
            pooled += pairs
            rho = spearman(pairs)
            if rho is not None:
                per_run.append(rho)
        result[task] = {
            "nodes": len(pooled),
            "runs_with_rho": len(per_run),
            "spearman_pooled": spearman(pooled),
            "spearman_mean_per_run": statistics.fmean(per_run) if per_run else None,
        }
    return result


def score_noise(task: Task, submission: Path, draws: int = HALF_SAMPLES) -> dict[str, Any]:
    """The SE of ``submission``'s private score by half-sampling, and the leaderboard's
    threshold gaps in SEs (see the module doc). Both the answers and the submission are cut to
    the same ids, so each half is a valid, smaller test set for the task's own grader."""
    import numpy as np
    import pandas as pd

    assert isinstance(task, FolderTask), f"{task.id}: not a folder task"
    folder = task.folder
    data = prepared_data(folder, task.public_dir, task.private_dir)
    answers, frame = data.answers, pd.read_csv(submission)
    key = answers.columns[0]
    rng = np.random.default_rng(0)
    scores = []
    for _ in range(draws):
        half = answers[key].sample(len(answers) // 2, random_state=int(rng.integers(2**31)))
        kept = answers[answers[key].isin(half)].reset_index(drop=True)
        submitted = frame[frame[key].isin(half)].reset_index(drop=True)
        scores.append(float(data.grade_fn(submitted, kept)))
    se = statistics.stdev(scores)
    t = medal_thresholds(read_leaderboard(folder / "leaderboard.csv"))
    return {
        "submission": str(submission),
        "se": se,
        "gold_silver_gap_se": abs(t.gold - t.silver) / se if se else None,
        "silver_bronze_gap_se": abs(t.silver - t.bronze) / se if se else None,
    }


def noise_per_task(rows: Sequence[RunRow], grades: NodeGrades) -> dict[str, Any]:
    """:func:`score_noise` of each task's first finished greedy run (lowest seed)."""
    result: dict[str, Any] = {}
    for task in sorted({r.task for r in rows}):
        runs = sorted(
            (r for r in rows if r.task == task and r.strategy == SEARCH and r.status == "finished"),
            key=lambda r: r.seed,
        )
        submission = RunDir(Path(runs[0].path)).best / SUBMISSION if runs and runs[0].path else None
        if submission is None or not submission.is_file():
            continue
        result[task] = score_noise(grades.task(task), submission)
    return result


def sweep_timing(sweep: Path, rows: Sequence[RunRow]) -> tuple[float, int]:
    """From the manifest: the median seconds a finished run spent outside its search (the
    worker's wall time minus the run's ``elapsed_s``: interpreter start, task loading, grading;
    0 when unknown) and the runs the sweep ran at once (1 when unknown)."""
    manifest = load_manifest(sweep)
    elapsed = {(r.task, r.strategy, r.seed): r.elapsed_s for r in rows}
    spans = []
    for entry in manifest.runs:
        search = elapsed.get((entry.task, entry.strategy, entry.seed))
        if entry.started_at and entry.finished_at and search is not None:
            spans.append((entry.finished_at - entry.started_at).total_seconds() - search)
    parallel = manifest.executor.get("parallel")
    at_once = parallel if isinstance(parallel, int) and parallel > 0 else 1
    return (statistics.median(spans) if spans else 0.0), at_once


def analyse(sweep: Path, args: argparse.Namespace) -> dict[str, Any]:
    """Every figure of the module doc for the sweep ``sweep``."""
    report = compare_report([sweep, *args.also])
    rows = read_rows(report["runs"])
    seeds = len({r.seed for r in rows})
    comparisons = {
        f"{SEARCH} - {control}": comparison(paired_diffs(rows, SEARCH, control), args.delta)
        for control in CONTROLS
    }
    medals = {s: medal_rate(rows, s) for s in STRATEGIES if any(r.strategy == s for r in rows)}
    grades = NodeGrades(args.data_dir, args.regrade)
    overhead, parallel = sweep_timing(sweep, rows)
    return {
        "sweep": str(sweep),
        "also": [str(p) for p in args.also],
        "tasks": sorted({r.task for r in rows}),
        "seeds": seeds,
        "runs": [asdict(r) for r in rows],
        "comparisons": comparisons,
        "medal_rate": medals,
        "validation_vs_private": validation_agreement(rows, grades),
        "score_noise": noise_per_task(rows, grades),
        "runs_graded_here": grades.graded_here,
        "targets": targets(comparisons[f"{SEARCH} - one-draft"], medals, seeds),
        "projection": projection(
            rows, overhead, args.project_seeds, args.project_steps, args.parallel or parallel
        ),
        "report_notes": [*report.get("notes", []), *grades.notes],
    }


# --- output ------------------------------------------------------------------------------------


def _f(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _p(value: float | None) -> str:
    return "-" if value is None else (f"{value:.2e}" if value < 1e-3 else f"{value:.4f}")


def _g(value: Any) -> str:
    return f"{value:.4g}" if isinstance(value, float) else str(value)


def print_tables(result: dict[str, Any]) -> None:
    """The readable summary of :func:`analyse`'s result (the JSON has every figure)."""
    rows = [RunRow(**r) for r in result["runs"]]
    tasks, seeds = result["tasks"], sorted({r.seed for r in rows})
    cells = {(r.task, r.strategy, r.seed): r for r in rows}
    print(
        f"sweep {result['sweep']}: {len(tasks)} tasks × {len(STRATEGIES)} strategies × "
        f"{len(seeds)} seeds"
    )
    print("\npercentile (medal: G/S/B) per seed")
    width = max((len(t) for t in tasks), default=4)
    print(f"{'task':<{width}}  " + "  ".join(f"{s:<{7 * len(seeds)}}" for s in STRATEGIES))
    for task in tasks:
        parts = []
        for strategy in STRATEGIES:
            marks = []
            for seed in seeds:
                row = cells.get((task, strategy, seed))
                medal = (row.medal or " ")[0].upper() if row else " "
                marks.append(f"{row.percentile:5.1f}{medal}" if row else "    - ")
            parts.append(" ".join(marks).ljust(7 * len(seeds)))
        print(f"{task:<{width}}  " + "  ".join(parts))
    print("\nmedal rate (per seed: % of tasks; mean ± SEM over seeds)")
    for strategy, m in result["medal_rate"].items():
        per_task = ", ".join(f"{t} {_f(v, 0)}" for t, v in m["per_task"].items())
        print(f"  {strategy:<10} {_f(m['mean'])} ± {_f(m['sem'])} %  (per task: {per_task})")
    for name, c in result["comparisons"].items():
        power = c["power"]
        print(f"\n{name}, percentile points, {c['n_pairs']} pairs over {c['n_tasks']} tasks")
        print(
            f"  mean {_f(c['mean_diff'])} ± {_f(c['sem'])} (SEM), SD {_f(c['sd'])}, "
            f"wins/ties/losses {c['wins']}/{c['ties']}/{c['losses']}"
        )
        print(
            f"  sign-flip permutation p = {_p(c['permutation_p'])} ({c['permutation_method']}); "
            f"Wilcoxon exact p = {_p(c['wilcoxon_exact_p'])}"
        )
        print(
            f"  to detect {power['delta']:g} points (α {ALPHA}, power {POWER:.0%}, normal "
            f"approx.): {power['pairs_needed'] or '-'} pairs = {power['seeds_needed'] or '-'} "
            f"seeds × {c['n_tasks']} tasks"
        )
        print(
            "  per task: " + ", ".join(f"{t} {_f(d)}" for t, d in c["per_task_mean_diff"].items())
        )
    print("\nvalidation metric vs private score, greedy nodes (Spearman ρ)")
    for task, v in result["validation_vs_private"].items():
        pooled, mean = _f(v["spearman_pooled"], 2), _f(v["spearman_mean_per_run"], 2)
        print(
            f"  {task:<{width}}  pooled {pooled} over {v['nodes']} nodes; "
            f"mean per run {mean} ({v['runs_with_rho']} runs)"
        )
    print(f"\nprivate score noise (SE by {HALF_SAMPLES} half-samples of greedy's first run)")
    for task, v in result["score_noise"].items():
        print(
            f"  {task:<{width}}  SE {v['se']:.4g}; gold-silver gap {_f(v['gold_silver_gap_se'])} "
            f"SE, silver-bronze gap {_f(v['silver_bronze_gap_se'])} SE"
        )
    print("\ntargets")
    for name, t in result["targets"].items():
        figures = ", ".join(f"{k} {_g(v)}" for k, v in t.items() if k != "met" and v is not None)
        print(f"  {'MET ' if t['met'] else 'MISS'} {name}: {figures}")
    proj = result["projection"]
    hours = None if proj["run_seconds"] is None else proj["run_seconds"] / 3600
    wall = None if proj["wall_s"] is None else proj["wall_s"] / 3600
    print(
        f"\nprojection: {len(tasks)} tasks × {len(STRATEGIES)} strategies × {proj['seeds']} seeds "
        f"× {proj['steps']} steps (one-draft: 1 node), {proj['parallel']} at "
        f"once: {_f(hours, 2)} run-hours, wall ≈ {_f(wall, 2)} h (per-run overhead "
        f"{_f(proj['overhead_per_run_s'])} s)"
    )
    unfinished = [r for r in rows if r.status != "finished"]
    if unfinished:
        print(
            f"note: {len(unfinished)} of {len(rows)} cells not finished (counted as percentile 0, "
            "no medal, as podium compare counts them): "
            + ", ".join(f"{r.task}/{r.strategy}/s{r.seed} {r.status}" for r in unfinished)
        )
    for note in result["report_notes"]:
        print(f"note: {note}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sweep", type=Path, required=True, help="the sweep dir (made if new)")
    parser.add_argument("--suite", help="podium bench --tasks, for a new sweep: a suite or ids")
    parser.add_argument("--seeds", type=int, default=TARGET_SEEDS)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--parallel", type=int, help="runs at once (podium bench's default)")
    parser.add_argument(
        "--also",
        type=Path,
        action="append",
        default=[],
        help="another finished sweep of the same grid for other tasks, analysed with --sweep",
    )
    parser.add_argument("--data-dir", type=Path)
    parser.add_argument("--read-only", action="store_true", help="analyse only; run nothing")
    parser.add_argument("--regrade", action="store_true", help="grade every greedy node here")
    parser.add_argument("--delta", type=float, default=5.0, help="percentile points to detect")
    parser.add_argument("--project-seeds", type=int, default=TARGET_SEEDS)
    parser.add_argument("--project-steps", type=int, default=20)
    parser.add_argument("--json", type=Path, default=Path("/tmp/suite_power.json"))
    args = parser.parse_args(argv)
    if not args.read_only and args.suite is None and not (args.sweep / MANIFEST).is_file():
        parser.error("a new sweep needs --suite (e.g. --suite mini)")
    command = ["perf/suite_power.py", *(sys.argv[1:] if argv is None else argv)]
    bench: dict[str, Any] | None = None
    if not args.read_only:
        cmd = bench_command(args)
        print("$ " + shlex.join(cmd), flush=True)
        started = time.monotonic()
        code = run_bench(cmd)
        bench = {"command": cmd, "exit_code": code, "wall_s": time.monotonic() - started}
        if code != 0:
            print(f"podium bench exited {code}; analysing what the sweep holds", file=sys.stderr)
    result = analyse(args.sweep, args)
    result = {"command": shlex.join(command), "machine": machine(), "bench": bench, **result}
    print_tables(result)
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(result, indent=1, default=str) + "\n", encoding="utf-8")
    print(f"\nevery figure: {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
