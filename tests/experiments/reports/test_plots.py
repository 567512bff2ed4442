"""The report's plots: curve resampling by hand, valid PNGs, and plots that never fail a report;
what each figure says (n, lines kept apart by style without shifting data, medal colours,
headroom above 100, the forest's rows and its marks for identical trees)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from podium.experiments.reports import plots
from podium.experiments.reports.record import CurvePoint
from podium.experiments.reports.report import Report, build_report
from tests.experiments.reports.fakes import Spec, write_run

PNG = b"\x89PNG\r\n\x1a\n"

LONG = (CurvePoint(1, 10.0, 20.0), CurvePoint(3, 30.0, 50.0))
SHORT = (CurvePoint(1, 5.0, 40.0),)


def test_curves_hold_their_last_value_on_a_step_grid() -> None:
    grid, values = plots.resample([LONG, SHORT], "step")
    assert grid.tolist() == [1.0, 2.0, 3.0]
    assert values.tolist() == [[20.0, 20.0, 50.0], [40.0, 40.0, 40.0]]


def test_curves_are_zero_before_their_first_node_on_a_time_grid() -> None:
    grid, values = plots.resample([LONG, SHORT, ()], "time")
    assert (grid[0], grid[-1], len(grid)) == (0.0, 30.0, plots.TIME_POINTS)
    at = {t: int(np.searchsorted(grid, t)) for t in (0.0, 30.0)}
    assert values[:, at[0.0]].tolist() == [0.0, 0.0, 0.0]
    assert values[:, at[30.0]].tolist() == [50.0, 40.0, 0.0]
    seven = int(np.searchsorted(grid, 7.0))  # after SHORT's node, before LONG's
    assert values[:, seven].tolist() == [0.0, 40.0, 0.0]


def test_the_report_draws_every_plot_as_a_png(report: Report) -> None:
    # The scenario's runs shared 2 cores among 2 parallel runs: no wall-time plot.
    drawn = [name for name in plots.PLOTS if name != plots.TIME]
    assert report.data["plots"] == {name: f"{name}.png" for name in drawn}
    for name in report.data["plots"].values():
        data = (report.out / name).read_bytes()
        assert data.startswith(PNG) and len(data) > 1000
    assert any("5 runs have no curve.json" in note for note in report.notes)


def test_without_curves_the_curve_plots_are_skipped(tmp_path: Path) -> None:
    write_run(tmp_path / "runs" / "r", Spec(medal="gold"))
    out = tmp_path / "out"
    out.mkdir()
    (out / "percentile_vs_step.png").write_bytes(PNG)  # an older report's
    result = build_report([tmp_path / "runs"], out)
    assert result.data["plots"] == {
        "medal_rates": "medal_rates.png",
        "cost_vs_percentile": "cost_vs_percentile.png",
    }
    assert not (out / "percentile_vs_step.png").exists()
    assert "no run has a curve.json: the percentile curve plots are skipped" in result.notes


def test_a_plot_that_fails_is_only_a_note(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: object) -> None:
        raise ValueError("bad data")

    monkeypatch.setattr(plots, "_medal_plot", broken)
    write_run(tmp_path / "runs" / "r", Spec())
    result = build_report([tmp_path / "runs"], tmp_path / "out")
    assert result.data["plots"] == {"cost_vs_percentile": "cost_vs_percentile.png"}
    assert "plot medal_rates skipped: ValueError: bad data" in result.notes
    assert not (tmp_path / "out" / "medal_rates.png").exists()
    assert (tmp_path / "out" / "summary.md").is_file()


def _axes() -> Axes:
    return Figure().add_subplot()


def test_curves_never_hide_one_another_and_are_never_shifted() -> None:
    ax = _axes()
    same = [LONG, SHORT]
    plots._curve_plot(ax, {"greedy / m": same, "mcts / m": same, "beam / m": same}, "step")
    lines = ax.get_lines()
    assert len({line.get_linestyle() for line in lines}) == 3
    assert len({line.get_marker() for line in lines}) == 3
    ys = [np.asarray(line.get_ydata(), dtype=float) for line in lines]
    xs = [np.asarray(line.get_xdata(), dtype=float) for line in lines]
    # The same curves: drawn where they are (median 30, 30, 45 at steps 1, 2, 3), no offset.
    for x, y in zip(xs, ys, strict=True):
        assert x.tolist() == [1.0, 2.0, 3.0] and y.tolist() == [30.0, 30.0, 45.0]
    labels = [text.get_text() for text in ax.get_legend().get_texts()]
    assert labels == ["greedy / m (n = 2 runs)", "mcts / m (n = 2 runs)", "beam / m (n = 2 runs)"]
    assert "n = 6 runs" in ax.get_title() and "by validation metric" in ax.get_title()
    assert "can drop" in ax.get_title()


def test_medals_are_drawn_in_gold_silver_and_bronze(report: Report) -> None:
    from matplotlib.colors import to_hex

    ax = _axes()
    plots._medal_plot(ax, report.data["groups"])
    handles, labels = ax.get_legend_handles_labels()
    colours = {
        label: to_hex(handle.patches[0].get_facecolor())  # a bar container
        for handle, label in zip(handles, labels, strict=True)
    }
    assert colours["gold"] == plots.MEDAL_COLORS["gold"] == "#d4af37"
    assert colours["silver"] == "#a8a9ad" and colours["bronze"] == "#cd7f32"


def test_medal_error_bars_stay_within_0_and_100() -> None:
    below, above = plots.clipped_errors(np.array([75.0, 5.0, 50.0]), np.array([40.0, 10.0, 0.0]))
    assert below.tolist() == [40.0, 5.0, 0.0] and above.tolist() == [25.0, 10.0, 0.0]


def _group(strategy: str, any_medal: float, sem: float | None) -> dict[str, Any]:
    value = {"mean": any_medal, "sem": sem}
    zero = {"mean": 0.0, "sem": None}
    return {
        "strategy": strategy,
        "model": "m",
        "splits": {
            "all": {
                "n_tasks": 3,
                "n_seeds": 2,
                "any_medal": value,
                "gold_medal": value,
                "silver_medal": zero,
                "bronze_medal": zero,
            }
        },
    }


def test_the_medal_axis_has_headroom_and_n_under_each_group() -> None:
    ax = _axes()
    plots._medal_plot(ax, [_group("greedy", 100.0, 0.0), _group("mcts", 90.0, 20.0)])
    assert ax.get_ylim() == (0.0, 115.0)  # max(100, 90 + 20) + 5: nothing is cut at 100
    ticks = [t.get_text() for t in ax.get_xticklabels()]
    assert ticks == ["greedy\nm\nn = 6 (3 × 2)", "mcts\nm\nn = 6 (3 × 2)"]


def test_a_group_with_missing_runs_says_so_under_its_bars() -> None:
    ax = _axes()
    group = _group("mcts", 50.0, 10.0)
    group["splits"]["all"]["runs"] = {"incomplete": 2}
    plots._medal_plot(ax, [group])
    (tick,) = [t.get_text() for t in ax.get_xticklabels()]
    assert tick == "mcts\nm\nn = 6 (3 × 2)\n2 missing = no medal"


def _comparison(identical: int, pairs: int = 4) -> dict[str, Any]:
    return {
        "strategy": "mcts",
        "baseline": "greedy",
        "model": "m",
        "n_pairs": pairs,
        "n_tasks": 2,
        "identical_trees": identical,
        "all_identical": identical == pairs,
        "percentile": {"mean_diff": 5.0, "ci95": [0.0, 10.0]},
        "per_task": [
            {"task": "mini/a", "pairs": 2, "percentile_diff": 0.0, "identical_trees": 2},
            {"task": "mini/b", "pairs": 2, "percentile_diff": 10.0, "identical_trees": 0},
        ],
    }


def test_the_forest_has_a_row_per_comparison_and_task_with_n() -> None:
    rows = plots.forest_rows({"baseline": "greedy", "comparisons": [_comparison(2)]})
    assert [r.label for r in rows] == [
        "mcts vs greedy\nm\nn = 4 pairs, 2 tasks; p = - (sign-flip); identical trees 2/4",
        "mini/a (2 pairs, 2 identical)",
        "mini/b (2 pairs)",
    ]
    assert [(r.mean, r.ci, r.identical) for r in rows] == [
        (5.0, (0.0, 10.0), True),
        (0.0, None, True),
        (10.0, None, False),
    ]


def test_a_comparison_of_identical_trees_draws_no_interval() -> None:
    paired = {"baseline": "greedy", "comparisons": [_comparison(4)]}
    ax = _axes()
    plots._forest_plot(ax, plots.forest_rows(paired), paired)
    assert [t.get_text() for t in ax.texts] == ["identical trees: no interval"]
    assert ax.get_xlabel() == "Δ leaderboard percentile (strategy − greedy), points"


def test_the_forest_is_drawn_only_with_a_baseline(report: Report, tmp_path: Path) -> None:
    assert (report.out / "paired_differences.png").read_bytes().startswith(PNG)
    write_run(tmp_path / "runs" / "r", Spec())
    out = tmp_path / "out"
    out.mkdir()
    (out / "paired_differences.png").write_bytes(PNG)  # an older report's
    result = build_report([tmp_path / "runs"], out)
    assert "paired_differences" not in result.data["plots"]
    assert not (out / "paired_differences.png").exists()
