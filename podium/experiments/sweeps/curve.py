"""The best-so-far curve of a run: after each step, how the submission the run would have made
if stopped there does on the private leaderboard.

"Would have made" is the best good node by validation metric so far — the agent's own choice,
never the one with the best test score (choosing by test score is an oracle). The curve is built
after the run, on the host, from the journal and the task's grader, so nothing of it reaches the
agent.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

from podium.records import GradeReport, Node

Grader = Callable[[Node], GradeReport | None]  # a node's submission, graded (None: no grade)


def best_so_far_curve(
    nodes: Sequence[Node], lower_is_better: bool, grade: Grader, leaderboard_entries: int | None
) -> dict[str, Any]:
    """``curve.json``: one point per finished node, in step order (see the sweep contract in
    docs/benchmarks.md). Each distinct best node is graded once."""
    done = sorted((n for n in nodes if n.step is not None), key=lambda n: n.step or 0)
    graded: dict[int, GradeReport | None] = {}
    best: Node | None = None
    points = []
    for node in done:
        if (
            node.is_good
            and node.metric is not None
            and node.metric.better_than(best.metric if best else None)
        ):
            best = node
        report = None
        if best is not None:
            if best.id not in graded:
                graded[best.id] = grade(best)
            report = graded[best.id]
        points.append({
            "step": node.step,
            "node_id": node.id,
            "elapsed_s": round(busy_seconds(done, node.finished_at or node.created_at), 3),
            "best_node_id": best.id if best else None,
            "score": report.score if report else None,
            "percentile": (report.leaderboard_percentile or 0.0) if report else 0.0,
            "medal": report.medal if report else None,
        })  # fmt: skip
    return {
        "lower_is_better": lower_is_better,
        "leaderboard_entries": leaderboard_entries,
        "points": points,
    }


def busy_seconds(nodes: Sequence[Node], until: datetime) -> float:
    """Seconds before ``until`` during which at least one of ``nodes`` was in flight: the
    run's working time, without the hours a killed run sat waiting for ``podium resume``."""
    spans = sorted((n.created_at, min(n.finished_at or n.created_at, until)) for n in nodes)
    total, reach = 0.0, None
    for start, end in spans:
        if start >= until:
            break
        if reach is not None and start < reach:
            start = reach
        if end > start:
            total += (end - start).total_seconds()
            reach = end
    return total
