"""``summary.md``: the report's numbers as tables a paper or a pull request can quote.

The cells are formatted by :func:`result_rows` and :func:`paired_rows`, which the terminal
tables (``podium compare``) use too, so both always show the same numbers; the terminal shows
only the key columns of them (:data:`TERMINAL_RESULT_COLUMNS`, :data:`TERMINAL_PAIRED_COLUMNS`)
and points to summary.md for the rest. Percentages are "mean ± SEM" over seeds (no "±" with a
single seed); pass@n is pass@k at the largest k the seeds allow.

What a reader must know before quoting a number is said next to it, never only in a footnote:
a wall time whose runs had no comparable CPU share carries :data:`WALL_MARK` and the caveat
under the tables; a comparison whose pairs built identical trees, or that has few tasks or
seeds, carries flags in its row and its caveats under the paired table; a comparison whose
every pair built identical trees shows "identical trees" instead of an interval of zeros.
The report's top-level caveats (incomplete, mixed budgets, saturated: ``reports.validity``) open
summary.md, before any number. A saturated report (every run medalled, or none) leads with the
per-task table of scores and percentiles and puts percentile before the medal rates; the per-task
table is always there.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from typing import Any

from podium.experiments.reports.aggregate import ALL
from podium.experiments.reports.disclosure import card_markdown
from podium.experiments.reports.regret import REGRET_HEADERS, regret_rows

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
    "missing",
)
PAIRED_HEADERS = (
    "strategy",
    "vs baseline",
    "model",
    "pairs (tasks)",
    "Δ any medal (pp) [95% CI]",
    "Δ percentile [95% CI]",
    "p (sign-flip)",
    "p (sign test)",
    "wins / ties / losses",
    "flags",
)
# The terminal's columns, by header: what fits 100 columns (the rest is in summary.md).
TERMINAL_RESULT_COLUMNS = (
    "strategy",
    "model",
    "any medal %",
    "percentile",
    "USD / run",
    "runs done",
    "missing",
)  # pass@1 is summary.md's: on a full grid it equals the any-medal rate
# Saturated (every run medalled, or none): the percentile leads, the medal rate follows.
SATURATED_ORDER = (0, 1, 3, 2, 4, 5, 6)
TASK_TABLE_HEADERS = ("task", "strategy", "model", "score", "percentile", "medals", "complete")
TERMINAL_PAIRED_COLUMNS = ("strategy", "model", "Δ percentile [95% CI]", "p", "w/t/l", "flags")
TASK_HEADERS = (
    "task",
    "pairs",
    "identical trees",
    "Δ any medal (pp)",
    "baseline percentile",
    "percentile",
    "Δ percentile",
)
POWER_HEADERS = (
    "strategy",
    "model",
    "pairs",
    "SD of Δ percentile",
    "observed |Δ|",
    "pairs needed",
    "power now",
    "pairs needed for Δ = 10",
    "power now at Δ = 10",
)
RUN_REGRET_HEADERS = (
    "task",
    "strategy",
    "model",
    "seed",
    "chosen by",
    "chosen / best node",
    "chosen score",
    "best score",
    "percentile chosen / best",
    "regret (pct points)",
    "medals lost",
    "Spearman",
)
PLOT_TITLES = {
    "percentile_vs_step": "Best-so-far leaderboard percentile by step",
    "percentile_vs_time": "Best-so-far leaderboard percentile by wall time",
    "medal_rates": "Medal rates (mean ± SEM over seeds)",
    "paired_differences": "Paired percentile differences against the baseline (95% CI)",
    "cost_vs_percentile": "Cost per run against leaderboard percentile",
}
WALL_MARK = "†"  # a wall time that is not comparable (see the wall-time caveats)
IDENTICAL = "identical trees"
FLAGS_LEGEND = (
    "flags: identical k/n = k of n pairs built the same search tree in both strategies; "
    "small n = fewer than 5 tasks or seeds (the CI is too narrow: read p, an exact test); "
    "INCOMPLETE k left out = k pairs had a missing run (tests use complete pairs only)"
)
DETAILS = "details in summary.md"


def splits(groups: list[dict[str, Any]]) -> list[str]:
    """The split names of the groups, "all" first, in the order the groups give them."""
    names: list[str] = []
    for group in groups:
        names.extend(s for s in group["splits"] if s not in names)
    return names


def result_rows(
    groups: list[dict[str, Any]], split: str, wall_marked: Collection[tuple[str, str]] = ()
) -> list[list[str]]:
    """One row of :data:`RESULT_HEADERS` per group that has ``split``; the wall time of a
    (strategy, model) in ``wall_marked`` carries :data:`WALL_MARK`."""
    return [
        _result_row(g["strategy"], g["model"], g["splits"][split], wall_marked)
        for g in groups
        if split in g["splits"]
    ]


def _result_row(
    strategy: str, model: str, s: dict[str, Any], wall_marked: Collection[tuple[str, str]]
) -> list[str]:
    cost, runs = s["cost"], s["runs"]
    wall = seconds(cost["mean_elapsed_s"])
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
        f"{wall} {WALL_MARK}" if (strategy, model) in wall_marked else wall,
        _number(cost["mean_nodes"]),
        _rate(cost["buggy_rate"]),
        f"{runs['finished']}/{runs['expected']}",
        _missing(runs),
    ]


def _missing(runs: dict[str, Any]) -> str:
    """Cells without a complete run (finished and graded); "0" when none."""
    return str(runs.get("incomplete", runs["expected"] - runs["finished"]))


def terminal_result_columns(saturated: bool = False) -> tuple[str, ...]:
    """The terminal's result columns; percentile first when medal rates are saturated."""
    if not saturated:
        return TERMINAL_RESULT_COLUMNS
    return tuple(TERMINAL_RESULT_COLUMNS[i] for i in SATURATED_ORDER)


