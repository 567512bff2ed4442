"""``topk``: improve a random node among the k best (an example of a strategy plugin)."""

from __future__ import annotations

import random

from pydantic import BaseModel, ConfigDict, Field

from podium.interfaces import Strategy
from podium.plugins import StrategySpec, hookimpl
from podium.records import Action
from podium.tree import SearchTree


class TopKParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    num_drafts: int = Field(3, ge=1)
    k: int = Field(3, ge=1, description="improve one of the k best nodes")
    debug_prob: float = Field(0.3, ge=0, le=1)


class TopK(Strategy):
    name = "topk"

    def __init__(self, params: TopKParams) -> None:
        self.params = params

    def next_action(self, tree: SearchTree, rng: random.Random) -> Action:
        p = self.params
        if len(tree.drafts()) + tree.pending_count("draft") < p.num_drafts:
            return Action(operator="draft")
        buggy_leaves = [n for n in tree.buggy_nodes() if tree.is_leaf(n.id) and n.code]
        if buggy_leaves and rng.random() < p.debug_prob:
            return Action(operator="debug", parent_ids=(rng.choice(buggy_leaves).id,))
        sign = 1 if tree.lower_is_better else -1
        ranked = sorted(tree.good_nodes(), key=lambda n: (sign * n.metric.value, n.id))  # type: ignore[union-attr]
        if not ranked:
            return Action(operator="draft")
        return Action(operator="improve", parent_ids=(rng.choice(ranked[: p.k]).id,))


@hookimpl
def podium_strategies() -> list[StrategySpec]:
    return [
        StrategySpec(
            name="topk",
            create=TopK,
            params=TopKParams,
            description="improve a random node among the k best (example plugin)",
        )
    ]
