"""build_report's files: summary.json (numbers, MLE-bench names, runs), summary.md (tables)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from rich.console import Console

from podium.benchmarks.reports import build_report, paired_table, report_splits, summary_table
from podium.benchmarks.reports.report import REPORT_FORMAT, Report
from podium.errors import UserError
from tests.benchmarks.reports.fakes import Spec, write_run


def test_summary_json_holds_the_data_returned(report: Report) -> None:
    saved = json.loads((report.out / "summary.json").read_text())
    assert saved == json.loads(json.dumps(report.data))
    assert saved["format"] == REPORT_FORMAT
    greedy = saved["groups"][0]
    assert (greedy["strategy"], greedy["splits"]["all"]["total_medals"]) == ("greedy", 3)
    assert saved["paired"]["comparisons"][0]["strategy"] == "mcts"


def test_summary_json_lists_every_cell_of_the_grid(report: Report) -> None:
    rows = {(r["task"], r["strategy"], r["seed"]): r for r in report.data["runs"]}
    assert len(rows) == 12
    assert rows["mini/b", "greedy", 1]["status"] == "pending"
    assert rows["mini/b", "greedy", 1]["leaderboard_percentile"] == 0.0
    failed = rows["mini/c", "greedy", 1]
    assert (failed["status"], failed["medal"], failed["leaderboard_percentile"]) == (
        "failed",
        None,
        0.0,
    )
    assert rows["mini/a", "greedy", 1]["medal"] == "silver"


def test_summary_md_has_the_tables_plots_and_card(report: Report) -> None:
    text = (report.out / "summary.md").read_text()
    assert (
        "| greedy | baseline | 50.0 ± 16.7 | 16.7 ± 16.7 | 16.7 ± 16.7 | 16.7 ± 16.7 | "
        "66.7 ± 33.3 | 50.0 ± 16.7 | 50.0 / 66.7 (n=2) | 50.8 ± 20.8 | $0.0100 | 150 | 10s | "
        "3.6 | 33% | 4/6 |" in text
    )
    for heading in (
        "## All tasks",
        "## Split: low",
        "## Split: high",
        "## Paired comparison against `greedy`",
        "## Plots",
        "## Disclosure",
    ):
        assert heading in text
    assert text.index("## Split: low") < text.index("## Split: high")
    assert "| mcts | greedy | baseline | 6 | +0.0 [" in text and "| 3 / 2 / 1 |" in text
    assert "| mini/c | 2 | -50.0 | 40.0 | 30.0 | -10.0 |" in text
    assert "![Medal rates (mean ± SEM over seeds)](medal_rates.png)" in text


def test_terminal_tables_show_the_same_cells(report: Report) -> None:
    console = Console(width=300, record=True)
    for split in report_splits(report):
        console.print(summary_table(report, split))
    table = paired_table(report)
    assert table is not None
    console.print(table)
    text = console.export_text()
    assert report_splits(report) == ["all", "low", "high"]
    assert "50.0 / 66.7 (n=2)" in text and "3 / 2 / 1" in text and "75.0 / 100.0 (n=2)" in text


def test_without_a_baseline_there_is_no_paired_section(tmp_path: Path) -> None:
    write_run(tmp_path / "runs" / "r", Spec())
    result = build_report([tmp_path / "runs"], tmp_path / "out")
    assert result.data["paired"] is None and paired_table(result) is None
    assert "## Paired" not in (tmp_path / "out" / "summary.md").read_text()
    assert "## Split" not in (tmp_path / "out" / "summary.md").read_text()


def test_a_bad_baseline_writes_nothing(sweep_dir: Path, tmp_path: Path) -> None:
    with pytest.raises(UserError, match="baseline strategy 'beam'"):
        build_report([sweep_dir], tmp_path / "out", baseline="beam")
    assert not (tmp_path / "out").exists()


def test_an_out_that_is_a_file_is_a_user_error(sweep_dir: Path, tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    with pytest.raises(UserError, match="exists and is not a directory"):
        build_report([sweep_dir], tmp_path / "file")
