"""Plugins: the hook specs (the contract), the plugin manager, and the name registry.

A plugin implements hooks from :mod:`podium.plugins.hookspecs`, marked with :data:`hookimpl`,
and is found through the ``podium`` entry-point group or ``-p module|file.py``.

The names are in ``__init__.pyi`` and load on first use.
"""

import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
