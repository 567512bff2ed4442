"""Paired comparison of mcts with greedy on the scenario sweep (conftest.py's table), and on
crafted sweeps whose runs built identical search trees."""

from __future__ import annotations

import math
import statistics
from pathlib import Path
from typing import Any

import pytest

from podium.errors import UserError
from podium.experiments.reports.markdown import paired_rows
from podium.experiments.reports.paired import Pair, comparison, paired
from podium.experiments.reports.record import load_run, tree_fingerprint
from podium.experiments.reports.runs import RunSet, load_runs
from podium.experiments.reports.stats import pairs_needed
from podium.formats import RunDir
from podium.records import Metric, Node
from tests.experiments.reports.fakes import Spec, TreeNode, tree, write_run, write_sweep

TASKS = ("mini/a", "mini/b")
SAME = "these strategies made the same choices there; the difference is not evidence of equivalence"


@pytest.fixture(scope="module")
def mcts(runset: RunSet) -> dict[str, Any]:
    result = paired(runset, "greedy")
    assert result["baseline"] == "greedy"
    (comparison,) = result["comparisons"]
    return comparison


def test_pairs_with_a_missing_run_are_left_out_and_counted(mcts: dict[str, Any]) -> None:
    # complete pairs, percentile differences mcts − greedy: a 0, +6; b +30; c −20. Left out:
    # b1 (greedy's missing) and c1 (greedy's failed; mcts's invalid run is complete: a result).
    assert (mcts["strategy"], mcts["model"], mcts["n_pairs"], mcts["n_tasks"]) == (
        "mcts",
        "baseline",
        4,
        3,
    )
    assert mcts["incomplete"] == {"pairs": 2, "strategy_missing": 0, "baseline_missing": 2}
    assert mcts["caveats"][0].startswith("incomplete: 2 of 6 pairs left out")
    assert (mcts["wins"], mcts["ties"], mcts["losses"]) == (2, 1, 1)
    assert mcts["percentile"]["mean_diff"] == pytest.approx(4.0)
    # medal differences: a 0, 0; b +1; c −1
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
            "identical_trees": 0,
        }
    )
    assert rows["mini/b"]["pairs"] == 1 and rows["mini/b"]["percentile_diff"] == 30.0
    assert rows["mini/b"]["any_medal_pp"] == 100.0
    assert rows["mini/c"]["any_medal_pp"] == -100.0 and rows["mini/c"]["percentile_diff"] == -20.0


def test_the_interval_contains_the_mean_and_is_reproducible(
    mcts: dict[str, Any], runset: RunSet
) -> None:
    low, high = mcts["percentile"]["ci95"]
    # Resampling 3 tasks: the mean lies between the worst task's (−20) and the best's (+30).
    assert -20.0 <= low < 4.0 < high <= 30.0
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


def test_the_scenario_gets_exact_tests_power_and_a_small_n_caveat(mcts: dict[str, Any]) -> None:
    # non-tied differences +6, +30, −20: sign test n = 3, k = 2 → 2 (3 + 1) / 8, capped at 1
    assert mcts["sign_test_p"] == pytest.approx(1.0)
    assert mcts["permutation_p"] == 0.75  # 6 of the 8 assignments (the tie dropped) reach |Σ| ≥ 16
    assert mcts["permutation_method"] == "exact (all 8 sign assignments)"
    sd = statistics.stdev([0.0, 6.0, 30.0, -20.0])
    power = mcts["power"]
    assert power["sd"] == pytest.approx(sd)
    assert power["observed"]["delta"] == pytest.approx(4.0)
    assert (
        power["observed"]["pairs_needed"]
        == pairs_needed(sd, 4.0)
        == math.ceil(((1.959964 + 0.841621) * sd / 4.0) ** 2)
    )
    assert power["fixed"]["delta"] == 10.0 and 0 < power["fixed"]["power_now"] < 0.8
    (small,) = [c for c in mcts["caveats"] if c.startswith("small n")]
    assert "only 3 tasks, as few as 1 seed per task" in small
    assert "sign test p = 1.000, sign-flip permutation p = 0.750" in small
    assert mcts["identical_trees"] == 0 and mcts["unchecked_trees"] == 4  # no journals


def _pairs(tasks: int, seeds: int) -> list[Pair]:
    return [
        Pair(
            f"t{t}", s, 0, 0, 50.0 + t + s, 50.0, tree=f"x{t}{s}", baseline_tree="y", both_ran=True
        )
        for t in range(tasks)
        for s in range(seeds)
    ]


@pytest.mark.parametrize(
    ("tasks", "seeds", "small"),
    [(5, 5, False), (4, 5, True), (5, 4, True), (1, 1, True), (0, 0, False)],
)
def test_fewer_than_five_tasks_or_seeds_is_a_caveat(tasks: int, seeds: int, small: bool) -> None:
    c = comparison(_pairs(tasks, seeds), "mcts", "greedy", "m")
    assert any(caveat.startswith("small n") for caveat in c["caveats"]) is small
    assert c["n_pairs"] == tasks * seeds and c["identical_trees"] == 0


