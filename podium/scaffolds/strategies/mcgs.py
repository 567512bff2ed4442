"""Monte Carlo graph search after MLEvolve: branches, reference edges, a progressive schedule.

MLEvolve (InternScience/MLEvolve, read at 7d8403c; defaults from its ``config/config.yaml``)
grows a tree under a virtual root whose children are drafts; each draft opens a **branch**,
and every later node belongs to its parent's branch. Here, exactly:

**Selection.** Each decision draws ``rng.random() < w``, the *exploration weight* of the
search's progress ``p`` (1 until ``explore_switch_start``, linear down to
``min_exploration_weight`` at ``explore_switch_end``, then that). Below it: a **UCT descent**
from the root. Otherwise: **top-K exploitation**: the good nodes best-first, taken while fewer
than ``k`` and at most ``cap`` per branch (``topk_early_k``/``topk_early_max_per_branch``
while ``p < explore_switch_end``, then the ``late`` pair); one of those with fewer than
``topk_max_improves`` children (finished or pending) is drawn with weight ``1/rank`` and
expanded; if all are full, one of them is drawn the same way and a UCT descent starts from it.
No good node yet: a UCT descent from the root.

**UCT descent.** At a node under its child limit, expand it. Limits: the root ``num_drafts``
drafts (aggregations not counted); a good node ``num_improves`` children; a buggy node
``num_bugs`` debugs, or none once one of its children is good. Pending actions count towards
the limits, so parallel workers spread out. A full node descends to its child of highest
``Q + C·sqrt(ln N_parent / n)`` (``Q`` = mean reward of the node's subtree, ties to the lowest
id), among children with something left to expand below them. At a full root, an
**aggregation** is made instead when it is due (below) and ``rng.random() <
branch_fusion_trigger_prob``.

**Exploration constant.** ``C`` = ``exploration_constant`` until step ``T1 = min(num_drafts ·
num_improves², round(steps · decay_start))``, then less ``decay_alpha`` per step, floored at
``decay_lower_bound``; ``decay_lower_bound`` after ``T2 = round(steps · decay_end)``. The step
is the number of nodes decided before this one, ``steps`` the run's step budget (decided +
``tree.steps_left``) and the progress ``p`` = decided / steps.

**Debugs first.** Before any selection (and any draw), a buggy node fewer than
``back_debug_depth`` debugs deep that can be debugged is (the oldest first): MLEvolve's worker
debugs its own failed node at once, and selects again only after ``back_debug_depth`` failed
debugs in a row. Deeper ones are left to the descent, up to ``max_debug_depth``.

**Expansion.** The root: a draft. A buggy node: a debug (none past ``max_debug_depth``
debugs in a row, nor of a node without code). A good node: an improve, unless its branch is
**stagnant** (its last ``branch_stagnation_threshold`` good nodes, or
``topk_stagnation_threshold`` for a top-K pick, all fail to reach the branch's best, and at
least 2 exist): then, once ``p ≥ fusion_min_progress``, with probability
``fusion_vs_evolution_prob`` a **fusion** — an improve citing (``ref_ids``) the top-2 good
nodes of every other branch, in branch order, at most ``fusion_max_refs`` (none in other
branches: the top-2 of its own, itself left out) — else an **evolution**, which here is a
plain improve (the prompt's memory shows the branch).

**Aggregation.** A draft citing the best good node of every branch, opening a new branch; due
when fewer than ``max_fusion_drafts`` were made, ``aggregation_start ≤ p ≤ aggregation_end``,
at least ``fusion_min_branches`` branches have ``fusion_min_successful_nodes`` good nodes, and
the search is globally stagnant: none of the last ``stagnation_window`` finished nodes beat
the best before it by more than ``metric_improvement_threshold``.

**Rewards** (MLEvolve's): −1 for a buggy node (or one without a usable metric); else +1.5 if
it beats the best good node before it, +1 if its parent is not buggy, +1.5 if its parent is
buggy (a fixed bug); a draft's parent is the root, which adds nothing.

Differs from MLEvolve, and why:

* **Backpropagation per node.** MLEvolve lets each worker extend its own chain (the result is
  the next parent) and backpropagates only at a chain's end: after ``max_improve_failure`` 3
  improves in a row that fail to beat the chain's best by 1e-4, after ``back_debug_depth`` 3
  debugs, or when forced (late in the run with probability 0.5; mid-run every 3rd node of a
  branch unless it is the best of the last 4). Here every finished node adds one visit and its
  reward at once to itself, its first-parent ancestors and the root, and every decision
  selects from the root (or top-K): a worker's chain is a wall-clock artefact that a replay
  or a resume could not reproduce. Without chains there are no ``continue_improve`` descents
  into a node under its child limit, and no terminal nodes beyond debugs given up; a descent
  enters only children with something left to expand below them (MLEvolve may descend to a
  terminal node and spend the step backpropagating 0).
* **Progress in steps.** MLEvolve measures progress by wall-clock time (``time_limit`` 12 h)
  and its aggregation window in absolute hours (6–10 h, which a short run never reaches);
  here by the step budget (the window as fractions 6/12 and 10/12), since time never replays.
* **Top-K children.** MLEvolve does not count a top-K pick's children against
  ``num_improves``; here every child counts (which pick made it is not in the tree), so a
  good node takes ``num_improves`` children from descents and up to ``topk_max_improves`` in
  all from top-K picks. The top-K stagnation threshold applies to the pick being made (it
  sticks to the node in MLEvolve).
* **The global best.** At 7d8403c ``agent.best_metric`` is never assigned after
  initialisation, so the +1.5 for beating the global best never fires there, and the global
  stagnation check compares the last nodes with a best already updated by them, so it holds
  whenever the best is up to date; here both work as their code intends.
* Evolution, fusion and aggregation are ``improve`` and ``draft`` actions with references; the
  prompts are Podium's (the references and the memory are shown), not MLEvolve's dedicated
  ones. No code review before execution, no stepwise drafting (operators' business).

All randomness is drawn from ``rng``; the state (branches, visits, rewards, the best so far)
is a function of the observed nodes, so a resume replaying ``observe`` decides the same.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from dataclasses import dataclass
from functools import cached_property

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator

from podium.interfaces import Strategy
from podium.records import Action, Metric, Node
from podium.tree import SearchTree

ROOT = -1  # the virtual root (node ids are never negative)
AGGREGATE = -2  # the descent's answer when an aggregation is due at the root


class MCGSParams(BaseModel):
    """Every default is MLEvolve's (``config/config.yaml`` at 7d8403c), except where a time in
    hours became a fraction of the step budget (noted)."""

    model_config = ConfigDict(extra="forbid")

    num_drafts: int = Field(5, ge=1, description="drafts under the root (branches)")
    num_improves: int = Field(3, ge=1, description="children of a good node before descent")
    num_bugs: int = Field(1, ge=1, description="debug children of a buggy node")
    back_debug_depth: int = Field(3, ge=0, description="debugs in a row made at once")
    max_debug_depth: int = Field(20, ge=0, description="debugs in a row before giving up")
    exploration_constant: float = Field(1.414, ge=0, description="C before the decay")
    decay_alpha: float = Field(0.01, ge=0, description="C's decrease per step after T1")
    decay_lower_bound: float = Field(0.5, ge=0, description="C's floor, and C after T2")
    decay_start: float = Field(
        0.3, ge=0, le=1, description="T1 as a fraction of the steps (decay.phase_ratios[0])"
    )
    decay_end: float = Field(
        0.7,
        ge=0,
        le=1,
        validate_default=True,
        description="T2 as a fraction of the steps (decay.phase_ratios[1])",
    )
    explore_switch_start: float = Field(0.5, ge=0, le=1, description="progress: w starts to fall")
    explore_switch_end: float = Field(
        0.7, ge=0, le=1, validate_default=True, description="progress: w is at its min"
    )
    min_exploration_weight: float = Field(0.2, ge=0, le=1, description="w late in the search")
    topk_early_k: int = Field(5, ge=1, description="top-K size before explore_switch_end")
    topk_early_max_per_branch: int = Field(3, ge=1, description="early top-K cap per branch")
    topk_late_k: int = Field(3, ge=1, description="top-K size from explore_switch_end")
    topk_late_max_per_branch: int = Field(2, ge=1, description="late top-K cap per branch")
    topk_max_improves: int = Field(10, ge=1, description="children of a node top-K may expand")
    use_stagnation_detection: bool = Field(True, description="branch and global stagnation")
    branch_stagnation_threshold: int = Field(3, ge=1, description="good nodes a branch stalls")
    topk_stagnation_threshold: int = Field(6, ge=1, description="the same for a top-K pick")
    use_fusion: bool = Field(True, description="fusion of a stagnant node (else evolution)")
    fusion_vs_evolution_prob: float = Field(0.3, ge=0, le=1, description="fusion's chance")
    fusion_min_progress: float = Field(
        0.5, ge=0, le=1, description="progress before fusion (MLEvolve: half the time limit)"
    )
    fusion_max_refs: int = Field(5, ge=1, description="references a fusion cites")
    use_aggregation: bool = Field(True, description="aggregation drafts from the root")
    max_fusion_drafts: int = Field(2, ge=0, description="aggregations in a run")
    aggregation_start: float = Field(
        0.5, ge=0, le=1, description="progress the aggregation window opens (MLEvolve: 6 h of 12)"
    )
    aggregation_end: float = Field(
        10 / 12,
        ge=0,
        le=1,
        validate_default=True,
        description="progress it closes (MLEvolve: 10 h of 12)",
    )
    fusion_min_branches: int = Field(2, ge=1, description="branches an aggregation needs")
    fusion_min_successful_nodes: int = Field(2, ge=1, description="good nodes such a branch has")
    stagnation_window: int = Field(4, ge=1, description="last nodes without a new global best")
    metric_improvement_threshold: float = Field(1e-4, ge=0, description="a new best beats by")
    branch_fusion_trigger_prob: float = Field(1.0, ge=0, le=1, description="aggregation's chance")

    @field_validator("decay_end", "explore_switch_end", "aggregation_end")
    @classmethod
    def _after_start(cls, end: float, info: ValidationInfo) -> float:
        """Each window's end is not before its start (validated first, declared above)."""
        assert info.field_name is not None
        start = info.field_name.replace("_end", "_start")
        if start in info.data and info.data[start] > end:
            raise ValueError(f"must not be less than {start} ({info.data[start]})")
        return end


