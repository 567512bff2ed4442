"""``ensemble`` for every kind: one script that trains each parent's model as it is, on the same
validation split, and combines their predictions.

The script is each member's own solution (``kind.render`` of its recipe, its recipe line kept
as the section's first line) with two splices (``Hook``): where the solution validates and
prints its metric, the member records its validation instead (per fold of the same seeded
folds: the rows, their targets, its predictions and what it gives the combination), and where
it writes its submission, it records its predictions of the test rows. The last section
combines them (:func:`combination`): class probabilities averaged, then the likeliest label
(a hard vote for a member without probabilities); a positive class's probability ranked and
the ranks averaged where the metric reads only the order (AUC, Gini), else averaged; values
averaged on the scale the members fit (the log scale when the metric is one). It scores the
combination with the members' own ``metric`` on the folds every member validated on, prints
``VALIDATION_METRIC`` and writes the submission through the last member's own submission
lines. Each member also prints ``ENSEMBLE MEMBER node <id>: <score>``.

Members are the readable parents (a parent that failed, has no baseline recipe or repeats
another's recipe is left out, and the plan says so), best first: a tie of a hard vote goes to
the better member. Members must read the same rows to validate on the same folds: when their
samples differ, every member fits on the smallest (the plan says so); the script stops with a
one-line error if their validation rows still differ.

Sizing: k members cost about k solutions (``kind.seconds``), within ``ablation.limit``; beyond
it every member fits on the same smaller sample (down to ``ablation.MIN_ROWS``), then the
costliest members beyond two are left out. Rounds: an ensemble citing earlier ensembles of the
same members (``ctx.refs``) weighs them by the first scheme (``SCHEMES``) none of those tried,
and its plan names them and their scores.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from podium.interfaces import OperatorContext, Proposal
from podium.records import Direction, Node
from podium.scaffolds.baseline import ablation
from podium.scaffolds.baseline.kinds import Kind

MARK = "# podium-baseline ensemble: "  # the script's first line: members, weights (JSON)
SECTION = "# ---- "


@dataclass(frozen=True)
class Hook:
    """Where a kind's solution is spliced to become a member, and how its predictions get in.

    ``validation``: the solution's lines that validate and print the metric (replaced by
    ``folds``, the member's validation as ``[(rows, truth, predictions, contribution)]``);
    ``tail``: how the first line of the lines that write the submission begins (from there on
    the member records ``test`` instead; the combination runs the last member's tail with
    ``through``, the function its predictions go through, returning the combined ones)."""

    validation: str
    folds: str
    tail: str
    test: str
    through: str


FOLDED = Hook(
    validation=(
        'scores = cross_val_score(model, X, y, cv=folds, scoring=scorer, error_score="raise")\n'
        'print(f"VALIDATION_METRIC: {scores.mean():.6f}")'
    ),
    folds="member_folds(model, X, y, folds, predict)",
    tail="submission = ",
    test="member_output(model, X_test, predict)",
    through="def predict(model, X):",
)
HOOKS = {
    "tabular": FOLDED,
    "image": FOLDED,
    "text": FOLDED,
    "series": Hook(
        validation=(
            'print(f"VALIDATION_METRIC: {metric(Y[:, cut:].ravel(), held_out.ravel()):.6f}")'
        ),
        folds="[(None, Y[:, cut:].ravel(), held_out.ravel(), held_out.ravel())]",
        tail="future = ",
        test="clipped(forecast, Y, HORIZON)",
        through="def forecast(history, horizon):",
    ),
}

SCHEMES: dict[str, Callable[[int], list[int]]] = {
    "equal weights": lambda k: [1] * k,
    "weights by rank (the best member k, the next k - 1, ...)": lambda k: list(range(k, 0, -1)),
    "the best member weighted 3 to 1": lambda k: [3] + [1] * (k - 1),
}
"""How the members' predictions are weighed, tried in this order over the ensemble rounds."""

HELPERS = '''import numpy as np
import pandas as pd
from scipy.stats import rankdata
from sklearn.base import clone
from sklearn.model_selection import check_cv

MEMBERS = []  # (node, validation folds, test predictions), best member first


def rows_of(data, rows):
    return data.iloc[rows] if hasattr(data, "iloc") else data[rows]


def member_folds(model, X, y, folds, predict):
    """The member's validation as cross_val_score runs it (the same folds, a fresh copy of the
    model fitted on each): per fold its rows, their targets, the member's predictions and what
    it gives the combination."""
    found = []
    for fit, valid in check_cv(folds, y).split(X, y):
        fitted = clone(model).fit(rows_of(X, fit), rows_of(y, fit))
        X_valid = rows_of(X, valid)
        found.append((valid, rows_of(y, valid), predict(fitted, X_valid),
                      member_output(fitted, X_valid, predict)))
    return found


def member_score(folds):
    return float(np.mean([metric(truth, pred) for _, truth, pred, _ in folds]))'''