def terminal_result_rows(
    groups: list[dict[str, Any]], split: str, saturated: bool = False
) -> list[list[str]]:
    """One row of :func:`terminal_result_columns` per group that has ``split``: the same cells
    as summary.md's."""
    rows = [
        [
            g["strategy"],
            g["model"],
            stat(s["any_medal"]),
            stat(s["leaderboard_percentile"]),
            _usd(s["cost"]["mean_usd"]),
            f"{s['runs']['finished']}/{s['runs']['expected']}",
            _missing(s["runs"]),
        ]
        for g in groups
        if (s := g["splits"].get(split)) is not None
    ]
    return [[r[i] for i in SATURATED_ORDER] for r in rows] if saturated else rows


def task_rows(tasks: list[dict[str, Any]]) -> list[list[str]]:
    """One row of :data:`TASK_TABLE_HEADERS` per task × (strategy, model): score and percentile
    are means over the complete runs ("-" without one: a missing run has no score)."""
    return [
        [
            t["task"],
            t["strategy"],
            t["model"],
            _score(t["score"]),
            "-" if t["percentile"] is None else f"{t['percentile']:.1f}",
            f"{t['medals']}/{t['complete']}",
            f"{t['complete']}/{t['expected']}",
        ]
        for t in tasks
    ]


def paired_rows(paired: dict[str, Any]) -> list[list[str]]:
    """One row of :data:`PAIRED_HEADERS` per comparison."""
    return [
        [
            c["strategy"],
            c["baseline"],
            c["model"],
            f"{c['n_pairs']} ({c['n_tasks']})",
            _difference(c, "any_medal_pp"),
            _difference(c, "percentile"),
            _permutation_p(c),
            p_value(c["sign_test_p"]),
            f"{c['wins']} / {c['ties']} / {c['losses']}",
            flags(c),
        ]
        for c in paired["comparisons"]
    ]


def terminal_paired_rows(paired: dict[str, Any]) -> list[list[str]]:
    """One row of :data:`TERMINAL_PAIRED_COLUMNS` per comparison (p: the sign-flip test's)."""
    return [
        [
            c["strategy"],
            c["model"],
            _difference(c, "percentile"),
            p_value(c["permutation_p"]),
            f"{c['wins']}/{c['ties']}/{c['losses']}",
            flags(c),
        ]
        for c in paired["comparisons"]
    ]


def flags(c: dict[str, Any]) -> str:
    """The short flags of a comparison (see :data:`FLAGS_LEGEND`); "-" when there is none."""
    found = []
    if c["identical_trees"]:
        found.append(f"identical {c['identical_trees']}/{c['n_pairs']}")
    if any(caveat.startswith("small n") for caveat in c["caveats"]):
        found.append("small n")
    left_out = (c.get("incomplete") or {}).get("pairs")
    if left_out:
        found.append(f"INCOMPLETE {left_out} left out")
    return ", ".join(found) or "-"


