"""Random search, the control (``podium.scaffolds.strategies.random_search``): it only asks for
valid actions, chooses uniformly among the kinds possible, and depends on the seed alone."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from podium.records import Action
from podium.scaffolds.strategies.random_search import MAX_DEBUG_DEPTH, RandomSearch
from podium.tree import SearchTree
from tests.scaffolds.strategies.trees import act, debug_chain, node, tree_of


def mixed_tree() -> SearchTree:
    return tree_of(
        node(1, metric=0.5),
        node(2, buggy=True),  # has a child: not a leaf
        node(3, "debug", (2,), metric=0.7),
        node(4, buggy=True),  # debuggable
        node(5, "improve", (1,), buggy=True, code=""),  # no code: not debuggable
        node(6, "improve", (3,), buggy=True),  # debuggable
    )


def actions(tree: SearchTree, seeds: int = 600) -> list[Action]:
    return [RandomSearch().next_action(tree, random.Random(seed)) for seed in range(seeds)]


def test_name_and_no_params() -> None:
    strategy = RandomSearch(None)
    assert strategy.name == "random" and strategy.params is None
    assert MAX_DEBUG_DEPTH == 3


def test_only_valid_actions() -> None:
    tree = mixed_tree()
    for action in actions(tree):
        if action.operator == "draft":
            assert action.parent_ids == ()
        elif action.operator == "improve":
            (parent,) = action.parent_ids
            assert tree.get(parent).is_good
        else:
            assert action.operator == "debug"
            (parent,) = action.parent_ids
            assert tree.get(parent).is_buggy and tree.is_leaf(parent) and tree.get(parent).code


def test_each_kind_is_equally_likely_and_each_node_is_picked() -> None:
    picked = actions(mixed_tree())
    kinds = Counter(a.operator for a in picked)
    assert set(kinds) == {"draft", "improve", "debug"}
    for count in kinds.values():
        assert count / len(picked) == pytest.approx(1 / 3, abs=0.07)
    assert {a.parent_ids for a in picked if a.operator == "improve"} == {(1,), (3,)}
    assert {a.parent_ids for a in picked if a.operator == "debug"} == {(4,), (6,)}


def test_an_empty_tree_is_drafted() -> None:
    assert set(actions(tree_of(), 20)) == {act("draft")}
    no_code = tree_of(node(1, buggy=True, code=""))
    assert set(actions(no_code, 20)) == {act("draft")}


def test_only_good_nodes_means_draft_or_improve() -> None:
    tree = tree_of(node(1, metric=0.5), node(2, metric=0.6))
    assert set(actions(tree, 100)) == {act("draft"), act("improve", (1,)), act("improve", (2,))}


@pytest.mark.parametrize(("chain_length", "debugged"), [(3, True), (4, False)])
def test_debug_depth_limit(chain_length: int, debugged: bool) -> None:
    chain = debug_chain(chain_length)
    tree = tree_of(*chain)
    ops = {a.operator for a in actions(tree, 100)}
    assert ops == ({"draft", "debug"} if debugged else {"draft"})


def test_a_leaf_being_debugged_is_not_picked_again() -> None:
    tree = tree_of(node(1, buggy=True), node(2, buggy=True))
    tree.pending = [act("debug", (1,))]
    assert {a.parent_ids for a in actions(tree, 100) if a.operator == "debug"} == {(2,)}


def test_deterministic_per_seed() -> None:
    def run(seed: int) -> list[Action]:
        rng, tree = random.Random(seed), mixed_tree()
        return [RandomSearch().next_action(tree, rng) for _ in range(30)]

    assert run(3) == run(3)
    assert len({tuple(run(seed)) for seed in range(5)}) == 5
