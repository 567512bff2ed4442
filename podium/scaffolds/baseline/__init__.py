"""The ``baseline`` operator set: a model that needs no key and no network.

It writes real scikit-learn solutions, so ``podium run`` works out of the box and the whole
search path — execution, metric line, hard checks, journal, resume — runs without an LLM. It
handles four kinds of task (``analysis`` tells them apart from the public files): tabular
(classification with labels, probabilities or one probability column per class; regression,
on a log scale when the metric is), image classification from pixels, text classification or
regression from TF-IDF features, and multi-series forecasting with lag features. Each kind has
a recipe module (the choices and how the operators change them) and a codegen module (the
script); ``kinds.KINDS`` puts them behind one shape.

Crossover of two parents works on their recipes (read back from the first line of their code):
the fitter parent by validation metric (the first on a tie, or the one with a metric) gives the
model, the other gives the data handling and features (each kind's ``crossover`` says which
choices are which). When a parent's recipe cannot be read (code written by something else), or
the child would repeat a parent (the other has nothing to add, or has the same model), the
crossover is an improve of the first parent instead.

``ablate`` (an analysis node) scores a solution with each of its recipe's parts taken out
(``ablation``); ``refine`` changes the part its ablation shows matters most, as an edit of the
parent's code (``refine``). Both need a parent whose recipe can be read. ``ensemble`` trains
every readable parent's model on the same validation folds and combines their predictions
(``ensemble``). An ``improve`` or a ``draft`` that cites solutions (``ctx.refs``) takes from
the best of them what ``cited`` says.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from podium.interfaces import OperatorContext, OperatorSet, Proposal
from podium.records import Direction, Node
from podium.scaffolds.baseline import ablation, cited, ensemble, refine
from podium.scaffolds.baseline.analysis import Unsupported, analyse
from podium.scaffolds.baseline.kinds import KINDS, Kind
from podium.scaffolds.baseline.metrics import beyond_baseline, validation_note
from podium.scaffolds.baseline.specs import Spec

MODEL_NAME = "baseline"
BEYOND_HINT = (
    "give it a task in that layout, or run a chat model on this one "
    "(--model provider/model, e.g. openai/gpt-4.1)"
)


def fitter_first(a: Node, b: Node, lower_is_better: bool) -> tuple[Node, Node]:
    """The two parents, the one with the better validation metric first (``a`` on a tie, when
    neither has a metric, or when either metric is NaN); a metric beats none."""
    if b.metric is not None and a.metric is None:
        return b, a
    if (
        a.metric is not None
        and b.metric is not None
        and Direction.of(lower_is_better).better(b.metric.value, a.metric.value)
    ):
        return b, a
    return a, b


class BaselineOperators(OperatorSet):
    name = "baseline"
    operators = ("draft", "improve", "debug", "crossover", "ablate", "refine", "ensemble")
    analyses = ("ablate",)

    async def propose(self, ctx: OperatorContext) -> Proposal:
        metric = ctx.task.metric_name
        beyond = beyond_baseline(metric)
        if beyond is not None:  # it could only validate on another metric: the run stops
            return Proposal("", "", problem=beyond, beyond=BEYOND_HINT)
        try:
            spec = analyse(ctx.task.public_dir, metric, ctx.task.description)
        except Unsupported as exc:  # every node would say so again: the run stops
            problem = (
                "the baseline model handles tabular, image, text and time-series tasks only "
                f"(one train table or image folder, a test set and a sample submission): {exc}"
            )
            return Proposal("", "", problem=problem, beyond=BEYOND_HINT)
        kind = KINDS[spec.kind]
        if ctx.action.operator == "ablate":
            return ablation.propose(ctx, kind, spec)
        if ctx.action.operator == "refine":
            return refine.propose(ctx, kind, spec)
        if ctx.action.operator == "ensemble":
            return ensemble.propose(ctx, kind, spec)
        parent = ctx.parents[0] if ctx.parents else None
        parent_recipe = kind.read(parent.code) if parent else None
        op = ctx.action.operator
        prefix = ""
        if op == "crossover":
            if len(ctx.parents) >= 2:
                mixed, prefix = self._crossover(ctx, kind, spec)
                if mixed is not None:
                    return mixed
            op = "improve"  # of the first parent (a draft when its recipe cannot be read)
        taken = None  # what the solutions the action cites give it (``cited``)
        if op == "draft":
            taken = cited.draft(ctx, kind, spec)
        elif op == "improve" and parent is not None and parent_recipe is not None:
            taken = cited.improve(ctx, kind, spec, parent, parent_recipe)
        if taken is not None and taken[0] is None:  # nothing to take: the plan says so
            prefix, taken = prefix + taken[1], None
        if taken is not None:
            recipe, plan = taken
        elif op == "draft" or (op == "improve" and parent_recipe is None):
            recipe = kind.draft(spec, len(ctx.tree.drafts()), ctx.rng)
            plan = "Draft: "
        elif op == "improve":
            assert parent is not None
            recipe, why = kind.improve(parent_recipe, spec, ctx.rng)
            plan = f"Improve node {parent.id}: {why}. Now: "
        else:
            assert parent is not None
            recipe, why = kind.debug(parent_recipe, spec)
            plan = f"Debug node {parent.id} ({parent.bug_reason}): {why}. Now: "
        code = kind.render(spec, recipe)
        problem = "regression" if spec.prediction == "value" else "classification"
        note = validation_note(metric, problem)
        described = kind.describe(spec, recipe) + (f" ({note})" if note else "")
        return Proposal(plan=prefix + plan + described, code=code)

    @staticmethod
    def _crossover(
        ctx: OperatorContext, kind: Kind[Any, Any], spec: Spec
    ) -> tuple[Proposal | None, str]:
        """The crossover's proposal, or None and the reason that makes it an improve instead."""
        first, second = ctx.parents[0], ctx.parents[1]
        fit, other = fitter_first(first, second, ctx.task.lower_is_better)
        fit_recipe, other_recipe = kind.read(fit.code), kind.read(other.code)
        if fit_recipe is None or other_recipe is None:
            reason = "a parent's recipe cannot be read"
        else:
            mixed = kind.crossover(fit_recipe, other_recipe, spec)
            if mixed is not None and mixed[0] != other_recipe:
                recipe, why = mixed
                plan = f"Crossover of node {fit.id} (model) with node {other.id}: {why}. Now: "
                code = kind.render(spec, recipe)
                return Proposal(plan=plan + kind.describe(spec, recipe), code=code), ""
            reason = (
                "the other parent has nothing to add"
                if mixed is None
                else "the child would repeat the other parent (it has the same model)"
            )
        return None, f"Crossover of nodes {first.id} and {second.id}: {reason}, so improve. "


def create(options: Mapping[str, Any]) -> BaselineOperators:
    return BaselineOperators()
