"""AIDE's greedy policy (DESIGN §5).

Draft until ``num_drafts`` drafts exist; then, with probability ``debug_prob``, debug a random
buggy leaf whose debug depth is at most ``max_debug_depth`` (AIDE's ``<=``); otherwise improve
the best good node (or draft again when no node is good yet). Actions already handed to other
workers count: a pending draft counts toward ``num_drafts``, and a node being debugged is not
picked twice. A buggy node without code (the model call failed, or its answer held no code) is
not debugged.
"""

from __future__ import annotations

import random

from pydantic import BaseModel, ConfigDict, Field

from podium.interfaces import Strategy
from podium.records import Action
from podium.tree import SearchTree


class GreedyParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    num_drafts: int = Field(5, ge=0, description="drafts before any improve/debug")
    debug_prob: float = Field(0.5, ge=0.0, le=1.0, description="chance to debug a buggy leaf")
    max_debug_depth: int = Field(
        3, ge=0, description="debug a leaf only while its debug depth is <= this"
    )


class Greedy(Strategy):
    name = "greedy"

    def __init__(self, params: GreedyParams | None = None) -> None:
        self.params = params or GreedyParams()

    def next_action(self, tree: SearchTree, rng: random.Random) -> Action:
        p = self.params
        if len(tree.drafts()) + tree.pending_count("draft") < p.num_drafts:
            return Action(operator="draft")
        if rng.random() < p.debug_prob:
            busy = tree.pending_parents()
            debuggable = [
                n
                for n in tree.buggy_nodes()
                if tree.is_leaf(n.id)
                and n.id not in busy
                and tree.debug_depth(n) <= p.max_debug_depth
                and n.code  # nothing to debug when the model produced no code
            ]
            if debuggable:
                return Action(operator="debug", parent_ids=(rng.choice(debuggable).id,))
        best = tree.best_node()
        if best is None:
            return Action(operator="draft")
        return Action(operator="improve", parent_ids=(best.id,))
