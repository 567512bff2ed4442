"""The report's PNG plots, drawn with matplotlib's Agg renderer (no display, no pyplot state).

* ``percentile_vs_step.png`` and ``percentile_vs_time.png``: per (strategy, model), the
  best-so-far leaderboard percentile of every run with a ``curve.json`` (one task × seed each),
  resampled on a common grid (steps 1..the longest run; time: evenly spaced points from 0 to the
  longest run), holding a run's last value after it ends and 0 before its first node; drawn as
  the median over runs with the 25–75 % band. "Best so far" is by *validation metric*: each
  point is the test percentile of the node with the best validation metric so far, so a curve
  can drop (a later node with a better validation metric can have a worse test percentile);
  the subtitle says so. Data are drawn where they are: no jitter, no offset (a shifted line
  would misstate its value); groups that coincide stay apart by line style, marker (placed at
  different points per group) and transparency. The time plot is drawn only when every run
  had the same CPU share (``report.wall_time``): otherwise wall time measures the machine.
* ``medal_rates.png``: any / gold / silver / bronze medal % per group (split "all"), in gold,
  silver and bronze, with SEM error bars (none with a single seed) clipped to [0, 100] (a rate
  cannot leave them); the y axis leaves headroom above 100 so nothing is cut; n (tasks ×
  seeds) under each group.
* ``cost_vs_percentile.png``: every complete run's USD against its leaderboard percentile,
  one marker per group, n per group in the legend.
* ``paired_differences.png`` (with a baseline): a forest plot, per comparison the mean paired
  percentile difference with its 95% CI, its tasks' mean differences in light rows beneath, a
  line at 0; each label gives n pairs, n tasks, the sign-flip p and the pairs left out as
  incomplete, and a comparison with identical trees is marked (with every pair identical
  there is no interval to draw: it says so instead).

Every figure states its n and carries the report's top-level caveats (incomplete, mixed budgets,
saturated: ``reports.validity``) in its own footer and in its PNG ``Description`` metadata,
so a figure pasted into a paper keeps its warning (``Plots.texts`` records each figure's footer).
Plots never fail a report: without curves the curve plots are skipped with a note, and a plot
that cannot be drawn for any other reason is skipped with a note naming the error.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from podium.experiments.reports.record import CurvePoint
from podium.experiments.reports.runs import RunSet
from podium.experiments.reports.validity import complete

if TYPE_CHECKING:
    from matplotlib.axes import Axes

STEP = "percentile_vs_step"
TIME = "percentile_vs_time"
MEDALS = "medal_rates"
PAIRED = "paired_differences"
COST = "cost_vs_percentile"
PLOTS = (STEP, TIME, MEDALS, COST, PAIRED)
TIME_POINTS = 200
SIZE = (7.5, 4.5)  # inches, at DPI
DPI = 110
MEDAL_BARS = (
    ("any_medal", "any"),
    ("gold_medal", "gold"),
    ("silver_medal", "silver"),
    ("bronze_medal", "bronze"),
)
MEDAL_COLORS = {"any": "#4c72b0", "gold": "#d4af37", "silver": "#a8a9ad", "bronze": "#cd7f32"}
LINE_STYLES = ("-", "--", "-.", ":")
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
FOOTER_WIDTH = 120  # characters per footer line
MARKS_PER_LINE = 8
IDENTICAL_COLOR = "tab:orange"
Curve = Sequence[CurvePoint]
Matrix = np.ndarray[Any, np.dtype[np.float64]]


@dataclass
class Plots:
    """What was drawn: plot name → file name (in the report dir), and why anything was not."""

    files: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    texts: dict[str, str] = field(default_factory=dict)  # plot name → the footer it carries


def write_plots(
    runs: RunSet,
    groups: list[dict[str, Any]],
    out: Path,
    paired: dict[str, Any] | None = None,
    caveats: Sequence[str] = (),
    time_comparable: bool = True,
) -> Plots:
    """Draw every plot into ``out`` (an existing dir), replacing older ones of the same names;
    the forest plot only with a ``paired`` comparison (see ``reports.paired``), the time plot
    only when ``time_comparable``. Every figure carries ``caveats`` (the report's top-level
    ones) in its footer and PNG metadata."""
    plots = Plots()
    for name in PLOTS:
        (out / f"{name}.png").unlink(missing_ok=True)
    curves = group_curves(runs)
    without = sum(r.curve is None for r in runs.runs.values())
    footer = figure_footer(caveats)
    if not curves:
        plots.notes.append("no run has a curve.json: the percentile curve plots are skipped")
    else:
        if without:
            plots.notes.append(f"{without} runs have no curve.json: left out of the curve plots")
        _draw(plots, out, STEP, lambda ax: _curve_plot(ax, curves, "step"), footer)
        if time_comparable:
            _draw(plots, out, TIME, lambda ax: _curve_plot(ax, curves, "time"), footer)
        else:
            plots.notes.append(
                "the runs did not all have the same known CPU share: the percentile-by-wall-"
                "time plot is skipped (wall time would measure the machine, not the strategy)"
            )
    _draw(plots, out, MEDALS, lambda ax: _medal_plot(ax, groups), footer)
    _draw(plots, out, COST, lambda ax: _cost_plot(ax, runs), footer)
    rows = forest_rows(paired) if paired else []
    if paired and not rows:
        plots.notes.append(
            "no comparison has a complete pair: the paired-differences plot is skipped"
        )
    if paired and rows:
        height = max(SIZE[1], 1.6 + 0.32 * len(rows))
        own = [
            f"{c['strategy']} vs {c['baseline']} ({c['model']}): {caveat}"
            for c in paired["comparisons"]
            for caveat in c["caveats"]
        ]
        text = figure_footer([*caveats, *own])
        size = (9.0, height + 0.2 * (text.count("\n") + 1))
        _draw(plots, out, PAIRED, lambda ax: _forest_plot(ax, rows, paired), text, size)
    return plots


def figure_footer(caveats: Sequence[str]) -> str:
    """The text every figure carries at its foot: each caveat, wrapped; "" without any."""
    lines: list[str] = []
    for caveat in caveats:
        lines.extend(textwrap.wrap(f"CAVEAT: {caveat}", FOOTER_WIDTH))
    return "\n".join(lines)


def group_curves(runs: RunSet) -> dict[str, list[Curve]]:
    """Per group label ``strategy / model``: the curves of its runs that have one."""
    curves: dict[str, list[Curve]] = {}
    for strategy, model in runs.groups():
        existing = [r for c in runs.cells(strategy, model) if (r := runs.run(c)) is not None]
        found: list[Curve] = [r.curve for r in existing if r.curve is not None]
        if found:
            curves[f"{strategy} / {model}"] = found
    return curves


def resample(curves: Sequence[Curve], axis: str, end: float | None = None) -> tuple[Matrix, Matrix]:
    """The common x grid for ``axis`` ("step" or "time") up to ``end`` (default: the longest
    curve's end) and a runs × grid matrix of each curve's best-so-far percentile there (0
    before its first point, its last value after its end)."""
    xs = [np.maximum.accumulate(_xs(c, axis)) if c else np.zeros(0) for c in curves]
    end = curve_end(curves, axis) if end is None else end
    grid = np.arange(1.0, end + 1.0) if axis == "step" else np.linspace(0.0, end, TIME_POINTS)
    percentiles = [np.array([p.percentile for p in c], dtype=float) for c in curves]
    return grid, np.vstack([_hold(x, y, grid) for x, y in zip(xs, percentiles, strict=True)])


def curve_end(curves: Sequence[Curve], axis: str) -> float:
    """The last step (or elapsed second) of the longest curve; 1 when no curve has a point."""
    ends = [float(np.max(_xs(c, axis))) for c in curves if c]
    return max(ends, default=1.0)


def _xs(curve: Curve, axis: str) -> Matrix:
    return np.array([p.step if axis == "step" else p.elapsed_s for p in curve], dtype=float)


def _hold(x: Matrix, y: Matrix, grid: Matrix) -> Matrix:
    """The value of the step function (x, y) at each grid point: last y with x ≤ point, else 0."""
    idx = np.searchsorted(x, grid, side="right") - 1
    if not len(y):
        return np.zeros(len(grid))
    return np.where(idx >= 0, y[np.clip(idx, 0, None)], 0.0)


def _draw(
    plots: Plots,
    out: Path,
    name: str,
    draw: Callable[[Axes], None],
    footer: str = "",
    size: tuple[float, float] = SIZE,
) -> None:
    path = out / f"{name}.png"
    if footer and size == SIZE:
        size = (SIZE[0], SIZE[1] + 0.18 * (footer.count("\n") + 1))
    try:
        # matplotlib loads here, not with the module: importing the reports costs no plot time.
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure

        figure = Figure(figsize=size, layout="constrained")
        FigureCanvasAgg(figure)
        draw(figure.add_subplot())
        if footer:
            figure.supxlabel(footer, fontsize="x-small", color="darkred", ha="left", x=0.01)
        metadata = {"Title": name, "Description": footer or "no caveats"}
        figure.savefig(path, dpi=DPI, metadata=metadata)
    except Exception as exc:  # a plot must never fail the report (see the module doc)
        path.unlink(missing_ok=True)
        plots.notes.append(f"plot {name} skipped: {type(exc).__name__}: {exc}")
        return
    plots.files[name] = path.name
    plots.texts[name] = footer


# --- curves ----------------------------------------------------------------------------------


def _curve_plot(ax: Axes, curves: dict[str, list[Curve]], axis: str) -> None:
    """Every group on one grid (to the longest run of any group), so the lines compare; each
    styled and marked apart, never shifted (see the module doc)."""
    end = max(curve_end(group, axis) for group in curves.values())
    count = len(curves)
    for i, (label, group) in enumerate(curves.items()):
        grid, values = resample(group, axis, end)
        low, median, high = np.percentile(values, [25, 50, 75], axis=0)
        (line,) = ax.plot(
            grid,
            median,
            drawstyle="steps-post",
            linestyle=LINE_STYLES[i % len(LINE_STYLES)],
            marker=MARKERS[i % len(MARKERS)],
            markevery=_mark_every(len(grid), i),
            markersize=5,
            linewidth=1.8,
            alpha=0.85,
            zorder=3 + count - i,
            label=f"{label} (n = {len(group)} runs)",
        )
        ax.fill_between(grid, low, high, step="post", alpha=0.12, color=line.get_color())
    runs = sum(len(group) for group in curves.values())
    ax.set_xlabel("step (finished nodes)" if axis == "step" else "wall time (s)")
    ax.set_ylabel("leaderboard percentile of the best-so-far node")
    ax.set_ylim(-2, 102)
    ax.set_title(
        f"median and 25–75% band over n = {runs} runs (task × seed)\n"
        "best so far by validation metric, so a curve can drop: a node with a better "
        "validation\nmetric can score a worse test percentile than an earlier best. "
        "Lines are drawn unshifted; coinciding lines differ by style and marker.",
        fontsize="small",
    )
    ax.legend(fontsize="small", loc="upper center", bbox_to_anchor=(0.5, -0.13), ncols=1)
    ax.grid(alpha=0.3)


def _mark_every(points: int, index: int) -> tuple[int, int] | None:
    """Markers on about :data:`MARKS_PER_LINE` points, each group starting elsewhere so their
    markers do not stack; every point when there are few."""
    if points <= MARKS_PER_LINE:
        return None
    every = max(1, points // MARKS_PER_LINE)
    return (index * every // len(MARKERS) % every, every)


# --- medal rates -----------------------------------------------------------------------------


def _medal_plot(ax: Axes, groups: list[dict[str, Any]]) -> None:
    labels = [_group_label(g) for g in groups]
    width = 0.8 / len(MEDAL_BARS)
    top = 100.0
    for i, (key, name) in enumerate(MEDAL_BARS):
        stats = [g["splits"]["all"][key] for g in groups]
        means = np.array([s["mean"] for s in stats], dtype=float)
        sems = np.array([s["sem"] or 0.0 for s in stats], dtype=float)
        below, above = clipped_errors(means, sems)
        xs = np.arange(len(groups)) + (i - (len(MEDAL_BARS) - 1) / 2) * width
        ax.bar(
            xs,
            means,
            width,
            yerr=np.vstack([below, above]),
            capsize=3,
            label=name,
            color=MEDAL_COLORS[name],
            edgecolor="black",
            linewidth=0.5,
        )
        top = max(top, float(np.max(means + sems, initial=0.0)))
    ax.set_xticks(np.arange(len(groups)), labels)
    ax.set_ylabel("% of tasks (mean ± SEM over seeds)")
    ax.set_ylim(0, top + 5)
    ax.axhline(100, color="grey", linewidth=0.8, linestyle=":")
    ax.set_title("medal rates, split all; n = tasks × seeds per group", fontsize="small")
    ax.legend(
        fontsize="small", ncols=len(MEDAL_BARS), loc="lower center", bbox_to_anchor=(0.5, 1.06)
    )


def _cost_plot(ax: Axes, runs: RunSet) -> None:
    """Each complete run's USD (x) against its leaderboard percentile (y), per group."""
    total = 0
    for i, (strategy, model) in enumerate(runs.groups()):
        done = [r for c in runs.cells(strategy, model) if complete(r := runs.run(c)) and r]
        if not done:
            continue
        total += len(done)
        ax.plot(
            [r.usd for r in done],
            [r.percentile() for r in done],
            MARKERS[i % len(MARKERS)],
            alpha=0.7,
            label=f"{strategy} / {model} (n = {len(done)} runs)",
        )
    ax.set_xlabel("cost per run (USD)")
    ax.set_ylabel("leaderboard percentile of the run's submission")
    ax.set_ylim(-2, 102)
    ax.set_title(
        f"cost against leaderboard percentile, n = {total} complete runs (one point each)",
        fontsize="small",
    )
    if total:
        ax.legend(fontsize="small")
    ax.grid(alpha=0.3)


def clipped_errors(means: Matrix, sems: Matrix) -> tuple[Matrix, Matrix]:
    """Error bar lengths below and above each mean: ± SEM, clipped so the bar stays within
    [0, 100] (a rate cannot leave it)."""
    return np.minimum(sems, means), np.minimum(sems, 100.0 - means)


def _group_label(group: dict[str, Any]) -> str:
    s = group["splits"]["all"]
    n = s["n_tasks"] * s["n_seeds"]
    label = f"{group['strategy']}\n{group['model']}\nn = {n} ({s['n_tasks']} × {s['n_seeds']})"
    missing = (s.get("runs") or {}).get("incomplete", 0)
    return f"{label}\n{missing} missing = no medal" if missing else label


# --- paired differences ----------------------------------------------------------------------


@dataclass(frozen=True)
class ForestRow:
    """One row of the forest plot: a comparison (``ci`` its interval) or one of its tasks."""

    label: str
    mean: float
    ci: tuple[float, float] | None
    comparison: bool
    identical: bool  # the row's pairs include identical trees
    all_identical: bool


def forest_rows(paired: dict[str, Any]) -> list[ForestRow]:
    """Top to bottom: each comparison, then its tasks."""
    rows = []
    for c in paired["comparisons"]:
        if c["percentile"] is None:
            continue
        low, high = c["percentile"]["ci95"]
        rows.append(
            ForestRow(
                _comparison_label(c),
                c["percentile"]["mean_diff"],
                (low, high),
                comparison=True,
                identical=c["identical_trees"] > 0,
                all_identical=c["all_identical"],
            )
        )
        for t in c["per_task"]:
            same = t.get("identical_trees", 0)
            rows.append(
                ForestRow(
                    f"{t['task']} ({t['pairs']} pairs{f', {same} identical' if same else ''})",
                    t["percentile_diff"],
                    None,
                    comparison=False,
                    identical=same > 0,
                    all_identical=same == t["pairs"],
                )
            )
    return rows


def _comparison_label(c: dict[str, Any]) -> str:
    p = c.get("permutation_p")
    label = (
        f"{c['strategy']} vs {c['baseline']}\n{c['model']}\n"
        f"n = {c['n_pairs']} pairs, {c['n_tasks']} tasks; "
        f"p = {'-' if p is None else f'{p:.3f}'} (sign-flip)"
    )
    left_out = (c.get("incomplete") or {}).get("pairs")
    if left_out:
        label += f"\nINCOMPLETE: {left_out} pairs left out"
    if c["identical_trees"]:
        label += f"; identical trees {c['identical_trees']}/{c['n_pairs']}"
    return label


def _row_color(row: ForestRow) -> str:
    return IDENTICAL_COLOR if row.identical else ("black" if row.comparison else "grey")


def _forest_plot(ax: Axes, rows: list[ForestRow], paired: dict[str, Any]) -> None:
    ys = np.arange(len(rows))[::-1].astype(float)
    for y, row in zip(ys, rows, strict=True):
        color = _row_color(row)
        if row.comparison and row.all_identical:
            ax.plot([row.mean], [y], "o", mfc="white", color=color, markersize=8)
            ax.annotate(
                "identical trees: no interval",
                (row.mean, y),
                xytext=(8, 0),
                textcoords="offset points",
                va="center",
                color=color,
                fontsize="small",
            )
        elif row.comparison and row.ci is not None:
            low, high = row.ci
            xerr = [[row.mean - low], [high - row.mean]]
            ax.errorbar([row.mean], [y], xerr=xerr, fmt="D", color=color, capsize=4, ms=7)
        else:
            ax.plot([row.mean], [y], "o", color=color, alpha=0.55, markersize=4)
    ax.axvline(0, color="grey", linewidth=1, linestyle="--")
    ax.set_yticks(ys, [r.label for r in rows])
    for tick, row in zip(ax.get_yticklabels(), rows, strict=True):
        tick.set_fontsize("small" if row.comparison else "x-small")
        tick.set_color(_row_color(row))
    ax.set_ylim(-0.7, len(rows) - 0.3)
    ax.set_xlabel(f"Δ leaderboard percentile (strategy − {paired['baseline']}), points")
    ax.figure.suptitle(
        "Paired Δ percentile: mean with 95% cluster-bootstrap CI (tasks resampled)\n"
        "grey: per-task means; orange: includes pairs whose two runs built identical trees",
        fontsize="small",
    )
    ax.grid(axis="x", alpha=0.3)
