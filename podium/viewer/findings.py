"""An analysis node's findings as a reader shows them: in one line, and its ablation table.

An analysis (``podium.records.NodeKind``: an ``ablate`` node, say) has no metric: what it
found is its ``summary`` (the review model's, or the end of its output), and an ablation's
scores are its output's ``ABLATION <part>: <score>`` lines (read by
``podium.exec_output.ablation_results``, the one owner of that convention). The viewer
(``LightNode.findings``, ``NodeDetail.ablation``) and ``podium show`` both show them through
this module, so the graph, the list and the terminal never disagree.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from podium.exec_output import ablation_results

FINDINGS_LINE_CHARS = 160  # the one line of findings in a list row, a tooltip, a tree label
BASELINE = "baseline"  # the part an ablation names its unchanged solution (the first otherwise)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s")


@dataclass(frozen=True)
class AblationRow:
    """One variant of an ablation: its part, its score, and its score minus the baseline's
    (None for the baseline itself)."""

    part: str
    score: float
    change: float | None


def findings_line(summary: str, limit: int = FINDINGS_LINE_CHARS) -> str:
    """The findings' first sentence on one line, at most ``limit`` characters ("" for none).
    A summary without a sentence's end (an output's tail of ``ABLATION`` lines) is cut."""
    text = " ".join(summary[: 8 * limit].split())  # a summary may be megabytes: its head
    first = _SENTENCE_END.split(text, maxsplit=1)[0]
    return first if len(first) <= limit else first[: limit - 1].rstrip() + "…"


def ablation_table(output: str) -> list[AblationRow]:
    """The output's ablation results with each one's change against the baseline: the line
    whose part is ``baseline`` (any case), else the first line; [] when it has none."""
    results = ablation_results(output)
    if not results:
        return []
    base = next((i for i, (part, _) in enumerate(results) if part.casefold() == BASELINE), 0)
    base_score = results[base][1]
    return [
        AblationRow(part=part, score=score, change=None if i == base else score - base_score)
        for i, (part, score) in enumerate(results)
    ]
