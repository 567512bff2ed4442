"""Plugins: the hook specs (the contract), the plugin manager, and the name registry.

A plugin implements hooks from :mod:`podium.plugins.hookspecs`, marked with :data:`hookimpl`,
and is found through the ``podium`` entry-point group or ``-p module|file.py``.
"""

from podium.plugins.gateway import ModelGateway, RetryPolicy
from podium.plugins.manager import (
    AUTOLOAD_ENV,
    ENTRY_POINT_GROUP,
    PodiumPluginManager,
    create_plugin_manager,
)
from podium.plugins.markers import hookimpl
from podium.plugins.registry import Registry, split_model_name
from podium.plugins.specs import (
    BackendSpec,
    BenchmarkSpec,
    OperatorSetSpec,
    SandboxSpec,
    StrategySpec,
)

__all__ = [
    "AUTOLOAD_ENV",
    "ENTRY_POINT_GROUP",
    "BackendSpec",
    "BenchmarkSpec",
    "ModelGateway",
    "OperatorSetSpec",
    "PodiumPluginManager",
    "Registry",
    "RetryPolicy",
    "SandboxSpec",
    "StrategySpec",
    "create_plugin_manager",
    "hookimpl",
    "split_model_name",
]
