"""``podium compare``'s work: runs on disk → ``summary.json``, ``summary.md`` and PNG plots.

Everything is computed before anything is written, so a user error (a corrupt file, an unknown
baseline) leaves an older report in place. ``summary.json`` holds every number of
``summary.md`` and more (per-seed values, the per-run list, the disclosure card); its
``format`` key marks it as a report, so a later ``podium compare`` over the same folder never
mistakes it for a run's summary.json.

Wall time per run compares strategies only when their runs had the same CPU share (cores per
run): :func:`wall_time` says, per (strategy, model), whether they did, from each run's
``host.json`` ``cpu_share``, else its sweep executor's ``cpus_per_run``, else "unknown"; and
when a sweep ran ``parallel`` runs that needed more than the machine's ``cpus``, they shared
cores, whatever they were promised. The result table marks a wall time that is not comparable
(``†``) and summary.md says why; no run means no wall time, and nothing to mark.

Before any number, :func:`~podium.experiments.reports.validity.validity` decides whether the
runs can be compared at all: runs configured with different budgets are refused (a UserError,
nothing written) unless ``allow_mixed_budgets``; missing runs and saturated medal rates become
the report's top-level ``caveats``, which the terminal prints first
(:func:`top_caveats`), summary.md opens with, and every figure carries.

The terminal gets the key columns only (:func:`summary_table`, :func:`paired_table`,
:func:`task_table`), sized to fit :data:`TERMINAL_WIDTH` columns without wrapping a cell, and
the caveats (:func:`report_caveats`); summary.md has everything.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich import box
from rich.console import Console
from rich.measure import Measurement
from rich.table import Table

from podium.errors import UserError
from podium.experiments.reports.aggregate import ALL, aggregate
from podium.experiments.reports.aggregate import task_table as tasks_of
from podium.experiments.reports.disclosure import disclosure
from podium.experiments.reports.markdown import (
    DETAILS,
    FLAGS_LEGEND,
    TASK_TABLE_HEADERS,
    TERMINAL_PAIRED_COLUMNS,
    comparison_notes,
    splits,
    summary_markdown,
    task_rows,
    terminal_paired_rows,
    terminal_result_columns,
    terminal_result_rows,
)
from podium.experiments.reports.paired import paired
from podium.experiments.reports.plots import write_plots
from podium.experiments.reports.record import Cell, Run
from podium.experiments.reports.regret import regret_rows, selection_regret
from podium.experiments.reports.runs import Manifest, RunSet, load_runs
from podium.experiments.reports.validity import validity
from podium.records import utcnow

REPORT_FORMAT = "podium-report/1"
# The report's own files, not a run dir's: its summary.json only has a run's file name (its
# ``format`` key tells them apart, reports.record.is_run_summary), so it is not run_files.SUMMARY.
SUMMARY_JSON = "summary.json"
SUMMARY_MD = "summary.md"
TERMINAL_WIDTH = 100  # the terminal tables fit this many columns
MODEL_MIN = 12  # a model name cut to fit the terminal keeps at least this many characters


@dataclass(frozen=True)
class Report:
    """A written report: its directory, the data of summary.json, the files written (summary
    files and plots) and the notes (what was skipped or counted specially, and why)."""

    out: Path
    data: dict[str, Any]
    files: tuple[Path, ...]
    notes: tuple[str, ...]


def build_report(
    dirs: Sequence[Path],
    out: Path,
    baseline: str | None = None,
    allow_mixed_budgets: bool = False,
) -> Report:
    """Compare the runs under ``dirs`` (sweep dirs, run dirs, folders holding them) and write
    the report into ``out`` (created if needed; the files of an older report there with the
    same names are replaced, any other file is left alone).

    ``baseline``: a strategy to compare every other strategy with (same model, paired by task
    and seed, complete pairs only). Raises UserError for unreadable runs, runs configured with
    different budgets (unless ``allow_mixed_budgets``), an unknown baseline, or an unwritable
    ``out``; a plot that cannot be drawn is only a note.
    """
    runs = load_runs(dirs)
    checked = validity(runs, allow_mixed_budgets)
    data: dict[str, Any] = {
        "format": REPORT_FORMAT,
        "created_at": utcnow().isoformat(),
        "sources": [str(d) for d in dirs],
        "caveats": checked["caveats"],
        "validity": checked,
        "groups": aggregate(runs),
        "tasks": tasks_of(runs),
        "wall_time": wall_time(runs),
        "paired": paired(runs, baseline) if baseline is not None else None,
        "selection_regret": selection_regret(runs),
        "disclosure": disclosure(runs),
        "runs": run_rows(runs),
    }
    _make_dir(out)
    plots = write_plots(
        runs,
        data["groups"],
        out,
        data["paired"],
        caveats=checked["caveats"],
        time_comparable=data["wall_time"]["comparable"],
    )
    data["plots"] = plots.files
    data["plot_captions"] = plots.texts
    data["notes"] = [*runs.notes, *data["selection_regret"]["notes"], *plots.notes]
    _write(out / SUMMARY_JSON, json.dumps(data, indent=2) + "\n")
    _write(out / SUMMARY_MD, summary_markdown(data))
    files = [out / SUMMARY_JSON, out / SUMMARY_MD, *(out / f for f in plots.files.values())]
    return Report(out=out, data=data, files=tuple(files), notes=tuple(data["notes"]))


def run_rows(runs: RunSet) -> list[dict[str, Any]]:
    """Every grid cell with its run's outcome as the report counts it (the per-run list)."""
    return [_run_row(runs, cell) for cell in runs.grid]


