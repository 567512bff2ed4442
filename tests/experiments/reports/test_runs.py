"""Directories → runs and their grid: sweeps, loose run dirs, merging, and bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from podium.errors import UserError
from podium.experiments.reports.record import Cell
from podium.experiments.reports.report import build_report
from podium.experiments.reports.runs import RunSet, load_runs
from tests.experiments.reports.fakes import Spec, write_run, write_sweep


def test_a_sweeps_grid_includes_cells_without_a_run(runset: RunSet) -> None:
    assert len(runset.grid) == 12
    missing = Cell("greedy", "baseline", "mini/b", 1)
    assert missing in runset.grid and runset.run(missing) is None
    assert runset.status(missing) == "pending"
    assert runset.paths[missing].name == "b.greedy.baseline.s1"


def test_only_finished_runs_count_their_grade(runset: RunSet) -> None:
    failed = Cell("greedy", "baseline", "mini/c", 1)
    run = runset.run(failed)
    assert run is not None and run.gold_medal and run.leaderboard_percentile == 99.0
    assert runset.status(failed) == "failed"
    assert not runset.outcome(failed, "any_medal")
    assert runset.percentile(failed) == 0.0


def test_a_run_records_what_the_report_needs(runset: RunSet) -> None:
    run = runset.run(Cell("greedy", "baseline", "mini/a", 1))
    assert run is not None
    assert (run.medal, run.complexity, run.tokens, run.usd, run.nodes, run.buggy) == (
        "silver",
        "low",
        150,
        0.01,
        4,
        1,
    )
    assert run.config["search"] == {"strategy": "greedy", "num_drafts": 2}
    assert run.host is not None and run.host["cpus"] == 2
    assert run.curve is not None and [p.percentile for p in run.curve] == [90.0]


def test_the_summarys_grade_section_suffices(tmp_path: Path) -> None:
    write_run(tmp_path / "r", Spec(medal="silver", percentile=70.0, grade_json=False))
    run = load_runs([tmp_path / "r"]).runs[Cell("greedy", "baseline", "mini/a", 0)]
    assert (run.silver_medal, run.gold_medal, run.any_medal, run.percentile()) == (
        True,
        False,
        True,
        70.0,
    )


def test_loose_runs_make_a_grid_of_observed_tasks_and_seeds(tmp_path: Path) -> None:
    for task, seed in [("mini/a", 0), ("mini/a", 1), ("mini/b", 0)]:
        write_run(tmp_path / "runs" / f"{task[-1]}{seed}", Spec(task=task, seed=seed))
    write_run(tmp_path / "other" / "x", Spec(task="mini/a", strategy="mcts", seed=5))
    runs = load_runs([tmp_path])
    greedy = {(c.task, c.seed) for c in runs.cells("greedy", "baseline")}
    assert greedy == {("mini/a", 0), ("mini/a", 1), ("mini/b", 0), ("mini/b", 1)}
    assert {(c.task, c.seed) for c in runs.cells("mcts", "baseline")} == {("mini/a", 5)}
    assert runs.status(Cell("greedy", "baseline", "mini/b", 1)) == "missing"
    assert any("1 cells of the observed grid" in note for note in runs.notes)


def test_several_sweeps_merge(tmp_path: Path) -> None:
    write_sweep(tmp_path / "a", ["mini/a"], ["greedy"], [0], {("mini/a", "greedy", 0): Spec()})
    write_sweep(
        tmp_path / "b", ["mini/a"], ["mcts"], [0], {("mini/a", "mcts", 0): Spec(strategy="mcts")}
    )
    runs = load_runs([tmp_path / "a", tmp_path / "b"])
    assert runs.strategies() == ["greedy", "mcts"]
    assert len(runs.runs) == 2 and len(runs.manifests) == 2


def test_a_folder_of_sweeps_is_searched(tmp_path: Path) -> None:
    write_sweep(
        tmp_path / "sweeps" / "a", ["mini/a"], ["greedy"], [0, 1], {("mini/a", "greedy", 0): Spec()}
    )
    runs = load_runs([tmp_path / "sweeps"])
    assert len(runs.grid) == 2 and len(runs.runs) == 1


def test_the_same_directory_twice_is_read_once(sweep_dir: Path) -> None:
    run_dir = sweep_dir / "runs" / "a.greedy.baseline.s0"
    runs = load_runs([sweep_dir, sweep_dir, run_dir])
    assert len(runs.runs) == 11


def test_two_runs_for_one_cell_name_both(tmp_path: Path) -> None:
    first = write_run(tmp_path / "one", Spec())
    second = write_run(tmp_path / "two", Spec(medal="gold"))
    with pytest.raises(UserError) as caught:
        load_runs([first, second])
    assert str(first) in caught.value.message and str(second) in caught.value.message
    assert "mini/a / greedy / baseline / seed 0" in caught.value.message


@pytest.mark.parametrize("name", ["summary.json", "grade.json", "curve.json", "host.json"])
def test_corrupt_json_is_a_one_line_error_naming_the_file(tmp_path: Path, name: str) -> None:
    run_dir = write_run(tmp_path / "r", Spec(curve=[(1, 1.0, 10.0)]))
    (run_dir / name).write_text('{"status": "finished", "task": ', encoding="utf-8")
    with pytest.raises(UserError) as caught:
        load_runs([tmp_path])
    assert str(run_dir / name) in caught.value.message
    assert "\n" not in caught.value.message


def test_a_corrupt_manifest_names_it(sweep_dir: Path, tmp_path: Path) -> None:
    broken = tmp_path / "sweep"
    broken.mkdir()
    (broken / "sweep.json").write_text(json.dumps({"format": "podium-sweep/9"}))
    with pytest.raises(UserError, match="not a sweep manifest"):
        load_runs([broken])
    (broken / "sweep.json").write_text(json.dumps({"format": "podium-sweep/1", "runs": [{}]}))
    with pytest.raises(UserError, match="run entry 0 is malformed"):
        load_runs([broken])


def test_a_summary_without_a_strategy_is_named(tmp_path: Path) -> None:
    run_dir = write_run(tmp_path / "r", Spec())
    summary = json.loads((run_dir / "summary.json").read_text())
    del summary["strategy"]
    (run_dir / "summary.json").write_text(json.dumps(summary))
    with pytest.raises(UserError, match=r"summary\.json is not a Podium run summary"):
        load_runs([run_dir])


def test_no_runs_and_not_a_directory_are_user_errors(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="no runs in"):
        load_runs([tmp_path])
    with pytest.raises(UserError, match="is not a directory"):
        load_runs([tmp_path / "nope"])


def test_a_report_inside_the_folder_is_not_a_run(tmp_path: Path) -> None:
    write_run(tmp_path / "runs" / "r", Spec())
    build_report([tmp_path], tmp_path / "report")
    assert (tmp_path / "report" / "summary.json").is_file()
    assert len(load_runs([tmp_path]).runs) == 1
