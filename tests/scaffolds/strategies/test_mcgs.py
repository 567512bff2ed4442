"""The mcgs strategy (after MLEvolve) on crafted trees: its schedule, top-K, fusion,
aggregation, child limits, rewards, and that a replay of ``observe`` decides the same."""

from __future__ import annotations

import random
from typing import Any

import pytest
from pydantic import ValidationError

from podium.records import Action, Node
from podium.scaffolds.strategies import MCGS, MCGSParams
from podium.scaffolds.strategies.mcgs import exploration_constant, exploration_weight
from podium.tree import SearchTree
from tests.scaffolds.strategies.trees import grown, node, play

DEFAULTS = MCGSParams()


@pytest.mark.parametrize(
    ("step", "steps", "c"),
    [
        (0, 500, 1.414), (44, 500, 1.414),  # T1 = min(5 · 3², round(500 · 0.3)) = 45
        (55, 500, 1.314), (200, 500, 0.5),  # minus 0.01 a step, floored at 0.5
        (5, 20, 1.414), (10, 20, 1.374), (14, 20, 1.334),  # T1 = round(20 · 0.3) = 6, T2 = 14
        (15, 20, 0.5),  # after T2: the floor
        (100, None, 0.864), (1000, None, 0.5),  # no step budget: no T2
    ],
)  # fmt: skip
def test_the_exploration_constant_decays_by_step(step: int, steps: int | None, c: float) -> None:
    assert exploration_constant(DEFAULTS, step, steps) == pytest.approx(c)


@pytest.mark.parametrize(
    ("progress", "w"), [(0.0, 1.0), (0.49, 1.0), (0.6, 0.6), (0.7, 0.2), (0.95, 0.2)]
)
def test_the_exploration_weight_falls_with_progress(progress: float, w: float) -> None:
    assert exploration_weight(DEFAULTS, progress) == pytest.approx(w)


def two_branches(strategy: MCGS, *more: Node) -> SearchTree:
    """Branch 1: draft 1 (0.9) and three worse improves of it (3, 4, 5); branch 2: draft 2
    (0.5) and its improve 6 (0.6)."""
    return grown(
        strategy,
        node(1, metric=0.9), node(2, metric=0.5),
        node(3, "improve", (1,), metric=0.85), node(4, "improve", (1,), metric=0.84),
        node(5, "improve", (1,), metric=0.83), node(6, "improve", (2,), metric=0.6),
        *more,
    )  # fmt: skip


def decide(strategy: MCGS, tree: SearchTree, progress: float, seed: int = 0) -> Action | None:
    """The strategy's next action when ``progress`` of the step budget is decided."""
    decided = len(tree) + len(tree.pending)
    tree.steps_left = round(decided / progress) - decided
    return strategy.next_action(tree, random.Random(seed))


def test_top_k_takes_the_best_with_a_cap_per_branch() -> None:
    strategy = MCGS()
    tree = two_branches(strategy)
    assert strategy.top_k(tree, 5, 3) == [1, 3, 4, 6, 2]  # 5 (branch 1's fourth) is capped
    assert strategy.top_k(tree, 3, 2) == [1, 3, 6]


def exploiting(**params: Any) -> MCGS:
    """Top-K every time once progress passes explore_switch_end."""
    return MCGS(MCGSParams(min_exploration_weight=0.0, **params))


def test_a_top_k_pick_skips_nodes_with_topk_max_improves_children() -> None:
    strategy = exploiting(topk_max_improves=3)  # node 1 has 3 children: full for top-K
    tree = two_branches(strategy)
    picks = {decide(strategy, tree, 0.8, seed) for seed in range(40)}
    assert picks == {
        Action(operator="improve", parent_ids=(3,)),  # late top-K: 1, 3, 6 (rank 2, 3)
        Action(operator="improve", parent_ids=(6,)),
    }  # relaxed threshold (6): branch 1 is not stagnant for a top-K pick


def test_when_every_top_k_node_is_full_a_descent_starts_from_one() -> None:
    strategy = exploiting(topk_max_improves=3, topk_late_k=1)
    tree = two_branches(strategy)
    action = decide(strategy, tree, 0.8)
    assert action is not None and action.parent_ids[0] in (3, 4, 5)  # below node 1, by UCT


def fusing(**params: Any) -> MCGS:
    """Top-K picks node 1 (the best), whose branch is stagnant, and always fuses."""
    chosen = {"topk_late_k": 1, "topk_stagnation_threshold": 3, "fusion_vs_evolution_prob": 1.0}
    return exploiting(**{**chosen, **params})


def test_a_stagnant_branch_fuses_citing_the_top_two_of_every_other_branch() -> None:
    strategy = fusing()
    tree = two_branches(
        strategy,
        node(7, metric=0.4), node(8, "improve", (7,), metric=0.45),
        node(9, "improve", (7,), metric=0.3),
    )  # fmt: skip
    assert decide(strategy, tree, 0.8) == Action(
        operator="improve", parent_ids=(1,), ref_ids=(6, 2, 8, 7)
    )  # branch 1's last three good nodes (3, 4, 5) fall short of its best (1)
    capped = fusing(fusion_max_refs=3)
    assert decide(capped, grown(capped, *tree), 0.8).ref_ids == (6, 2, 8)  # type: ignore[union-attr]


def test_before_fusion_min_progress_or_by_chance_a_stagnant_branch_evolves() -> None:
    early = fusing(fusion_min_progress=0.9)
    assert decide(early, two_branches(early), 0.8) == Action(operator="improve", parent_ids=(1,))
    never = fusing(fusion_vs_evolution_prob=0.0)
    assert decide(never, two_branches(never), 0.8) == Action(operator="improve", parent_ids=(1,))


