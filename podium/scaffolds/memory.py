"""What operators are reminded of: earlier good nodes, and a failing node's debug history.

Both are bounded by a character budget so prompts stay the same size however long the run
gets (AIDE's memory grew without bound).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from podium.records import Node
from podium.tree import SearchTree


def first_sentences(text: str, limit: int = 300) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3].rstrip() + "..."


def good_nodes(tree: SearchTree, budget_chars: int, exclude: tuple[int, ...] = ()) -> str:
    """Best-first one-line summaries of good nodes, as many as fit in ``budget_chars``."""
    good = tree.direction.best_first(n for n in tree.good_nodes() if n.id not in exclude)

    def line(node: Node) -> str:
        assert node.metric is not None
        about = first_sentences(node.summary or node.plan)
        return f"- {about} (validation metric {node.metric.value:.6g})"

    return _within_budget((line(n) for n in good), budget_chars, "(none yet)")


def references(refs: Sequence[Node], budget_chars: int) -> str:
    """The nodes an action cites beyond its parents, as a prompt section, or "" for none (the
    prompt is then exactly what it was before references existed, so old records replay).

    One reference is shown with its plan and code, a technique to take from it; several with
    a line each (what was tried, how it scored) within ``budget_chars``, as MLEvolve's fusion
    shows one trajectory with its code and several without.
    """
    if not refs:
        return ""
    if len(refs) == 1:
        ref = refs[0]
        body = (
            f"{_ref_line(ref)}\nPlan: {ref.plan or '(none)'}\n\n```python\n{ref.code.rstrip()}\n```"
        )
    else:
        body = _within_budget((_ref_line(r) for r in refs), budget_chars, "(none fit)")
    return f"\n# Solutions from elsewhere in the search to draw on\n{body}\n"


def findings(analyses: Sequence[Node], budget_chars: int) -> str:
    """What analyses of a solution found (their summaries, newest first), within
    ``budget_chars``; each analysis's own lines kept together as one entry."""
    entries = (
        f"- node {n.id} ({n.operator}): "
        + (f"failed: {first_sentences(n.bug_reason or '', 200)}" if n.is_buggy else n.summary)
        for n in analyses
    )
    return _within_budget(entries, budget_chars, "(none: no analysis of this solution yet)")


def _ref_line(node: Node) -> str:
    if node.is_good and node.metric is not None:
        result = f"validation metric {node.metric.value:.6g}"
    else:
        result = f"failed: {first_sentences(node.bug_reason or 'no result', 200)}"
    about = first_sentences(node.summary or node.plan)
    return f"- node {node.id} ({node.operator}, {result}): {about}"


def debug_history(tree: SearchTree, parent: Node, budget_chars: int) -> str:
    """The buggy ancestors that earlier debug steps already tried to fix, newest first."""
    chain: list[Node] = []
    node = parent
    while node.operator == "debug" and node.parent_ids:
        node = tree.get(node.parent_ids[0])
        if node.is_buggy:
            chain.append(node)
    lines = (
        f"- {first_sentences(n.plan, 200)} -> failed: {first_sentences(n.bug_reason or '')}"
        for n in chain
    )
    return _within_budget(lines, budget_chars, "(none)")


def _within_budget(lines: Iterable[str], budget_chars: int, empty: str) -> str:
    """``lines`` one per row, up to the first that would take the text past ``budget_chars``
    (each line counted with its newline; none after it is read); ``empty`` when the first does
    not fit. The one budget rule of both memories, so prompts stay the same size."""
    kept: list[str] = []
    used = 0
    for line in lines:
        if used + len(line) + 1 > budget_chars:
            break
        kept.append(line)
        used += len(line) + 1
    return "\n".join(kept) if kept else empty
