"""The aggregates of the scenario sweep (conftest.py's table) against hand-computed values."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from podium.benchmarks import seed_summary
from podium.experiments.reports.aggregate import aggregate
from podium.experiments.reports.runs import RunSet, load_runs
from podium.records import GradeReport
from tests.experiments.reports.fakes import Spec, write_run


@pytest.fixture(scope="module")
def groups(runset: RunSet) -> dict[str, dict[str, Any]]:
    return {g["strategy"]: g["splits"] for g in aggregate(runset)}


def approx_stat(mean: float, sem: float | None, per_seed: dict[str, float]) -> dict[str, Any]:
    return {
        "mean": pytest.approx(mean),
        "sem": None if sem is None else pytest.approx(sem),
        "per_seed": pytest.approx(per_seed),
    }


def test_medal_rates_count_missing_and_failed_runs_as_no_medal(groups: dict[str, Any]) -> None:
    greedy = groups["greedy"]["all"]
    # seed 0: a gold, c bronze → 2 of 3; seed 1: a silver; b missing, c failed → 1 of 3
    assert greedy["any_medal"] == approx_stat(50.0, 100 / 6, {"0": 200 / 3, "1": 100 / 3})
    assert greedy["gold_medal"] == approx_stat(50 / 3, 50 / 3, {"0": 100 / 3, "1": 0.0})
    assert greedy["silver_medal"] == approx_stat(50 / 3, 50 / 3, {"0": 0.0, "1": 100 / 3})
    assert greedy["bronze_medal"] == approx_stat(50 / 3, 50 / 3, {"0": 100 / 3, "1": 0.0})
    assert greedy["valid_submission"] == approx_stat(200 / 3, 100 / 3, {"0": 100.0, "1": 100 / 3})
    assert greedy["above_median"] == approx_stat(50.0, 100 / 6, {"0": 200 / 3, "1": 100 / 3})


def test_pass_at_k_over_tasks(groups: dict[str, Any]) -> None:
    # greedy: a 2 medals of 2, b 0 of 2, c 1 of 2 → pass@1 (1 + 0 + 1/2)/3, pass@2 (1 + 0 + 1)/3
    assert groups["greedy"]["all"]["pass_at_k"] == pytest.approx({"1": 50.0, "2": 200 / 3})
    # mcts: a 2 of 2, b 1 of 2, c 0 of 2
    assert groups["mcts"]["all"]["pass_at_k"] == pytest.approx({"1": 50.0, "2": 200 / 3})


def test_mean_percentile_counts_missing_as_zero(groups: dict[str, Any]) -> None:
    # seed 0: (95 + 40 + 80)/3; seed 1: (90 + 0 + 0)/3
    expected = approx_stat((215 / 3 + 30) / 2, (215 / 3 - 30) / 2, {"0": 215 / 3, "1": 30.0})
    assert groups["greedy"]["all"]["leaderboard_percentile"] == expected


def test_complexity_splits(groups: dict[str, Any]) -> None:
    assert list(groups["greedy"]) == ["all", "low", "high"]
    low, high = groups["greedy"]["low"], groups["greedy"]["high"]
    assert (low["tasks"], high["tasks"]) == (["mini/a", "mini/b"], ["mini/c"])
    assert low["any_medal"] == approx_stat(50.0, 0.0, {"0": 50.0, "1": 50.0})
    assert high["any_medal"] == approx_stat(50.0, 50.0, {"0": 100.0, "1": 0.0})
    assert high["pass_at_k"] == pytest.approx({"1": 50.0, "2": 100.0})


def test_run_counts_and_mlebench_totals(groups: dict[str, Any]) -> None:
    greedy = groups["greedy"]["all"]
    assert greedy["runs"] == {
        "expected": 6,
        "finished": 4,
        "failed": 1,
        "missing": 1,
        "incomplete": 2,  # the failed run and the missing one: left out of pairs
    }
    assert {k: v for k, v in greedy.items() if k.startswith("total_")} == {
        "total_runs": 6,
        "total_runs_with_submissions": 4,
        "total_valid_submissions": 4,
        "total_medals": 3,
        "total_gold_medals": 1,
        "total_silver_medals": 1,
        "total_bronze_medals": 1,
        "total_above_median": 3,
    }


def test_cost_is_over_the_runs_that_exist(groups: dict[str, Any]) -> None:
    cost = groups["greedy"]["all"]["cost"]
    assert cost == pytest.approx(
        {
            "runs": 5,
            "mean_tokens": 150.0,
            "mean_usd": 0.01,
            "mean_elapsed_s": 10.0,
            "mean_nodes": 18 / 5,
            "buggy_rate": 6 / 18,
            "total_tokens": 750,
            "total_usd": 0.05,
            "total_elapsed_s": 50.0,
            "total_nodes": 18,
            "total_buggy": 6,
        }
    )


def test_one_seed_has_no_sem(tmp_path: Path) -> None:
    write_run(tmp_path / "r", Spec(medal="gold"))
    (group,) = aggregate(load_runs([tmp_path]))
    assert group["splits"]["all"]["any_medal"] == {
        "mean": 100.0,
        "sem": None,
        "per_seed": {"0": 100.0},
    }
    assert group["splits"]["all"]["pass_at_k"] == {"1": 100.0}


def _report(task: str, medal: str | None, valid: bool) -> GradeReport:
    medals = {f"{m}_medal": medal == m for m in ("gold", "silver", "bronze")}
    return GradeReport(
        competition_id=task,
        score=1.0 if valid else None,
        gold_threshold=1.0,
        silver_threshold=1.0,
        bronze_threshold=1.0,
        median_threshold=1.0,
        any_medal=medal is not None,
        above_median=medal is not None,
        submission_exists=valid,
        valid_submission=valid,
        is_lower_better=False,
        created_at=datetime.now(UTC),
        submission_path="x.csv",
        **medals,
    )


def test_the_rates_agree_with_mlebench_seed_summary(runset: RunSet) -> None:
    """The same per-seed method as ``podium.benchmarks.seed_summary`` (finished runs only)."""
    by_seed: dict[int, list[GradeReport]] = {0: [], 1: []}
    for cell, run in runset.runs.items():
        if cell.strategy == "mcts" and run.finished:
            by_seed[cell.seed].append(_report(cell.task, run.medal, run.valid_submission))
    expected = seed_summary(by_seed, ["mini/a", "mini/b", "mini/c"])
    (mcts,) = [g for g in aggregate(runset) if g["strategy"] == "mcts"]
    for name in ("any_medal", "gold_medal", "bronze_medal", "valid_submission", "above_median"):
        got = mcts["splits"]["all"][name]
        assert got["mean"] == pytest.approx(expected[name]["mean"])
        assert got["sem"] == pytest.approx(expected[name]["sem"])
        assert got["per_seed"] == pytest.approx(
            {str(s): v for s, v in expected[name]["per_seed"].items()}
        )
