"""Targeted refinement after MLE-STAR: ablate a solution, refine the block that matters, ensemble.

MLE-STAR (Nam et al., 2025) builds ``L`` solutions, then refines each in nested loops: the
outer loop runs an ablation study of the current solution to find the code block that matters
most; the inner loop makes ``K`` attempts at refining that block alone, each shown the earlier
attempts; the best result becomes the current solution for the next of ``T`` outer steps. At
the end it ensembles the ``L`` final solutions, improving the ensemble plan over ``R`` rounds.

Here, with Podium's operators, each solution is a **path** (a draft and the first-parent
descendants of it). Per path:

1. a buggy draft is debugged (at most ``max_debug_depth`` in a row); a path with no good node
   after that is dead;
2. outer step: ``ablate`` the path's current solution (its best good node);
3. inner loop: ``K`` times ``refine`` of that same solution, citing the ablation (its findings
   name the block); refines already made are in the tree and memory, so each attempt sees the
   earlier ones (MLE-STAR's feedback); the path's best good node is then its current solution;
4. after ``T`` outer steps the path is done.

Paths take turns (the one with the fewest nodes first), so several workers serve several
paths. Then ``R`` rounds of ``ensemble`` over the paths' final solutions, each citing the
earlier ensembles (their plans and scores: MLE-STAR's plan refinement). When the step budget
left (``tree.steps_left``) is down to the ensemble rounds still to make, the ensembles start
early: a short run still ends with one. The final node is the best good node of all
(MLE-STAR's choice among the final solutions and the ensembles).

Differs from the paper: no web retrieval of candidate models and no merging of candidates
into the initial solution (drafts stand in); the block is chosen by the refine prompt from the
findings rather than extracted as text by a separate agent; a refine is an edit of the whole
parent (the operator is told to change one block only).
"""

from __future__ import annotations

import random

from pydantic import BaseModel, ConfigDict, Field

from podium.interfaces import Strategy
from podium.records import Action, Node
from podium.tree import SearchTree


class RefineParams(BaseModel):
    """Defaults are the paper's (§4, "Common setup": four inner and four outer loops, two
    solutions in parallel, five ensemble rounds); Google's published sample (adk-samples)
    defaults to 2 / 1 / 1 / 1 for a quick demo."""

    model_config = ConfigDict(extra="forbid")

    num_solutions: int = Field(2, ge=1, description="L: solutions refined side by side")
    outer_steps: int = Field(4, ge=1, description="T: ablations (targeted blocks) per solution")
    inner_steps: int = Field(4, ge=1, description="K: refine attempts per targeted block")
    ensemble_rounds: int = Field(5, ge=0, description="R: ensembles of the final solutions")
    max_debug_depth: int = Field(3, ge=0, description="debugs in a row of a buggy draft")


class Refine(Strategy):
    """MLE-STAR's ablation-guided refinement of a few solutions, then their ensemble."""

    name = "refine"

    def __init__(self, params: RefineParams | None = None) -> None:
        self.params = params or RefineParams()

    def next_action(self, tree: SearchTree, rng: random.Random) -> Action | None:
        p = self.params
        if len(tree.drafts()) + tree.pending_count("draft") < p.num_solutions:
            return Action(operator="draft")
        paths = [_Path(draft, tree) for draft in sorted(tree.drafts(), key=_id)]
        ensemble = self._ensemble(tree, paths)
        rounds_left = p.ensemble_rounds - _ensembles(tree)
        if ensemble is not None and tree.steps_left is not None and tree.steps_left <= rounds_left:
            return ensemble  # the budget is down to the ensembles: make them now
        for path in sorted(paths, key=lambda path: (path.size, path.draft.id)):
            action = self._step(path, tree)
            if action is not None:
                return action
        if any(path.busy for path in paths):
            return None  # a path waits for its nodes in flight: asked again as they finish
        return ensemble

    def _step(self, path: _Path, tree: SearchTree) -> Action | None:
        """The path's next action, or None when it waits, is done or is dead."""
        p = self.params
        current = path.best
        if current is None:
            fix = path.debuggable(p.max_debug_depth)
            return None if fix is None else Action(operator="debug", parent_ids=(fix.id,))
        ablation = path.latest_ablation
        if ablation is None or (ablation.id in tree and path.refines(ablation) >= p.inner_steps):
            if path.ablations >= p.outer_steps or path.busy:
                return None
            return Action(operator="ablate", parent_ids=(current.id,))
        if ablation.id not in tree:
            return None  # the ablation is still running
        studied = ablation.parent_ids[0]
        return Action(operator="refine", parent_ids=(studied,), ref_ids=(ablation.id,))

    def _ensemble(self, tree: SearchTree, paths: list[_Path]) -> Action | None:
        """The next ensemble round over the paths' final solutions, or None (fewer than two
        good ones, or every round made)."""
        finals = [path.best for path in paths if path.best is not None]
        if len(finals) < 2 or _ensembles(tree) >= self.params.ensemble_rounds:
            return None
        earlier = sorted((n.id for n in tree if n.operator == "ensemble"), reverse=True)[:3]
        return Action(
            operator="ensemble",
            parent_ids=tuple(sorted(n.id for n in finals)),
            ref_ids=tuple(sorted(earlier)),
        )


class _Path:
    """One solution's nodes: its draft and every node whose first parent is on the path (the
    analyses and the pending actions on it included)."""

    def __init__(self, draft: Node, tree: SearchTree) -> None:
        self.draft = draft
        members = {draft.id}
        for node in sorted(tree, key=_id):  # id order: a parent before its children
            if node.parent_ids and node.parent_ids[0] in members and node.operator != "ensemble":
                members.add(node.id)
        self.nodes = [tree.get(i) for i in sorted(members)]
        self.pending = [a for a in tree.pending if a.parent_ids and a.parent_ids[0] in members]
        self.tree = tree

    @property
    def size(self) -> int:
        return len(self.nodes) + len(self.pending)

    @property
    def busy(self) -> bool:
        return bool(self.pending)

    @property
    def best(self) -> Node | None:
        good = [n for n in self.nodes if n.is_good]
        return next(iter(self.tree.direction.best_first(good)), None)

    @property
    def ablations(self) -> int:
        return sum(n.operator == "ablate" for n in self.nodes) + sum(
            a.operator == "ablate" for a in self.pending
        )

    @property
    def latest_ablation(self) -> Node | None:
        """The latest ablation of the path, finished or not (a pending one as a stand-in node
        whose id the tree does not hold)."""
        if any(a.operator == "ablate" for a in self.pending):
            return _PENDING
        return next((n for n in reversed(self.nodes) if n.operator == "ablate"), None)

    def refines(self, ablation: Node) -> int:
        """Refine attempts citing ``ablation``, finished or handed out."""
        done = sum(ablation.id in n.ref_ids for n in self.tree.cited_by(ablation.id))
        return done + sum(ablation.id in a.ref_ids for a in self.tree.pending)

    def debuggable(self, max_depth: int) -> Node | None:
        """The path's buggy leaf to debug next: the deepest of its debug chain, if any is left."""
        if self.busy:
            return None
        leaves = [n for n in self.tree.debuggable(max_depth) if n.id in {m.id for m in self.nodes}]
        return max(leaves, key=_id, default=None)


_PENDING = Node(id=-1, operator="ablate", kind="analysis")


def _ensembles(tree: SearchTree) -> int:
    return sum(n.operator == "ensemble" for n in tree) + tree.pending_count("ensemble")


def _id(node: Node) -> int:
    return node.id
