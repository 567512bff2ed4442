"""Sweeps: a grid of runs (tasks × strategies × models × seeds), its manifest, the executors
that run it (local processes, Ray), and what a run leaves for the reports (its curve)."""

from podium.benchmarks.sweeps.curve import best_so_far_curve
from podium.benchmarks.sweeps.driver import EventCallback, JobFactory, Sweep, drive
from podium.benchmarks.sweeps.executor import (
    EXIT_FAILED,
    EXIT_FINISHED,
    EXIT_INTERRUPTED,
    EXIT_REFUSED,
    LOG_NAME,
    Executor,
    Job,
)
from podium.benchmarks.sweeps.grid import (
    Grid,
    check_unique_ids,
    describe_grid,
    parse_list,
    parse_seeds,
    run_id,
)
from podium.benchmarks.sweeps.hardware import available_cpus, describe_host
from podium.benchmarks.sweeps.local_executor import LocalExecutor
from podium.benchmarks.sweeps.manifest import (
    MANIFEST,
    Manifest,
    RunEntry,
    RunState,
    new_runs,
    reconcile,
    state_of,
)
from podium.benchmarks.sweeps.manifest import load as load_manifest
from podium.benchmarks.sweeps.progress import event_line, grid_table, totals_line
from podium.benchmarks.sweeps.ray_executor import RayExecutor  # imports Ray only when used

__all__ = [
    "EXIT_FAILED",
    "EXIT_FINISHED",
    "EXIT_INTERRUPTED",
    "EXIT_REFUSED",
    "LOG_NAME",
    "MANIFEST",
    "EventCallback",
    "Executor",
    "Grid",
    "Job",
    "JobFactory",
    "LocalExecutor",
    "Manifest",
    "RayExecutor",
    "RunEntry",
    "RunState",
    "Sweep",
    "available_cpus",
    "best_so_far_curve",
    "check_unique_ids",
    "describe_grid",
    "describe_host",
    "drive",
    "event_line",
    "grid_table",
    "load_manifest",
    "new_runs",
    "parse_list",
    "parse_seeds",
    "reconcile",
    "run_id",
    "state_of",
    "totals_line",
]
