"""The plugin contract: every hook a Podium plugin may implement.

A plugin is a module (or object) with functions named like these, decorated with
``podium.plugins.hookimpl``. Registration hooks return lists of specs; event hooks are told what
happened and their return value is ignored. Every hook is documented in ``docs/plugins.md``.
"""

from __future__ import annotations

from typing import Any

import pluggy

from podium.interfaces import RunInfo
from podium.plugins.specs import (
    BackendSpec,
    BenchmarkSpec,
    OperatorSetSpec,
    SandboxSpec,
    StrategySpec,
)
from podium.records import Node

hookspec = pluggy.HookspecMarker("podium")


@hookspec
def podium_backends() -> list[BackendSpec]:  # type: ignore[empty-body]
    """Model providers this plugin adds (selected with ``--model <name>/<model>``)."""


@hookspec
def podium_strategies() -> list[StrategySpec]:  # type: ignore[empty-body]
    """Search policies this plugin adds (selected with ``--strategy <name>``)."""


@hookspec
def podium_sandboxes() -> list[SandboxSpec]:  # type: ignore[empty-body]
    """Execution sandboxes this plugin adds (selected with ``--sandbox <name>``)."""


@hookspec
def podium_benchmarks() -> list[BenchmarkSpec]:  # type: ignore[empty-body]
    """Task sources this plugin adds (tasks addressed as ``<name>/<task id>``)."""


@hookspec
def podium_operator_sets() -> list[OperatorSetSpec]:  # type: ignore[empty-body]
    """Operator implementations this plugin adds (selected with ``search.operators``)."""


@hookspec
def podium_run_started(run: RunInfo) -> None:
    """A run started or resumed; ``run.run_dir`` exists and holds the journal."""


@hookspec
def podium_node_finished(run: RunInfo, node: Node) -> None:
    """A node finished and is safely in the journal. Exceptions are logged, never fatal."""


@hookspec
def podium_run_finished(run: RunInfo, summary: dict[str, Any]) -> None:
    """The run stopped (budget spent, interrupted, or failed); ``summary`` is summary.json."""