def _run_row(runs: RunSet, cell: Cell) -> dict[str, Any]:
    run, path = runs.run(cell), runs.paths.get(cell)
    row: dict[str, Any] = {
        "task": cell.task,
        "strategy": cell.strategy,
        "model": cell.model,
        "seed": cell.seed,
        "path": None if path is None else str(path),
        "status": runs.status(cell),
        "medal": run.medal if run is not None and run.finished else None,
        "valid_submission": runs.outcome(cell, "valid_submission"),
        "above_median": runs.outcome(cell, "above_median"),
        "leaderboard_percentile": runs.percentile(cell),
    }
    if run is not None:
        row.update(
            score=run.score,
            tokens=run.tokens,
            usd=run.usd,
            elapsed_s=run.elapsed_s,
            nodes=run.nodes,
            buggy=run.buggy,
            sandboxed=run.sandboxed,
            tree=run.tree,
        )
    return row


# --- wall-time comparability -----------------------------------------------------------------


@dataclass(frozen=True)
class CpuShare:
    """The cores a run had: ``cores`` None when unknown; ``shared`` (the machine's cores, the
    runs at once) when parallel runs were given more cores than the machine had."""

    cores: float | None
    shared: tuple[float, int] | None = None


def wall_time(runs: RunSet) -> dict[str, Any]:
    """Whether wall times per run can be compared: ``{"comparable", "groups": [{"strategy",
    "model", "runs", "cpu_shares": {cores: runs}, "unknown", "shared": [...], "comparable"}],
    "caveats": [...]}``. A group is comparable when each of its runs had a known CPU share, none
    shared cores with other runs, all had the same, and that share is every comparable group's
    (wall times of groups with different shares do not compare either)."""
    manifests = _manifests_by_run(runs)
    shares: dict[tuple[str, str], list[CpuShare]] = {}
    for strategy, model in runs.groups():
        existing = [r for c in runs.cells(strategy, model) if (r := runs.run(c)) is not None]
        shares[strategy, model] = [cpu_share(r, manifests.get(r.path.resolve())) for r in existing]
    groups = [_wall_group(s, m, found) for (s, m), found in shares.items()]
    common = {next(iter(g["cpu_shares"])) for g in groups if g["comparable"] and g["runs"]}
    if len(common) > 1:
        for group in groups:
            group["comparable"] = False
    every = [share for found in shares.values() for share in found]
    caveats = _wall_caveats(every) if not all(g["comparable"] for g in groups) else []
    return {"comparable": not caveats, "groups": groups, "caveats": caveats}


