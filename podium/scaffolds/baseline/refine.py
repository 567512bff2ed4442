"""``refine`` for every kind: change the one part of a solution its ablation shows matters most.

The findings are the analyses ``OperatorContext.analyses`` picks (the cited ones,
else the parent's, newest first); the first whose output has ``ABLATION`` lines
(``podium.exec_output.ablation_results``) with a ``baseline`` line decides. Each part's drop
is how much worse the validation metric was without it, in the task's direction
(``Direction.score``); the part with the largest drop whose ``Part.refine`` has a change to
make (within ``budget.GROW_SECONDS``) is changed, and nothing else. With no readable
ablation, the model part is refined, and the plan says so.

The result is an edit of the parent's code (``Proposal.edit``): SEARCH/REPLACE blocks of the
lines that differ between the parent's code and the refined recipe's (difflib), each with
enough context to match once, so the code the loop makes is exactly ``kind.render`` of the
refined recipe.
"""

from __future__ import annotations

import difflib
from typing import Any

from podium.code_edit import apply_edits, render_edits
from podium.exec_output import ablation_results
from podium.interfaces import OperatorContext, Proposal
from podium.records import Direction, Node
from podium.scaffolds.baseline import budget
from podium.scaffolds.baseline.ablation import BASELINE, parent_recipe
from podium.scaffolds.baseline.kinds import Kind
from podium.scaffolds.baseline.parts import Part

CONTEXT_LINES = (1, 3, 8)  # context around a change, tried in turn until every block matches once


def findings(ctx: OperatorContext) -> tuple[Node, list[tuple[str, float]]] | None:
    """The analysis that decides and its ablation lines (the baseline's first); None when no
    analysis has readable ones."""
    for node in ctx.analyses():
        if node.is_buggy or node.exec is None:
            continue
        results = ablation_results(node.exec.output)
        if len(results) > 1 and results[0][0] == BASELINE:
            return node, results
    return None


def ranked(
    results: list[tuple[str, float]], parts: list[Part[Any]], direction: Direction
) -> list[tuple[Part[Any], float, float]]:
    """The parts the ablation measured, each with its score and its drop (how much worse the
    metric was without it), the largest drop first (the ablation's order on a tie)."""
    base = results[0][1]
    by_name = {p.name: p for p in parts}
    measured = [
        (by_name[name], score, direction.score(base) - direction.score(score))
        for name, score in results[1:]
        if name in by_name
    ]
    return sorted(measured, key=lambda m: -m[2])


def edit_between(old: str, new: str) -> str:
    """SEARCH/REPLACE blocks that turn ``old`` into ``new``: each group of changed lines with
    the fewest context lines (``CONTEXT_LINES``) that make every block match once; the whole
    code as one block when none does."""
    a, b = old.splitlines(keepends=True), new.splitlines(keepends=True)
    for context in CONTEXT_LINES:
        matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
        blocks = [
            ("".join(a[g[0][1] : g[-1][2]]), "".join(b[g[0][3] : g[-1][4]]))
            for g in matcher.get_grouped_opcodes(context)
        ]
        edit = render_edits(blocks)
        if apply_edits(old, edit).code == new:
            return edit
    return render_edits([(old, new)])


def _choose(
    ctx: OperatorContext, kind: Kind[Any, Any], spec: Any, parent: Node, parts: list[Part[Any]]
) -> tuple[Any, str] | None:
    """The refined recipe and the plan's account of it; None when no part has a change."""
    found = findings(ctx)
    skipped: list[str] = []
    if found is not None:
        analysis, results = found
        for part, score, drop in ranked(results, parts, Direction.of(ctx.task.lower_is_better)):
            changed = part.refine(ctx.rng)
            if changed is None or kind.seconds(changed[0], spec) > budget.GROW_SECONDS:
                skipped.append(part.name)
                continue
            passed = f" ({', '.join(skipped)} had no change to make)" if skipped else ""
            worse = "worse" if drop > 0 else "better (none of the parts helped)"
            of = analysis.parent_ids[:1]
            other = f" (of node {of[0]})" if of and of[0] != parent.id else ""
            return changed[0], (
                f"node {analysis.id}'s ablation{other} shows '{part.name}' matters most{passed}: "
                f"{results[0][1]:.6g} with it, {score:.6g} without ({abs(drop):.4g} {worse}); "
                f"{changed[1]}"
            )
    model = next((p for p in parts if p.model), None)
    changed = model.refine(ctx.rng) if model is not None else None
    if changed is None:
        return None
    why = "no readable ablation of node" if found is None else "no measured part to change in"
    return changed[0], f"{why} {parent.id}, so refine the model: {changed[1]}"


def propose(ctx: OperatorContext, kind: Kind[Any, Any], spec: Any) -> Proposal:
    """The refined first parent, as an edit of its code; a problem when its recipe cannot be
    read or nothing can be refined."""
    found = parent_recipe(ctx, kind, "refine")
    if isinstance(found, Proposal):
        return found
    parent, recipe = found
    chosen = _choose(ctx, kind, spec, parent, kind.parts(recipe, spec))
    if chosen is None or chosen[0] == recipe:
        return Proposal("", "", problem=f"node {parent.id} has no part refine can change")
    refined, why = chosen
    code = kind.render(spec, refined)
    plan = f"Refine node {parent.id}: {why}. Now: {kind.describe(spec, refined)}"
    return Proposal(plan=plan, code="", edit=edit_between(parent.code, code))
