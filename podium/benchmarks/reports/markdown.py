"""``summary.md``: the report's numbers as tables a paper or a pull request can quote.

The cells are formatted by :func:`result_rows` and :func:`paired_rows`, which the terminal table
(``podium compare``) uses too, so both always show the same numbers. Percentages are "mean ± SEM"
over seeds (no "±" with a single seed); pass@n is pass@k at the largest k the seeds allow.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from podium.benchmarks.reports.aggregate import ALL
from podium.benchmarks.reports.disclosure import card_markdown

RESULT_HEADERS = (
    "strategy",
    "model",
    "any medal %",
    "gold %",
    "silver %",
    "bronze %",
    "valid %",
    "above median %",
    "pass@1 / pass@n %",
    "percentile",
    "USD / run",
    "tokens / run",
    "wall / run",
    "nodes / run",
    "buggy",
    "runs done",
)
PAIRED_HEADERS = (
    "strategy",
    "vs baseline",
    "model",
    "pairs",
    "Δ any medal (pp) [95% CI]",
    "Δ percentile [95% CI]",
    "wins / ties / losses",
)
TASK_HEADERS = (
    "task",
    "pairs",
    "Δ any medal (pp)",
    "baseline percentile",
    "percentile",
    "Δ percentile",
)
PLOT_TITLES = {
    "percentile_vs_step": "Best-so-far leaderboard percentile by step",
    "percentile_vs_time": "Best-so-far leaderboard percentile by wall time",
    "medal_rates": "Medal rates (mean ± SEM over seeds)",
}


def splits(groups: list[dict[str, Any]]) -> list[str]:
    """The split names of the groups, "all" first, in the order the groups give them."""
    names: list[str] = []
    for group in groups:
        names.extend(s for s in group["splits"] if s not in names)
    return names


def result_rows(groups: list[dict[str, Any]], split: str) -> list[list[str]]:
    """One row of :data:`RESULT_HEADERS` per group that has ``split``."""
    return [
        _result_row(g["strategy"], g["model"], g["splits"][split])
        for g in groups
        if split in g["splits"]
    ]


def _result_row(strategy: str, model: str, s: dict[str, Any]) -> list[str]:
    cost, runs = s["cost"], s["runs"]
    return [
        strategy,
        model,
        stat(s["any_medal"]),
        stat(s["gold_medal"]),
        stat(s["silver_medal"]),
        stat(s["bronze_medal"]),
        stat(s["valid_submission"]),
        stat(s["above_median"]),
        _pass(s["pass_at_k"]),
        stat(s["leaderboard_percentile"]),
        _usd(cost["mean_usd"]),
        _count(cost["mean_tokens"]),
        seconds(cost["mean_elapsed_s"]),
        _number(cost["mean_nodes"]),
        _rate(cost["buggy_rate"]),
        f"{runs['finished']}/{runs['expected']}",
    ]


def paired_rows(paired: dict[str, Any]) -> list[list[str]]:
    """One row of :data:`PAIRED_HEADERS` per comparison."""
    return [
        [
            c["strategy"],
            c["baseline"],
            c["model"],
            str(c["n_pairs"]),
            _difference(c["any_medal_pp"]),
            _difference(c["percentile"]),
            f"{c['wins']} / {c['ties']} / {c['losses']}",
        ]
        for c in paired["comparisons"]
    ]


def stat(value: dict[str, Any]) -> str:
    """``mean ± sem`` with one decimal; the mean alone when the SEM is undefined."""
    if value["sem"] is None:
        return f"{value['mean']:.1f}"
    return f"{value['mean']:.1f} ± {value['sem']:.1f}"


def seconds(value: float | None) -> str:
    if value is None:
        return "-"
    if value < 120:
        return f"{value:.0f}s"
    return f"{value / 60:.1f}m" if value < 7200 else f"{value / 3600:.1f}h"


def _pass(values: dict[str, float]) -> str:
    n = max(values, key=int)
    return f"{values['1']:.1f} / {values[n]:.1f} (n={n})"


def _usd(value: float | None) -> str:
    return "-" if value is None else f"${value:.4f}"


def _count(value: float | None) -> str:
    return "-" if value is None else f"{value:,.0f}"


def _number(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def _rate(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.0f}%"


def _difference(value: dict[str, Any] | None) -> str:
    if value is None:
        return "-"
    low, high = value["ci95"]
    return f"{value['mean_diff']:+.1f} [{low:+.1f}, {high:+.1f}]"


def table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A GitHub-flavoured markdown table (pipes in cells escaped)."""
    lines = [_line(headers), _line(["---"] * len(headers))]
    lines.extend(_line(row) for row in rows)
    return "\n".join(lines) + "\n"


def _line(cells: Sequence[str]) -> str:
    return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"


def summary_markdown(data: dict[str, Any]) -> str:
    """The whole summary.md for a report's data (see ``report.build_report``)."""
    parts = ["# Podium report\n", _sources(data)]
    for split in splits(data["groups"]):
        title = "All tasks" if split == ALL else f"Split: {split}"
        parts.append(f"## {title}\n\n" + table(RESULT_HEADERS, result_rows(data["groups"], split)))
    if data.get("paired"):
        parts.append(_paired_section(data["paired"]))
    if data["plots"]:
        parts.append(
            "## Plots\n\n"
            + "\n".join(f"![{PLOT_TITLES.get(n, n)}]({f})\n" for n, f in data["plots"].items())
        )
    if data["notes"]:
        parts.append("## Notes\n\n" + "".join(f"- {n}\n" for n in data["notes"]))
    parts.append(card_markdown(data["disclosure"]))
    return "\n".join(parts)


def _sources(data: dict[str, Any]) -> str:
    lines = [
        "Runs from: " + ", ".join(f"`{s}`" for s in data["sources"]),
        "",
        "Percentages are mean ± SEM over seeds; a missing, failed or unfinished run counts "
        "as no medal and percentile 0.",
        "",
    ]
    return "\n".join(lines)


def _paired_section(paired: dict[str, Any]) -> str:
    parts = [
        f"## Paired comparison against `{paired['baseline']}`\n",
        "Differences are strategy − baseline over the same (task, seed) pairs; 95% CIs "
        "from a cluster bootstrap over tasks.\n",
        table(PAIRED_HEADERS, paired_rows(paired)),
    ]
    for c in paired["comparisons"]:
        rows = [
            [
                t["task"],
                str(t["pairs"]),
                f"{t['any_medal_pp']:+.1f}",
                f"{t['baseline_percentile']:.1f}",
                f"{t['percentile']:.1f}",
                f"{t['percentile_diff']:+.1f}",
            ]
            for t in c["per_task"]
        ]
        parts.append(
            f"### `{c['strategy']}` vs `{c['baseline']}` ({c['model']}), per task\n\n"
            + table(TASK_HEADERS, rows)
        )
    return "\n".join(parts)
