"""Paired comparison of mcts with greedy on the scenario sweep (conftest.py's table)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from podium.benchmarks.reports.paired import paired
from podium.benchmarks.reports.runs import RunSet, load_runs
from podium.errors import UserError
from tests.benchmarks.reports.fakes import Spec, write_run


@pytest.fixture(scope="module")
def mcts(runset: RunSet) -> dict[str, Any]:
    result = paired(runset, "greedy")
    assert result["baseline"] == "greedy"
    (comparison,) = result["comparisons"]
    return comparison


def test_pairs_count_missing_runs_as_zero_and_equal_percentiles_as_ties(
    mcts: dict[str, Any],
) -> None:
    # percentile differences mcts − greedy: a 0, +6; b +30, +20 (greedy's b1 missing);
    # c −20, 0 (greedy's c1 failed, mcts's c1 invalid: 0 vs 0, a tie)
    assert (mcts["strategy"], mcts["model"], mcts["n_pairs"], mcts["n_tasks"]) == (
        "mcts",
        "baseline",
        6,
        3,
    )
    assert (mcts["wins"], mcts["ties"], mcts["losses"]) == (3, 2, 1)
    assert mcts["percentile"]["mean_diff"] == pytest.approx(6.0)
    # medal differences: a 0, 0; b +1, 0; c −1, 0
    assert mcts["any_medal_pp"]["mean_diff"] == pytest.approx(0.0)


def test_per_task_differences(mcts: dict[str, Any]) -> None:
    rows = {row["task"]: row for row in mcts["per_task"]}
    assert rows["mini/a"] == pytest.approx(
        {
            "task": "mini/a",
            "pairs": 2,
            "any_medal_pp": 0.0,
            "percentile_diff": 3.0,
            "baseline_percentile": 92.5,
            "percentile": 95.5,
        }
    )
    assert rows["mini/b"]["any_medal_pp"] == 50.0 and rows["mini/b"]["percentile_diff"] == 25.0
    assert rows["mini/c"]["any_medal_pp"] == -50.0 and rows["mini/c"]["percentile_diff"] == -10.0


def test_the_interval_contains_the_mean_and_is_reproducible(
    mcts: dict[str, Any], runset: RunSet
) -> None:
    low, high = mcts["percentile"]["ci95"]
    # Resampling 3 tasks: the mean lies between the worst task's (−10) and the best's (+25).
    assert -10.0 <= low < 6.0 < high <= 25.0
    again = paired(runset, "greedy")["comparisons"][0]
    assert again["percentile"]["ci95"] == [low, high]
    assert again["any_medal_pp"]["ci95"] == mcts["any_medal_pp"]["ci95"]


def test_an_unknown_baseline_lists_the_strategies(runset: RunSet) -> None:
    with pytest.raises(UserError) as caught:
        paired(runset, "beam")
    assert caught.value.message == "baseline strategy 'beam' is not in these runs"
    assert caught.value.hint == "strategies present: greedy, mcts"


def test_a_baseline_without_rivals_is_a_user_error(tmp_path: Path) -> None:
    write_run(tmp_path / "g", Spec())
    write_run(tmp_path / "m", Spec(strategy="mcts", model="openai/gpt-4.1"))
    with pytest.raises(UserError, match="nothing to compare with 'greedy'"):
        paired(load_runs([tmp_path]), "greedy")
