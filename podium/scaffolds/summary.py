"""``summary.json``: the outcome of a run in one small file (steps, bugs, best node, time...).

The file's fields are :class:`~podium.formats.run_files.RunSummary`'s; this module fills them
from a search. :func:`build_summary` gives the typed record; its ``to_dict()`` is what the file
holds (and what the run's caller and the ``podium_run_finished`` hook get).
"""

from __future__ import annotations

import platform
from typing import TYPE_CHECKING, Any

from podium import __version__
from podium.formats.journal import SCHEMA_VERSION
from podium.formats.run_files import PluginVersion, RunSummary, SummaryVersions
from podium.plugins.manager import ENTRY_POINT_GROUP
from podium.records import utcnow
from podium.scaffolds.loop import BEYOND, REPEATED
from podium.versions import loaded_plugin_packages, podium_source

if TYPE_CHECKING:
    from podium.records import Node
    from podium.scaffolds.loop import Search

# A stop reason's status ("finished" for any other): a run that cannot succeed as it is failed.
STATUS = {"interrupted": "interrupted", "error": "failed", BEYOND: "failed", REPEATED: "failed"}


def build_summary(search: Search, stop_reason: str | None, info: dict[str, Any]) -> RunSummary:
    """The run's summary now. ``info`` describes the run (task, model, strategy, sandbox...:
    RunSummary's first fields); ``stop_reason`` None means the run is still going (the summary
    is refreshed per node). Checked against the record's types as it is built."""
    tree = search.tree
    final = search.final or search.final_node()
    status = "running" if stop_reason is None else STATUS.get(stop_reason, "finished")
    return RunSummary.model_validate(
        {
            **info,
            "status": status,
            "stop_reason": stop_reason,
            "error": search.error,
            "steps": len(tree),
            "good_nodes": len(tree.good_nodes()),
            "buggy_nodes": len(tree.buggy_nodes()),
            "analysis_nodes": sum(n.kind == "analysis" for n in tree),
            "best_node": final.id if final else None,
            "best_metric": final.metric.value if final and final.metric else None,
            **_best_held_out(search, final),
            "final_reruns": [r.report() for r in search.reruns],
            "lower_is_better": tree.lower_is_better,
            "elapsed_s": round(search.elapsed(), 3),
            "stop_detail": search.stop_detail,
            "usage": search.spending.report(),
            "discarded_nodes": search.journal.discarded_count(),
            "updated_at": utcnow().isoformat(),
            "versions": code_versions(),
        }
    )


def code_versions() -> SummaryVersions:
    """What wrote the run: Podium's version and source commit, Python, the journal's schema,
    and every plugin package loaded through an entry point (see :mod:`podium.versions`)."""
    podium = podium_source()
    plugins = {
        name: PluginVersion(
            version=package.version, commit=package.source.commit, dirty=package.source.dirty
        )
        for name, package in loaded_plugin_packages(ENTRY_POINT_GROUP).items()
    }
    return SummaryVersions(
        podium=__version__,
        python=platform.python_version(),
        journal_schema=SCHEMA_VERSION,
        podium_commit=podium.commit,
        podium_dirty=podium.dirty,
        plugins=plugins,
    )


def _best_held_out(search: Search, final: Node | None) -> dict[str, Any]:
    """``best_held_out`` under ``search.holdout`` (the key is absent otherwise)."""
    if search.parts.holdout is None:
        return {}
    return {"best_held_out": search.run_dir.held_out_score(final.id) if final else None}
