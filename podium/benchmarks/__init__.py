"""Benchmarks: where tasks come from (registry-layout folders, benchmark plugins), how a task
reference becomes a :class:`podium.interfaces.Task`, and how submissions are graded (exactly as
MLE-bench grades).

The names are in ``__init__.pyi`` and load on first use.
"""

import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
