"""The terminal tables of ``podium compare`` fit 100 columns without a wrapped cell, in a pipe
and in a wider terminal, with long strategy and model names too."""

from __future__ import annotations

import json

import pytest
from rich.console import Console

from podium.cli.compare import PIPE_WIDTH
from podium.experiments.reports.report import (
    TERMINAL_WIDTH,
    Report,
    build_report,
    paired_table,
    regret_table,
    report_splits,
    summary_table,
)
from tests.experiments.reports.fakes import Spec, write_sweep
from tests.experiments.reports.test_regret import selection

LONG_STRATEGY = "evolutionary-with-islands"
LONG_MODEL = "anthropic/claude-sonnet-4-5-20250929-with-a-very-long-deployment-name"


@pytest.fixture(scope="module")
def long_names(tmp_path_factory: pytest.TempPathFactory) -> Report:
    root = tmp_path_factory.mktemp("long")
    strategies = ("greedy", LONG_STRATEGY)
    runs: dict[tuple[str, str, int], Spec | str] = {
        ("mini/a", s, seed): Spec(strategy=s, model=LONG_MODEL, seed=seed, medal="gold")
        for s in strategies
        for seed in (0, 1)
    }
    sweep = write_sweep(root / "sweep", ["mini/a"], strategies, (0, 1), runs, models=[LONG_MODEL])
    for summary in sweep.rglob("summary.json"):  # every run graded its nodes: a regret table
        chosen_and_best = selection((3, 80.0, "silver"), (5, 90.0, "gold"), 0.5)
        (summary.parent / "selection.json").write_text(json.dumps(chosen_and_best))
    return build_report([sweep], root / "report", baseline="greedy")


def _render(report: Report, width: int) -> list[str]:
    console = Console(width=width, record=True)
    for split in report_splits(report):
        console.print(summary_table(report, split))
    table = paired_table(report)
    assert table is not None
    console.print(table)
    regret = regret_table(report)
    if regret is not None:
        console.print(regret)
    return console.export_text().splitlines()


@pytest.mark.parametrize("width", [TERMINAL_WIDTH, 120])
def test_the_tables_fit_100_columns(report: Report, long_names: Report, width: int) -> None:
    for each in (report, long_names):
        lines = _render(each, width)
        assert max(map(len, lines)) <= TERMINAL_WIDTH
        tables = len(report_splits(each)) + 1 + (regret_table(each) is not None)
        assert sum("details in summary.md" in line for line in lines) == tables


def test_no_cell_wraps(report: Report, long_names: Report) -> None:
    """Every row is one line: its strategy whole, with its last column beside it."""
    lines = _render(long_names, TERMINAL_WIDTH)
    rows = [line for line in lines if line.startswith(("greedy ", f"{LONG_STRATEGY} "))]
    assert len(rows) == 5  # two result rows, one paired row, two regret rows
    assert all(line.split()[-2:] == ["2/2", "0"] for line in rows[:2])  # runs done, missing
    assert rows[2].rstrip().endswith("small n")  # flags
    assert all(line.rstrip().endswith("2 (2)") for line in rows[3:])  # medals lost (runs)
    scenario = _render(report, TERMINAL_WIDTH)
    for name in ("greedy", "mcts"):
        assert any(line.startswith(f"{name} ") and "/6 " in line for line in scenario)


def test_long_model_names_are_cut_in_the_terminal_only(long_names: Report) -> None:
    text = "\n".join(_render(long_names, TERMINAL_WIDTH))
    assert LONG_MODEL not in text and "anthropic/claude-sonnet" in text and "…" in text
    assert LONG_MODEL in (long_names.out / "summary.md").read_text()


def test_a_pipe_gets_the_same_width() -> None:
    assert PIPE_WIDTH == TERMINAL_WIDTH == 100


def test_summary_md_keeps_every_column(report: Report) -> None:
    text = (report.out / "summary.md").read_text()
    for header in ("gold %", "USD / run", "wall / run", "p (sign test)", "wins / ties / losses"):
        assert f"| {header} |" in text
    terminal = "\n".join(_render(report, TERMINAL_WIDTH))
    assert "wall / run" not in terminal and "gold %" not in terminal
    assert "USD / run" in terminal  # cost per run is a key column
