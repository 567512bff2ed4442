"""The ``baseline`` operator set: a model that needs no key and no network.

It writes real scikit-learn solutions for tabular tasks (see ``recipe`` for the choices and
``codegen`` for the script), so ``podium run`` works out of the box and the whole search path —
execution, metric line, hard checks, journal, resume — runs without an LLM.

Crossover of two parents works on their recipes (read back from the first line of their code):
the fitter parent by validation metric (the first on a tie, or the one with a metric) gives the
model family, its hyperparameters and scaling; the other gives the imputation, the category
encoding and the derived features the fitter one lacks (``recipe.crossover``). When a parent's
recipe cannot be read (code written by something else), or the other parent has nothing to add,
the crossover is an improve of the first parent instead.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from podium.interfaces import OperatorContext, OperatorSet, Proposal
from podium.records import Node
from podium.scaffolds.baseline import recipe as recipes
from podium.scaffolds.baseline.analysis import NotTabular, TabularSpec, analyse
from podium.scaffolds.baseline.codegen import read_recipe, render

MODEL_NAME = "baseline"


def describe(spec: TabularSpec, recipe: recipes.Recipe) -> str:
    params = ", ".join(f"{k}={v}" for k, v in sorted(recipe.params.items()) if k != "random_state")
    features = ", ".join(recipe.features) or "none"
    validation = "5-fold cross-validation" if spec.rows <= 50_000 else "a 20% hold-out split"
    return (
        f"{recipe.family.replace('_', ' ')} ({params}) predicting {spec.target} from "
        f"{len(spec.numeric)} numeric and {len(spec.categorical)} categorical columns; "
        f"{recipe.impute} imputation, {recipe.encode} encoding"
        f"{', scaling' if recipe.scale else ''}; derived features: {features}; "
        f"validated with {validation}."
    )


def fitter_first(a: Node, b: Node, lower_is_better: bool) -> tuple[Node, Node]:
    """The two parents, the one with the better validation metric first (``a`` on a tie)."""
    if b.metric is not None and a.metric is None:
        return b, a
    if a.metric is not None and b.metric is not None:
        worse = (
            a.metric.value > b.metric.value if lower_is_better else a.metric.value < b.metric.value
        )
        if worse:
            return b, a
    return a, b


class BaselineOperators(OperatorSet):
    name = "baseline"
    operators = ("draft", "improve", "debug", "crossover")

    async def propose(self, ctx: OperatorContext) -> Proposal:
        try:
            spec = analyse(ctx.task.public_dir, ctx.task.metric_name)
        except NotTabular as exc:
            return Proposal("", "", problem=f"the baseline model handles tabular tasks only: {exc}")
        parent = ctx.parents[0] if ctx.parents else None
        parent_recipe = read_recipe(parent.code) if parent else None
        op = ctx.action.operator
        prefix = ""
        if op == "crossover":
            if len(ctx.parents) >= 2:
                mixed, prefix = self._crossover(ctx, spec)
                if mixed is not None:
                    return mixed
            op = "improve"  # of the first parent (a draft when its recipe cannot be read)
        if op == "draft" or (op == "improve" and parent_recipe is None):
            recipe = recipes.draft(spec, len(ctx.tree.drafts()), ctx.rng)
            plan = "Draft: "
        elif op == "improve":
            assert parent is not None and parent_recipe is not None
            recipe, why = recipes.improve(parent_recipe, spec, ctx.rng)
            plan = f"Improve node {parent.id}: {why}. Now: "
        else:
            assert parent is not None
            recipe, why = recipes.debug(parent_recipe, spec)
            plan = f"Debug node {parent.id} ({parent.bug_reason}): {why}. Now: "
        return Proposal(plan=prefix + plan + describe(spec, recipe), code=render(spec, recipe))

    @staticmethod
    def _crossover(ctx: OperatorContext, spec: TabularSpec) -> tuple[Proposal | None, str]:
        """The crossover's proposal, or None and the reason that makes it an improve instead."""
        first, second = ctx.parents[0], ctx.parents[1]
        fit, other = fitter_first(first, second, ctx.task.lower_is_better)
        fit_recipe, other_recipe = read_recipe(fit.code), read_recipe(other.code)
        if fit_recipe is None or other_recipe is None:
            reason = "a parent's recipe cannot be read"
        else:
            mixed = recipes.crossover(fit_recipe, other_recipe, spec)
            if mixed is not None:
                recipe, why = mixed
                plan = f"Crossover of node {fit.id} (model) with node {other.id}: {why}. Now: "
                return Proposal(plan=plan + describe(spec, recipe), code=render(spec, recipe)), ""
            reason = "the other parent has nothing to add"
        return None, f"Crossover of nodes {first.id} and {second.id}: {reason}, so improve. "


def create(options: Mapping[str, Any]) -> BaselineOperators:
    return BaselineOperators()