def exploration_constant(params: MCGSParams, step: int, steps: int | None) -> float:
    """C at ``step`` (nodes decided before) of ``steps`` (None: unknown, no T2)."""
    t1 = params.num_drafts * params.num_improves**2
    if steps is not None:
        t1 = min(t1, round(steps * params.decay_start))
    t2 = math.inf if steps is None else round(steps * params.decay_end)
    if step < t1:
        return params.exploration_constant
    if step <= t2:
        decayed = params.exploration_constant - params.decay_alpha * (step - t1)
        return max(decayed, params.decay_lower_bound)
    return params.decay_lower_bound


def exploration_weight(params: MCGSParams, progress: float) -> float:
    """The chance of a UCT descent rather than a top-K pick, at ``progress`` in [0, 1]."""
    start, end, low = (
        params.explore_switch_start,
        params.explore_switch_end,
        params.min_exploration_weight,
    )
    if progress < start:
        return 1.0
    if progress < end:
        return 1.0 - (1.0 - low) * (progress - start) / (end - start)
    return low


@dataclass
class _Stats:
    visits: int = 0
    total: float = 0.0


class MCGS(Strategy):
    """MLEvolve's Monte Carlo graph search over branches, with fusion and aggregation."""

    name = "mcgs"

    def __init__(self, params: MCGSParams | None = None) -> None:
        self.params = params or MCGSParams()
        self.branch: dict[int, int] = {}  # node id -> its branch (the id of its draft)
        self.rewards: dict[int, float] = {}  # node id -> the reward it backpropagated
        self._stats: dict[int, _Stats] = {ROOT: _Stats()}
        self._best: Metric | None = None
        self._observed = 0
        self._last_record = 0  # the observed count when the global best last rose

    # --- learning -------------------------------------------------------------------------

    def observe(self, node: Node, tree: SearchTree) -> None:
        if node.id in self.rewards or node.kind != "solution":
            return
        parent = node.parent_ids[0] if node.parent_ids else None
        self.branch[node.id] = node.id if parent is None else self.branch.get(parent, parent)
        reward = self._reward(node, tree)
        self.rewards[node.id] = reward
        for key in [ROOT, *(n.id for n in tree.lineage(node))]:
            stats = self._stats.setdefault(key, _Stats())
            stats.visits += 1
            stats.total += reward
        self._observed += 1
        if _works(node):
            assert node.metric is not None
            best = self._best
            margin = self.params.metric_improvement_threshold
            if best is None or node.metric.score - best.score > margin:
                self._last_record = self._observed
            if node.metric.better_than(best):
                self._best = node.metric

    def _reward(self, node: Node, tree: SearchTree) -> float:
        if not _works(node):
            return -1.0
        assert node.metric is not None
        reward = 1.5 if self._best is not None and node.metric.better_than(self._best) else 0.0
        if node.parent_ids:
            reward += 1.5 if tree.get(node.parent_ids[0]).is_buggy else 1.0
        return reward

    # --- deciding -------------------------------------------------------------------------

    def next_action(self, tree: SearchTree, rng: random.Random) -> Action | None:
        view = _View(self, tree)
        urgent = view.urgent_debug()
        if urgent is not None:
            return Action(operator="debug", parent_ids=(urgent,))
        if rng.random() < exploration_weight(self.params, view.progress):
            return self._explore(view, rng)
        return self._exploit(view, rng)

    def _explore(self, view: _View, rng: random.Random) -> Action | None:
        return self._expand(self._descend(ROOT, view, rng), view, rng, topk=False)

    def _exploit(self, view: _View, rng: random.Random) -> Action | None:
        p = self.params
        early = view.progress < p.explore_switch_end
        k = p.topk_early_k if early else p.topk_late_k
        cap = p.topk_early_max_per_branch if early else p.topk_late_max_per_branch
        top = self.top_k(view.tree, k, cap)
        if not top:
            return self._explore(view, rng)
        ranked = list(enumerate(top, start=1))
        free = [(r, i) for r, i in ranked if view.width(i) < p.topk_max_improves]
        pool = free or ranked
        pick = rng.choices([i for _, i in pool], weights=[1 / r for r, _ in pool])[0]
        target = pick if free else self._descend(pick, view, rng)
        return self._expand(target, view, rng, topk=True)

    def top_k(self, tree: SearchTree, k: int, cap: int) -> list[int]:
        """The ids of up to ``k`` good nodes, best first, at most ``cap`` from one branch."""
        chosen: list[int] = []
        per_branch: Counter[int] = Counter()
        for node in tree.direction.best_first(n for n in tree if _works(n)):
            branch = self.branch.get(node.id, node.id)
            if len(chosen) == k:
                break
            if per_branch[branch] < cap:
                chosen.append(node.id)
                per_branch[branch] += 1
        return chosen

    def _descend(self, start: int, view: _View, rng: random.Random) -> int | None:
        """The node a UCT descent from ``start`` expands: ROOT, a node id, AGGREGATE, or None
        when nothing below ``start`` can be expanded now."""
        here = start
        while not view.expandable(here):
            due = here == ROOT and self._aggregation_due(view)
            if due and rng.random() < self.params.branch_fusion_trigger_prob:
                return AGGREGATE
            options = [c for c in view.children(here) if c in view.open]
            if not options:
                return None
            c = exploration_constant(self.params, view.decided, view.steps)
            parent = self._stats.get(here, _Stats())
            here = max(options, key=lambda i: (self._uct(i, parent, c), -i))
        return here

    def _uct(self, node_id: int, parent: _Stats, c: float) -> float:
        stats = self._stats.get(node_id, _Stats())
        if stats.visits == 0:
            return math.inf
        return stats.total / stats.visits + c * math.sqrt(math.log(parent.visits) / stats.visits)

    def _expand(
        self, target: int | None, view: _View, rng: random.Random, topk: bool
    ) -> Action | None:
        if target is None:
            return None  # everything is full or given up for now: wait for nodes in flight
        if target == AGGREGATE:
            return Action(operator="draft", ref_ids=tuple(view.branch_bests()))
        if target == ROOT:
            return Action(operator="draft")
        node = view.tree.get(target)
        if node.is_buggy:
            return Action(operator="debug", parent_ids=(target,))
        return self._improve(node, view, rng, topk)

    def _improve(self, node: Node, view: _View, rng: random.Random, topk: bool) -> Action:
        """An improve of a good node: a fusion or an evolution when its branch is stagnant."""
        p = self.params
        threshold = p.topk_stagnation_threshold if topk else p.branch_stagnation_threshold
        fuse = (
            p.use_stagnation_detection
            and view.stagnant(self.branch[node.id], threshold)
            and p.use_fusion
            and view.progress >= p.fusion_min_progress
            and rng.random() < p.fusion_vs_evolution_prob
        )
        refs = view.fusion_refs(node.id) if fuse else ()
        return Action(operator="improve", parent_ids=(node.id,), ref_ids=refs)

    def _aggregation_due(self, view: _View) -> bool:
        p = self.params
        return (
            p.use_aggregation
            and view.aggregations < p.max_fusion_drafts
            and p.aggregation_start <= view.progress <= p.aggregation_end
            and sum(len(good) >= p.fusion_min_successful_nodes for good in view.good.values())
            >= p.fusion_min_branches
            and self._globally_stagnant()
        )

    def _globally_stagnant(self) -> bool:
        """No node among the last ``stagnation_window`` finished beat the best before it."""
        window = self.params.stagnation_window
        return (
            self.params.use_stagnation_detection
            and self._best is not None
            and self._observed >= window
            and self._last_record <= self._observed - window
        )


