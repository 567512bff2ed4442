"""AIDE's greedy policy on crafted trees (``podium.scaffolds.strategies.greedy``) and the
``SearchTree`` helpers it relies on."""

from __future__ import annotations

import random

import pytest

from podium.records import Action, NodeState
from podium.scaffolds.strategies.greedy import Greedy, GreedyParams
from podium.tree import SearchTree
from tests.scaffolds.strategies.trees import act, debug_chain, node, tree_of


def greedy(num_drafts: int = 2, debug_prob: float = 0.5, max_debug_depth: int = 3) -> Greedy:
    return Greedy(
        GreedyParams(num_drafts=num_drafts, debug_prob=debug_prob, max_debug_depth=max_debug_depth)
    )


DRAFT = act("draft")


# --- drafting ----------------------------------------------------------------------------


def test_defaults_are_aides() -> None:
    params = Greedy().params
    assert (params.num_drafts, params.debug_prob, params.max_debug_depth) == (5, 0.5, 3)


@pytest.mark.parametrize("done", [0, 1, 4])
def test_drafts_until_num_drafts(done: int) -> None:
    tree = tree_of(*(node(i, metric=0.5) for i in range(1, done + 1)))
    assert greedy(num_drafts=5).next_action(tree, random.Random(0)) == DRAFT


def test_stops_drafting_at_num_drafts() -> None:
    tree = tree_of(*(node(i, metric=0.5 + i / 100) for i in range(1, 6)))
    action = greedy(num_drafts=5, debug_prob=0.0).next_action(tree, random.Random(0))
    assert action == Action(operator="improve", parent_ids=(5,))


def test_buggy_drafts_count_as_drafts() -> None:
    tree = tree_of(node(1, buggy=True), node(2, buggy=True), node(3, metric=0.5))
    action = greedy(num_drafts=3, debug_prob=0.0).next_action(tree, random.Random(0))
    assert action == Action(operator="improve", parent_ids=(3,))


def test_pending_drafts_count_toward_num_drafts() -> None:
    tree = tree_of(node(1, metric=0.5), node(2, metric=0.6), node(3, metric=0.7))
    strategy = greedy(num_drafts=5, debug_prob=0.0)
    tree.pending = [DRAFT]
    assert strategy.next_action(tree, random.Random(0)) == DRAFT  # 3 done + 1 pending < 5
    tree.pending = [DRAFT, DRAFT]
    assert strategy.next_action(tree, random.Random(0)).operator == "improve"


def test_pending_improves_do_not_count_as_drafts() -> None:
    tree = tree_of(node(1, metric=0.5))
    tree.pending = [Action(operator="improve", parent_ids=(1,))] * 3
    assert greedy(num_drafts=2).next_action(tree, random.Random(0)) == DRAFT


def test_no_good_node_means_draft_again() -> None:
    tree = tree_of(node(1, buggy=True, code=""), node(2, buggy=True, code=""))
    for debug_prob in (0.0, 1.0):
        strategy = greedy(num_drafts=2, debug_prob=debug_prob)
        assert strategy.next_action(tree, random.Random(0)) == DRAFT


# --- debugging ---------------------------------------------------------------------------


def test_buggy_leaf_is_debugged_with_debug_prob_one() -> None:
    tree = tree_of(node(1, metric=0.9), node(2, buggy=True))
    action = greedy(num_drafts=2, debug_prob=1.0).next_action(tree, random.Random(0))
    assert action == Action(operator="debug", parent_ids=(2,))


def test_buggy_node_with_children_is_not_a_leaf() -> None:
    tree = tree_of(node(1, buggy=True), node(2, metric=0.4), node(3, "debug", (1,), metric=0.6))
    assert not tree.is_leaf(1)
    action = greedy(num_drafts=2, debug_prob=1.0).next_action(tree, random.Random(0))
    assert action == Action(operator="improve", parent_ids=(3,))


@pytest.mark.parametrize(
    ("chain_length", "max_debug_depth", "debugged"),
    [(0, 0, True), (1, 0, False), (3, 3, True), (4, 3, False), (20, 20, True), (21, 20, False)],
)
def test_max_debug_depth_is_inclusive(
    chain_length: int, max_debug_depth: int, debugged: bool
) -> None:
    chain = debug_chain(chain_length, start=2)
    tree = tree_of(node(1, metric=0.5), *chain)
    assert tree.debug_depth(chain[-1]) == chain_length
    strategy = greedy(num_drafts=2, debug_prob=1.0, max_debug_depth=max_debug_depth)
    action = strategy.next_action(tree, random.Random(0))
    if debugged:
        assert action == Action(operator="debug", parent_ids=(chain[-1].id,))
    else:
        assert action == Action(operator="improve", parent_ids=(1,))


