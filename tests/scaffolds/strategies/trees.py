"""Crafted trees for strategy tests: finished nodes with chosen metrics and bugs."""

from __future__ import annotations

import random
from collections.abc import Callable

from podium.interfaces import Strategy
from podium.records import Action, Metric, Node, NodeState
from podium.tree import SearchTree


def node(
    node_id: int,
    operator: str = "draft",
    parents: tuple[int, ...] = (),
    metric: float | None = None,
    buggy: bool = False,
    code: str = "print(1)\n",
    lower_is_better: bool = False,
) -> Node:
    """A finished node; good when it has a metric and is not buggy."""
    value = None if metric is None else Metric(value=metric, lower_is_better=lower_is_better)
    return Node(
        id=node_id,
        parent_ids=parents,
        operator=operator,
        state=NodeState.DONE,
        code=code,
        metric=value,
        is_buggy=buggy,
        bug_reason="KeyError: 'y'" if buggy else None,
    )


def tree_of(*nodes: Node, lower_is_better: bool = False) -> SearchTree:
    tree = SearchTree(lower_is_better=lower_is_better)
    for n in nodes:
        tree.add(n)
    return tree


def debug_chain(length: int, start: int = 1) -> list[Node]:
    """A buggy draft followed by ``length`` buggy debug nodes, each fixing the previous one."""
    chain = [node(start, buggy=True)]
    for i in range(1, length + 1):
        chain.append(node(start + i, "debug", (start + i - 1,), buggy=True))
    return chain


def act(operator: str, parent_ids: tuple[int, ...] = ()) -> Action:
    return Action(operator=operator, parent_ids=parent_ids)


def grown(
    strategy: Strategy,
    *nodes: Node,
    lower_is_better: bool | None = None,
    tree: SearchTree | None = None,
) -> SearchTree:
    """A tree built as the loop builds it: each node added, then shown to ``strategy``.

    Grows ``tree`` when given; the direction defaults to that of the nodes' metrics.
    """
    if tree is None:
        if lower_is_better is None:
            lower_is_better = next((n.metric.lower_is_better for n in nodes if n.metric), False)
        tree = SearchTree(lower_is_better=lower_is_better)
    for n in nodes:
        tree.add(n)
        strategy.observe(n, tree)
    return tree


Outcome = Callable[[int, Action, SearchTree], Node]


def play(
    strategy: Strategy, steps: int, outcome: Outcome, seed: int = 0
) -> tuple[list[tuple[str, ...]], SearchTree]:
    """A one-worker run of ``steps`` steps, as the loop drives it (``steps_left`` counted down,
    each node added then observed): its actions as (operator, parents, refs), and the tree.
    ``outcome`` makes the finished node of each action."""
    tree, rng = SearchTree(lower_is_better=False), random.Random(seed)
    actions: list[tuple[str, ...]] = []
    for node_id in range(1, steps + 1):
        tree.steps_left = steps - node_id + 1
        action = strategy.next_action(tree, rng)
        if action is None:
            break
        actions.append((action.operator, str(action.parent_ids), str(action.ref_ids)))
        finished = outcome(node_id, action, tree)
        tree.add(finished)
        strategy.observe(finished, tree)
    return actions, tree


def in_order(*actions: Action) -> type[Strategy]:
    """A strategy class (made without parameters, as ``search.strategy = "module:Class"``
    makes it) that hands out ``actions`` one at a time, each once every earlier node has
    finished, then ends the run: a test's search, written out."""

    class InOrder(Strategy):
        name = "in-order"

        def next_action(self, tree: SearchTree, rng: random.Random) -> Action | None:
            decided = len(tree) + len(tree.pending)
            if decided < len(actions) and not tree.pending:
                return actions[decided]
            return None

    return InOrder