class _View:
    """One decision's reading of the tree: progress, child counts with pending actions, which
    nodes can be expanded (or have such a node below them), each branch's good nodes."""

    def __init__(self, strategy: MCGS, tree: SearchTree) -> None:
        self.strategy, self.params, self.tree = strategy, strategy.params, tree
        self.decided = len(tree) + len(tree.pending)
        self.steps = None if tree.steps_left is None else self.decided + tree.steps_left
        self.progress = self.decided / self.steps if self.steps else 0.0
        self._pending: Counter[int] = Counter()
        self.aggregations = sum(1 for n in tree.drafts() if n.ref_ids)
        for action in tree.pending:
            if action.parent_ids:
                self._pending[action.parent_ids[0]] += 1
            elif action.ref_ids:
                self.aggregations += 1
            else:
                self._pending[ROOT] += 1
        self.good: dict[int, list[Node]] = {}
        for node in sorted(tree, key=lambda n: n.id):
            if _works(node):
                self.good.setdefault(strategy.branch.get(node.id, node.id), []).append(node)

    def children(self, node_id: int) -> list[int]:
        if node_id == ROOT:
            return [n.id for n in self.tree.drafts() if n.kind == "solution"]
        return [
            c.id
            for c in self.tree.children(node_id)
            if c.parent_ids[0] == node_id and c.kind == "solution"
        ]

    def urgent_debug(self) -> int | None:
        """The oldest buggy node fewer than ``back_debug_depth`` debugs deep that can be
        debugged now (MLEvolve's worker debugs its own failure at once)."""
        limit = self.params.back_debug_depth
        for node in sorted(self.tree.buggy_nodes(), key=lambda n: n.id):
            if self.tree.debug_depth(node) < limit and self.expandable(node.id):
                return node.id
        return None

    def width(self, node_id: int) -> int:
        """Children, finished and pending (at the root: regular drafts only)."""
        if node_id == ROOT:
            regular = sum(1 for n in self.tree.drafts() if not n.ref_ids)
            return regular + self._pending[ROOT]
        return len(self.children(node_id)) + self._pending[node_id]

    def expandable(self, node_id: int) -> bool:
        """Under its child limit and not given up."""
        p = self.params
        if node_id == ROOT:
            return self.width(ROOT) < p.num_drafts
        node = self.tree.get(node_id)
        if node.kind != "solution":
            return False
        if node.is_buggy:
            fixed = any(_works(c) for c in self.tree.children(node_id))
            return (
                bool(node.code)
                and not fixed
                and self.tree.debug_depth(node) < p.max_debug_depth
                and self.width(node_id) < p.num_bugs
            )
        return _works(node) and self.width(node_id) < p.num_improves

    @cached_property
    def open(self) -> set[int]:
        """Nodes that can be expanded, or have such a node below them (children after their
        parents in id order, so one pass from the newest settles each)."""
        found: set[int] = set()
        for node_id in sorted(self.tree.ids(), reverse=True):
            if self.expandable(node_id) or any(c in found for c in self.children(node_id)):
                found.add(node_id)
        return found

    def stagnant(self, branch: int, threshold: int) -> bool:
        """The branch's last ``threshold`` good nodes (at least 2) all fall short of its best."""
        good = self.good.get(branch, [])
        recent = good[-threshold:]
        best = max(_score(n) for n in good) if good else None
        return len(recent) >= 2 and best is not None and all(_score(n) < best for n in recent)

    def top_of(self, branch: int, k: int) -> list[Node]:
        return self.tree.direction.best_first(self.good.get(branch, []))[:k]

    def fusion_refs(self, node_id: int) -> tuple[int, ...]:
        """The top-2 good nodes of every other branch, in branch order; none: the top-2 of the
        node's own branch, the node left out."""
        own = self.strategy.branch[node_id]
        refs = [n.id for b in sorted(self.good) if b != own for n in self.top_of(b, 2)]
        if not refs:
            refs = [n.id for n in self.top_of(own, 2) if n.id != node_id]
        return tuple(refs[: self.params.fusion_max_refs])

    def branch_bests(self) -> list[int]:
        """The best good node of every branch, in branch order."""
        return [self.top_of(b, 1)[0].id for b in sorted(self.good)]


def _works(node: Node) -> bool:
    """A good solution with a usable metric (what MLEvolve counts as a successful node)."""
    return node.is_good and node.metric is not None and Metric.usable(node.metric.value)


def _score(node: Node) -> float:
    assert node.metric is not None
    return node.metric.score
