"""``summary.json``: the outcome of a run in one small file (steps, bugs, best node, time...)."""

from __future__ import annotations

import platform
from typing import Any

from podium import __version__
from podium.records import utcnow
from podium.scaffolds.journal import SCHEMA_VERSION
from podium.scaffolds.loop import Search

STATUS = {"interrupted": "interrupted", "error": "failed"}


def summarize(search: Search, stop_reason: str | None, info: dict[str, Any]) -> dict[str, Any]:
    """``stop_reason`` None means the run is still going (the summary is refreshed per node)."""
    tree = search.tree
    final = search.final or search.parts.strategy.final_node(tree)
    status = "running" if stop_reason is None else STATUS.get(stop_reason, "finished")
    return {
        **info,
        "status": status,
        "stop_reason": stop_reason,
        "error": search.error,
        "steps": len(tree),
        "good_nodes": len(tree.good_nodes()),
        "buggy_nodes": len(tree.buggy_nodes()),
        "best_node": final.id if final else None,
        "best_metric": final.metric.value if final and final.metric else None,
        "final_reruns": [r.report() for r in search.reruns],
        "lower_is_better": tree.lower_is_better,
        "elapsed_s": round(search.elapsed(), 3),
        "stop_detail": search.stop_detail,
        "usage": search.spending.report(),
        "discarded_nodes": search.journal.discarded_count(),
        "updated_at": utcnow().isoformat(),
        "versions": {
            "podium": __version__,
            "python": platform.python_version(),
            "journal_schema": SCHEMA_VERSION,
        },
    }
