"""``study``: study the best node before changing it, and end on an ensemble.

An example of a strategy plugin written against Podium's public interfaces only
(``podium.interfaces``, ``podium.records``, ``podium.tree``, ``podium.plugins``) that uses what
the 2026 scaffolds brought: analysis nodes, reference edges, ensembles and the step budget.

Draft ``num_drafts`` solutions. Then, for the best node: ``ablate`` it once (an analysis node:
which of its parts matter), ``refine`` it ``refines`` times citing that study (each refine
changes the part the findings name), then ``improve`` it until a better node takes its place
and is studied in turn. The last step of the budget is an ``ensemble`` of the ``k`` best nodes.
"""

from __future__ import annotations

import random

from pydantic import BaseModel, ConfigDict, Field

from podium.interfaces import Strategy
from podium.plugins import StrategySpec, hookimpl
from podium.records import Action
from podium.tree import SearchTree


class StudyParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    num_drafts: int = Field(2, ge=1, description="drafts before any study")
    refines: int = Field(2, ge=1, description="refines of the best node per study of it")
    k: int = Field(3, ge=2, description="nodes in the final ensemble")


class Study(Strategy):
    name = "study"

    def __init__(self, params: StudyParams) -> None:
        self.params = params

    def next_action(self, tree: SearchTree, rng: random.Random) -> Action | None:
        p = self.params
        if len(tree.drafts()) + tree.pending_count("draft") < p.num_drafts:
            return Action(operator="draft")
        good = tree.direction.best_first(tree.good_nodes())
        if tree.steps_left == 1 and len(good) >= 2:
            return Action(operator="ensemble", parent_ids=tuple(n.id for n in good[: p.k]))
        best = tree.best_node()
        if best is None:
            return Action(operator="draft")
        if any(a.operator == "ablate" and best.id in a.parent_ids for a in tree.pending):
            return None  # its study is running: wait for the findings
        study = next(iter(tree.analyses(best.id)), None)
        if study is None:
            return Action(operator="ablate", parent_ids=(best.id,))
        tried = len(tree.cited_by(study.id)) + sum(study.id in a.ref_ids for a in tree.pending)
        if tried < p.refines:
            return Action(operator="refine", parent_ids=(best.id,), ref_ids=(study.id,))
        return Action(operator="improve", parent_ids=(best.id,))


@hookimpl
def podium_strategies() -> list[StrategySpec]:
    return [
        StrategySpec(
            name="study",
            create=Study,
            params=StudyParams,
            description="study the best node (ablate), refine it, end on an ensemble (example)",
        )
    ]
