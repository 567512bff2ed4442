"""``podium compare`` through the real command line app."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from podium.cli.app import app
from podium.errors import UserError
from tests.experiments.reports.fakes import Spec, tree, write_sweep


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
    rows = {line.split()[0]: line for line in done.output.splitlines() if "baseline" in line}
    assert "100.0" in rows["greedy"] and "1/1" in rows["greedy"]
    assert "-50.0 [-50.0, -50.0]" in done.output  # mcts − greedy, percentile
    assert "caveat: mcts vs greedy (baseline): small n (only 1 task," in done.output
    assert "details in summary.md" in done.output
    assert max(map(len, done.output.splitlines())) <= 100  # a pipe: the tables fit 100
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


def test_identical_trees_are_said_in_the_terminal_and_summary_md(tmp_path: Path) -> None:
    runs: dict[tuple[str, str, int], Spec | str] = {
        ("mini/a", strategy, seed): Spec(strategy=strategy, seed=seed, journal=tree(f"s{seed}"))
        for strategy in ("greedy", "mcts")
        for seed in (0, 1)
    }
    sweep = write_sweep(tmp_path, ["mini/a"], ["greedy", "mcts"], [0, 1], runs)
    done = CliRunner().invoke(app, ["compare", str(sweep), "--baseline", "greedy"])
    assert done.exit_code == 0, done.output
    said = "2 of 2 pairs have identical trees: these strategies made the same choices there"
    assert said in " ".join(done.output.split())  # the terminal wraps it at 100 columns
    row = next(
        line
        for line in done.output.splitlines()
        if line.startswith("mcts ") and "%" not in line and "identical" in line
    )
    assert "identical trees" in row and "+0.0 [+0.0, +0.0]" not in row
    assert f"- **mcts vs greedy (baseline): {said}" in (sweep / "report" / "summary.md").read_text()
