"""Random search: the control that other strategies are compared against.

Each step first chooses uniformly among the kinds of action possible now, then uniformly among
the nodes that kind can take:

* ``draft`` — always possible;
* ``improve`` a uniformly chosen good node — possible once some node is good;
* ``debug`` a uniformly chosen buggy leaf that has code, whose debug depth is at most 3
  (``MAX_DEBUG_DEPTH``) and that no other worker is debugging — possible when one exists.

So with good nodes and debuggable leaves, each kind has probability 1/3 whatever the tree
looks like. There are no parameters and no state: the choice depends only on the tree and the
RNG. The final node is the best good node by validation metric.
"""

from __future__ import annotations

import random

from podium.interfaces import Strategy
from podium.records import Action
from podium.tree import SearchTree

MAX_DEBUG_DEPTH = 3


class RandomSearch(Strategy):
    name = "random"

    def __init__(self, params: None = None) -> None:
        self.params = params

    def next_action(self, tree: SearchTree, rng: random.Random) -> Action:
        good = tree.good_nodes()
        debuggable = tree.debuggable(MAX_DEBUG_DEPTH)
        kinds = ["draft"]
        if good:
            kinds.append("improve")
        if debuggable:
            kinds.append("debug")
        kind = rng.choice(kinds)
        if kind == "improve":
            return Action(operator="improve", parent_ids=(rng.choice(good).id,))
        if kind == "debug":
            return Action(operator="debug", parent_ids=(rng.choice(debuggable).id,))
        return Action(operator="draft")