def test_debug_depth_counts_only_consecutive_debugs() -> None:
    # buggy draft -> debug (good) -> improve (buggy) -> debug (buggy): depth 1, not 2
    tree = tree_of(
        node(1, buggy=True),
        node(2, "debug", (1,), metric=0.5),
        node(3, "improve", (2,), buggy=True),
        node(4, "debug", (3,), buggy=True),
    )
    assert tree.debug_depth(tree.get(4)) == 1
    strategy = greedy(num_drafts=1, debug_prob=1.0, max_debug_depth=1)
    assert strategy.next_action(tree, random.Random(0)) == act("debug", (4,))


def test_buggy_node_without_code_is_not_debugged() -> None:
    tree = tree_of(node(1, metric=0.5), node(2, buggy=True, code=""))
    action = greedy(num_drafts=2, debug_prob=1.0).next_action(tree, random.Random(0))
    assert action == Action(operator="improve", parent_ids=(1,))


def test_node_being_debugged_is_not_picked_again() -> None:
    tree = tree_of(node(1, buggy=True), node(2, buggy=True), node(3, metric=0.5))
    tree.pending = [Action(operator="debug", parent_ids=(1,))]
    strategy = greedy(num_drafts=3, debug_prob=1.0)
    for seed in range(20):
        assert strategy.next_action(tree, random.Random(seed)) == act("debug", (2,))
    tree.pending.append(Action(operator="debug", parent_ids=(2,)))
    assert strategy.next_action(tree, random.Random(0)) == act("improve", (3,))


def test_debug_picks_among_all_debuggable_leaves() -> None:
    tree = tree_of(node(1, buggy=True), node(2, buggy=True), node(3, buggy=True))
    strategy = greedy(num_drafts=3, debug_prob=1.0)
    picked = {strategy.next_action(tree, random.Random(seed)).parent_ids for seed in range(40)}
    assert picked == {(1,), (2,), (3,)}


# --- improving ---------------------------------------------------------------------------


@pytest.mark.parametrize(("lower_is_better", "best"), [(True, 2), (False, 3)])
def test_improves_the_best_good_node(lower_is_better: bool, best: int) -> None:
    values = {1: 0.5, 2: 0.1, 3: 0.9}
    tree = tree_of(
        *(node(i, metric=v, lower_is_better=lower_is_better) for i, v in values.items()),
        node(4, buggy=True),
        lower_is_better=lower_is_better,
    )
    action = greedy(num_drafts=3, debug_prob=0.0).next_action(tree, random.Random(0))
    assert action == Action(operator="improve", parent_ids=(best,))


def test_buggy_node_with_a_better_metric_is_not_improved() -> None:
    # e.g. a metric line was printed but the submission was malformed
    tree = tree_of(node(1, metric=0.6), node(2, metric=0.99, buggy=True))
    action = greedy(num_drafts=2, debug_prob=0.0).next_action(tree, random.Random(0))
    assert action == Action(operator="improve", parent_ids=(1,))


def test_ties_go_to_the_earliest_node() -> None:
    tree = tree_of(node(1, metric=0.3), node(2, metric=0.7), node(3, metric=0.7))
    action = greedy(num_drafts=3, debug_prob=0.0).next_action(tree, random.Random(0))
    assert action == Action(operator="improve", parent_ids=(2,))


# --- randomness --------------------------------------------------------------------------


def mixed_tree() -> SearchTree:
    return tree_of(
        node(1, metric=0.5),
        node(2, buggy=True),
        node(3, buggy=True),
        node(4, metric=0.7),
        node(5, "debug", (2,), buggy=True),
        node(6, buggy=True),
    )


def decisions(seed: int, n: int = 30) -> list[Action]:
    strategy, tree, rng = greedy(num_drafts=4, debug_prob=0.5), mixed_tree(), random.Random(seed)
    return [strategy.next_action(tree, rng) for _ in range(n)]


def test_same_seed_gives_the_same_decisions() -> None:
    first = decisions(7)
    assert first == decisions(7)
    assert len(set(first)) > 2  # the sequence really depends on the RNG


