"""Choosing the node to submit: the best by validation metric, or — with ``search.final_top_k``
= k > 1 — the best of the top k after each is run once more on a fresh kernel.

A single hold-out score can be lucky (a favourable split, an unseeded model). Re-running the k
best candidates and ranking them by the mean of their two scores catches that; a candidate
whose re-run fails or prints no metric is dropped. Nothing here looks at the private answers.

With ``search.holdout`` the scores are the host's, on the held-out labels (:class:`HeldOut`):
the k best by that score, each re-run's submission scored on them again. Nothing of it reaches
a model or a strategy: the scores are read beside the nodes, never from their records.
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
class HeldOut:
    """The host's held-out scores: of a node's own run and of its final re-run (None: none)."""

    of_node: Callable[[int], float | None]
    of_rerun: Callable[[int], float | None]


@dataclass(frozen=True)
class Rerun:
    node_id: int
    metric: float
    rerun_metric: float | None
    problem: str | None = None
    scored_on: str = "validation"  # or "held-out": the host's score, not the agent's metric

    @property
    def mean(self) -> float | None:
        if self.rerun_metric is None:
            return None
        return (self.metric + self.rerun_metric) / 2

    def report(self) -> dict[str, Any]:
        return {**asdict(self), "mean": self.mean}


def top_k(tree: SearchTree, k: int, held_out: HeldOut | None = None) -> list[Node]:
    """The k best good nodes by validation metric (earliest first on ties), or by held-out
    score among the nodes that have one: a score on a few hundred rows ties often, and a tie is
    broken by the validation metric, then the earliest node."""
    direction = tree.direction
    if held_out is None:
        return direction.best_first(tree.good_nodes())[:k]
    scored = [(n, s) for n in tree.good_nodes() if (s := held_out.of_node(n.id)) is not None]
    scored.sort(key=lambda p: (-direction.score(p[1]), -direction.score(_metric(p[0])), p[0].id))
    return [n for n, _ in scored[:k]]


def _metric(node: Node) -> float:
    assert node.metric is not None  # a good node has one
    return node.metric.value


def best_held_out(tree: SearchTree, held_out: HeldOut) -> Node | None:
    """The good node with the best held-out score; None when no node has one."""
    best = top_k(tree, 1, held_out)
    return best[0] if best else None


def held_out_rerun(node: Node, result: ExecResult, held_out: HeldOut) -> Rerun:
    score = held_out.of_node(node.id)
    assert score is not None
    again = None if result.failed else held_out.of_rerun(node.id)
    problem = None if again is not None else "the re-run's held-out rows could not be scored"
    return Rerun(node.id, score, again, problem, scored_on="held-out")


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
    tree: SearchTree,
    k: int,
    execute_again: Callable[[Node], Awaitable[ExecResult]],
    held_out: HeldOut | None = None,
) -> tuple[Node | None, list[Rerun]]:
    """Re-run the top k and pick; with k <= 1 (or < 2 candidates), the best node as it is
    (by held-out score when ``held_out`` is given and a node has one)."""
    best = (best_held_out(tree, held_out) if held_out else None) or tree.best_node()
    candidates = top_k(tree, k, held_out)
    if k <= 1 or len(candidates) < 2:
        return best, []
    reruns = []
    for node in candidates:
        result = await execute_again(node)
        reruns.append(
            rerun_result(node, result)
            if held_out is None
            else held_out_rerun(node, result, held_out)
        )
    chosen = pick(reruns, tree.lower_is_better)
    return (tree.get(chosen) if chosen is not None else best), reruns