OUTPUT_PREDICTIONS = '''def member_output(model, X, predict):
    """What a member gives the combination: its predictions, as its submission holds them."""
    return predict(model, X)'''
OUTPUT_PROBABILITIES = '''def member_output(model, X, predict):
    """What a member gives the combination: its class probabilities (one column per class)
    when it has them, else its labels."""
    if hasattr(model, "predict_proba"):
        return pd.DataFrame(model.predict_proba(X), columns=model.classes_)
    return predict(model, X)'''

VOTE = '''def vote(labels, weights):
    """Each prediction's label with the most weight behind it; on a tie, the better member's."""
    stacked = np.stack([np.asarray(found) for found in labels], axis=-1)
    chosen = []
    for row in stacked.reshape(-1, len(labels)):
        tally = {}
        for label, weight in zip(row, weights):
            tally[label] = tally.get(label, 0) + weight
        chosen.append(max(tally, key=tally.get))  # the first member's label first on a tie
    return np.array(chosen, dtype=stacked.dtype).reshape(stacked.shape[:-1])'''
SOFT_VOTE = (
    VOTE
    + '''


def combine(outputs, weights):
    """Soft vote: the members' class probabilities averaged, then the likeliest label; when a
    member has no probabilities, every member votes with its label (a hard vote)."""
    if all(isinstance(found, pd.DataFrame) for found in outputs):
        classes = outputs[0].columns
        for found in outputs[1:]:
            classes = classes.union(found.columns)
        mean = sum(w * found.reindex(columns=classes, fill_value=0.0).to_numpy()
                   for found, w in zip(outputs, weights)) / sum(weights)
        return np.asarray(classes)[mean.argmax(axis=1)]
    labels = [np.asarray(found.columns)[found.to_numpy().argmax(axis=1)]
              if isinstance(found, pd.DataFrame) else found for found in outputs]
    return vote(labels, weights)'''
)
HARD_VOTE = (
    VOTE
    + '''


def combine(outputs, weights):
    """Hard vote of the members' labels, column by column."""
    return vote(outputs, weights)'''
)
RANK = '''def combine(outputs, weights):
    """Rank average: each member's probabilities turned into ranks in (0, 1] (column by
    column), then averaged: the metric reads only the order, and the members' probabilities
    need not share a scale."""
    ranks = [rankdata(np.asarray(found, dtype=float), axis=0) / len(found) for found in outputs]
    return sum(w * r for r, w in zip(ranks, weights)) / sum(weights)'''
MEAN = '''def combine(outputs, weights):
    """The members' predictions averaged (a frame of class probabilities stays a frame)."""
    found = [f if isinstance(f, pd.DataFrame) else np.asarray(f, dtype=float) for f in outputs]
    return sum(w * f for f, w in zip(found, weights)) / sum(weights)'''
SCALED_MEAN = '''def combine(outputs, weights):
    """The members' values averaged on the {transform} scale the metric measures (and the
    members fit on), then put back on the original scale."""
    found = [{forward}(np.asarray(f, dtype=float)) for f in outputs]
    return {inverse}(sum(w * f for f, w in zip(found, weights)) / sum(weights))'''
SCALES = {"log": ("np.log", "np.exp"), "log1p": ("np.log1p", "np.expm1")}
RANKED = ("roc_auc", "gini")  # metrics of a probability that read only the order

FINAL = '''weights = {weights}  # the members', best first: {scheme}
shared = min(len(folds) for _, folds, _ in MEMBERS)  # the folds every member validated on
scores = []
for j in range(shared):
    rows, truth = MEMBERS[0][1][j][0], MEMBERS[0][1][j][1]
    for node, folds, _ in MEMBERS[1:]:
        same = rows is None or np.array_equal(folds[j][0], rows)
        if not (same and np.array_equal(np.asarray(folds[j][1]), np.asarray(truth))):
            raise ValueError(f"node {{node}} validated on other rows: nothing to combine")
    scores.append(metric(truth, combine([folds[j][3] for _, folds, _ in MEMBERS], weights)))
print(f"VALIDATION_METRIC: {{np.mean(scores):.6f}}")
combined = combine([test for _, _, test in MEMBERS], weights)


{through}
    """The members' combined predictions of the test rows."""
    return combined


'''


