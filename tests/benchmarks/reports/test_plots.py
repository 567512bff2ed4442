"""The report's plots: curve resampling by hand, valid PNGs, and plots that never fail a report."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from podium.benchmarks.reports import plots
from podium.benchmarks.reports.record import CurvePoint
from podium.benchmarks.reports.report import Report, build_report
from tests.benchmarks.reports.fakes import Spec, write_run

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
    assert report.data["plots"] == {name: f"{name}.png" for name in plots.PLOTS}
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
    assert result.data["plots"] == {"medal_rates": "medal_rates.png"}
    assert not (out / "percentile_vs_step.png").exists()
    assert "no run has a curve.json: the percentile curve plots are skipped" in result.notes


def test_a_plot_that_fails_is_only_a_note(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: object) -> None:
        raise ValueError("bad data")

    monkeypatch.setattr(plots, "_medal_plot", broken)
    write_run(tmp_path / "runs" / "r", Spec())
    result = build_report([tmp_path / "runs"], tmp_path / "out")
    assert result.data["plots"] == {}
    assert "plot medal_rates skipped: ValueError: bad data" in result.notes
    assert not (tmp_path / "out" / "medal_rates.png").exists()
    assert (tmp_path / "out" / "summary.md").is_file()