def comparison_notes(paired: dict[str, Any]) -> list[str]:
    """Every caveat of every comparison, each naming its comparison (for summary.md and the
    terminal)."""
    return [
        f"{c['strategy']} vs {c['baseline']} ({c['model']}): {caveat}"
        for c in paired["comparisons"]
        for caveat in c["caveats"]
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


def p_value(value: float | None) -> str:
    """Three decimals; "< 0.001" below (an exact test's smallest p is 2⁻ⁿ, never 0)."""
    if value is None:
        return "-"
    return "< 0.001" if value < 0.001 else f"{value:.3f}"


def _permutation_p(c: dict[str, Any]) -> str:
    """The sign-flip p, saying so when it is a Monte Carlo estimate (more than 20 pairs)."""
    method = c.get("permutation_method") or ""
    estimated = " (Monte Carlo)" if method.startswith("Monte Carlo") else ""
    return p_value(c["permutation_p"]) + estimated


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


def _difference(c: dict[str, Any], key: str) -> str:
    """``mean [low, high]``; "identical trees" when every pair built the same tree (the
    interval would be a point at 0, which reads as a tight null result and is none)."""
    value = c[key]
    if value is None:
        return "-"
    if c["all_identical"]:
        return IDENTICAL
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
    """The whole summary.md for a report's data (see ``report.build_report``): its sections in
    order, each from its own function, so a new section slots in between them."""
    saturated = bool((data.get("validity") or {}).get("saturated"))
    sections: list[Callable[[dict[str, Any]], str | None]] = [
        _sources,
        _top_caveats,
        *((_task_section, _results) if saturated else (_results, _task_section)),
        _wall_section,
        _paired_or_none,
        _regret_section,
        _plots,
        _notes,
        lambda d: card_markdown(d["disclosure"]),
    ]
    return "\n".join(part for section in sections if (part := section(data)) is not None)


def _sources(data: dict[str, Any]) -> str:
    lines = [
        "# Podium report\n",
        "Runs from: " + ", ".join(f"`{s}`" for s in data["sources"]),
        "",
        "Percentages are mean ± SEM over seeds. In the medal rates and percentiles of the result "
        "tables a missing, failed, unfinished or ungraded run counts as no medal and percentile "
        "0 (MLE-bench's leaderboard rule); the paired comparison never counts it: it uses "
        "complete pairs only. `missing`: grid cells without a finished, graded run.",
        "",
    ]
    return "\n".join(lines)


def _top_caveats(data: dict[str, Any]) -> str | None:
    """The report's top-level caveats (``reports.validity``), before any number."""
    found = data.get("caveats") or []
    if not found:
        return None
    return "## Caveats\n\n" + "".join(f"- **{c}**\n" for c in found)


def _task_section(data: dict[str, Any]) -> str | None:
    tasks = data.get("tasks")
    if not tasks:
        return None
    return (
        "## Per task: scores and percentiles\n\n"
        "Mean test score (the task's own metric: compare within a task only) and leaderboard "
        "percentile over each group's complete runs; medals: medalled / complete runs.\n\n"
        + table(TASK_TABLE_HEADERS, task_rows(tasks))
    )


def _results(data: dict[str, Any]) -> str:
    marked = wall_marked(data)
    parts = []
    for split in splits(data["groups"]):
        title = "All tasks" if split == ALL else f"Split: {split}"
        rows = result_rows(data["groups"], split, marked)
        parts.append(f"## {title}\n\n" + table(RESULT_HEADERS, rows))
    return "\n".join(parts)


def wall_marked(data: dict[str, Any]) -> set[tuple[str, str]]:
    """The (strategy, model) groups whose wall time is not comparable (see report.wall_time)."""
    wall = data.get("wall_time") or {}
    return {(g["strategy"], g["model"]) for g in wall.get("groups", []) if not g["comparable"]}


def _wall_section(data: dict[str, Any]) -> str | None:
    caveats = (data.get("wall_time") or {}).get("caveats") or []
    if not caveats:
        return None
    lines = [f"{WALL_MARK} **Wall time is not comparable here:**", ""]
    lines.extend(f"- {c}" for c in caveats)
    return "\n".join(lines) + "\n"


def _paired_or_none(data: dict[str, Any]) -> str | None:
    return _paired_section(data["paired"]) if data.get("paired") else None


def _regret_section(data: dict[str, Any]) -> str | None:
    """Selection regret, per strategy then per run (post-hoc: see ``reports.regret``)."""
    selection = data.get("selection_regret")
    if not selection or not selection["runs"]:
        return None
    per_run = [
        [
            r["task"],
            r["strategy"],
            r["model"],
            str(r["seed"]),
            str(r["chosen_by"]),
            f"{r['chosen_node']} / {r['best_node']}",
            _score(r["chosen_score"]),
            _score(r["best_score"]),
            f"{r['chosen_percentile']:.1f} / {r['best_percentile']:.1f}",
            f"{r['regret_percentile']:.1f}",
            str(r["medals_lost"]),
            "-" if r["rank_correlation"] is None else f"{r['rank_correlation']:+.2f}",
        ]
        for r in selection["runs"]
    ]
    return "\n".join(
        [
            "## Selection regret (post-hoc)\n",
            f"{selection['label']} Regret: the best node's leaderboard percentile minus the "
            "chosen node's (mean ± SEM over runs); medals lost: gold 3, silver 2, bronze 1, none "
            "0; Spearman: rank correlation of the good nodes' validation metrics with their test "
            "scores.\n",
            table(REGRET_HEADERS, regret_rows(selection)),
            "### Per run\n",
            table(RUN_REGRET_HEADERS, per_run),
        ]
    )


def _score(value: float | None) -> str:
    return "-" if value is None else f"{value:.6g}"


def _plots(data: dict[str, Any]) -> str | None:
    if not data["plots"]:
        return None
    return "## Plots\n\n" + "\n".join(
        f"![{PLOT_TITLES.get(n, n)}]({f})\n" for n, f in data["plots"].items()
    )


def _notes(data: dict[str, Any]) -> str | None:
    if not data["notes"]:
        return None
    return "## Notes\n\n" + "".join(f"- {n}\n" for n in data["notes"])


def _paired_section(paired: dict[str, Any]) -> str:
    parts = [
        f"## Paired comparison against `{paired['baseline']}`\n",
        "Differences are strategy − baseline over the same (task, seed) pairs; 95% CIs "
        "from a cluster bootstrap over tasks. p: exact two-sided tests of the per-pair "
        "percentile differences (sign-flip permutation over all 2ⁿ sign assignments, or a "
        "seeded Monte Carlo beyond 20 pairs; sign test with ties dropped). "
        f"{FLAGS_LEGEND[0].upper()}{FLAGS_LEGEND[1:]}.\n",
        table(PAIRED_HEADERS, paired_rows(paired)),
    ]
    notes = comparison_notes(paired)
    if notes:
        parts.append("**Caveats:**\n\n" + "".join(f"- **{n}**\n" for n in notes))
    parts.append(_power_section(paired))
    parts.extend(_task_table(c) for c in paired["comparisons"])
    return "\n".join(parts)


def _power_section(paired: dict[str, Any]) -> str:
    rows = []
    for c in paired["comparisons"]:
        power = c["power"]
        if power is None:
            rows.append([c["strategy"], c["model"], str(c["n_pairs"]), *["-"] * 6])
            continue
        observed, fixed = power["observed"], power["fixed"]
        rows.append(
            [
                c["strategy"],
                c["model"],
                str(power["n_pairs"]),
                f"{power['sd']:.1f}",
                f"{observed['delta']:.1f}",
                _needed(observed["pairs_needed"]),
                f"{100 * observed['power_now']:.0f}%",
                _needed(fixed["pairs_needed"]),
                f"{100 * fixed['power_now']:.0f}%",
            ]
        )
    return (
        "### Power\n\n"
        "(task, seed) pairs needed to detect a difference of Δ percentile points at α = 0.05 "
        "(two-sided) with 80% power, at the observed per-pair SD of the difference (ddof=1), "
        "and the power the comparison has now. Normal approximation (a z-test with the SD "
        "taken as known): n = ⌈((z₀.₉₇₅ + z₀.₈) · SD / Δ)²⌉; it ignores that the SD is "
        "estimated and that seeds of a task are correlated, so read it as an order of "
        "magnitude.\n\n" + table(POWER_HEADERS, rows)
    )


def _needed(value: int | None) -> str:
    return "∞ (Δ = 0)" if value is None else str(value)


def _task_table(c: dict[str, Any]) -> str:
    rows = [
        [
            t["task"],
            str(t["pairs"]),
            str(t.get("identical_trees", 0)),
            f"{t['any_medal_pp']:+.1f}",
            f"{t['baseline_percentile']:.1f}",
            f"{t['percentile']:.1f}",
            f"{t['percentile_diff']:+.1f}",
        ]
        for t in c["per_task"]
    ]
    return f"### `{c['strategy']}` vs `{c['baseline']}` ({c['model']}), per task\n\n" + table(
        TASK_HEADERS, rows
    )