def cpu_share(run: Run, manifest: Manifest | None) -> CpuShare:
    """The run's CPU share: its host.json's ``cpu_share``, else its sweep executor's
    ``cpus_per_run``, else unknown. When its sweep ran ``parallel`` > 1 runs at once, the runs
    shared the machine's cores (the run's host.json ``cpus``, else the manifest's hardware)
    whatever the share says: no executor pins a run to its cores (``cpus_per_run`` is what runs
    are scheduled by, not a limit: no CPU affinity, no quota), and a solution's numpy or
    scikit-learn uses every core it can see. Identical trees that took 101 s and 91 s side by
    side are that noise."""
    executor = (manifest.data.get("executor") if manifest else None) or {}
    share = run.cpu_share or _number(executor.get("cpus_per_run"))
    if share is None:
        return CpuShare(None)
    parallel = _number(executor.get("parallel"))
    if parallel is not None and parallel > 1:
        hardware = (manifest.data.get("hardware") if manifest else None) or {}
        cores = _number((run.host or {}).get("cpus")) or _number(hardware.get("cpus"))
        cores = cores or share * parallel
        return CpuShare(min(share, cores / parallel), shared=(cores, int(parallel)))
    return CpuShare(share)


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        return None
    return float(value)


def _manifests_by_run(runs: RunSet) -> dict[Path, Manifest]:
    """Each sweep run dir (resolved) → the manifest that lists it."""
    found: dict[Path, Manifest] = {}
    for manifest in runs.manifests:
        for entry in manifest.data.get("runs") or []:
            if isinstance(entry, dict) and entry.get("path"):
                found.setdefault((manifest.path.parent / str(entry["path"])).resolve(), manifest)
    return found


def _wall_group(strategy: str, model: str, shares: list[CpuShare]) -> dict[str, Any]:
    known = Counter(_cores(s.cores) for s in shares if s.cores is not None)
    shared = Counter(s.shared for s in shares if s.shared is not None)
    unknown = sum(s.cores is None for s in shares)
    return {
        "strategy": strategy,
        "model": model,
        "runs": len(shares),
        "cpu_shares": dict(known),
        "unknown": unknown,
        "shared": [{"cores": c, "parallel": p, "runs": n} for (c, p), n in shared.items()],
        "comparable": not shares or (not unknown and not shared and len(known) == 1),
    }


def _cores(value: float) -> str:
    return f"{value:g}"


def _wall_caveats(shares: list[CpuShare]) -> list[str]:
    caveats = [
        f"wall time compared across runs that shared {_cores(cores)} cores among {parallel} "
        f"parallel runs ({_runs(n)}): not comparable"
        for (cores, parallel), n in Counter(s.shared for s in shares if s.shared).items()
    ]
    unknown = sum(s.cores is None for s in shares)
    if unknown:
        caveats.append(
            f"wall time of {_runs(unknown)} has no known CPU share (no cpu_share in host.json, "
            "no sweep executor to derive it from): not comparable"
        )
    known = Counter(_cores(s.cores) for s in shares if s.cores is not None)
    if len(known) > 1:
        listed = ", ".join(f"{c} cores per run: {_runs(n)}" for c, n in sorted(known.items()))
        caveats.append(
            f"wall time compared across runs with different CPU shares ({listed}): not comparable"
        )
    return caveats


def _runs(n: int) -> str:
    return f"{n} run" if n == 1 else f"{n} runs"


def _make_dir(out: Path) -> None:
    try:
        out.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise UserError(
            f"{out} exists and is not a directory", hint="give --out a directory"
        ) from None
    except OSError as exc:
        raise UserError(f"cannot create {out}: {exc.strerror or exc}") from None


def _write(path: Path, text: str) -> None:
    """Write atomically (a temporary file, then a rename): a reader never sees half a report."""
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    except OSError as exc:
        raise UserError(f"cannot write {path}: {exc.strerror or exc}") from None


# --- the terminal ----------------------------------------------------------------------------


def report_splits(report: Report) -> list[str]:
    """The report's splits: "all", then the complexity splits its tasks carry."""
    return splits(report.data["groups"])


