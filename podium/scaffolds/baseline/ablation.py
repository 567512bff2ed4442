"""``ablate`` for every kind: a script that scores a solution with each of its parts taken out.

The script is the parent's own solution, then one copy per part (``Kind.parts``: the model
replaced by a trivial stand-in, a feature group or a preprocessing step dropped), each written
by the kind's ``render`` from the recipe without that part and cut at its metric line: instead
of ``VALIDATION_METRIC`` it prints ``ABLATION <part>: <score>`` (the unchanged solution first,
as ``baseline``: the convention ``podium.exec_output.ablation_results`` reads), and it
never reaches the refit or the submission, so the analysis writes no submission. Every copy
validates as the solution does (the same folds, seeded, on the same rows), so the differences
are the parts' alone.

Sizing: N parts cost about N + 1 solutions. The total, estimated with the kind's ``seconds``
(one core), must fit :func:`limit`: the smaller of ``budget.GROW_SECONDS`` and
``TIMEOUT_SHARE`` of the node's execution timeout. Beyond it, every copy (the baseline too)
fits on the same sample of the rows (the recipes' ``sample`` field), as small as it takes down
to ``MIN_ROWS``; beyond that, the costliest parts are left out. The plan says which.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from podium.interfaces import OperatorContext, Proposal
from podium.records import Node
from podium.scaffolds.baseline import budget
from podium.scaffolds.baseline.kinds import Kind
from podium.scaffolds.baseline.parts import Part

BASELINE = "baseline"  # the part name of the unchanged solution (the convention's first line)
TIMEOUT_SHARE = 0.5  # of the node's timeout an ablation may plan to use (a busy machine)
MIN_ROWS = 1_000  # sizing samples no fewer rows than this (a smaller sample says little)
MARK = "# podium-baseline ablation"  # the script's first line: no recipe, never read as one
UNITS = {"tabular": "rows", "image": "images", "text": "documents", "series": "series"}
METRIC_PRINT = re.compile(r'^print\(f"VALIDATION_METRIC: \{(?P<value>.+):\.6f\}"\)$', re.M)
"""The line every kind's solution prints its validation metric with (one per script)."""


def limit(ctx: OperatorContext) -> float:
    """Seconds of one core an ablation may cost."""
    return min(budget.GROW_SECONDS, TIMEOUT_SHARE * ctx.budget.exec_timeout_s)


def cut(source: str, part: str) -> str:
    """``source`` (a solution) without its recipe line and from its metric line on: that line
    prints ``ABLATION <part>: <score>`` instead, and the refit and submission after it are
    left out."""
    lines = source.split("\n")
    found = [i for i, line in enumerate(lines) if METRIC_PRINT.match(line)]
    if len(found) != 1:
        raise ValueError(f"a solution must print its metric on one line, not {len(found)}")
    at = found[0]
    match = METRIC_PRINT.match(lines[at])
    assert match is not None
    ablation = f'print(f"ABLATION {part}: {{{match["value"]}:.6f}}")'
    return "\n".join([*lines[1:at], ablation])


def sized(
    kind: Kind[Any, Any], spec: Any, parent: Any, parts: list[Part[Any]], seconds: float
) -> tuple[Any, list[Part[Any]], str]:
    """The parent's recipe and parts sampled alike until all of them together cost at most
    ``seconds`` (then, the costliest parts dropped), and what the sizing did, for the plan."""

    def total(recipes: list[Any]) -> float:
        return sum(kind.seconds(r, spec) for r in recipes)

    def sampled(rows: int) -> tuple[Any, list[Part[Any]]]:
        return replace(parent, sample=rows), [
            replace(p, without=replace(p.without, sample=rows)) for p in parts
        ]

    rows = kind.rows(parent, spec)
    base, kept = parent, parts
    for _ in range(20):
        cost = total([base, *(p.without for p in kept)])
        if cost <= seconds or rows <= MIN_ROWS:
            break
        rows = max(MIN_ROWS, int(rows * min(0.9, seconds / cost)))
        base, kept = sampled(rows)
    unit = UNITS.get(kind.name, "rows")
    words = [f"every variant on the same {rows} sampled {unit}"] if base is not parent else []
    while len(kept) > 1 and total([base, *(p.without for p in kept)]) > seconds:
        costliest = max(kept, key=lambda p: kind.seconds(p.without, spec))
        kept = [p for p in kept if p is not costliest]
        words.append(f"{costliest.name} left out to fit")
    estimate = total([base, *(p.without for p in kept)])
    spent = f"about {estimate:.0f} s" if estimate >= 1 else "under a second"
    words.append(f"{spent} of one core estimated")
    return base, kept, "; ".join(words)


def script(kind: Kind[Any, Any], spec: Any, parent_id: int, base: Any, parts: list[Part[Any]],
           sizing: str) -> str:  # fmt: skip
    """The ablation script: the baseline's cut solution, then each part's."""
    names = ", ".join(p.name for p in parts)
    sections = [
        f"# ---- {BASELINE}: node {parent_id}'s solution as it is\n"
        + cut(kind.render(spec, base), BASELINE)
    ]
    for part in parts:
        sections.append(
            f"# ---- {part.name}: {part.instead} in its place\n"
            + cut(kind.render(spec, part.without), part.name)
        )
    header = (
        f'{MARK} of node {parent_id}: {names}\n"""Ablation study of node {parent_id}: its '
        "solution, then the same with one part\ntaken out at a time, each validated as the "
        'solution is (the same folds on the same rows).\nIt prints "ABLATION <part>: <score>" '
        f"lines and writes no submission.\nSizing: {sizing}.\n" + '"""\n\n'
    )
    return header + "\n\n\n".join(sections) + "\n"


def parent_recipe(
    ctx: OperatorContext, kind: Kind[Any, Any], verb: str
) -> tuple[Node, Any] | Proposal:
    """The first parent and its recipe, or the proposal saying why ``verb`` (ablate, refine)
    cannot work on it: no parent, or code the baseline did not write (its parts unknown)."""
    if not ctx.parents:
        return Proposal("", "", problem=f"{verb} needs a parent solution")
    parent = ctx.parents[0]
    recipe = kind.read(parent.code)
    if recipe is None:
        return Proposal(
            "", "", problem=f"cannot {verb} node {parent.id}: its code carries no baseline "
            f"{kind.name} recipe (written by something else), so its parts are unknown"
        )  # fmt: skip
    return parent, recipe


def propose(ctx: OperatorContext, kind: Kind[Any, Any], spec: Any) -> Proposal:
    """The ablation of the first parent; a problem when its recipe cannot be read or it has
    no part to take out."""
    found = parent_recipe(ctx, kind, "ablate")
    if isinstance(found, Proposal):
        return found
    parent, recipe = found
    parts = kind.parts(recipe, spec)
    if not parts:
        return Proposal("", "", problem=f"node {parent.id} has no part to take out")
    base, kept, sizing = sized(kind, spec, recipe, parts, limit(ctx))
    code = script(kind, spec, parent.id, base, kept, sizing)
    described = "; ".join(f"{p.name} ({p.instead})" for p in kept)
    plan = (
        f"Ablate node {parent.id}: score its solution ({BASELINE}) and, on the same validation, "
        f"the same with one part replaced at a time: {described}. Sizing: {sizing}."
    )
    return Proposal(plan=plan, code=code)
