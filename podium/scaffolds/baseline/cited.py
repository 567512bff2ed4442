"""What the baseline takes from the solutions an action cites (``ctx.refs``, beyond its parents).

An ``improve`` that cites solutions adopts one thing from the best of them (by validation
metric; a cited node that failed, has no metric or no baseline recipe of the task's kind is
passed over): ``kind.crossover`` of the parent (which keeps its model) with the cited node (which
gives its data handling or features). A ``draft`` that cites solutions (an aggregation of the
best node of each branch) starts a new branch from the crossover of the two best of them: the
fitter gives the model, the other the data handling. When the cited nodes have nothing to add
(the child would repeat the parent or a cited node), the plan says so and the operator does
what it does without references. Analyses are never cited solutions (``Node.kind``).
"""

from __future__ import annotations

from typing import Any

from podium.interfaces import OperatorContext
from podium.records import Direction, Node
from podium.scaffolds.baseline.kinds import Kind

OTHER = "from the other"  # how a kind's crossover names the parent that gives the data handling


def solutions(ctx: OperatorContext, kind: Kind[Any, Any]) -> list[tuple[Node, Any]]:
    """The cited solutions with a validation metric and a readable recipe, best first."""
    good = [n for n in ctx.refs if n.kind == "solution" and not n.is_buggy]
    ranked = Direction.of(ctx.task.lower_is_better).best_first(good)
    read = [(n, kind.read(n.code)) for n in ranked]
    return [(n, recipe) for n, recipe in read if recipe is not None]


def _named(why: str, node: Node) -> str:
    """A crossover's reason with the node that gave the data handling named."""
    if why.endswith(OTHER):
        return f"{why[: -len(OTHER)]}from node {node.id}"
    return f"{why} (node {node.id})"


def improve(ctx: OperatorContext, kind: Kind[Any, Any], spec: Any, parent: Node,
            recipe: Any) -> tuple[Any | None, str] | None:  # fmt: skip
    """The parent with what the best cited solution does differently, and the plan's opening;
    (None, the plan's note) when the cited solutions have nothing to add; None when none is
    cited."""
    cited = solutions(ctx, kind)
    if not cited:
        return None
    node, other = cited[0]
    mixed = kind.crossover(recipe, other, spec)
    if mixed is None or mixed[0] in (recipe, other):
        return None, f"Cited node {node.id} has nothing to add to node {parent.id}, so improve. "
    score = f" ({node.metric.value:.6g})" if node.metric is not None else ""
    return mixed[0], (
        f"Improve node {parent.id} with cited node {node.id}{score}'s data handling: "
        f"{_named(mixed[1], node)}. Now: "
    )


def draft(ctx: OperatorContext, kind: Kind[Any, Any], spec: Any) -> tuple[Any | None, str] | None:
    """A new branch from the crossover of the two best cited solutions, and the plan's opening;
    (None, the plan's note) when they cannot be mixed; None when no solution is cited."""
    cited = solutions(ctx, kind)
    if not cited:
        return None
    if len(cited) < 2:
        return None, f"Only cited node {cited[0][0].id} can be read, so a plain draft. "
    (fit, fit_recipe), (node, other) = cited[:2]
    mixed = kind.crossover(fit_recipe, other, spec)
    if mixed is None or mixed[0] in (fit_recipe, other):
        return None, f"Cited nodes {fit.id} and {node.id} have nothing to mix, so a plain draft. "
    return mixed[0], (
        f"Draft a new branch from cited nodes {fit.id} (model) and {node.id}: "
        f"{_named(mixed[1], node)}. Now: "
    )