def saturated(report: Report) -> bool:
    """Every complete run medalled, or none did (medal rates cannot separate strategies)."""
    return bool((report.data.get("validity") or {}).get("saturated"))


def summary_table(report: Report, split: str = ALL) -> Table:
    """The result table's key columns (the same cells as summary.md's) for a terminal; the
    percentile leads when the report is saturated."""
    title = f"{split} tasks" if split == ALL else f"split {split}"
    full = saturated(report)
    return _terminal_table(
        terminal_result_columns(full),
        terminal_result_rows(report.data["groups"], split, full),
        title,
        f"{DETAILS}; missing: no finished, graded run",
    )


def task_table(report: Report) -> Table | None:
    """Per task × strategy: mean score and percentile over complete runs (None: no tasks)."""
    tasks = report.data.get("tasks")
    if not tasks:
        return None
    return _terminal_table(
        TASK_TABLE_HEADERS,
        task_rows(tasks),
        "per task: score and percentile over complete runs",
        "score: the task's own metric, compare within a task; medals: medalled / complete",
    )


def top_caveats(report: Report) -> list[str]:
    """The report's top-level caveats (incomplete, mixed budgets, saturated), first thing."""
    return list(report.data.get("caveats") or [])


def paired_table(report: Report) -> Table | None:
    """The paired comparison's key columns (None when the report has none)."""
    paired_data = report.data.get("paired")
    if not paired_data:
        return None
    return _terminal_table(
        TERMINAL_PAIRED_COLUMNS,
        terminal_paired_rows(paired_data),
        f"paired against {paired_data['baseline']}",
        f"{DETAILS}; p: exact sign-flip test; {FLAGS_LEGEND}",
    )


REGRET_COLUMNS = ("strategy", "model", "runs", "regret (pct points)", "not best", "medals lost")


def regret_table(report: Report) -> Table | None:
    """Selection regret per strategy (None when no run has it): post-hoc, said in the title."""
    selection = report.data.get("selection_regret")
    if not selection or not selection["groups"]:
        return None
    rows = [[r[0], r[1], r[2], r[4], r[5], r[6]] for r in regret_rows(selection)]
    return _terminal_table(REGRET_COLUMNS, rows, "selection regret (post-hoc: no search used it)")


def report_caveats(report: Report) -> list[str]:
    """What the terminal must say beside the tables: the comparisons' caveats (identical trees,
    small n) and the wall-time caveats, as summary.md says them."""
    paired_data = report.data.get("paired")
    notes = comparison_notes(paired_data) if paired_data else []
    notes.extend((report.data.get("wall_time") or {}).get("caveats") or [])
    return notes


def _terminal_table(
    headers: Sequence[str], rows: list[list[str]], title: str, caption: str = DETAILS
) -> Table:
    """A table that fits :data:`TERMINAL_WIDTH` columns with no cell wrapped: when its natural
    width is more, model names are cut (with "…", to no fewer than :data:`MODEL_MIN`
    characters; their full names are in summary.md). Every column is no_wrap, so anything
    still too wide is cut by rich, never wrapped onto a second line."""
    table = _table(headers, rows, title, caption)
    excess = _natural_width(table) - TERMINAL_WIDTH
    if excess > 0 and "model" in headers and rows:
        i = headers.index("model")
        limit = max(MODEL_MIN, max(len(r[i]) for r in rows) - excess)
        rows = [[_cut(c, limit) if j == i else c for j, c in enumerate(r)] for r in rows]
        table = _table(headers, rows, title, caption)
    return table


def _table(headers: Sequence[str], rows: list[list[str]], title: str, caption: str) -> Table:
    # No side edges and one space of padding, so columns cost two characters between them.
    table = Table(
        title=title, caption=caption, box=box.SIMPLE_HEAD, show_edge=False, padding=(0, 1, 0, 0)
    )
    for header in headers:
        table.add_column(header, no_wrap=True, overflow="ellipsis")
    for row in rows:
        table.add_row(*row)
    return table


def _natural_width(table: Table) -> int:
    console = Console(width=10_000)
    return Measurement.get(console, console.options, table).maximum


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