def test_a_lone_branch_fuses_with_its_own_top_two() -> None:
    strategy = fusing()
    tree = grown(
        strategy,
        node(1, metric=0.9), node(2, "improve", (1,), metric=0.85),
        node(3, "improve", (1,), metric=0.8), node(4, "improve", (1,), metric=0.7),
    )  # fmt: skip
    assert decide(strategy, tree, 0.8) == Action(operator="improve", parent_ids=(1,), ref_ids=(2,))


def aggregating(**params: Any) -> MCGS:
    """Always a UCT descent (no top-K), two drafts fill the root."""
    return MCGS(MCGSParams(num_drafts=2, min_exploration_weight=1.0, **params))


STAGNANT = (
    node(1, metric=0.9), node(2, metric=0.5), node(3, "improve", (1,), metric=0.8),
    node(4, "improve", (2,), metric=0.6), node(5, "improve", (2,), metric=0.55),
    node(6, "improve", (1,), metric=0.7),
)  # fmt: skip
AGGREGATION = Action(operator="draft", ref_ids=(1, 4))  # the best of each branch


def test_an_aggregation_cites_the_best_of_each_branch_when_the_search_stalls() -> None:
    strategy = aggregating()
    tree = grown(strategy, *STAGNANT)
    assert decide(strategy, tree, 0.5) == AGGREGATION
    assert decide(strategy, tree, 0.8) == AGGREGATION


@pytest.mark.parametrize(
    ("why", "progress", "change"),
    [
        ("too early", 0.4, {}),
        ("too late", 0.9, {}),
        ("a new best among the last 4", 0.5, {6: node(6, "improve", (1,), metric=0.95)}),
        (
            "one branch with 2 good nodes",
            0.5,
            {4: node(4, "improve", (1,), metric=0.6), 5: node(5, "improve", (1,), metric=0.55)},
        ),
    ],
)
def test_no_aggregation_unless_due(why: str, progress: float, change: dict[int, Node]) -> None:
    strategy = aggregating()
    tree = grown(strategy, *(change.get(n.id, n) for n in STAGNANT))
    action = decide(strategy, tree, progress)
    assert action is not None and action.operator == "improve", why


def test_at_most_max_fusion_drafts_aggregations() -> None:
    strategy = aggregating(max_fusion_drafts=2)
    tree = grown(strategy, *STAGNANT)
    tree.pending = [AGGREGATION]
    assert decide(strategy, tree, 0.5) == AGGREGATION
    tree.pending = [AGGREGATION, AGGREGATION]
    assert decide(strategy, tree, 0.5).operator == "improve"  # type: ignore[union-attr]


def test_rewards_and_debugs_first() -> None:
    strategy = MCGS()
    tree = grown(
        strategy,
        node(1, metric=0.5), node(2, buggy=True), node(3, "debug", (2,), metric=0.6),
        node(4, "improve", (3,), metric=0.55), node(5, "improve", (1,), buggy=True),
    )  # fmt: skip
    # a draft: 0; buggy: -1; a fix beating the best: 1.5 + 1.5; an improve of a good node: 1
    assert strategy.rewards == {1: 0.0, 2: -1.0, 3: 3.0, 4: 1.0, 5: -1.0}
    assert decide(strategy, tree, 0.1) == Action(operator="debug", parent_ids=(5,))


def flaky(node_id: int, action: Action, tree: SearchTree) -> Node:
    """Every fifth node fails; the others score a little above or below their parent."""
    if node_id % 5 == 3:
        done = node(node_id, action.operator, action.parent_ids, buggy=True)
    else:
        parents = [tree.get(p).metric for p in action.parent_ids]
        base = max((m.value for m in parents if m is not None), default=0.5)
        done = node(node_id, action.operator, action.parent_ids,
                    metric=base + ((node_id * 7) % 11 - 4) / 100)  # fmt: skip
    return done.model_copy(update={"ref_ids": action.ref_ids})


def test_child_limits_hold_over_a_run() -> None:
    params = MCGSParams(num_drafts=3, min_exploration_weight=1.0)  # UCT only
    actions, tree = play(MCGS(params), 60, flaky)
    assert sum(1 for n in tree.drafts() if not n.ref_ids) == 3
    assert {a[0] for a in actions} >= {"draft", "improve", "debug"}
    for n in tree:
        assert len(tree.children(n.id)) <= (1 if n.is_buggy else params.num_improves), n.id
    _, tree = play(MCGS(), 80, flaky)  # with top-K picks: up to topk_max_improves
    assert all(len(tree.children(n.id)) <= DEFAULTS.topk_max_improves for n in tree)


def test_a_fixed_seed_replays_and_a_resumed_strategy_decides_the_same() -> None:
    original = MCGS()
    first, tree = play(original, 60, flaky, seed=5)
    assert play(MCGS(), 60, flaky, seed=5)[0] == first
    assert {"debug", "improve"} <= {a[0] for a in first} and any(a[2] != "()" for a in first)
    resumed = MCGS()
    again = grown(resumed, *tree)  # a resume: observe replayed over the finished nodes
    tree.steps_left = again.steps_left = 20
    for seed in range(10):
        assert resumed.next_action(again, random.Random(seed)) == original.next_action(
            tree, random.Random(seed)
        )


def test_a_window_that_ends_before_it_starts_is_refused() -> None:
    with pytest.raises(ValidationError, match="must not be less than decay_start"):
        MCGSParams(decay_start=0.9)  # decay_end stays 0.7
    with pytest.raises(ValidationError, match="must not be less than aggregation_start"):
        MCGSParams(aggregation_start=0.5, aggregation_end=0.4)
