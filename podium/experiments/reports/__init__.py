"""Reports of sweeps: runs on disk → ``summary.json``, ``summary.md``, PNG plots and a
disclosure card (what ``podium compare`` writes).

Modules, one job each: ``runs`` (directories → runs and their grid), ``record`` (one run dir),
``stats`` (mean ± SEM, pass@k, cluster bootstrap), ``aggregate`` (per strategy and model, per
split), ``paired`` (against a baseline strategy), ``plots``, ``disclosure``, ``markdown``, and
``report`` (the entry point)."""

from podium.benchmarks.reports.report import (
    REPORT_FORMAT,
    Report,
    build_report,
    paired_table,
    report_splits,
    summary_table,
)

DEFAULT_DIR = "report"  # a sweep's report goes to SWEEP/report unless told otherwise

__all__ = [
    "DEFAULT_DIR",
    "REPORT_FORMAT",
    "Report",
    "build_report",
    "paired_table",
    "report_splits",
    "summary_table",
]
