"""The search tree as strategies and operators see it: finished nodes plus pending actions.

It is a DAG (a crossover node has two parents). A node's references (``Node.ref_ids``: nodes it
cites without descending from them) are a second kind of edge, kept apart: :meth:`children`
never holds them, :meth:`cited_by` does. The journal is the durable copy; this is the
in-memory index the loop keeps in step with it, so strategy decisions cost microseconds.
"""

from __future__ import annotations

from collections.abc import Iterator

from podium.records import Action, Direction, Node


class SearchTree:
    """Finished nodes by id, their children, the best good node, and the pending actions.

    ``lower_is_better`` is the task's metric direction; compare metrics through
    :attr:`direction` (see :class:`podium.records.Direction`).
    """

    def __init__(self, lower_is_better: bool) -> None:
        self.lower_is_better = lower_is_better
        self._nodes: dict[int, Node] = {}
        self._children: dict[int, list[int]] = {}
        self._cited_by: dict[int, list[int]] = {}
        self._best: Node | None = None
        self.pending: list[Action] = []  # actions handed out whose nodes have not finished
        # Decisions the step budget still allows, the one being made included (None: no step
        # budget known, as in a test's tree). Counted in node ids, so a replay or resume sees
        # the same numbers; wall-clock time is left out on purpose, as it never replays.
        self.steps_left: int | None = None

    # --- building -------------------------------------------------------------------------

    def add(self, node: Node) -> None:
        """Add a finished node (its parents must already be in the tree)."""
        self._nodes[node.id] = node
        self._children.setdefault(node.id, [])
        for pid in node.parent_ids:
            self._children.setdefault(pid, []).append(node.id)
        for ref in node.ref_ids:
            self._cited_by.setdefault(ref, []).append(node.id)
        if node.is_good and node.metric is not None:
            best = self._best.metric if self._best is not None else None
            if node.metric.better_than(best):
                self._best = node

    def upto(self, last_id: int) -> SearchTree:
        """The tree as it was when nodes ``1 .. last_id`` were the finished ones (a node's
        operators see this under the reproducible schedule, whatever finished since)."""
        view = SearchTree(self.lower_is_better)
        for node in self._nodes.values():
            if node.id <= last_id:
                view.add(node)
        return view

    # --- reading --------------------------------------------------------------------------

    @property
    def direction(self) -> Direction:
        """The task's metric direction: how to rank this tree's nodes."""
        return Direction.of(self.lower_is_better)

    def __len__(self) -> int:
        return len(self._nodes)

    def __iter__(self) -> Iterator[Node]:
        return iter(self._nodes.values())

    def __contains__(self, node_id: object) -> bool:
        return node_id in self._nodes

    def ids(self) -> list[int]:
        return list(self._nodes)

    def get(self, node_id: int) -> Node:
        return self._nodes[node_id]

    @property
    def nodes(self) -> list[Node]:
        """Finished nodes in the order they finished."""
        return list(self._nodes.values())

    def children(self, node_id: int) -> list[Node]:
        return [self._nodes[c] for c in self._children.get(node_id, [])]

    def refs(self, node_id: int) -> list[Node]:
        """The finished nodes ``node_id`` cites beyond its parents (its reference edges)."""
        return [self._nodes[r] for r in self._nodes[node_id].ref_ids if r in self._nodes]

    def cited_by(self, node_id: int) -> list[Node]:
        """The finished nodes that cite ``node_id`` as a reference (none of them its child)."""
        return [self._nodes[c] for c in self._cited_by.get(node_id, [])]

    def analyses(self, node_id: int) -> list[Node]:
        """The finished analyses of ``node_id`` (analysis children), newest first."""
        return [c for c in reversed(self.children(node_id)) if c.kind == "analysis"]

    def is_leaf(self, node_id: int) -> bool:
        return not self._children.get(node_id)

    def good_nodes(self) -> list[Node]:
        return [n for n in self._nodes.values() if n.is_good]

    def buggy_nodes(self) -> list[Node]:
        return [n for n in self._nodes.values() if n.is_buggy]

    def drafts(self) -> list[Node]:
        return [n for n in self._nodes.values() if not n.parent_ids]

    def best_node(self) -> Node | None:
        """The good node with the best validation metric (the earliest one on a tie)."""
        return self._best

    def debug_depth(self, node: Node) -> int:
        """How many debug steps in a row led to ``node`` (0 for a node that is not a debug)."""
        depth = 0
        while node.operator == "debug" and node.parent_ids:
            depth += 1
            node = self._nodes[node.parent_ids[0]]
        return depth

    def lineage(self, node: Node) -> list[Node]:
        """``node`` and its first-parent ancestors, oldest first."""
        chain = [node]
        while chain[-1].parent_ids:
            chain.append(self._nodes[chain[-1].parent_ids[0]])
        return chain[::-1]

    def debuggable(self, max_debug_depth: int) -> list[Node]:
        """Buggy leaves worth a debug step: with code (nothing to fix without), no deeper than
        ``max_debug_depth`` debugs in a row, and not being debugged by another worker."""
        busy = self.pending_parents()
        return [
            n
            for n in self.buggy_nodes()
            if self.is_leaf(n.id)
            and n.kind == "solution"  # a failed analysis is not fixed into a solution
            and n.id not in busy
            and n.code
            and self.debug_depth(n) <= max_debug_depth
        ]

    def pending_count(self, operator: str) -> int:
        return sum(1 for a in self.pending if a.operator == operator)

    def pending_parents(self) -> set[int]:
        return {p for a in self.pending for p in a.parent_ids}
