"""The report's PNG plots, drawn with matplotlib's Agg renderer (no display, no pyplot state).

* ``percentile_vs_step.png`` and ``percentile_vs_time.png``: per (strategy, model), the
  best-so-far leaderboard percentile of every run with a ``curve.json`` (one task × seed each),
  resampled on a common grid (steps 1..the longest run; time: evenly spaced points from 0 to the
  longest run), holding a run's last value after it ends and 0 before its first node; drawn as
  the median over runs with the 25–75 % band.
* ``medal_rates.png``: any / gold / silver / bronze medal % per group (split "all"), with SEM
  error bars (none with a single seed).

Plots never fail a report: without curves the curve plots are skipped with a note, and a plot
that cannot be drawn for any other reason is skipped with a note naming the error.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from podium.benchmarks.reports.record import CurvePoint
from podium.benchmarks.reports.runs import RunSet

if TYPE_CHECKING:
    from matplotlib.axes import Axes

STEP = "percentile_vs_step"
TIME = "percentile_vs_time"
MEDALS = "medal_rates"
PLOTS = (STEP, TIME, MEDALS)
TIME_POINTS = 200
MEDAL_BARS = (
    ("any_medal", "any"),
    ("gold_medal", "gold"),
    ("silver_medal", "silver"),
    ("bronze_medal", "bronze"),
)
Curve = Sequence[CurvePoint]
Matrix = np.ndarray[Any, np.dtype[np.float64]]


@dataclass
class Plots:
    """What was drawn: plot name → file name (in the report dir), and why anything was not."""

    files: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def write_plots(runs: RunSet, groups: list[dict[str, Any]], out: Path) -> Plots:
    """Draw every plot into ``out`` (an existing dir), replacing older ones of the same names."""
    plots = Plots()
    for name in PLOTS:
        (out / f"{name}.png").unlink(missing_ok=True)
    curves = group_curves(runs)
    without = sum(r.curve is None for r in runs.runs.values())
    if not curves:
        plots.notes.append("no run has a curve.json: the percentile curve plots are skipped")
    else:
        if without:
            plots.notes.append(f"{without} runs have no curve.json: left out of the curve plots")
        _draw(plots, out, STEP, lambda ax: _curve_plot(ax, curves, "step"))
        _draw(plots, out, TIME, lambda ax: _curve_plot(ax, curves, "time"))
    _draw(plots, out, MEDALS, lambda ax: _medal_plot(ax, groups))
    return plots


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


def _draw(plots: Plots, out: Path, name: str, draw: Callable[[Axes], None]) -> None:
    path = out / f"{name}.png"
    try:
        # matplotlib loads here, not with the module: importing the reports costs no plot time.
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure

        figure = Figure(figsize=(7.5, 4.5), layout="constrained")
        FigureCanvasAgg(figure)
        draw(figure.add_subplot())
        figure.savefig(path, dpi=110)
    except Exception as exc:  # a plot must never fail the report (see the module doc)
        path.unlink(missing_ok=True)
        plots.notes.append(f"plot {name} skipped: {type(exc).__name__}: {exc}")
        return
    plots.files[name] = path.name


def _curve_plot(ax: Axes, curves: dict[str, list[Curve]], axis: str) -> None:
    """Every group on one grid (to the longest run of any group), so the lines compare."""
    end = max(curve_end(group, axis) for group in curves.values())
    for label, group in curves.items():
        grid, values = resample(group, axis, end)
        low, median, high = np.percentile(values, [25, 50, 75], axis=0)
        marker = "o" if len(grid) == 1 else None
        (line,) = ax.plot(
            grid,
            median,
            drawstyle="steps-post",
            marker=marker,
            label=f"{label} ({len(group)} runs)",
        )
        ax.fill_between(grid, low, high, step="post", alpha=0.2, color=line.get_color())
    ax.set_xlabel("step (finished nodes)" if axis == "step" else "wall time (s)")
    ax.set_ylabel("best-so-far leaderboard percentile")
    ax.set_ylim(0, 100)
    ax.set_title("median and 25–75% band over runs (task × seed)")
    ax.legend(fontsize="small")


def _medal_plot(ax: Axes, groups: list[dict[str, Any]]) -> None:
    labels = [f"{g['strategy']}\n{g['model']}" for g in groups]
    width = 0.8 / len(MEDAL_BARS)
    for i, (key, name) in enumerate(MEDAL_BARS):
        stats = [g["splits"]["all"][key] for g in groups]
        xs = np.arange(len(groups)) + (i - (len(MEDAL_BARS) - 1) / 2) * width
        errors = [s["sem"] or 0.0 for s in stats]
        ax.bar(xs, [s["mean"] for s in stats], width, yerr=errors, capsize=3, label=name)
    ax.set_xticks(np.arange(len(groups)), labels)
    ax.set_ylabel("% of tasks (mean ± SEM over seeds)")
    ax.set_ylim(0, 100)
    ax.legend(fontsize="small")
