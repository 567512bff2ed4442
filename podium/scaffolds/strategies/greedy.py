"""AIDE's greedy policy: improve the best node, debug a buggy leaf now and then.

One of the builtin strategies compared in docs/strategies.md; the rules, exactly:

Draft until ``num_drafts`` drafts exist; then, with probability ``debug_prob``, debug a random
buggy leaf whose debug depth is at most ``max_debug_depth`` (AIDE's ``<=``); otherwise improve
the best good node (or draft again when no node is good yet). Actions already handed to other
workers count: a pending draft counts toward ``num_drafts``, and a node being debugged is not
picked twice. Neither is a node being improved, unless ``parallel_improve`` is set: a second
worker improves the best node that nobody is improving, or drafts when there is none. A buggy
node without code (the model call failed, or its answer held no code) is not debugged.
"""

from __future__ import annotations

import random

from pydantic import BaseModel, ConfigDict, Field

from podium.interfaces import Strategy
from podium.records import Action, Node
from podium.tree import SearchTree


class GreedyParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    num_drafts: int = Field(5, ge=0, description="drafts before any improve/debug")
    debug_prob: float = Field(0.5, ge=0.0, le=1.0, description="chance to debug a buggy leaf")
    max_debug_depth: int = Field(
        3, ge=0, description="debug a leaf only while its debug depth is <= this"
    )
    parallel_improve: bool = Field(
        False, description="let several workers improve the same node at once"
    )


class Greedy(Strategy):
    name = "greedy"

    def __init__(self, params: GreedyParams | None = None) -> None:
        self.params = params or GreedyParams()

    def next_action(self, tree: SearchTree, rng: random.Random) -> Action:
        p = self.params
        opening = draft_or_debug(tree, rng, p.num_drafts, p.debug_prob, p.max_debug_depth)
        if opening is not None:
            return opening
        target = self._improve_target(tree)
        if target is None:
            return Action(operator="draft")
        return Action(operator="improve", parent_ids=(target.id,))

    def _improve_target(self, tree: SearchTree) -> Node | None:
        best = tree.best_node()
        if best is None or self.params.parallel_improve:
            return best
        busy = {p for a in tree.pending if a.operator == "improve" for p in a.parent_ids}
        if best.id not in busy:
            return best
        free = [n for n in tree.good_nodes() if n.id not in busy and n.metric is not None]
        return min(free, key=_best_first, default=None)


def draft_or_debug(
    tree: SearchTree, rng: random.Random, drafts: int, debug_prob: float, max_debug_depth: int
) -> Action | None:
    """AIDE's first two rules, which the evolutionary policy applies as they are: draft while
    fewer than ``drafts`` drafts exist (pending ones count); then, with probability
    ``debug_prob``, debug a uniformly chosen leaf of ``tree.debuggable(max_debug_depth)``.

    None when neither applies: the caller's own rule decides. Once drafting is over the RNG
    draws one number, then one choice when there is a leaf to debug, in that order (what a
    reproducible run replays)."""
    if len(tree.drafts()) + tree.pending_count("draft") < drafts:
        return Action(operator="draft")
    if rng.random() < debug_prob:
        debuggable = tree.debuggable(max_debug_depth)
        if debuggable:
            return Action(operator="debug", parent_ids=(rng.choice(debuggable).id,))
    return None


def _best_first(node: Node) -> tuple[float, int]:
    """The sort key that puts the best metric first (by the node's own metric direction),
    the lowest id first on a tie."""
    assert node.metric is not None
    return -node.metric.score, node.id