def _tree_sweep(root: Path, differ: set[tuple[str, int]]) -> RunSet:
    """greedy and mcts on TASKS × seeds 0, 1 with the same journal and percentile in every
    pair, except the (task, seed) pairs in ``differ``, where mcts built another tree."""
    runs: dict[tuple[str, str, int], Spec | str] = {}
    for task in TASKS:
        for seed in (0, 1):
            for strategy in ("greedy", "mcts"):
                other = strategy == "mcts" and (task, seed) in differ
                runs[task, strategy, seed] = Spec(
                    task=task,
                    strategy=strategy,
                    seed=seed,
                    percentile=70.0 if other else 60.0,
                    journal=tree(f"# {task} {seed}", "print(2)" if other else "print(1)"),
                )
    return load_runs([write_sweep(root, TASKS, ("greedy", "mcts"), (0, 1), runs)])


def test_all_identical_trees_replace_the_interval(tmp_path: Path) -> None:
    result = paired(_tree_sweep(tmp_path, set()), "greedy")
    (c,) = result["comparisons"]
    assert (c["identical_trees"], c["unchecked_trees"], c["all_identical"]) == (4, 0, True)
    assert c["percentile"]["ci95"] == [0.0, 0.0]  # the numbers stay in summary.json...
    row = paired_rows(result)[0]
    assert row[4] == row[5] == "identical trees"  # ...but no table shows them as a result
    assert "+0.0 [+0.0, +0.0]" not in row
    assert f"4 of 4 pairs have identical trees: {SAME}" in c["caveats"]
    assert "identical 4/4" in row[-1]


def test_some_identical_trees_are_flagged_beside_the_interval(tmp_path: Path) -> None:
    (c,) = paired(_tree_sweep(tmp_path, {("mini/b", 1)}), "greedy")["comparisons"]
    assert (c["identical_trees"], c["all_identical"]) == (3, False)
    assert c["caveats"][0] == f"3 of 4 pairs have identical trees: {SAME}"
    assert [t["identical_trees"] for t in c["per_task"]] == [2, 1]
    row = paired_rows({"comparisons": [c]})[0]
    assert row[5].startswith("+2.5 [") and row[-1] == "identical 3/4, small n"


def test_the_fingerprint_covers_code_parents_operator_and_metric() -> None:
    def node(i: int, **kw: Any) -> Node:
        fields: dict[str, Any] = {"operator": "draft", "code": "a", "plan": "p"} | kw
        metric = fields.pop("metric", 0.5)
        return Node(id=i, metric=Metric(value=metric, lower_is_better=False), **fields)

    base = tree_fingerprint([node(1), node(2, operator="improve", parent_ids=(1,))])
    changed = [
        [node(1, code="b"), node(2, operator="improve", parent_ids=(1,))],
        [node(1), node(2, operator="debug", parent_ids=(1,))],
        [node(1), node(2, operator="improve", parent_ids=())],
        [node(1, metric=0.6), node(2, operator="improve", parent_ids=(1,))],
        [node(2, operator="improve", parent_ids=(1,)), node(1)],  # node order
    ]
    assert all(tree_fingerprint(nodes) != base for nodes in changed)
    same = [node(1, plan="other words"), node(2, operator="improve", parent_ids=(1,))]
    assert tree_fingerprint(same) == base  # what a model says around the code is not the tree


def test_a_run_reads_its_fingerprint_from_its_journal(tmp_path: Path) -> None:
    nodes = [TreeNode(code="a"), TreeNode("improve", (1,), "b", metric=None)]
    run = load_run(write_run(tmp_path / "r", Spec(journal=nodes)))
    assert run.tree is not None and len(run.tree) == 64
    assert load_run(write_run(tmp_path / "same", Spec(seed=3, journal=nodes))).tree == run.tree
    assert load_run(write_run(tmp_path / "none", Spec())).tree is None
    broken = write_run(tmp_path / "broken", Spec())
    RunDir(broken).journal.write_bytes(b"not a database" * 100)
    assert load_run(broken).tree is None  # unreadable: not checked, never a failed report


def test_more_than_twenty_pairs_say_their_p_is_a_monte_carlo_estimate() -> None:
    c = comparison(_pairs(5, 5), "mcts", "greedy", "m")  # 24 wins and a tie
    assert c["permutation_method"].startswith("Monte Carlo (100000 random sign flips")
    # only the all-plus and all-minus assignments (2 of 2^24) reach the observed sum, so the
    # estimate is (1 + about 0) / (1 + 100 000): never 0
    assert c["permutation_p"] == pytest.approx(1 / 100_001, abs=2e-5)
    assert paired_rows({"comparisons": [c]})[0][6] == "< 0.001 (Monte Carlo)"
    assert not any(caveat.startswith("small n") for caveat in c["caveats"])
