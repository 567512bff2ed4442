"""aira-dojo's MCTS policy: UCT over min–max-normalised values, with debug cycles.

One of the builtin strategies compared in docs/strategies.md. The rules, exactly as implemented:

**Search tree.** A virtual root whose children are the drafts. Every finished draft or improve
node is a *search node*; its search parent is the root (a draft) or the search node of its first
parent (an improve; any other operator with parents counts the same way). A ``debug`` node is
not a search node: it joins the *debug cycle* of the search node whose (buggy) node it fixes,
directly or through earlier debugs. The first good node of a cycle (the search node itself when
it is good, else its first good debug) is the search node's *representative*: the node its
improves start from. A search node without one (buggy, never fixed) is never selected.

**Statistics.** Each search node stores ``visits`` (finished search nodes in its subtree, itself
included) and the count and sum of the *raw* metrics credited to its subtree. A search node
counts one visit when it finishes; when its cycle gets its representative (at once for a good
node, or when a debug fixes it), that node's raw metric is credited to the search node and all
its ancestors up to the root: the fixed result is back-propagated, with no extra visit. Debug
attempts add no visits. So a search node's own contribution is the value of its representative,
or 0 while it has none.

**Value and Q.** Values are computed lazily, at selection time, from the stored raw sums: a
metric ``m`` is worth ``(m - lo) / (hi - lo)`` (``(hi - m) / (hi - lo)`` when lower is better),
where ``lo`` and ``hi`` are the least and greatest metric of all good nodes observed so far;
1.0 for every metric when ``hi == lo``. ``Q = (sum of the values credited) / n``, with
``n = visits + virtual_loss * p`` where ``p`` is the number of pending expansions (draft or
improve actions handed out and not finished) in the subtree: a pending expansion counts as
``virtual_loss`` visits of value 0 on its parent search node and every ancestor, root included.
Pending debugs are not expansions and count nothing.

**Selection.** From the root, while the current node has at least ``num_children`` children
(finished search nodes plus pending expansions under it), go to the finished child with a
representative that maximises ``UCT = Q + c_uct * sqrt(ln(N) / n)``, ``N`` being the current
node's ``n`` (the root's visits are all search nodes); ties go to the lowest node id. If no
child has a representative, stop there. Then expand the current node: ``draft`` at the root,
``improve`` of its representative elsewhere.

**Debug first.** Before any selection: a finished buggy node with code, no debug child (finished
or pending) and a debug depth below ``max_debug_depth`` (``SearchTree.debug_depth``: debugs in
a row that led to it) is debugged, the lowest node id first. A node without code (the model
call failed or gave no code) is not debugged; a cycle with ``max_debug_depth`` failed debugs is
given up.

No randomness is used; everything is a function of the observed nodes (in order) and the pending
actions, so a resumed run replaying ``observe`` decides the same. The root can always draft, so
``next_action`` never returns None. The final node is the best good node by validation metric.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from dataclasses import dataclass, field

from pydantic import BaseModel, ConfigDict, Field

from podium.interfaces import Strategy
from podium.records import Action, Direction, Metric, Node
from podium.tree import SearchTree

ROOT = -1  # the virtual root's key among search nodes (node ids are never negative)


class MCTSParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    c_uct: float = Field(0.25, ge=0.0, description="exploration constant c in the UCT score")
    num_children: int = Field(
        5,
        ge=1,
        description="children per expansion: a node (or the root, for drafts) is expanded "
        "until it has this many non-debug children, then selection descends into it",
    )
    max_debug_depth: int = Field(
        3, ge=0, description="debug attempts in a row on one failing branch before giving up"
    )
    virtual_loss: float = Field(
        1.0,
        ge=0.0,
        description="visits (of value 0) a pending expansion counts as, so workers spread out",
    )


@dataclass
class _Stats:
    """One search node: its place in the tree and what was back-propagated through it."""

    parent: int
    children: list[int] = field(default_factory=list)
    visits: int = 0
    results: int = 0  # raw metrics credited to this subtree
    total: float = 0.0  # their sum
    rep: int | None = None  # the good node standing for this search node


@dataclass
class _Pending:
    """The actions handed out and not finished, as selection counts them."""

    children: Counter[int]  # search node -> pending expansions directly under it
    virtual: Counter[int]  # search node -> pending expansions in its subtree
    debugging: set[int]  # nodes with a pending debug


class MCTS(Strategy):
    name = "mcts"

    def __init__(self, params: MCTSParams | None = None) -> None:
        self.params = params or MCTSParams()
        self._stats: dict[int, _Stats] = {ROOT: _Stats(parent=ROOT)}
        self._search_node: dict[int, int] = {}  # finished node id -> its search node
        self._depth: dict[int, int] = {}  # finished node id -> debug depth
        self._debuggable: set[int] = set()
        self._lo = math.inf
        self._hi = -math.inf
        self._direction = Direction.HIGHER  # that of the last metric credited

    # --- learning -------------------------------------------------------------------------

    def observe(self, node: Node, tree: SearchTree) -> None:
        if node.id in self._search_node:
            return
        parent = node.parent_ids[0] if node.parent_ids else None
        if node.operator == "debug" and parent is not None and parent in self._search_node:
            here = self._search_node[parent]
            self._depth[node.id] = self._depth[parent] + 1
            self._debuggable.discard(parent)
        else:
            here = self._add_search_node(node.id, parent)
            self._depth[node.id] = 0
        self._search_node[node.id] = here
        if node.is_buggy and node.code and self._depth[node.id] < self.params.max_debug_depth:
            self._debuggable.add(node.id)
        if node.is_good and node.metric is not None and Metric.usable(node.metric.value):
            self._credit(here, node.id, node.metric)

    def _add_search_node(self, node_id: int, parent: int | None) -> int:
        up = ROOT if parent is None else self._search_node.get(parent, ROOT)
        self._stats[node_id] = _Stats(parent=up)
        self._stats[up].children.append(node_id)
        for s in self._path(node_id):
            self._stats[s].visits += 1
        return node_id

    def _credit(self, search_node: int, node_id: int, metric: Metric) -> None:
        self._lo, self._hi = min(self._lo, metric.value), max(self._hi, metric.value)
        self._direction = metric.direction
        if self._stats[search_node].rep is not None:
            return  # the cycle already has its result
        self._stats[search_node].rep = node_id
        for s in self._path(search_node):
            self._stats[s].results += 1
            self._stats[s].total += metric.value

    def _path(self, search_node: int) -> list[int]:
        """``search_node`` and its ancestors, the root last."""
        path = [search_node]
        while path[-1] != ROOT:
            path.append(self._stats[path[-1]].parent)
        return path

    # --- deciding -------------------------------------------------------------------------

    def next_action(self, tree: SearchTree, rng: random.Random) -> Action:
        pending = self._pending(tree)
        ready = sorted(self._debuggable - pending.debugging)
        if ready:
            return Action(operator="debug", parent_ids=(ready[0],))
        chosen = self._select(pending)
        rep = self._stats[chosen].rep
        if chosen == ROOT or rep is None:
            return Action(operator="draft")
        return Action(operator="improve", parent_ids=(rep,))

    def _select(self, pending: _Pending) -> int:
        current = ROOT
        while self._width(current, pending) >= self.params.num_children:
            options = [c for c in self._stats[current].children if self._stats[c].rep is not None]
            if not options:
                break
            current = max(options, key=lambda c: (self._uct(c, pending), -c))
        return current

    def _width(self, search_node: int, pending: _Pending) -> int:
        return len(self._stats[search_node].children) + pending.children[search_node]

    def _pending(self, tree: SearchTree) -> _Pending:
        view = _Pending(children=Counter(), virtual=Counter(), debugging=set())
        for action in tree.pending:
            first = action.parent_ids[0] if action.parent_ids else None
            if action.operator == "debug" and first is not None:
                view.debugging.add(first)
                continue
            up = ROOT if first is None else self._search_node.get(first)
            if up is None:
                continue  # a parent this strategy never observed
            view.children[up] += 1
            view.virtual.update(self._path(up))
        return view

    # --- scores ---------------------------------------------------------------------------

    def _n(self, search_node: int, pending: _Pending) -> float:
        return (
            self._stats[search_node].visits
            + self.params.virtual_loss * pending.virtual[search_node]
        )

    def _value_sum(self, search_node: int) -> float:
        """Sum of the normalised values credited to ``search_node``, at the current lo/hi."""
        s = self._stats[search_node]
        if s.results == 0 or self._hi == self._lo:
            return float(s.results)
        # min–max normalised scores, summed: the score is linear, so score(total) is the sum of
        # the credited metrics' scores (and the result is exactly the per-direction formula)
        score = self._direction.score
        worst, best = sorted((score(self._lo), score(self._hi)))
        return (score(s.total) - s.results * worst) / (best - worst)

    def _q(self, search_node: int, pending: _Pending) -> float:
        return self._value_sum(search_node) / self._n(search_node, pending)

    def _uct(self, search_node: int, pending: _Pending) -> float:
        n = self._n(search_node, pending)
        big_n = self._n(self._stats[search_node].parent, pending)
        return self._q(search_node, pending) + self.params.c_uct * math.sqrt(math.log(big_n) / n)

    def q_values(self, tree: SearchTree) -> dict[int, float]:
        """Q of every search node (keyed by its node id), as selection would see it now."""
        pending = self._pending(tree)
        return {s: self._q(s, pending) for s in self._stats if s != ROOT}

    def uct_scores(self, tree: SearchTree) -> dict[int, float]:
        """UCT of every search node selection could descend into, as it would see it now."""
        pending = self._pending(tree)
        return {
            s: self._uct(s, pending)
            for s, stats in self._stats.items()
            if s != ROOT and stats.rep is not None
        }
