"""``podium compare`` through the real command line app."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from podium.cli.app import app
from podium.errors import UserError
from tests.benchmarks.reports.fakes import Spec, write_sweep


@pytest.fixture(scope="module")
def sweep(tmp_path_factory: pytest.TempPathFactory) -> Path:
    runs = {
        ("mini/a", "greedy", 0): Spec(medal="gold", percentile=90.0),
        ("mini/a", "mcts", 0): Spec(strategy="mcts", percentile=40.0),
    }
    return write_sweep(tmp_path_factory.mktemp("sweep"), ["mini/a"], ["greedy", "mcts"], [0], runs)


def test_compare_prints_the_table_and_writes_the_report_into_the_sweep(sweep: Path) -> None:
    done = CliRunner().invoke(app, ["compare", str(sweep), "--baseline", "greedy"])
    assert done.exit_code == 0, done.output
    rows = {line.split()[1]: line for line in done.output.splitlines() if "baseline" in line}
    assert "100.0" in rows["greedy"] and "1/1" in rows["greedy"]
    assert "-100.0 [-100.0, -100.0]" in done.output  # mcts − greedy, any medal (pp)
    assert "All 2 runs executed their code in the bwrap sandbox" in done.output
    assert f"report: {sweep / 'report'} (summary.json, summary.md, " in done.output
    assert (sweep / "report" / "summary.md").is_file()


def test_several_directories_need_out(sweep: Path, tmp_path: Path) -> None:
    done = CliRunner().invoke(app, ["compare", str(sweep), str(sweep)])
    assert isinstance(done.exception, UserError)
    assert done.exception.message == "several directories: say where the report goes"
    assert done.exception.hint is not None and "--out" in done.exception.hint
    done = CliRunner().invoke(
        app, ["compare", str(sweep), str(sweep), "--out", str(tmp_path / "r")]
    )
    assert done.exit_code == 0, done.output
    assert (tmp_path / "r" / "summary.json").is_file()


def test_an_unknown_baseline_is_a_user_error_with_the_strategies(sweep: Path) -> None:
    done = CliRunner().invoke(app, ["compare", str(sweep), "--baseline", "beam"])
    assert isinstance(done.exception, UserError)
    assert done.exception.hint == "strategies present: greedy, mcts"
