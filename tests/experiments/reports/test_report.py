"""build_report's files: summary.json (numbers, MLE-bench names, runs), summary.md (tables)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from rich.console import Console

from podium.errors import UserError
from podium.experiments.reports import build_report, paired_table, report_splits, summary_table
from podium.experiments.reports.report import REPORT_FORMAT, Report, wall_time
from podium.experiments.reports.runs import load_runs
from tests.experiments.reports.fakes import HOST, Spec, write_run, write_sweep


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
        "66.7 ± 33.3 | 50.0 ± 16.7 | 50.0 / 66.7 (n=2) | 50.8 ± 20.8 | $0.0100 | 150 | 10s † | "
        "3.6 | 33% | 4/6 | 2 |" in text
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
    assert "| mcts | greedy | baseline | 4 (3) | +0.0 [" in text and "| 2 / 1 / 1 |" in text
    # sign test: 2 of 3 non-ties positive; 2 pairs had a missing run
    assert "| 1.000 | 2 / 1 / 1 | small n, INCOMPLETE 2 left out |" in text
    assert "| mini/c | 1 | 0 | -100.0 | 80.0 | 60.0 | -20.0 |" in text
    assert text.index("## Caveats") < text.index("## All tasks")
    assert "- **INCOMPLETE: 2 of 12 runs missing (not finished or not graded): " in text
    assert "![Medal rates (mean ± SEM over seeds)](medal_rates.png)" in text


def test_terminal_tables_show_the_key_cells_of_summary_md(report: Report) -> None:
    console = Console(width=300, record=True)
    for split in report_splits(report):
        console.print(summary_table(report, split))
    table = paired_table(report)
    assert table is not None
    console.print(table)
    text = console.export_text()
    assert report_splits(report) == ["all", "low", "high"]
    greedy = next(line for line in text.splitlines() if line.startswith("greedy"))
    assert greedy.split() == ["greedy", "baseline", "50.0", "±", "16.7", "50.8", "±", "20.8",
                              "$0.0100", "4/6", "2"]  # fmt: skip
    assert "75.0 ± 25.0" in text  # split low: mcts any medal
    mcts = next(line for line in text.splitlines() if line.startswith("mcts") and "[" in line)
    assert "2/1/1" in mcts and "small n" in mcts and "1.000" not in mcts  # p is the sign-flip's
    assert "INCOMPLETE 2 left out" in mcts
    assert text.count("details in summary.md") == 4


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


# --- wall-time comparability -----------------------------------------------------------------


def test_runs_side_by_side_shared_the_machine_whatever_their_share(report: Report) -> None:
    # The scenario: 2 runs at once of 1 core each, on 2 cores. Nothing pins a run to its core:
    # a solution's numpy uses both, so the runs' wall times carry each other's load.
    wall = report.data["wall_time"]
    assert wall["caveats"] == [
        "wall time compared across runs that shared 2 cores among 2 parallel runs (11 runs): "
        "not comparable"
    ]
    text = (report.out / "summary.md").read_text()
    assert "10s †" in text


def test_runs_one_at_a_time_have_comparable_wall_times(tmp_path: Path) -> None:
    executor = {"name": "local", "parallel": 1, "cpus_per_run": 2, "gpus_per_run": 0}
    wall = wall_time(load_runs([_two_strategies(tmp_path, executor)]))
    assert wall["comparable"] and wall["caveats"] == []
    assert [g["cpu_shares"] for g in wall["groups"]] == [{"2": 1}, {"2": 1}]


def _two_strategies(
    root: Path, executor: dict[str, object] | None, **hosts: dict[str, object]
) -> Path:
    """greedy and mcts, one run each on mini/a (``hosts``: a strategy's host.json)."""
    runs: dict[tuple[str, str, int], Spec | str] = {
        ("mini/a", s, 0): Spec(strategy=s, host=hosts.get(s, dict(HOST)))
        for s in ("greedy", "mcts")
    }
    return write_sweep(root, ["mini/a"], ["greedy", "mcts"], [0], runs, executor=executor)


def test_runs_that_shared_cores_mark_the_wall_column(tmp_path: Path) -> None:
    executor = {"name": "local", "parallel": 4, "cpus_per_run": 1, "gpus_per_run": 0}
    sweep = _two_strategies(tmp_path / "s", executor)  # 4 runs at once on HOST's 2 cores
    result = build_report([sweep], tmp_path / "out")
    wall = result.data["wall_time"]
    assert wall["caveats"] == [
        "wall time compared across runs that shared 2 cores among 4 parallel runs (2 runs): "
        "not comparable"
    ]
    assert wall["groups"][0]["shared"] == [{"cores": 2.0, "parallel": 4, "runs": 1}]
    text = (tmp_path / "out" / "summary.md").read_text()
    assert "| $0.0100 | 150 | 10s † | 4.0 |" in text
    assert "- wall time compared across runs that shared 2 cores among 4 parallel runs" in text


def test_a_recorded_cpu_share_wins_and_different_shares_do_not_compare(tmp_path: Path) -> None:
    two = {**HOST, "cpus": 8, "cpu_share": 2}
    sweep = _two_strategies(tmp_path, None, mcts=two, greedy={**HOST, "cpus": 8, "cpu_share": 1})
    wall = wall_time(load_runs([sweep]))
    assert [g["cpu_shares"] for g in wall["groups"]] == [{"1": 1}, {"2": 1}]
    assert not any(g["comparable"] for g in wall["groups"])  # each fine alone, not together
    assert wall["caveats"] == [
        "wall time compared across runs with different CPU shares (1 cores per run: 1 run, "
        "2 cores per run: 1 run): not comparable"
    ]


def test_runs_without_a_known_cpu_share_are_not_comparable(tmp_path: Path) -> None:
    write_run(tmp_path / "g", Spec())  # a run dir of podium run: no sweep, no cpu_share
    wall = wall_time(load_runs([tmp_path]))
    assert wall["groups"][0]["unknown"] == 1 and not wall["comparable"]
    assert wall["caveats"][0].startswith("wall time of 1 run has no known CPU share")


def test_a_group_without_runs_has_no_wall_time_to_mark(tmp_path: Path) -> None:
    runs: dict[tuple[str, str, int], Spec | str] = {("mini/a", "greedy", 0): Spec()}
    one_at_a_time = {"name": "local", "parallel": 1, "cpus_per_run": 1, "gpus_per_run": 0}
    sweep = write_sweep(tmp_path, ["mini/a"], ["greedy", "mcts"], [0], runs, executor=one_at_a_time)
    wall = wall_time(load_runs([sweep]))  # mcts pending
    assert wall["comparable"] and [g["runs"] for g in wall["groups"]] == [1, 0]