def test_different_seeds_give_different_decisions() -> None:
    assert len({tuple(decisions(seed)) for seed in range(5)}) > 1


def test_half_debug_prob_picks_both_debug_and_improve() -> None:
    strategy, tree = greedy(num_drafts=4, debug_prob=0.5), mixed_tree()
    ops = [strategy.next_action(tree, random.Random(seed)).operator for seed in range(200)]
    assert set(ops) == {"debug", "improve"}
    assert 60 <= ops.count("debug") <= 140


# --- SearchTree helpers ------------------------------------------------------------------


def test_best_node_respects_direction_and_ignores_buggy_and_unfinished() -> None:
    unfinished = node(5, metric=0.0).model_copy(update={"state": NodeState.EXECUTING})
    for lower, best in ((True, 2), (False, 3)):
        tree = tree_of(
            node(1, metric=0.5, lower_is_better=lower),
            node(2, metric=0.2, lower_is_better=lower),
            node(3, metric=0.8, lower_is_better=lower),
            node(4, metric=-5.0 if lower else 5.0, buggy=True, lower_is_better=lower),
            unfinished,
            lower_is_better=lower,
        )
        best_node = tree.best_node()
        assert best_node is not None
        assert best_node.id == best


def test_best_node_of_a_tree_without_good_nodes_is_none() -> None:
    assert tree_of().best_node() is None
    assert tree_of(node(1, buggy=True), node(2)).best_node() is None


def test_debug_depth() -> None:
    tree = tree_of(
        *debug_chain(3),
        node(5, "improve", (4,), buggy=True),
        node(6, "debug", (5,), buggy=True),
    )
    assert [tree.debug_depth(tree.get(i)) for i in range(1, 7)] == [0, 1, 2, 3, 0, 1]


def test_lineage_follows_first_parents_oldest_first() -> None:
    tree = tree_of(
        node(1, metric=0.5),
        node(2, metric=0.6),
        node(3, "improve", (1,), metric=0.7),
        node(4, "crossover", (3, 2), metric=0.8),
    )
    assert [n.id for n in tree.lineage(tree.get(4))] == [1, 3, 4]
    assert [n.id for n in tree.lineage(tree.get(1))] == [1]


def test_children_and_leaves_in_a_dag() -> None:
    tree = tree_of(
        node(1, metric=0.5),
        node(2, metric=0.6),
        node(3, "improve", (1,), metric=0.7),
        node(4, "crossover", (3, 2), metric=0.8),
    )
    assert [n.id for n in tree.children(1)] == [3]
    assert [n.id for n in tree.children(2)] == [4]
    assert [n.id for n in tree.children(3)] == [4]
    assert tree.children(4) == []
    assert [i for i in range(1, 5) if tree.is_leaf(i)] == [4]
    assert [n.id for n in tree.drafts()] == [1, 2]


def test_pending_helpers() -> None:
    tree = tree_of(node(1, buggy=True), node(2, metric=0.5))
    tree.pending = [DRAFT, act("debug", (1,)), act("improve", (2,)), DRAFT]
    assert tree.pending_count("draft") == 2
    assert tree.pending_count("debug") == 1
    assert tree.pending_parents() == {1, 2}


def test_workers_do_not_all_improve_the_best_node_unless_allowed() -> None:
    tree = tree_of(node(1, metric=0.5), node(2, metric=0.9), node(3, metric=0.7))
    tree.pending = [act("improve", (2,))]
    strategy = greedy(num_drafts=3, debug_prob=0.0)
    assert strategy.next_action(tree, random.Random(0)) == act("improve", (3,))
    tree.pending += [act("improve", (3,)), act("improve", (1,))]
    assert strategy.next_action(tree, random.Random(0)) == act("draft")
    shared = Greedy(GreedyParams(num_drafts=3, debug_prob=0.0, parallel_improve=True))
    assert shared.next_action(tree, random.Random(0)) == act("improve", (2,))


def test_a_busy_best_node_with_lower_is_better_falls_to_the_next_lowest() -> None:
    tree = tree_of(
        node(1, metric=0.5, lower_is_better=True),
        node(2, metric=0.1, lower_is_better=True),
        node(3, metric=0.3, lower_is_better=True),
        lower_is_better=True,
    )
    tree.pending = [act("improve", (2,))]
    assert greedy(num_drafts=3, debug_prob=0.0).next_action(tree, random.Random(0)) == act(
        "improve", (3,)
    )