def combination(spec: Any) -> tuple[str, str, str]:
    """(how the members' outputs combine, the script's ``member_output`` and ``combine``)."""
    prediction, scoring = spec.prediction, spec.scoring
    several = bool(getattr(spec, "targets", ()))
    if prediction == "label":
        if several:
            return "a majority vote of the members' labels", OUTPUT_PREDICTIONS, HARD_VOTE
        words = (
            "class probabilities averaged, then the likeliest label (a soft vote; a vote of "
            "labels when a member has no probabilities)"
        )
        return words, OUTPUT_PROBABILITIES, SOFT_VOTE
    if prediction == "proba" and scoring in RANKED:
        words = f"rank average of the probabilities ({scoring} reads only their order)"
        return words, OUTPUT_PREDICTIONS, RANK
    transform = getattr(spec, "transform", "none")
    if prediction == "value" and transform in SCALES:
        forward, inverse = SCALES[transform]
        source = SCALED_MEAN.format(transform=transform, forward=forward, inverse=inverse)
        return f"values averaged on the {transform} scale", OUTPUT_PREDICTIONS, source
    what = "class probabilities" if prediction in ("proba", "classes") else "values"
    return f"{what} averaged", OUTPUT_PREDICTIONS, MEAN


def _tail_at(kind: Kind[Any, Any], lines: list[str]) -> int:
    """The index of the first line that begins the submission's lines."""
    hook = HOOKS[kind.name]
    found = next((i for i, line in enumerate(lines) if line.startswith(hook.tail)), None)
    if found is None:
        raise ValueError(f"a {kind.name} solution's submission lines begin with {hook.tail!r}")
    return found


def splice(kind: Kind[Any, Any], source: str, node_id: int) -> str:
    """A member's section: its solution validating into ``folds_<id>`` and predicting the test
    rows into ``MEMBERS`` instead of printing the metric and writing the submission."""
    hook = HOOKS[kind.name]
    if source.count(hook.validation) != 1:
        raise ValueError(f"a {kind.name} solution must validate in one place")
    before, after = source.rstrip("\n").split(hook.validation)
    lines = after.split("\n")
    at = _tail_at(kind, lines)
    return "\n".join([
        before + f"folds_{node_id} = {hook.folds}",
        f'print(f"ENSEMBLE MEMBER node {node_id}: {{member_score(folds_{node_id}):.6f}}")',
        *lines[1:at],
        f"MEMBERS.append(({node_id}, folds_{node_id}, {hook.test}))",
    ])  # fmt: skip


def tail(kind: Kind[Any, Any], source: str) -> str:
    """The lines of a solution that write its submission from its predictions."""
    after = source.rstrip("\n").split(HOOKS[kind.name].validation)[1]
    lines = after.split("\n")
    return "\n".join(lines[_tail_at(kind, lines) :])


def read(code: str) -> dict[str, Any] | None:
    """An ensemble script's members and weighting, from its first line; None for other code."""
    first = code.split("\n", 1)[0]
    if not first.startswith(MARK):
        return None
    try:
        found = json.loads(first[len(MARK) :])
    except ValueError:
        return None
    return found if isinstance(found, dict) else None


@dataclass(frozen=True)
class Member:
    node: Node
    recipe: Any


def members(ctx: OperatorContext, kind: Kind[Any, Any]) -> tuple[list[Member], list[str]]:
    """The parents that can be members, best first, and a note on each one left out."""
    kept: list[Member] = []
    notes: list[str] = []
    ordered = Direction.of(ctx.task.lower_is_better).best_first(ctx.parents)
    ordered += [p for p in ctx.parents if p.metric is None]
    for parent in ordered:
        recipe = kind.read(parent.code)
        if parent.is_buggy or parent.metric is None:
            notes.append(f"node {parent.id} left out (it has no validation score)")
        elif recipe is None:
            notes.append(f"node {parent.id} left out (no baseline {kind.name} recipe to read)")
        elif any(m.recipe == recipe for m in kept):
            notes.append(f"node {parent.id} left out (the same recipe as a better member)")
        else:
            kept.append(Member(parent, recipe))
    return kept, notes


