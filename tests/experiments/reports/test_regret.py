"""Selection regret in a report, on crafted runs whose selection.json says what each lost."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from podium.errors import UserError
from podium.experiments.reports.regret import regret_rows, selection_regret
from podium.experiments.reports.runs import load_runs
from tests.experiments.reports.fakes import Spec, write_run


def selection(
    chosen: tuple[int, float, str | None], best: tuple[int, float, str | None], rho: float | None
) -> dict[str, Any]:
    """A run's selection.json: (node, percentile, medal) of the chosen and the best node."""
    ranks = {"gold": 3, "silver": 2, "bronze": 1}
    return {
        "format": "podium-selection/1",
        "chosen_by": "validation",
        "good_nodes": 5,
        "chosen": {"node_id": chosen[0], "score": 0.5, "percentile": chosen[1], "medal": chosen[2]},
        "best": {"node_id": best[0], "score": 0.6, "percentile": best[1], "medal": best[2]},
        "regret": {
            "score": 0.1 if chosen[0] != best[0] else 0.0,
            "percentile": best[1] - chosen[1],
            "medals_lost": ranks.get(best[2] or "", 0) - ranks.get(chosen[2] or "", 0),
        },
        "rank_correlation": rho,
        "held_out_rank_correlation": None,
    }


RUNS = {  # (strategy, seed): selection.json, or None for a run without one
    ("greedy", 0): selection((3, 80.0, "silver"), (5, 90.0, "gold"), 0.5),
    ("greedy", 1): selection((2, 60.0, None), (2, 60.0, None), None),
    ("mcts", 0): selection((1, 40.0, None), (4, 70.0, "silver"), -0.25),
    ("mcts", 1): None,
}


@pytest.fixture
def root(tmp_path: Path) -> Path:
    for (strategy, seed), data in RUNS.items():
        path = write_run(tmp_path / f"{strategy}{seed}", Spec(strategy=strategy, seed=seed))
        if data is not None:
            (path / "selection.json").write_text(json.dumps(data))
    return tmp_path


def test_regret_per_strategy_is_what_the_runs_lost(root: Path) -> None:
    result = selection_regret(load_runs([root]))
    greedy, mcts = result["groups"]
    assert greedy["strategy"] == "greedy" and greedy["runs"] == 2
    assert greedy["regret_percentile"]["mean"] == pytest.approx(5.0)  # (10 + 0) / 2
    assert greedy["regret_percentile"]["sem"] == pytest.approx(5.0)  # stdev 7.07 / √2
    assert (greedy["not_best"], greedy["medals_lost"], greedy["runs_losing_a_medal"]) == (1, 1, 1)
    assert greedy["oracle_any_medal_pct"] == 50.0
    assert greedy["mean_rank_correlation"] == 0.5 and greedy["rank_correlation_runs"] == 1
    assert mcts["runs"] == 1 and mcts["regret_percentile"] == {"mean": 30.0, "sem": None}
    assert mcts["medals_lost"] == 2
    assert result["notes"] == [
        "1 of 4 finished runs have no selection regret (no selection.json: ungraded, no good "
        "node, or an older Podium)"
    ]
    assert "Post-hoc" in result["label"] and "No search used" in result["label"]
    rows = regret_rows(result)
    assert rows[0] == [
        "greedy", "baseline", "2", "validation", "5.0 ± 5.0", "1/2", "1 (1)", "50.0", "+0.50 (1)"
    ]  # fmt: skip
    assert rows[1][4] == "30.0" and rows[1][-1] == "-0.25 (1)"


def test_per_run_rows_name_the_chosen_and_the_best_node(root: Path) -> None:
    runs = {(r["strategy"], r["seed"]): r for r in selection_regret(load_runs([root]))["runs"]}
    assert set(runs) == {("greedy", 0), ("greedy", 1), ("mcts", 0)}
    row = runs["greedy", 0]
    assert (row["chosen_node"], row["best_node"], row["regret_percentile"]) == (3, 5, 10.0)
    assert (row["chosen_percentile"], row["best_percentile"], row["best_medal"]) == (
        80.0,
        90.0,
        "gold",
    )


def test_a_damaged_selection_file_is_one_line_naming_it(root: Path) -> None:
    (root / "mcts1" / "selection.json").write_text("{not json")
    with pytest.raises(UserError, match=r"selection\.json"):
        selection_regret(load_runs([root]))
