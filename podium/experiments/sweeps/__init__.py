"""Sweeps: a grid of runs (tasks × strategies × models × seeds), the executors that run it
(local processes, Ray), its live view, and what a run leaves for the reports (its curve). The
grid and the manifest are files of a sweep dir: :mod:`podium.formats`.
"""

import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
