"""Selection regret in a report: what each run lost choosing its final node (post-hoc).

Each finished run's ``selection.json`` (``podium.benchmarks.selection``: every good node graded
on the private answers after the run) gives the chosen node's and the best node's test score,
percentile and medal, the regret between them and the rank correlation between validation
metric and test score. Here, per run and per (strategy, model): the mean regret in percentile
points ± SEM over runs, the medals lost (in all and the runs that lost one), the runs whose
choice was not the best, the mean Spearman correlation, and what the medal rate would have
been had every run submitted its best node ("oracle"). Post-hoc analysis: no search used it.

Runs without a ``selection.json`` (ungraded, failed, made by an older Podium) are left out and
counted in a note; a damaged one is a UserError naming it, as for every run file.
"""

from __future__ import annotations

from collections import defaultdict
from statistics import fmean
from typing import Any

from podium.experiments.reports.files import read_optional_object
from podium.experiments.reports.runs import RunSet
from podium.experiments.reports.stats import mean_sem
from podium.formats import run_files

LABEL = (
    "Post-hoc analysis: after each run, every good node was graded on the private answers. "
    "No search used these grades; they say how much each run lost choosing its final node."
)


def selection_regret(runs: RunSet) -> dict[str, Any]:
    """``{"label", "runs": [...], "groups": [...], "notes": [...]}`` (JSON-ready)."""
    rows = []
    finished = 0
    for cell in runs.grid:
        run = runs.run(cell)
        if run is None or not run.finished:
            continue
        finished += 1
        data = read_optional_object(run.path / run_files.SELECTION)
        if data is not None and data.get("best") is not None:
            rows.append(_run_row(cell.strategy, cell.model, cell.task, cell.seed, data))
    notes = []
    if finished > len(rows):
        notes.append(
            f"{finished - len(rows)} of {finished} finished runs have no selection regret "
            "(no selection.json: ungraded, no good node, or an older Podium)"
        )
    return {"label": LABEL, "runs": rows, "groups": _groups(rows), "notes": notes}


def _run_row(
    strategy: str, model: str, task: str, seed: int, data: dict[str, Any]
) -> dict[str, Any]:
    chosen, best, regret = data.get("chosen") or {}, data["best"], data.get("regret") or {}
    return {
        "strategy": strategy,
        "model": model,
        "task": task,
        "seed": seed,
        "chosen_by": data.get("chosen_by"),
        "good_nodes": data.get("good_nodes"),
        "chosen_node": chosen.get("node_id"),
        "best_node": best.get("node_id"),
        "chosen_score": chosen.get("score"),
        "best_score": best.get("score"),
        "chosen_percentile": chosen.get("percentile") or 0.0,
        "best_percentile": best.get("percentile") or 0.0,
        "best_medal": best.get("medal"),
        "regret_score": regret.get("score"),
        "regret_percentile": float(regret.get("percentile") or 0.0),
        "medals_lost": int(regret.get("medals_lost") or 0),
        "rank_correlation": data.get("rank_correlation"),
        "held_out_rank_correlation": data.get("held_out_rank_correlation"),
    }


def _groups(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    by_group: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        by_group[row["strategy"], row["model"]].append(row)
    return [_group(s, m, rs) for (s, m), rs in sorted(by_group.items())]


def _group(strategy: str, model: str, rows: list[dict[str, Any]]) -> dict[str, Any]:
    mean, sem = mean_sem([r["regret_percentile"] for r in rows])
    correlations = [r["rank_correlation"] for r in rows if r["rank_correlation"] is not None]
    return {
        "strategy": strategy,
        "model": model,
        "runs": len(rows),
        "chosen_by": sorted({str(r["chosen_by"]) for r in rows}),
        "regret_percentile": {"mean": mean, "sem": sem},
        "not_best": sum(r["chosen_node"] != r["best_node"] for r in rows),
        "medals_lost": sum(r["medals_lost"] for r in rows),
        "runs_losing_a_medal": sum(r["medals_lost"] > 0 for r in rows),
        "oracle_any_medal_pct": 100 * sum(r["best_medal"] is not None for r in rows) / len(rows),
        "mean_rank_correlation": fmean(correlations) if correlations else None,
        "rank_correlation_runs": len(correlations),
    }


REGRET_HEADERS = (
    "strategy",
    "model",
    "runs",
    "chosen by",
    "regret (pct points)",
    "not the best node",
    "medals lost (runs)",
    "any medal % if best node",
    "Spearman val↔test (runs)",
)


def regret_rows(selection: dict[str, Any]) -> list[list[str]]:
    """One row of :data:`REGRET_HEADERS` per group (for summary.md)."""
    rows = []
    for g in selection["groups"]:
        regret, rho = g["regret_percentile"], g["mean_rank_correlation"]
        spread = "" if regret["sem"] is None else f" ± {regret['sem']:.1f}"
        rows.append(
            [
                g["strategy"],
                g["model"],
                str(g["runs"]),
                ", ".join(g["chosen_by"]),
                f"{regret['mean']:.1f}{spread}",
                f"{g['not_best']}/{g['runs']}",
                f"{g['medals_lost']} ({g['runs_losing_a_medal']})",
                f"{g['oracle_any_medal_pct']:.1f}",
                "-" if rho is None else f"{rho:+.2f} ({g['rank_correlation_runs']})",
            ]
        )
    return rows
