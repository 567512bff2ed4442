"""Selection regret: how much a run lost choosing its final node (post-hoc analysis).

After a run's search is over (never during it), every good node's submission is graded on the
private answers. The run's ``selection.json`` then says, for the node the run chose and for the
node that would have scored best on the test set: the score, the leaderboard percentile and the
medal; the regret between them (in score, oriented so that it is never negative; in percentile
points; in medals lost, gold = 3 … none = 0); and Spearman's rank correlation between the
nodes' validation metrics and their test scores (and their held-out scores', under
``search.holdout``). No search read any of it: it is written after the final node is chosen and
published, for a report to say how good the choice was (aira-dojo's "validation vs test"
selection gap).

A node whose submission the grader rejects counts as score None and percentile 0; the
correlations use the nodes with a finite test score, and are None below three of them or when
either side is constant.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from podium.interfaces import SUBMISSION, Task
from podium.records import Direction, GradeReport, Node

FORMAT = "podium-selection/1"
NOTE = (
    "post-hoc analysis: every good node graded on the private answers after the run; "
    "no search used these grades"
)
MEDAL_RANK = {"gold": 3, "silver": 2, "bronze": 1}


def selection_report(
    task: Task,
    nodes: Sequence[Node],
    node_dir: Callable[[int], Path],
    chosen: Node | None,
    held_out: Callable[[int], float | None] | None = None,
) -> dict[str, Any] | None:
    """``selection.json``'s content for the good ``nodes`` of a finished run; None when the
    task cannot be graded. ``held_out``: the host's held-out score of a node (search.holdout)."""
    direction = Direction.of(task.lower_is_better)
    rows = []
    for node in (n for n in nodes if n.is_good):
        report = task.grade(node_dir(node.id) / SUBMISSION)
        if report is None:
            return None
        rows.append(_row(node, report, held_out))
    chosen_row = next((r for r in rows if r["node_id"] == (chosen.id if chosen else None)), None)
    best_row = _best(rows, direction)
    return {
        "format": FORMAT,
        "note": NOTE,
        "chosen_by": "held-out" if held_out is not None else "validation",
        "lower_is_better": task.lower_is_better,
        "good_nodes": len(rows),
        "chosen": chosen_row,
        "best": best_row,
        "regret": _regret(chosen_row, best_row, direction),
        "rank_correlation": _spearman(rows, "metric"),
        "held_out_rank_correlation": _spearman(rows, "held_out") if held_out else None,
        "nodes": rows,
    }


def _row(
    node: Node, report: GradeReport, held_out: Callable[[int], float | None] | None
) -> dict[str, Any]:
    score = report.score if report.score is not None and math.isfinite(report.score) else None
    return {
        "node_id": node.id,
        "metric": node.metric.value if node.metric else None,
        "held_out": held_out(node.id) if held_out else None,
        "score": score,
        "percentile": report.leaderboard_percentile if score is not None else 0.0,
        "medal": report.medal,
    }


def _best(rows: list[dict[str, Any]], direction: Direction) -> dict[str, Any] | None:
    """The node with the best test score (the earliest on a tie); None when none has one."""
    scored = [r for r in rows if r["score"] is not None]
    return min(scored, key=lambda r: (-direction.score(r["score"]), r["node_id"]), default=None)


def _regret(
    chosen: dict[str, Any] | None, best: dict[str, Any] | None, direction: Direction
) -> dict[str, Any] | None:
    if best is None:
        return None
    if chosen is None or chosen["score"] is None:
        score = None  # the chosen node has no test score: the percentile and medals still say
    else:
        score = round(direction.score(best["score"]) - direction.score(chosen["score"]), 9)
    chosen_pct = chosen["percentile"] if chosen else 0.0
    chosen_medal = MEDAL_RANK.get(chosen["medal"] or "", 0) if chosen else 0
    return {
        "score": score,
        "percentile": round((best["percentile"] or 0.0) - (chosen_pct or 0.0), 6),
        "medals_lost": MEDAL_RANK.get(best["medal"] or "", 0) - chosen_medal,
    }


def _spearman(rows: list[dict[str, Any]], key: str) -> float | None:
    pairs = [
        (r[key], r["score"])
        for r in rows
        if r[key] is not None and r["score"] is not None and math.isfinite(r[key])
    ]
    if len(pairs) < 3:
        return None
    ranks = pd.DataFrame(pairs).rank()
    if ranks[0].nunique() < 2 or ranks[1].nunique() < 2:
        return None
    return float(np.corrcoef(ranks[0], ranks[1])[0, 1])
