"""Experiments across tasks: sweeps (a grid of runs, its executors, its live view) and the
reports that compare strategies from what the runs left on disk. The sweep dir's own files are
spelled in :mod:`podium.formats`; the runs themselves are run by the command line's sweep
worker, whose argv the caller hands down.
"""

import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