def sized(kind: Kind[Any, Any], spec: Any, recipes: list[Any], seconds: float
          ) -> tuple[list[int], list[Any], str]:  # fmt: skip
    """The members kept (their indices) and their recipes, reading the same rows (the smallest
    sample among them, when they differ), sampled alike until together they cost at most
    ``seconds``, then the costliest beyond two left out; and what the sizing did, for the plan."""
    unit = ablation.UNITS[kind.name]
    words: list[str] = []
    rows = min(kind.rows(r, spec) for r in recipes)
    if len({r.sample for r in recipes}) > 1:
        recipes = [replace(r, sample=rows) for r in recipes]
        words.append(f"every member on the same {rows} sampled {unit} (their samples differ)")

    def total(found: list[Any]) -> float:
        return sum(kind.seconds(r, spec) for r in found)

    for _ in range(20):
        cost = total(recipes)
        if cost <= seconds or rows <= ablation.MIN_ROWS:
            break
        rows = max(ablation.MIN_ROWS, int(rows * min(0.9, seconds / cost)))
        recipes = [replace(r, sample=rows) for r in recipes]
        words = [f"every member on the same {rows} sampled {unit} to fit"]
    kept = list(range(len(recipes)))
    while len(kept) > 2 and total([recipes[i] for i in kept]) > seconds:
        kept.remove(max(kept, key=lambda i: kind.seconds(recipes[i], spec)))
    if len(kept) < len(recipes):
        words.append(f"{len(recipes) - len(kept)} costliest member(s) left out to fit")
    estimate = total([recipes[i] for i in kept])
    words.append(f"{f'about {estimate:.0f} s' if estimate >= 1 else 'under a second'} "
                 "of one core estimated")  # fmt: skip
    return kept, [recipes[i] for i in kept], "; ".join(words)


def scheme(ctx: OperatorContext, ids: list[int]) -> tuple[str, str]:
    """The weighting of this round (the first none of the cited ensembles of these members
    tried, else the least tried) and the plan's words on those earlier ensembles."""
    earlier = [(n, read(n.code)) for n in ctx.refs if n.operator == "ensemble"]
    tried = [(n, found) for n, found in earlier if found and found.get("members") == ids]
    counts = {name: sum(found.get("scheme") == name for _, found in tried) for name in SCHEMES}
    chosen = min(SCHEMES, key=lambda name: counts[name])  # dict order on a tie
    if not tried:
        return chosen, ""
    scores = ", ".join(
        f"node {n.id} ({found.get('scheme')}: "
        f"{'failed' if n.metric is None else f'{n.metric.value:.6g}'})"
        for n, found in tried
    )
    return chosen, f" Earlier ensembles of these members: {scores}."


def propose(ctx: OperatorContext, kind: Kind[Any, Any], spec: Any) -> Proposal:
    """The ensemble of the readable parents; a problem when fewer than two are left."""
    kept, notes = members(ctx, kind)
    left_out = f" ({'; '.join(notes)})" if notes else ""
    if len(kept) < 2:
        return Proposal("", "", problem=f"ensemble needs two parents with baseline {kind.name} "
                        f"recipes and validation scores, found {len(kept)}{left_out}")  # fmt: skip
    indices, recipes, sizing = sized(kind, spec, [m.recipe for m in kept], ablation.limit(ctx))
    chosen = [kept[i] for i in indices]
    dropped = [f"node {m.node.id}" for i, m in enumerate(kept) if i not in indices]
    sizing += f" ({', '.join(dropped)} left out)" if dropped else ""
    ids = [m.node.id for m in chosen]
    name, earlier = scheme(ctx, ids)
    weights = SCHEMES[name](len(ids))
    how, output, combine = combination(spec)
    sections = []
    for member, recipe in zip(chosen, recipes, strict=True):
        source = kind.render(spec, recipe)
        section = splice(kind, source, member.node.id)
        sections.append(f"{SECTION}member node {member.node.id}\n{section}")
    header = MARK + json.dumps({"members": ids, "scheme": name, "weights": weights})
    final = FINAL.format(weights=weights, scheme=name, through=HOOKS[kind.name].through)
    final += tail(kind, kind.render(spec, recipes[-1]))
    code = "\n\n\n".join([
        f"{header}\n{HELPERS}", output, combine, *sections, f"{SECTION}the combination\n{final}"
    ]) + "\n"  # fmt: skip
    scored = ", ".join(f"node {m.node.id} ({m.node.metric.value:.6g})" for m in chosen
                       if m.node.metric is not None)  # fmt: skip
    plan = (
        f"Ensemble of {scored}{left_out}: each model trained as it is on the same validation "
        f"split, combined by {how}, {name}.{earlier} Sizing: {sizing}."
    )
    return Proposal(plan=plan, code=code)
