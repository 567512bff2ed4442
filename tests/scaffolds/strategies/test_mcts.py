"""aira-dojo's MCTS on crafted trees (``podium.scaffolds.strategies.mcts``).

Nodes are fed as the loop feeds them: each is added to the tree, then ``observe``d. Expected
scores are computed by hand from the rules in the module docstring: value = min–max normalised
metric (1 = best), Q = values credited / (visits + virtual_loss x pending expansions below),
UCT = Q + c * sqrt(ln N_parent / n_child).
"""

from __future__ import annotations

import itertools
import math
import random

import pytest
from pydantic import ValidationError

from podium.records import Action, Node
from podium.scaffolds.strategies.mcts import MCTS, MCTSParams
from podium.tree import SearchTree
from tests.scaffolds.strategies.trees import act, debug_chain, grown, node

C = 0.25
DRAFT = act("draft")


def mcts(num_children: int = 5, max_debug_depth: int = 3, virtual_loss: float = 1.0) -> MCTS:
    return MCTS(
        MCTSParams(
            num_children=num_children, max_debug_depth=max_debug_depth, virtual_loss=virtual_loss
        )
    )


def uct(q: float, n_parent: float, n_child: float) -> float:
    return q + C * math.sqrt(math.log(n_parent) / n_child)


def decide(strategy: MCTS, tree: SearchTree) -> Action:
    return strategy.next_action(tree, random.Random(0))


# --- params ------------------------------------------------------------------------------


def test_defaults_are_aira_dojos() -> None:
    p = MCTS().params
    assert (p.c_uct, p.num_children, p.max_debug_depth, p.virtual_loss) == (0.25, 5, 3, 1.0)
    assert MCTS().name == "mcts"


def test_every_param_is_described() -> None:
    assert all(f.description for f in MCTSParams.model_fields.values())


