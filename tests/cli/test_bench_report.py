"""``podium bench --resume`` on a finished sweep writes its report beside an earlier comparison,
never over it: the files ``podium compare SWEEP --baseline ...`` wrote into SWEEP/report, and any
file a user put there, are still there, byte for byte. Fake sweeps (no run is executed: every
run of the grid has finished)."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from podium.cli.app import app
from podium.cli.bench import report_dir
from tests.experiments.reports.fakes import Spec, write_sweep


def _finished_sweep(root: Path) -> Path:
    runs: dict[tuple[str, str, int], Spec | str] = {
        ("mini/a", s, 0): Spec(strategy=s, medal="gold" if s == "greedy" else None)
        for s in ("greedy", "mcts")
    }
    return write_sweep(root, ["mini/a"], ["greedy", "mcts"], [0], runs)


def test_resume_never_replaces_an_earlier_comparison(tmp_path: Path) -> None:
    sweep = _finished_sweep(tmp_path / "sweep")
    compared = CliRunner().invoke(app, ["compare", str(sweep), "--baseline", "greedy"])
    assert compared.exit_code == 0, compared.output
    report = sweep / "report"
    (report / "notes-for-the-paper.txt").write_text("mine", encoding="utf-8")
    before = {p.name: p.read_bytes() for p in report.iterdir()}
    assert "paired_differences.png" in before

    resumed = CliRunner().invoke(app, ["bench", "--resume", str(sweep)])
    assert resumed.exit_code == 0, resumed.output
    assert {p.name: p.read_bytes() for p in report.iterdir()} == before  # untouched
    assert f"report   {sweep / 'report-2'}/summary.md" in resumed.output
    assert (sweep / "report-2" / "summary.md").is_file()

    again = CliRunner().invoke(app, ["bench", "--resume", str(sweep)])
    assert again.exit_code == 0, again.output
    assert (sweep / "report-3" / "summary.md").is_file()  # a fresh folder each time
    assert {p.name: p.read_bytes() for p in report.iterdir()} == before


def test_the_report_folder_is_reused_only_when_absent_or_empty(tmp_path: Path) -> None:
    assert report_dir(tmp_path) == tmp_path / "report"
    (tmp_path / "report").mkdir()
    assert report_dir(tmp_path) == tmp_path / "report"  # empty: nothing to lose
    (tmp_path / "report" / "x.txt").write_text("x", encoding="utf-8")
    assert report_dir(tmp_path) == tmp_path / "report-2"
    (tmp_path / "report-2").write_text("a file, not a folder", encoding="utf-8")
    assert report_dir(tmp_path) == tmp_path / "report-3"


def test_a_report_that_cannot_be_made_does_not_fail_the_sweep(tmp_path: Path) -> None:
    runs: dict[tuple[str, str, int], Spec | str] = {
        ("mini/a", "greedy", 0): Spec(),
        ("mini/a", "mcts", 0): Spec(strategy="mcts", budget={"steps": 50}),
    }
    sweep = write_sweep(tmp_path / "sweep", ["mini/a"], ["greedy", "mcts"], [0], runs)
    resumed = CliRunner().invoke(app, ["bench", "--resume", str(sweep)])
    assert resumed.exit_code == 0, resumed.output
    assert "report not written: these runs were configured with different budgets" in (
        resumed.output
    )
    assert "--allow-mixed-budgets" in resumed.output and "Traceback" not in resumed.output
    assert not (sweep / "report").exists()
