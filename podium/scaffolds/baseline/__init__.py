"""The ``baseline`` operator set: a model that needs no key and no network.

It writes real scikit-learn solutions for tabular tasks (see ``recipe`` for the choices and
``codegen`` for the script), so ``podium run`` works out of the box and the whole search path —
execution, metric line, hard checks, journal, resume — runs without an LLM.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from podium.interfaces import OperatorContext, OperatorSet, Proposal
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


class BaselineOperators(OperatorSet):
    name = "baseline"
    operators = ("draft", "improve", "debug")

    async def propose(self, ctx: OperatorContext) -> Proposal:
        try:
            spec = analyse(ctx.task.public_dir, ctx.task.metric_name)
        except NotTabular as exc:
            return Proposal("", "", problem=f"the baseline model handles tabular tasks only: {exc}")
        parent = ctx.parents[0] if ctx.parents else None
        parent_recipe = read_recipe(parent.code) if parent else None
        op = ctx.action.operator
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
        return Proposal(plan=plan + describe(spec, recipe), code=render(spec, recipe))


def create(options: Mapping[str, Any]) -> BaselineOperators:
    return BaselineOperators()