@pytest.mark.parametrize(
    "bad",
    [
        {"c": 0.25},
        {"c_uct": -0.1},
        {"num_children": 0},
        {"max_debug_depth": -1},
        {"virtual_loss": -1.0},
        {"num_children": "many"},
    ],
)
def test_bad_params_are_refused(bad: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        MCTSParams.model_validate(bad)


# --- drafting at the root ----------------------------------------------------------------


@pytest.mark.parametrize("done", [0, 1, 4])
def test_root_drafts_until_num_children(done: int) -> None:
    strategy = mcts()
    tree = grown(strategy, *(node(i, metric=0.5 + i / 10) for i in range(1, done + 1)))
    assert decide(strategy, tree) == DRAFT


def test_pending_drafts_count_as_root_children() -> None:
    strategy = mcts()
    tree = grown(strategy, node(1, metric=0.5), node(2, metric=0.6), node(3, metric=0.7))
    tree.pending = [DRAFT]
    assert decide(strategy, tree) == DRAFT  # 3 done + 1 pending < 5
    tree.pending = [DRAFT, DRAFT]
    # Root full: values 0, 0.5, 1; every n = 1, so the exploration terms tie and Q decides.
    assert decide(strategy, tree) == act("improve", (3,))


def test_buggy_drafts_count_as_root_children() -> None:
    strategy = mcts(num_children=3)
    tree = grown(strategy, node(1, buggy=True, code=""), node(2, metric=0.1), node(3, metric=0.2))
    assert decide(strategy, tree) == act("improve", (3,))


def test_root_drafts_again_when_no_draft_can_be_selected() -> None:
    strategy = mcts(num_children=2)
    tree = grown(strategy, node(1, buggy=True, code=""), node(2, buggy=True, code=""))
    assert decide(strategy, tree) == DRAFT


def test_a_full_node_without_selectable_children_is_expanded_again() -> None:
    strategy = mcts(num_children=1)
    tree = grown(strategy, node(1, metric=0.5), node(2, "improve", (1,), buggy=True, code=""))
    assert decide(strategy, tree) == act("improve", (1,))


# --- UCT and normalisation ---------------------------------------------------------------


def two_level_tree() -> tuple[MCTS, SearchTree]:
    strategy = mcts(num_children=2)
    tree = grown(
        strategy,
        node(1, metric=0.60),
        node(2, metric=0.70),
        node(3, "improve", (1,), metric=0.80),
        node(4, "improve", (1,), metric=0.50),
        node(5, "improve", (2,), metric=0.65),
        node(6, "improve", (2,), metric=0.62),
    )
    return strategy, tree


def test_uct_on_a_two_level_tree() -> None:
    strategy, tree = two_level_tree()
    # lo = 0.50, hi = 0.80: values 1 -> 1/3, 2 -> 2/3, 3 -> 1, 4 -> 0, 5 -> 0.5, 6 -> 0.4.
    q1 = (1 / 3 + 1 + 0) / 3  # 0.4444 over visits {1, 3, 4}
    q2 = (2 / 3 + 0.5 + 0.4) / 3  # 0.5222 over visits {2, 5, 6}
    expected = {
        1: uct(q1, 6, 3),  # 0.4444 + 0.25 * sqrt(ln 6 / 3) = 0.6376
        2: uct(q2, 6, 3),  # 0.5222 + 0.1932 = 0.7154
        3: uct(1.0, 3, 1),  # N = visits of 1 = 3
        4: uct(0.0, 3, 1),
        5: uct(0.5, 3, 1),  # 0.5 + 0.25 * sqrt(ln 3) = 0.7620
        6: uct(0.4, 3, 1),  # 0.6620
    }
    assert strategy.uct_scores(tree) == pytest.approx(expected)
    assert strategy.q_values(tree) == pytest.approx({1: q1, 2: q2, 3: 1.0, 4: 0.0, 5: 0.5, 6: 0.4})
    # Root full -> 2 (0.7154 > 0.6376); 2 full -> 5 (0.7620 > 0.6620); 5 has no child yet.
    assert decide(strategy, tree) == act("improve", (5,))


def test_uct_ties_go_to_the_lowest_id() -> None:
    strategy = mcts(num_children=3)
    tree = grown(strategy, node(3, metric=0.7), node(1, metric=0.7), node(2, metric=0.7))
    assert strategy.uct_scores(tree) == pytest.approx(dict.fromkeys((1, 2, 3), uct(1.0, 3, 1)))
    assert decide(strategy, tree) == act("improve", (1,))


@pytest.mark.parametrize(
    ("lower_is_better", "values", "chosen"),
    [
        (False, {1: 0.0, 2: 1.0, 3: 2 / 3}, 2),  # (m - 0.2) / 0.3
        (True, {1: 1.0, 2: 0.0, 3: 1 / 3}, 1),  # (0.5 - m) / 0.3
    ],
)
def test_min_max_normalisation_both_ways(
    lower_is_better: bool, values: dict[int, float], chosen: int
) -> None:
    strategy = mcts(num_children=3)
    metrics = {1: 0.2, 2: 0.5, 3: 0.4}
    nodes = [node(i, metric=m, lower_is_better=lower_is_better) for i, m in metrics.items()]
    tree = grown(strategy, *nodes)
    assert strategy.q_values(tree) == pytest.approx(values)
    assert decide(strategy, tree) == act("improve", (chosen,))  # equal n: Q decides


def test_equal_metrics_are_all_worth_one() -> None:
    strategy = mcts()
    tree = grown(strategy, node(1, metric=0.3), node(2, metric=0.3))
    assert strategy.q_values(tree) == {1: 1.0, 2: 1.0}


def test_normalisation_follows_new_metrics() -> None:
    strategy = mcts()
    tree = grown(strategy, node(1, metric=0.2), node(2, metric=0.5), node(3, metric=0.4))
    assert strategy.q_values(tree)[2] == pytest.approx(1.0)
    grown(strategy, node(4, metric=0.8), tree=tree)
    # hi is now 0.8: node 2 is worth (0.5 - 0.2) / 0.6 = 0.5, computed from its raw metric.
    assert strategy.q_values(tree) == pytest.approx({1: 0.0, 2: 0.5, 3: 1 / 3, 4: 1.0})


# --- back-propagation through debug cycles -----------------------------------------------


def test_a_fixed_debug_is_credited_to_the_buggy_branch() -> None:
    strategy = mcts(num_children=2)
    tree = grown(
        strategy,
        node(1, metric=0.5),
        node(2, metric=0.7),
        node(3, "improve", (1,), buggy=True),
    )
    # lo 0.5, hi 0.7: 1 -> 0, 2 -> 1; the buggy 3 is a visit of 1 worth 0.
    assert strategy.q_values(tree) == pytest.approx({1: 0.0, 2: 1.0, 3: 0.0})
    assert 3 not in strategy.uct_scores(tree)
    grown(strategy, node(4, "debug", (3,), metric=0.9), tree=tree)
    # hi 0.9: 1 -> 0, 2 -> 0.5, fix of 3 -> 1, credited to 3 and 1, with no extra visit:
    # Q1 = (0 + 1) / 2 = 0.5 (was 0). The debug node is no search node of its own.
    assert strategy.q_values(tree) == pytest.approx({1: 0.5, 2: 0.5, 3: 1.0})
    # Root: N = 3 search nodes; UCT1 = 0.5 + 0.25 sqrt(ln 3 / 2), UCT2 = 0.5 + 0.25 sqrt(ln 3).
    assert strategy.uct_scores(tree)[1] == pytest.approx(uct(0.5, 3, 2))
    assert strategy.uct_scores(tree)[2] == pytest.approx(uct(0.5, 3, 1))
    assert decide(strategy, tree) == act("improve", (2,))


def test_a_fixed_draft_is_improved_through_its_fix() -> None:
    strategy = mcts(num_children=3)
    tree = grown(
        strategy,
        node(1, metric=0.5),
        node(2, buggy=True, code=""),
        node(3, buggy=True),
        node(4, "debug", (3,), metric=0.9),
    )
    # Values: 1 -> 0, 2 -> 0 (never fixed), 3 -> 1 (its fix 4). UCT3 = 1 + 0.25 sqrt(ln 3).
    assert strategy.q_values(tree) == pytest.approx({1: 0.0, 2: 0.0, 3: 1.0})
    assert strategy.uct_scores(tree) == pytest.approx({1: uct(0, 3, 1), 3: uct(1, 3, 1)})
    assert decide(strategy, tree) == act("improve", (4,))
    # The improve of 4 is a child of search node 3: Q3 = (1 + 0) / 2 (value of 0.5 is 0).
    grown(strategy, node(5, "improve", (4,), metric=0.5), tree=tree)
    assert strategy.q_values(tree)[3] == pytest.approx(0.5)
    assert strategy.q_values(tree)[5] == 0.0


def test_a_fix_after_several_debugs_counts_once() -> None:
    strategy = mcts()
    chain = debug_chain(2)  # 1 buggy draft, 2 and 3 buggy debugs
    tree = grown(strategy, *chain, node(4, "debug", (3,), metric=0.4), node(5, metric=0.2))
    # Search nodes 1 (fixed by 4: worth 1) and 5 (worth 0), one visit each.
    assert strategy.q_values(tree) == pytest.approx({1: 1.0, 5: 0.0})


# --- virtual loss ------------------------------------------------------------------------


def three_drafts(virtual_loss: float = 1.0) -> tuple[MCTS, SearchTree]:
    strategy = mcts(num_children=3, virtual_loss=virtual_loss)
    tree = grown(strategy, node(1, metric=0.0), node(2, metric=0.9), node(3, metric=1.0))
    return strategy, tree


def test_best_child_is_chosen_without_pending_work() -> None:
    strategy, tree = three_drafts()
    # N = 3, n = 1 each: UCT3 = 1 + 0.25 sqrt(ln 3) = 1.262 > UCT2 = 1.162.
    assert decide(strategy, tree) == act("improve", (3,))


def test_a_pending_improve_sends_the_next_worker_elsewhere() -> None:
    strategy, tree = three_drafts()
    tree.pending = [act("improve", (3,))]
    # n3 = 1 + 1 = 2, N = 3 + 1 = 4: Q3 = 1 / 2.
    # UCT3 = 0.5 + 0.25 sqrt(ln 4 / 2) = 0.7081; UCT2 = 0.9 + 0.25 sqrt(ln 4) = 1.1943.
    scores = strategy.uct_scores(tree)
    assert scores[3] == pytest.approx(uct(0.5, 4, 2))
    assert scores[2] == pytest.approx(uct(0.9, 4, 1))
    assert decide(strategy, tree) == act("improve", (2,))


def test_pending_work_deeper_down_weighs_on_the_branch() -> None:
    strategy, tree = three_drafts()
    grown(strategy, node(4, "improve", (3,), metric=1.0), tree=tree)
    tree.pending = [act("improve", (4,))]
    # Search node 3: visits {3, 4} + 1 pending = 3, Q3 = (1 + 1) / 3; root N = 4 + 1 = 5.
    assert strategy.q_values(tree)[3] == pytest.approx(2 / 3)
    assert strategy.uct_scores(tree)[3] == pytest.approx(uct(2 / 3, 5, 3))  # 0.8135
    assert decide(strategy, tree) == act("improve", (2,))  # 0.9 + 0.25 sqrt(ln 5) = 1.2172


def test_no_virtual_loss_keeps_the_best_child() -> None:
    strategy, tree = three_drafts(virtual_loss=0.0)
    tree.pending = [act("improve", (3,))]
    assert decide(strategy, tree) == act("improve", (3,))


# --- debug cycles ------------------------------------------------------------------------


def test_debug_comes_before_any_selection() -> None:
    strategy = mcts()
    tree = grown(strategy, node(1, metric=0.5), node(3, buggy=True), node(2, buggy=True))
    assert decide(strategy, tree) == act("debug", (2,))  # the oldest (lowest id) first
    tree.pending = [act("debug", (2,))]
    assert decide(strategy, tree) == act("debug", (3,))
    tree.pending = [act("debug", (2,)), act("debug", (3,))]
    assert decide(strategy, tree) == DRAFT  # pending debugs are not root children


def test_a_debugged_node_is_not_debugged_again() -> None:
    strategy = mcts()
    tree = grown(strategy, *debug_chain(1))
    assert decide(strategy, tree) == act("debug", (2,))


@pytest.mark.parametrize(("length", "expected"), [(0, 1), (1, 2), (2, 3), (3, None)])
def test_max_debug_depth_cuts_the_cycle(length: int, expected: int | None) -> None:
    strategy = mcts(max_debug_depth=3)
    tree = grown(strategy, *debug_chain(length))
    want = DRAFT if expected is None else act("debug", (expected,))
    assert decide(strategy, tree) == want  # the node at depth 3 is given up


def test_max_debug_depth_zero_never_debugs() -> None:
    strategy = mcts(max_debug_depth=0)
    tree = grown(strategy, node(1, buggy=True))
    assert decide(strategy, tree) == DRAFT


def test_nodes_without_code_are_not_debugged() -> None:
    strategy = mcts()
    tree = grown(strategy, node(1, buggy=True, code=""), node(2, "debug", (1,), buggy=True))
    assert decide(strategy, tree) == act("debug", (2,))
    grown(strategy, node(3, "debug", (2,), buggy=True, code=""), tree=tree)
    assert decide(strategy, tree) == DRAFT


def test_a_fixed_cycle_is_not_debugged() -> None:
    strategy = mcts()
    tree = grown(strategy, node(1, buggy=True), node(2, "debug", (1,), metric=0.3))
    assert decide(strategy, tree) == DRAFT


# --- a whole search, resume, final node --------------------------------------------------


def simulate(seed: int, steps: int, workers: int) -> tuple[MCTS, SearchTree, list[Node]]:
    """A toy loop: ``workers`` actions in flight, the oldest finishing first."""
    strategy, rng = mcts(num_children=3), random.Random(seed)
    tree, finished = SearchTree(lower_is_better=False), []
    in_flight: list[tuple[int, Action]] = []
    ids = itertools.count(1)
    while len(finished) < steps:
        while len(in_flight) < workers:
            tree.pending = [a for _, a in in_flight]
            in_flight.append((next(ids), strategy.next_action(tree, rng)))
        node_id, action = in_flight.pop(0)
        check_action(action, tree)
        buggy = rng.random() < 0.3
        metric = None if buggy else rng.random()
        done = node(node_id, action.operator, action.parent_ids, metric=metric, buggy=buggy)
        finished += [done]
        grown(strategy, done, tree=tree)
    tree.pending = [a for _, a in in_flight]
    return strategy, tree, finished


def check_action(action: Action, tree: SearchTree) -> None:
    parents = [tree.get(p) for p in action.parent_ids]
    if action.operator == "draft":
        assert not parents
    elif action.operator == "improve":
        assert len(parents) == 1 and parents[0].is_good
    else:
        assert action.operator == "debug" and len(parents) == 1 and parents[0].is_buggy


def test_a_search_only_asks_for_valid_actions() -> None:
    strategy, tree, _ = simulate(seed=1, steps=60, workers=3)
    assert {n.operator for n in tree} == {"draft", "improve", "debug"}
    assert strategy.final_node(tree) is tree.best_node()


def test_a_replayed_strategy_decides_the_same() -> None:
    strategy, tree, finished = simulate(seed=2, steps=40, workers=2)
    fresh = MCTS(strategy.params)
    replay = grown(fresh, *finished)
    replay.pending = list(tree.pending)
    assert fresh.q_values(replay) == strategy.q_values(tree)
    assert fresh.uct_scores(replay) == strategy.uct_scores(tree)
    first = strategy.next_action(tree, random.Random(7))
    assert fresh.next_action(replay, random.Random(7)) == first


def test_final_node_is_the_best_by_validation_metric() -> None:
    strategy = mcts()
    tree = grown(
        strategy,
        node(1, metric=0.3, lower_is_better=True),
        node(2, metric=0.1, lower_is_better=True),
        node(3, buggy=True),
    )
    assert strategy.final_node(tree) == tree.get(2)
    assert MCTS().final_node(SearchTree(lower_is_better=True)) is None
