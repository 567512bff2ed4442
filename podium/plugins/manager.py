"""Builds the plugin manager: builtins, then entry points, then ``-p`` plugins.

The manager imports no builtin itself: the caller (the CLI or :func:`podium.run`) passes the
rooms' builtin modules, which register exactly as an entry point would. Every plugin's origin is
remembered so ``podium plugins`` and error messages can say where a name came from.
"""

from __future__ import annotations

import difflib
import hashlib
import importlib
import importlib.metadata
import importlib.util
import os
import re
import sys
from collections.abc import Iterable
from pathlib import Path
from types import ModuleType

import pluggy

from podium.errors import PluginError
from podium.plugins import hookspecs

ENTRY_POINT_GROUP = "podium"
AUTOLOAD_ENV = "PODIUM_DISABLE_PLUGIN_AUTOLOAD"


class PodiumPluginManager(pluggy.PluginManager):
    """A pluggy manager that also records each plugin's origin (builtin, entry point, -p)."""

    def __init__(self) -> None:
        super().__init__(ENTRY_POINT_GROUP)
        self.add_hookspecs(hookspecs)
        self.origins: dict[str, str] = {}

    def register_plugin(self, plugin: object, name: str, origin: str) -> None:
        if self.has_plugin(name):
            return  # the same module named twice (e.g. -p x -p x): once is enough
        try:
            self.register(plugin, name=name)
        except (ValueError, pluggy.PluginValidationError) as exc:
            raise PluginError(f"plugin {name} ({origin}) is invalid: {exc}") from None
        self.origins[name] = origin

    def origin_of(self, plugin_name: str) -> str:
        return self.origins.get(plugin_name, plugin_name)


def autoload_disabled() -> bool:
    return os.environ.get(AUTOLOAD_ENV, "").strip().lower() not in ("", "0", "false", "no")


def create_plugin_manager(
    builtins: Iterable[ModuleType], extra: Iterable[str] = (), autoload: bool | None = None
) -> PodiumPluginManager:
    """Register ``builtins``, installed entry points (unless disabled) and ``extra`` (-p args)."""
    pm = PodiumPluginManager()
    for module in builtins:
        pm.register_plugin(module, name=module.__name__, origin="builtin")
    if autoload if autoload is not None else not autoload_disabled():
        _load_entry_points(pm)
    for spec in extra:
        module = load_plugin_module(spec)
        pm.register_plugin(module, name=module.__name__, origin=f"-p {spec}")
    try:
        pm.check_pending()
    except pluggy.PluginValidationError as exc:
        raise _unknown_hook(pm, exc) from None
    return pm


def _unknown_hook(pm: PodiumPluginManager, exc: pluggy.PluginValidationError) -> PluginError:
    name = pm.get_name(exc.plugin) or "?"
    found = re.search(r"unknown hook '(\w+)'", str(exc))
    hook = found.group(1) if found else str(exc)
    known = [h for h in dir(hookspecs) if h.startswith("podium_")]
    close = difflib.get_close_matches(hook, known, n=1)
    return PluginError(
        f"plugin {name} ({pm.origin_of(name)}) implements an unknown hook {hook!r}",
        hint=f"did you mean {close[0]}?" if close else "hooks are listed in docs/plugins.md",
    )


def _load_entry_points(pm: PodiumPluginManager) -> None:
    for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
        dist = ep.dist
        origin = f"entry point {dist.name} {dist.version}" if dist else f"entry point {ep.value}"
        try:
            plugin = ep.load()
        except Exception as exc:
            raise PluginError(
                f"plugin {ep.name} ({origin}) failed to import: {type(exc).__name__}: {exc}",
                hint=f"fix or uninstall it, or set {AUTOLOAD_ENV}=1 to skip installed plugins",
            ) from None
        pm.register_plugin(plugin, name=ep.name, origin=origin)


def load_plugin_module(spec: str) -> ModuleType:
    """Import a ``-p`` argument: a dotted module name or a path to a ``.py`` file."""
    path = Path(spec)
    if spec.endswith(".py") or path.is_file():
        if not path.is_file():
            raise PluginError(f"plugin file not found: {spec}")
        return _import_file(path)
    try:
        return importlib.import_module(spec)
    except ModuleNotFoundError as exc:
        if exc.name and spec.startswith(exc.name):
            raise PluginError(
                f"cannot import plugin module {spec!r}",
                hint="install it, put it on PYTHONPATH, or pass a file: -p path/to/plugin.py",
            ) from None
        raise PluginError(f"plugin {spec} failed to import: {exc}") from None
    except Exception as exc:
        raise PluginError(f"plugin {spec} failed to import: {type(exc).__name__}: {exc}") from None


def _import_file(path: Path) -> ModuleType:
    """Import a plugin file under a name unique to its path (two files may share a stem)."""
    real = path.resolve()
    digest = hashlib.sha1(str(real).encode()).hexdigest()[:8]
    stem = re.sub(r"\W", "_", real.stem)
    name = f"podium_plugin_{stem}_{digest}"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise PluginError(f"cannot load plugin file {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        del sys.modules[name]
        raise PluginError(f"plugin {path} failed to import: {type(exc).__name__}: {exc}") from None
    return module
