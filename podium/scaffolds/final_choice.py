"""Choosing the node to submit: the best by validation metric, or — with ``search.final_top_k``
= k > 1 — the best of the top k after each is run once more on a fresh kernel.

A single hold-out score can be lucky (a favourable split, an unseeded model). Re-running the k
best candidates and ranking them by the mean of their two scores catches that; a candidate
whose re-run fails or prints no metric is dropped. Nothing here looks at the private answers.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass
from typing import Any

from podium.records import Direction, ExecResult, Node
from podium.scaffolds.review import metric_from_output
from podium.tree import SearchTree


@dataclass(frozen=True)
class Rerun:
    node_id: int
    metric: float
    rerun_metric: float | None
    problem: str | None = None

    @property
    def mean(self) -> float | None:
        if self.rerun_metric is None:
            return None
        return (self.metric + self.rerun_metric) / 2

    def report(self) -> dict[str, Any]:
        return {**asdict(self), "mean": self.mean}


def top_k(tree: SearchTree, k: int) -> list[Node]:
    """The k best good nodes by validation metric (earliest first on ties)."""
    return tree.direction.best_first(tree.good_nodes())[:k]


def rerun_result(node: Node, result: ExecResult) -> Rerun:
    assert node.metric is not None
    value = metric_from_output(result.output)
    if result.failed:
        return Rerun(node.id, node.metric.value, None, f"the re-run failed: {result.status}")
    if not isinstance(value, float) or not math.isfinite(value):
        return Rerun(node.id, node.metric.value, None, "the re-run printed no usable metric")
    return Rerun(node.id, node.metric.value, value)


def pick(reruns: list[Rerun], lower_is_better: bool) -> int | None:
    """The node id with the best mean of its two scores (the lowest id on a tie); None if no
    re-run worked."""
    direction = Direction.of(lower_is_better)
    usable = [r for r in reruns if r.mean is not None]
    best = min(usable, key=lambda r: (-direction.score(r.mean or 0.0), r.node_id), default=None)
    return best.node_id if best else None


async def choose(
    tree: SearchTree, k: int, execute_again: Callable[[Node], Awaitable[ExecResult]]
) -> tuple[Node | None, list[Rerun]]:
    """Re-run the top k and pick; with k <= 1 (or < 2 candidates), the best node as it is."""
    candidates = top_k(tree, k)
    if k <= 1 or len(candidates) < 2:
        return tree.best_node(), []
    reruns = [rerun_result(node, await execute_again(node)) for node in candidates]
    chosen = pick(reruns, tree.lower_is_better)
    return (tree.get(chosen) if chosen is not None else tree.best_node()), reruns
