"""Benchmarks: where tasks come from (registry-layout folders, benchmark plugins), how a task
reference becomes a :class:`podium.interfaces.Task`, and how submissions are graded (exactly as
MLE-bench grades)."""

from podium.benchmarks.folder import FolderTask, default_data_dir, load_folder_task
from podium.benchmarks.folder_benchmark import FolderBenchmark
from podium.benchmarks.grading import (
    aggregate_reports,
    grade_submission,
    medal_thresholds,
    rank_score,
    seed_summary,
)
from podium.benchmarks.holdout import check_holdout, holdout_made, make_holdout
from podium.benchmarks.mlebench_submissions import find_run_dirs, mlebench_jsonl
from podium.benchmarks.resolve import resolve_task
from podium.benchmarks.selection import selection_report

__all__ = [
    "FolderBenchmark",
    "FolderTask",
    "aggregate_reports",
    "check_holdout",
    "default_data_dir",
    "find_run_dirs",
    "grade_submission",
    "holdout_made",
    "load_folder_task",
    "make_holdout",
    "medal_thresholds",
    "mlebench_jsonl",
    "rank_score",
    "resolve_task",
    "seed_summary",
    "selection_report",
]
