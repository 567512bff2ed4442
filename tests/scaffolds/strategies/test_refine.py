"""The refine strategy (after MLE-STAR) on crafted outcomes: the order of its actions."""

from __future__ import annotations

import random

from podium.records import Action, Node
from podium.scaffolds.strategies import Refine, RefineParams
from podium.tree import SearchTree
from tests.scaffolds.strategies import trees
from tests.scaffolds.strategies.trees import Outcome, node


def scored(node_id: int, action: Action, tree: SearchTree) -> Node:
    """Drafts score 0.5, 0.6, ...; an ablation is an analysis; a refine adds 0.01 to its
    parent; an ensemble beats its best parent by 0.05."""
    parents = [tree.get(p) for p in action.parent_ids]
    base = max((p.metric.value for p in parents if p.metric), default=0.4 + 0.1 * node_id)
    if action.operator == "ablate":
        done = node(node_id, "ablate", action.parent_ids)
        return done.model_copy(update={"kind": "analysis", "summary": "the model matters"})
    bonus = {"refine": 0.01, "ensemble": 0.05, "debug": 0.0}.get(action.operator, 0.0)
    done = node(node_id, action.operator, action.parent_ids, metric=base + bonus)
    return done.model_copy(update={"ref_ids": action.ref_ids})


def play(params: RefineParams, steps: int, outcome: Outcome = scored) -> list[tuple[str, ...]]:
    """The actions of a one-worker run of ``steps`` steps: (operator, parents, refs)."""
    return trees.play(Refine(params), steps, outcome)[0]


def test_paths_take_turns_ablate_refine_then_ensemble() -> None:
    params = RefineParams(num_solutions=2, outer_steps=1, inner_steps=2, ensemble_rounds=2)
    assert play(params, 100) == [
        ("draft", "()", "()"),
        ("draft", "()", "()"),
        ("ablate", "(1,)", "()"),
        ("ablate", "(2,)", "()"),
        ("refine", "(1,)", "(3,)"),
        ("refine", "(2,)", "(4,)"),
        ("refine", "(1,)", "(3,)"),
        ("refine", "(2,)", "(4,)"),
        ("ensemble", "(5, 6)", "()"),  # each path's best: its first refine (5: 0.51, 6: 0.61)
        ("ensemble", "(5, 6)", "(9,)"),  # the second round sees the first
    ]


def test_the_next_outer_step_ablates_the_paths_new_best() -> None:
    params = RefineParams(num_solutions=1, outer_steps=2, inner_steps=1, ensemble_rounds=0)
    assert play(params, 100) == [
        ("draft", "()", "()"),
        ("ablate", "(1,)", "()"),
        ("refine", "(1,)", "(2,)"),
        ("ablate", "(3,)", "()"),  # the refine (3) is now the path's best
        ("refine", "(3,)", "(4,)"),
    ]


def test_a_short_budget_keeps_its_last_steps_for_the_ensembles() -> None:
    params = RefineParams(num_solutions=2, ensemble_rounds=1)
    assert [a[0] for a in play(params, 6)] == [
        "draft", "draft", "ablate", "ablate", "refine", "ensemble",
    ]  # fmt: skip


def test_a_buggy_draft_is_debugged_and_a_dead_path_is_left() -> None:
    def failing(node_id: int, action: Action, tree: SearchTree) -> Node:
        if node_id == 1 or action.operator == "debug":
            return node(node_id, action.operator, action.parent_ids, buggy=True)
        return scored(node_id, action, tree)

    params = RefineParams(num_solutions=2, outer_steps=1, inner_steps=1, ensemble_rounds=1,
                          max_debug_depth=1)  # fmt: skip
    assert play(params, 100, failing) == [
        ("draft", "()", "()"),
        ("draft", "()", "()"),
        ("debug", "(1,)", "()"),
        ("ablate", "(2,)", "()"),
        ("debug", "(3,)", "()"),
        ("refine", "(2,)", "(4,)"),
    ]  # path 1 dead after two debugs; one good path: nothing to ensemble


def test_a_path_waits_for_its_ablation_in_flight() -> None:
    params = RefineParams(num_solutions=1)
    tree = SearchTree(lower_is_better=False)
    tree.add(node(1, metric=0.5))
    tree.pending = [Action(operator="ablate", parent_ids=(1,))]
    assert Refine(params).next_action(tree, random.Random(0)) is None
